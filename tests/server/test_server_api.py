"""``arena serve``'s JSON API through a real server process: every status code of an upload
(201, 400, 401, 403, 413, 429, 503), what each refusal leaves stored (nothing), who may read a
bot's source, and the reads that must answer exactly as the CLI does."""

from __future__ import annotations

import json
import select
import socket
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests import inprocess
from tests.server.conftest import FLAKY_BOT, GOOD_BOT, UPLOADS_PER_HOUR, Served, tls

# a real server process, uploads validated by games: about a second a test
pytestmark = pytest.mark.slow

HOSTILE = "<script>alert(1)</script>"


def upload(
    served: Served, user: str | None, name: str, path: Path = GOOD_BOT, filename: str = "bot.py"
) -> httpx.Response:
    with served.client(user) as client:
        return client.post(
            "/api/bots",
            data={"name": name, "game": "tictactoe"},
            files={"file": (filename, path.read_bytes(), "text/x-python")},
        )


def my_bots(served: Served, user: str) -> list[str]:
    with served.client(user) as client:
        answer = client.get("/api/me")
    assert answer.status_code == 200, answer.text
    return [b["name"] for b in answer.json()["bots"]]


def registered(served: Served) -> list[str]:
    """The registered bots' names, read from the database file itself."""
    conn = sqlite3.connect(f"file:{served.db}?mode=ro", uri=True)
    try:
        return [n for (n,) in conn.execute("SELECT name FROM bots WHERE registered ORDER BY name")]
    finally:
        conn.close()


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` run in this process (tests/inprocess.py): what the command does and
    prints is the subject here, not its process."""
    return inprocess.run(*args, cwd=Path.cwd())


def ok(done: subprocess.CompletedProcess[str]) -> str:
    """The output of a command that succeeded."""
    assert done.returncode == 0, done.stderr
    return str(done.stdout)


def error_of(answer: httpx.Response, status: int) -> str:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    return str(answer.json()["error"])


def test_an_upload_is_stored_as_its_uploaders_bot(served: Served) -> None:
    answer = upload(served, "alice", "alices-bot")
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["bot"]["name"] == "alices-bot" and body["bot"]["owner"] == "alice"
    assert body["version"]["number"] == 1 and body["version"]["new"] is True
    assert body["validation"] == {
        "game": "tictactoe",
        "games": 2,
        "moves": body["validation"]["moves"],
    }
    assert "alices-bot" in my_bots(served, "alice")
    bot_id = body["bot"]["id"]
    source = GOOD_BOT.read_text()
    with served.client() as anyone, served.client("bob") as bob, served.client("alice") as alice:
        public = anyone.get(f"/api/bots/{bot_id}").json()
        others = bob.get(f"/api/bots/{bot_id}").json()
        own = alice.get(f"/api/bots/{bot_id}").json()
    assert public["owner"] == "alice" and "source" not in public["versions"][0]
    assert others["source_visible"] is False and "source" not in others["versions"][0]
    assert own["source_visible"] is True and own["versions"][0]["source"] == source
    # the same file again: the same version, not a new one
    again = upload(served, "alice", "alices-bot")
    assert again.status_code == 201 and again.json()["version"]["new"] is False


def test_a_bot_that_fails_validation_is_400_with_its_fault_and_nothing_is_stored(
    served: Served,
) -> None:
    answer = upload(served, "bob", "bobs-flaky", FLAKY_BOT)
    assert "failed validation" in error_of(answer, 400)
    body = answer.json()
    assert body["fault"]["termination"] == "crash"
    assert any("third move is cursed" in line for line in body["evidence"])
    assert "bobs-flaky" not in registered(served)


def test_no_token_or_a_bad_one_is_401(served: Served) -> None:
    assert "token" in error_of(upload(served, None, "nobodys"), 401)
    forged = served.tokens["alice"][:-4] + "AAAA"
    for token in (forged, "arena_1_x", "garbage", "arena_99999_" + "A" * 43, "x" * 5000):
        with httpx.Client(base_url=served.url, verify=tls()) as client:
            answer = client.post(
                "/api/bots",
                headers={"Authorization": f"Bearer {token}"},
                data={"name": "n", "game": "tictactoe"},
                files={"file": ("b.py", b"x = 1\n")},
            )
        error_of(answer, 401)
    assert "nobodys" not in registered(served) and "n" not in registered(served)


def test_a_suspended_users_token_is_401(served: Served) -> None:
    with served.client("dave") as dave:
        assert dave.get("/api/me").status_code == 200
    suspended = arena("users", "suspend", "dave", "--db", str(served.db))
    assert suspended.returncode == 0, suspended.stderr
    with served.client("dave") as dave:
        error_of(dave.get("/api/me"), 401)
    error_of(upload(served, "dave", "daves-bot"), 401)


def test_another_users_name_or_the_houses_is_403(served: Served) -> None:
    assert upload(served, "carol", "carols-bot").status_code == 201
    versions = len(_bot(served, "carols-bot")["versions"])
    changed = GOOD_BOT.read_text() + "\n# a new version\n"
    other = served.db.parent / "other.py"
    other.write_text(changed)
    assert "belongs to someone else" in error_of(upload(served, "bob", "carols-bot", other), 403)
    assert len(_bot(served, "carols-bot")["versions"]) == versions
    error_of(upload(served, "bob", "house", other), 403)
    # an admin may not store a version under a user's name either
    error_of(upload(served, "admin", "carols-bot", other), 403)


def _bot(served: Served, name: str) -> dict[str, object]:
    with served.client("alice") as client:
        me = client.get("/api/me").json()
    with served.client() as client:
        for bot_id in range(1, 50):
            found = client.get(f"/api/bots/{bot_id}")
            if found.status_code == 200 and found.json()["name"] == name:
                return dict(found.json())
    raise AssertionError(f"no bot {name} ({me})")


def _chunks(size: int) -> Iterator[bytes]:
    boundary = b"--xyz\r\n"
    yield boundary + b'Content-Disposition: form-data; name="file"; filename="big.py"\r\n\r\n'
    sent = 0
    while sent < size:
        yield b"#" * 8192
        sent += 8192
    yield b"\r\n--xyz--\r\n"


def _raw(served: Served, request: str) -> bytes:
    """What the server answers to ``request`` sent as it is on a socket (the status line and
    headers are enough)."""
    host, port = served.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(request.encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    return answer


def _stream(served: Served, token: str, total: int) -> tuple[int, bytes]:
    """Send an upload's body of ``total`` bytes, chunked, 64 KiB at a time, stopping as soon
    as the server answers or drops the connection: (bytes sent, the answer's head)."""
    host, port = served.url.removeprefix("http://").split(":")
    piece = b"#" * 65536
    chunk = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    sent, answer = 0, b""
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(
            b"POST /api/bots HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            b"Content-Type: multipart/form-data; boundary=xyz\r\n"
            + f"Authorization: Bearer {token}\r\n\r\n".encode()
        )
        part = b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="big.py"\r\n\r\n'
        sock.sendall(f"{len(part):x}\r\n".encode() + part + b"\r\n")  # then the file, endless
        try:
            while sent < total and not select.select([sock], [], [], 0)[0]:
                sock.sendall(chunk)
                sent += len(piece)
            sock.sendall(b"0\r\n\r\n")
            answer = sock.recv(4096)
        except OSError:  # reset: the server stopped reading
            pass
    return sent, answer


def test_an_endless_body_is_refused_once_it_passes_the_limit(served: Served) -> None:
    """The body is counted as it arrives: the server answers (or hangs up) long before a
    client that keeps sending is done (what is sent past the limit is only what the
    kernel's socket buffers hold, a few MiB), and never reads the rest."""
    total = 64 * 1024 * 1024
    sent, answer = _stream(served, served.tokens["bob"], total)
    assert sent < total // 4, sent
    assert answer == b"" or answer.startswith(b"HTTP/1.1 413 "), answer[:200]


def test_an_upload_over_the_limit_is_413_and_read_no_further(served: Served) -> None:
    token = {"Authorization": f"Bearer {served.tokens['bob']}"}
    # declared too large: refused before any of the body is read (none is sent)
    head = _raw(served, "POST /api/bots HTTP/1.1\r\nHost: x\r\n"
                f"Authorization: {token['Authorization']}\r\n"
                "Content-Type: multipart/form-data; boundary=xyz\r\n"
                f"Content-Length: {10**12}\r\n\r\n")  # fmt: skip
    assert head.startswith(b"HTTP/1.1 413 "), head[:200]
    with httpx.Client(base_url=served.url, timeout=60, verify=tls()) as client:
        # no length declared (chunked): refused once the body passes the limit
        streamed = client.post(
            "/api/bots",
            headers={**token, "Content-Type": "multipart/form-data; boundary=xyz"},
            content=_chunks(4 * 1024 * 1024),
        )
        error_of(streamed, 413)
    # a file over the bot file limit (20 KiB here) inside a body under the request limit
    big = served.db.parent / "big.py"
    big.write_text(GOOD_BOT.read_text() + "#" * 30_000 + "\n")
    error_of(upload(served, "bob", "bobs-big", big), 413)
    assert "bobs-big" not in registered(served)


def test_bad_forms_are_400(served: Served) -> None:
    with served.client("bob") as client:
        not_multipart = client.post("/api/bots", json={"name": "x", "game": "tictactoe"})
        assert "multipart" in error_of(not_multipart, 400)
        broken = client.post(
            "/api/bots",
            headers={"Content-Type": "multipart/form-data; boundary=abc"},
            content=b'--abc\r\nContent-Disposition: form-data; name="file"\r\n\r\nno end',
        )
        error_of(broken, 400)
        no_file = client.post("/api/bots", data={"name": "bobs-x", "game": "tictactoe"},
                              files={"other": ("x.txt", b"1")})  # fmt: skip
        error_of(no_file, 400)
        two_files = client.post(
            "/api/bots",
            data={"name": "bobs-y", "game": "tictactoe"},
            files=[("file", ("a.py", b"x=1\n")), ("file", ("b.py", b"x=1\n"))],
        )
        error_of(two_files, 400)
    assert "file must end" in error_of(upload(served, "bob", "bobs-exe", filename="bot.exe"), 400)
    named = upload(served, "bob", HOSTILE)
    assert "not allowed" in error_of(named, 400)
    unknown_game = served.client("bob").post(
        "/api/bots",
        data={"name": "bobs-z", "game": "no-such-game"},
        files={"file": ("b.py", GOOD_BOT.read_bytes())},
    )
    error_of(unknown_game, 400)
    assert not {"bobs-x", "bobs-y", "bobs-exe", "bobs-z"} & set(registered(served))


def test_a_file_name_with_path_tricks_is_only_read_for_its_ending(served: Served) -> None:
    answer = upload(served, "alice", "tricky", filename="../../../../tmp/../evil.py")
    assert answer.status_code == 201, answer.text
    assert not (served.db.parent / "evil.py").exists()
    assert not Path("/tmp/evil.py").exists()


def test_past_the_rate_limit_is_429(served: Served) -> None:
    """erin's attempts, refused or not, count: the one after the limit is 429."""
    codes = []
    for i in range(UPLOADS_PER_HOUR + 1):
        with served.client("erin") as client:
            codes.append(client.post("/api/bots", data={"name": f"a{i}"}).status_code)
    assert codes == [400] * UPLOADS_PER_HOUR + [429], codes
    error_of(upload(served, "erin", "erins-bot"), 429)
    assert upload(served, "alice", "alices-second").status_code == 201  # per user


def test_a_busy_database_is_503_and_nothing_is_stored(served: Served) -> None:
    """Another writer holds SQLite's write lock past the server's busy timeout (1 s)."""
    holder = sqlite3.connect(served.db, isolation_level=None, timeout=30)
    holder.execute("BEGIN IMMEDIATE")
    try:
        answer = upload(served, "bob", "bobs-locked")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "busy" in error_of(answer, 503)
    assert "bobs-locked" not in registered(served)
    assert upload(served, "bob", "bobs-locked").status_code == 201


def test_reads_answer_as_the_cli_does(served: Served) -> None:
    db = ["--db", str(served.db)]
    board = ok(arena("leaderboard", "--tournament", str(served.tournament), "--json", *db))
    exported = ok(arena("export", "--format", "json", "--tournament", str(served.tournament), *db))
    with served.client() as client:
        standings = client.get(f"/api/tournaments/{served.tournament}/standings")
        assert standings.status_code == 200
        assert standings.text == board.rstrip("\n")
        for match in json.loads(exported):
            answer = client.get(f"/api/matches/{match['match']}")
            assert answer.status_code == 200
            assert answer.json() == match
        error_of(client.get("/api/matches/999999"), 404)
        error_of(client.get("/api/bots/999999"), 404)
        error_of(client.get(f"/api/bots/{2**70}"), 404)
        error_of(client.get("/api/tournaments/999999/standings"), 404)
        error_of(client.get("/api/nowhere"), 404)


def test_every_answer_carries_the_security_headers(served: Served) -> None:
    with served.client() as client:
        for path in ("/api/health", "/api/nowhere"):
            headers = client.get(path).headers
            assert "frame-ancestors 'none'" in headers["content-security-policy"]
            assert "'unsafe-inline'" not in headers["content-security-policy"]
            assert headers["x-frame-options"] == "DENY"
            assert headers["x-content-type-options"] == "nosniff"
