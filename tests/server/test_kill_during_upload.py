"""kill -9 of ``arena serve`` in the middle of an upload: after a restart the upload is absent
(no bot row, no version, no source, no owner), the same upload then stores it whole, and the
restarted server swept the private folder the killed one left (a live server's it keeps).

The kill happens at a known point, not after a guessed pause: the uploaded bot opens a FIFO
(readable through ``--allow-read``) when it is loaded for its validation game, and that open
blocks until a writer comes. The test opens the FIFO for writing without blocking, which
succeeds only once the bot's open is waiting: from then on the upload is in its validation
games, and the server is killed."""

from __future__ import annotations

import errno
import os
import signal
import threading
import time
from pathlib import Path

import httpx

from bot_arena.arena.server.scratch import identity
from tests.server.conftest import GOOD_BOT, READY_S, fill, start

GATED = """import os

_fd = os.open({gate!r}, os.O_RDONLY)  # blocks until the test opens the FIFO for writing
os.read(_fd, 1)  # blocks while the test holds it open and writes nothing


def choose_move(game, state, budget):
    return game.legal_moves(state)[0]
"""


def stored(db: Path, name: str) -> dict[str, int]:
    import sqlite3

    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        one = lambda sql: int(conn.execute(sql, (name,)).fetchone()[0])  # noqa: E731
        return {
            "bots": one("SELECT count(*) FROM bots WHERE name = ?"),
            "versions": one(
                "SELECT count(*) FROM bot_versions v JOIN bots b ON b.id = v.bot_id "
                "WHERE b.name = ?"
            ),
            "sources": one(
                "SELECT count(*) FROM bot_versions v JOIN bots b ON b.id = v.bot_id "
                "WHERE b.name = ? AND v.source IS NOT NULL"
            ),
            "owners": one(
                "SELECT count(*) FROM bot_owners o JOIN bots b ON b.id = o.bot_id WHERE b.name = ?"
            ),
        }


def _writer_when_read(gate: Path) -> int:
    """The FIFO opened for writing once a reader waits on it (polled, with a deadline)."""
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        try:
            return os.open(gate, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
        time.sleep(0.01)  # polling with a deadline, not a guess
    raise AssertionError("the uploaded bot never opened its gate")


def test_an_upload_killed_in_validation_is_absent_then_whole(tmp_path: Path) -> None:
    folder = tmp_path / "gate"
    folder.mkdir()
    gate = folder / "gate"
    os.mkfifo(gate)
    gated = tmp_path / "gated.py"
    gated.write_text(GATED.format(gate=str(gate)))
    db = tmp_path / "arena.db"
    tokens = fill(db).tokens
    scratch = tmp_path / "tmp"  # the server's temporary folder: a killed one leaves its upload
    scratch.mkdir()
    server = start(tmp_path, db, "--allow-read", str(folder), env={"TMPDIR": str(scratch)})
    writer = -1
    try:
        client = httpx.Client(base_url=server.url, timeout=120)
        headers = {"Authorization": f"Bearer {tokens['alice']}"}
        request = client.build_request(
            "POST", "/api/bots", headers=headers, data={"name": "gated", "game": "tictactoe"},
            files={"file": ("gated.py", gated.read_bytes(), "text/x-python")},
        )  # fmt: skip
        answers: list[object] = []

        def send() -> None:
            try:
                answers.append(client.send(request))
            except httpx.HTTPError as exc:
                answers.append(exc)

        sender = threading.Thread(target=send)
        sender.start()
        writer = _writer_when_read(gate)
        assert answers == []  # the upload is in flight, in its validation game
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(30)
        sender.join(60)
        assert len(answers) == 1 and isinstance(answers[0], httpx.HTTPError)
        # killed with the upload's file written in its private folder, which it left behind
        left = [p.parent.name for p in scratch.glob("arena-upload-*/*")]
        assert [p.name for p in scratch.glob("arena-upload-*/*")] == ["gated.py"]
        client.close()
    finally:
        if writer >= 0:
            os.close(writer)  # the bot (if it were still alive) would read end-of-file
        server.stop()
    assert stored(db, "gated") == {"bots": 0, "versions": 0, "sources": 0, "owners": 0}
    # a live server's folder (this test's process stands for it) and a folder of another name
    live = scratch / f"arena-upload-{identity()}-live"
    other = scratch / "arena-upload-other"
    for folder in (live, other):
        folder.mkdir()
    again = start(tmp_path, db, env={"TMPDIR": str(scratch)})
    again.tokens = tokens
    try:
        # the restart swept the killed server's folder, and only it
        kept = sorted(p.name for p in scratch.glob("arena-upload-*"))
        assert kept == sorted([live.name, other.name])
        assert left[0].startswith(f"arena-upload-{identity(server.process.pid)[:9]}")
        assert stored(db, "gated") == {"bots": 0, "versions": 0, "sources": 0, "owners": 0}
        with again.client("alice") as alice:
            answer = alice.post(
                "/api/bots", data={"name": "gated", "game": "tictactoe"},
                files={"file": ("gated.py", GOOD_BOT.read_bytes(), "text/x-python")},
            )  # fmt: skip
        assert answer.status_code == 201, answer.text
        assert answer.json()["version"]["number"] == 1
    finally:
        again.stop()
    assert stored(db, "gated") == {"bots": 1, "versions": 1, "sources": 1, "owners": 1}
