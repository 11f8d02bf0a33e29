"""``arena submit`` and its client (``arena/api/remote.py``): each answer of a real ``arena
serve`` made one line (201, 400 with the fault and its evidence, 401, 403, 413, 429), the
network's failures (refused, silent), a hostile server's answers (huge, not JSON, escapes), and
the token's three sources."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from unittest import mock

import httpx
import pytest

from bot_arena.arena.api import remote
from bot_arena.arena.api.errors import ArenaError
from tests import inprocess
from tests.server.conftest import FLAKY_BOT, GOOD_BOT, UPLOADS_PER_HOUR, Served, free_port


def post(
    served: Served, user: str, name: str, path: Path, data: bytes | None = None
) -> remote.Submitted:
    """The client's upload to ``POST /api/bots`` (the ladder endpoint is hserve1's)."""
    body = data if data is not None else path.read_bytes()
    fields = {"name": name, "game": "tictactoe"}
    return remote.post_bot(
        served.url + "/api/bots", served.tokens[user], fields, path.name, body, 120
    )


def refusal(served: Served, user: str, name: str, path: Path, data: bytes | None = None) -> str:
    with pytest.raises(ArenaError) as caught:
        post(served, user, name, path, data)
    line = str(caught.value)
    assert "\n" not in line and len(line) < 2000
    return line


def test_201_is_the_bot_and_its_version(served: Served) -> None:
    first = post(served, "alice", "sub-good", GOOD_BOT)
    assert (first.bot, first.owner, first.version, first.new) == ("sub-good", "alice", 1, True)
    assert first.line().startswith(f"sub-good version 1 ({first.sha256[:12]}, new version)")
    again = post(served, "alice", "sub-good", GOOD_BOT)
    assert (again.version, again.new) == (1, False)
    assert "already stored" in again.line()


def test_400_carries_the_fault_and_its_evidence(served: Served) -> None:
    line = refusal(served, "alice", "sub-flaky", FLAKY_BOT)
    assert line.startswith("refused (400): ")
    assert "fault: crash" in line and "evidence: " in line


def test_markup_in_a_name_is_a_400_shown_as_text(served: Served) -> None:
    line = refusal(served, "alice", "<b>x</b>\x1b[31m", GOOD_BOT)
    assert line.startswith("refused (400): ") and "\x1b" not in line


def test_401_a_wrong_token_and_a_suspended_user(served: Served) -> None:
    served.tokens["nobody"] = "arena_1_" + "A" * 43
    assert refusal(served, "nobody", "x", GOOD_BOT).startswith("the server refused the token")
    suspended = inprocess.run("users", "suspend", "dave", "--db", str(served.db), cwd=Path.cwd())
    assert suspended.returncode == 0, suspended.stderr
    assert "(401)" in refusal(served, "dave", "daves", GOOD_BOT)


def test_403_another_users_bot(served: Served) -> None:
    """bob's token on alice's bot, and on the house's."""
    assert refusal(served, "bob", "hostile", GOOD_BOT).startswith("not allowed (403): ")
    assert refusal(served, "bob", "house", GOOD_BOT).startswith("not allowed (403): ")


def test_413_a_file_past_the_limit(served: Served) -> None:
    big = b"# " + b"x" * (30 * 1024) + b"\n"
    assert refusal(served, "carol", "big", GOOD_BOT, big).startswith("too large (413): ")


def test_429_past_the_limit(served: Served) -> None:
    with served.client("erin") as client:
        for _ in range(UPLOADS_PER_HOUR):
            assert client.post("/api/bots", content=b"junk").status_code == 400
    assert refusal(served, "erin", "erins", GOOD_BOT).startswith("too many uploads")


@contextmanager
def fake_server(answer: bytes | None) -> Iterator[str]:
    """A loopback server that reads a request and writes ``answer`` (None: nothing, ever),
    then closes; stopped on leaving."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)
            conn.settimeout(10)
            try:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536) or b"\r\n\r\n"
                head, _, rest = data.partition(b"\r\n\r\n")
                length = [
                    ln for ln in head.lower().split(b"\r\n") if ln.startswith(b"content-length:")
                ]
                left = int(length[0].split(b":")[1]) - len(rest) if length else 0
                while left > 0:  # the whole request read: a close then loses no answer
                    got = conn.recv(65536)
                    left = left - len(got) if got else 0
                if answer is not None:
                    conn.sendall(answer)
                    conn.close()
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        # a close alone does not wake the thread's accept(): the join waited its whole 10 s
        with suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        for conn in held:
            conn.close()
        thread.join(10)
        assert not thread.is_alive(), "the fake server did not stop"


def _http(status: int, body: bytes, length: bool = True) -> bytes:
    head = f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nConnection: close\r\n"
    head += f"Content-Length: {len(body)}\r\n" if length else ""
    return head.encode() + b"\r\n" + body


def _fake_refusal(url: str, timeout: float = 30) -> str:
    with pytest.raises(ArenaError) as caught:
        remote.post_bot(url + "/api/bots", "tok", {"name": "x"}, "x.py", b"x = 1\n", timeout)
    return str(caught.value)


@pytest.mark.parametrize("length", [True, False], ids=["declared", "streamed"])
def test_a_huge_answer_is_not_read_past_the_bound(length: bool) -> None:
    body = b'{"error": "' + b"x" * (remote.MAX_ANSWER * 4) + b'"}'
    with fake_server(_http(400, body, length)) as url:
        assert "larger than" in _fake_refusal(url)


def test_an_answer_that_is_not_json_and_escapes_in_one() -> None:
    with fake_server(_http(500, b"<html>oops</html>")) as url:
        assert "is not a JSON object" in _fake_refusal(url)
    with fake_server(_http(403, b'{"error": "no\\u001b[2J\\nmore"}')) as url:
        line = _fake_refusal(url)
    assert line.startswith("not allowed (403): no") and "\x1b" not in line and "\n" not in line


def test_a_silent_server_and_a_closed_port() -> None:
    with fake_server(None) as url:
        assert "no answer within 0.5 s" in _fake_refusal(url, timeout=0.5)
    assert "cannot connect" in _fake_refusal(f"http://127.0.0.1:{free_port()}")


def arena(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` run in this process (tests/inprocess.py: the command's lines are the
    subject), with no token in its environment but one ``env`` gives."""
    with mock.patch.dict(os.environ):
        os.environ.pop(remote.TOKEN_ENV, None)
        return inprocess.run(*args, cwd=Path.cwd(), env=env)


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


