"""Live standings by server-sent events (``GET /api/ladders/{ladder}/events``) through a real
``arena serve`` process: a stream gets a new event once a game is stored; the caps answer 503
(the server's streams) and 429 (one address's); a client that goes away frees its slot; a
server that stops ends its streams cleanly (no stream left to uvicorn's forced cancel)."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.conftest import GOOD_BOT, Served, start

PER_CLIENT = 8  # settings.py's streams_per_client
READ_S = 120.0  # the most a stream may stay silent in these tests (a read's deadline)


def events(answer: httpx.Response, within: float = READ_S) -> Iterator[dict[str, Any]]:
    """The standings events of a stream, as they come (comments and ``retry`` skipped), for
    ``within`` seconds at most: the deadline is checked at every line, and the server sends
    a comment line at least every 15 s (a stream that sends nothing fails the read's own
    timeout, READ_S)."""
    deadline = time.monotonic() + within
    kind, data = "", ""
    for line in answer.iter_lines():
        assert time.monotonic() < deadline, "no event in time"
        if line.startswith("event: "):
            kind = line[len("event: ") :]
        elif line.startswith("data: "):
            data = line[len("data: ") :]
        elif line == "" and kind:
            assert kind == "standings"
            yield json.loads(data)
            kind, data = "", ""


def client_from(served: Served, address: str = "127.0.0.1") -> httpx.Client:
    """A client whose connections come from ``address`` (any of 127/8 reaches the server)."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=served.url, transport=transport, timeout=READ_S)


def make_ladder(folder: Path) -> Path:
    """Ladder ``live`` (tictactoe: random and first_legal, no game played) in a new database in
    ``folder``."""
    from bot_arena.arena.api.ladders import ladder_add, ladder_create

    db = folder / "arena.db"
    ladder_create("live", "tictactoe", db=str(db), seed=5)
    ladder_add("live", ["random", str(GOOD_BOT)], db=str(db))
    return db


@pytest.fixture
def ladder_db(tmp_path: Path) -> Path:
    return make_ladder(tmp_path)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server over ladder ``live`` for the tests that neither change its options nor
    count its streams: the first test sees the ladder with no game, the last stops it."""
    folder = tmp_path_factory.mktemp("serve-events")
    served = start(folder, make_ladder(folder))
    try:
        yield served
    finally:
        served.stop()


def test_a_stream_gets_an_event_after_a_game_is_stored(server: Served) -> None:
    from bot_arena.arena.api.ladders import ladder_run

    ladder_db = server.db
    with server.client() as client, client.stream("GET", "/api/ladders/live/events") as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/event-stream")
        assert "script-src 'self'" in answer.headers["content-security-policy"]
        stream = events(answer)
        first = next(stream)
        assert first["name"] == "live" and first["games"] == 0
        assert first == client.get("/api/ladders/live/standings").json()
        ended = ladder_run("live", jobs=1, until_games=1, db=str(ladder_db))
        assert ended.games >= 1  # stored, the runner gone
        for view in stream:  # a game in play may come first; the stored ones come
            if view["games"] == ended.games and view["in_play"] == 0:
                break
        assert sum(s["games"] for s in view["standings"]) == 2 * ended.games


def test_a_stream_of_no_ladder_is_404(server: Served) -> None:
    with server.client() as client:
        answer = client.get("/api/ladders/nope/events")
        assert answer.status_code == 404 and "error" in answer.json()
        assert client.get("/api/ladders/%3Cb%3E/events").status_code == 404


@dataclass
class Opened:
    answer: httpx.Response
    events: Iterator[dict[str, Any]] | None  # kept: closing its reader closes the connection


def _open(stack: ExitStack, client: httpx.Client) -> Opened:
    """A stream opened and kept open until ``stack`` closes (its first event read)."""
    answer = stack.enter_context(client.stream("GET", "/api/ladders/live/events"))
    if answer.status_code != 200:
        answer.read()
        return Opened(answer, None)
    stream = events(answer)
    next(stream)
    return Opened(answer, stream)


def test_the_caps_answer_429_and_503_and_a_closed_client_frees_its_slot(
    tmp_path: Path, ladder_db: Path
) -> None:
    server = start(tmp_path, ladder_db, "--max-streams", str(PER_CLIENT + 1))
    try:
        with ExitStack() as stack:
            local = stack.enter_context(client_from(server))
            mine = [_open(stack, local) for _ in range(PER_CLIENT)]
            assert [a.answer.status_code for a in mine] == [200] * PER_CLIENT
            refused = _open(stack, local).answer  # one address's cap
            assert refused.status_code == 429, refused.text
            assert "error" in refused.json()
            other = stack.enter_context(client_from(server, "127.0.0.2"))
            last = _open(stack, other)  # another address: the last slot (kept open)
            assert last.answer.status_code == 200
            third = stack.enter_context(client_from(server, "127.0.0.3"))
            full = _open(stack, third).answer  # the server's cap
            assert full.status_code == 503, full.text
            assert "error" in full.json()
            mine[0].answer.close()  # this client goes away: its slot comes free
            deadline = time.monotonic() + READ_S
            while True:
                again = _open(stack, third).answer
                if again.status_code == 200:
                    break
                assert again.status_code == 503, again.text
                assert time.monotonic() < deadline, "the closed stream's slot never came free"
                time.sleep(0.05)  # polling with a deadline, not a guess
    finally:
        server.stop()


def test_a_stopping_server_ends_its_streams(server: Served) -> None:
    """The module's server, stopped here: the module's last test."""
    try:
        with server.client() as client, client.stream("GET", "/api/ladders/live/events") as answer:
            stream = events(answer)
            next(stream)
            server.process.send_signal(signal.SIGTERM)
            assert list(stream) == []  # the stream ended whole: no error, no more events
        assert server.process.wait(30) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal
        log = server.log.read_text(errors="replace")
        assert "timeout graceful shutdown exceeded" not in log, log
    finally:
        server.stop()