def test_the_token_comes_from_its_three_sources(served: Served, tmp_path: Path) -> None:
    """--token-file, else $ARENA_TOKEN, else $XDG_CONFIG_HOME/bot-arena/token: each reaches
    the server (a wrong one is its 401); none is one line."""
    wrong = "arena_1_" + "B" * 43
    where = ["--server", served.url, "--ladder", "main"]
    token_file = tmp_path / "t"
    token_file.write_text(wrong + "\n")
    config = tmp_path / "config"
    (config / "bot-arena").mkdir(parents=True)
    (config / "bot-arena" / "token").write_text(wrong)
    home = {"XDG_CONFIG_HOME": str(tmp_path / "empty")}
    none = one_error(arena("submit", str(GOOD_BOT), *where, env=home))
    assert "no API token" in none
    for env, extra in (
        (home, ["--token-file", str(token_file)]),
        (home | {remote.TOKEN_ENV: wrong}, []),
        ({"XDG_CONFIG_HOME": str(config)}, []),
    ):
        line = one_error(arena("submit", str(GOOD_BOT), *where, *extra, env=env))
        # the ladder endpoint (hserve1's) may not be in this server yet: 404; else 401
        assert "(401)" in line or "(404)" in line, line
    token_file.write_text("two words\n")
    line = one_error(arena("submit", str(GOOD_BOT), *where, "--token-file", str(token_file)))
    assert "is not an API token" in line


def test_the_command_says_each_fault_in_one_line(served: Served, tmp_path: Path) -> None:
    env = {remote.TOKEN_ENV: served.tokens["carol"]}
    where = ["--server", served.url, "--ladder", "main"]
    assert "cannot read bot file" in one_error(
        arena("submit", str(tmp_path / "no.py"), *where, env=env)
    )
    assert "give the server's URL" in one_error(
        arena("submit", str(GOOD_BOT), "--server", "ftp://x", "--ladder", "l", env=env)
    )
    gone = ["--server", f"http://127.0.0.1:{free_port()}", "--ladder", "main"]
    assert "cannot connect" in one_error(arena("submit", str(GOOD_BOT), *gone, env=env))
    assert one_error(arena("submit", str(GOOD_BOT), *where, "--timeout", "0", env=env))


def test_without_httpx_one_line_names_the_pip_command(tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as patch:  # ``import httpx`` fails, in this process
        patch.setitem(sys.modules, "httpx", None)
        done = inprocess.run(
            "submit", str(GOOD_BOT), "--server", "http://127.0.0.1:9", "--ladder", "l",
            cwd=tmp_path, env={remote.TOKEN_ENV: "tok"},
        )  # fmt: skip
    line = one_error(done)
    assert "pip install 'bot-arena[server]'" in line


def test_a_ladder_upload_through_the_command(served: Served, tmp_path: Path) -> None:
    """Once the ladder endpoint is in the server (hserve1's), ``arena submit`` stores the bot
    in the ladder and prints its one line; before, the server's 404 is the one line."""
    from bot_arena.arena.api.ladders import ladder_create

    ladder_create("sub-ladder", "tictactoe", db=str(served.db))
    env = {remote.TOKEN_ENV: served.tokens["bob"]}
    done = arena("submit", str(GOOD_BOT), "--server", served.url, "--ladder", "sub-ladder",
                 "--name", "bobs-bot", env=env)  # fmt: skip
    probe = httpx.post(served.url + remote.UPLOAD_PATH.format(ladder="sub-ladder"), timeout=30)
    if probe.status_code == 404:
        assert "(404)" in one_error(done)
        pytest.skip("the ladder endpoint is not in this server yet (hserve1's)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("stored bobs-bot version 1 (") and done.stdout.count("\n") == 1
