"""A real ``arena serve`` process on a free loopback port, over a database the tests fill
through the Python API first: users (their tokens kept), a bot of the house, a played
tournament. Started once per test module, waited for by polling its health endpoint with a
deadline, stopped (terminate, bounded wait, kill) at the end.

Each ``arena serve`` is a fork of a server that has started Python and imported the CLI,
Starlette, Uvicorn and the server's modules once (tests/forked_cli.py): its own pid and
session, the folder and environment it is given, its output in its log, signals and SIGKILL
as a fresh process's. A fresh one spent about 0.5 s of CPU on those imports before it served,
and the suite starts dozens. The forking servers are this process's (:data:`FORKS`), ended by
the session's :func:`serve_forks`."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import socket
import sqlite3
import ssl
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.forked_cli import COMMAND_MODULES, Forked, Server, commands

httpx = pytest.importorskip("httpx", reason="the server tests need httpx: pip install httpx")
pytest.importorskip("starlette", reason="the server tests need the bot-arena[server] extra")

FIXTURES = Path(__file__).resolve().parents[1] / "arena" / "fixtures"
GOOD_BOT = FIXTURES / "first_legal.py"
FLAKY_BOT = FIXTURES / "raise_third.py"
READY_S = 60.0  # the most a server may take to answer its first request
#: the most a server may take to stop after SIGTERM: its ladder runners get 20 s after SIGINT
#: (``server.ladder_play.STOP_WAIT``), and a loaded machine is slow to finish their last games
STOP_S = 90.0
PASSWORD = "correct horse battery"


@functools.cache
def tls() -> ssl.SSLContext:
    """The one TLS context of this process's clients. httpx makes a client's own by default,
    loading the system's certificates: about 45 ms of CPU a client, where the tests make
    hundreds (a client a request in loops, and a health poll every 50 ms while a server
    starts: about 0.9 s of the test's CPU a start). The servers speak plain HTTP, so it is
    never used for a connection; a client given it costs 0.4 ms."""
    return ssl.create_default_context()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    """A running server: its URL, its database, the users' tokens."""

    url: str
    db: Path | str  # a SQLite file, or a database URL (PostgreSQL)
    process: subprocess.Popen[bytes] | Forked
    log: Path
    tokens: dict[str, str] = field(default_factory=dict)
    tournament: int = 0
    hostile: int = 0

    def client(self, user: str | None = None, **kwargs: object) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[user]}"} if user else {}
        return httpx.Client(
            base_url=self.url,
            headers=headers,
            timeout=120,
            verify=tls(),
            **kwargs,  # type: ignore[arg-type]
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


#: a bot whose exception and stderr hold markup: it passes no validation (it fails on its
#: second move) but plays in the fixture's tournament, so its faults are stored
HOSTILE_SOURCE = """import sys

moves = 0


def choose_move(game, state, budget):
    global moves
    moves += 1
    if moves == 2:
        print("<script>alert('stderr')</script><b>in bold</b>", file=sys.stderr)
        raise RuntimeError("<img src=x onerror=alert(1)>")
    return game.legal_moves(state)[0]
"""


@dataclass(frozen=True)
class Filled:
    tokens: dict[str, str]
    tournament: int
    hostile: int  # the hostile bot's id (alice's)


def fill(db: Path) -> Filled:
    """Users alice, bob, carol, dave (suspended by a test), erin (rate-limited) and admin,
    with passwords; a bot ``house`` registered as at the terminal; alice's bot ``hostile``;
    a two-game tournament of random, first_legal and hostile played.

    Made once a process and copied (the database file and ``hostile.py`` beside it): a fill
    took about 3 s of CPU (six scrypt hashes of 0.3 s each at the real cost, the tournament),
    and the suite filled a database for each server module and several tests."""
    if not _filled:
        folder = tempfile.TemporaryDirectory(prefix="arena-filled-")
        made = Path(folder.name) / "arena.db"
        _filled.append((folder, made, _fill(made)))
        with contextlib.closing(sqlite3.connect(made)) as conn:  # every page in the file
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _, made, filled = _filled[0]
    wal = made.with_name(made.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0, "the template has pages outside its file"
    shutil.copyfile(made, db)
    shutil.copyfile(made.parent / "hostile.py", db.parent / "hostile.py")
    return Filled(dict(filled.tokens), filled.tournament, filled.hostile)  # tokens: a test's own


_filled: list[tuple[tempfile.TemporaryDirectory[str], Path, Filled]] = []


def _fill(db: Path) -> Filled:
    """:func:`fill` made afresh in ``db``."""
    from bot_arena.arena.api import accounts, submit
    from bot_arena.arena.api.tournaments import tournament
    from bot_arena.db.session import make_engine, session_factory

    hostile = db.parent / "hostile.py"
    hostile.write_text(HOSTILE_SOURCE)
    engine = make_engine(str(db))
    try:
        factory = session_factory(engine)
        tokens = {}
        with factory.begin() as session:
            users = {}
            for name in ("alice", "bob", "carol", "dave", "erin", "admin"):
                users[name], tokens[name] = accounts.add_user(
                    session, name, admin=name == "admin", password=PASSWORD
                )
            submit.register(session, "house", submit.submitted(str(GOOD_BOT)))
            stored = submit.register(
                session, "hostile", submit.submitted(str(hostile)), owner=users["alice"]
            )
    finally:
        engine.dispose()
    played = tournament("tictactoe", ["random", str(GOOD_BOT), "hostile"], games=2, db=str(db))
    return Filled(tokens, played.id, stored.bot_id)


class Forks:
    """The forking servers of this process's ``arena serve``s, started as needed: a forking
    server runs one command at a time and a test may run a server of its own while its
    module's runs, so a start takes the first one idle, else a new one."""

    def __init__(self) -> None:
        self._servers: list[Server] = []

    def idle(self) -> Server:
        """The test process's server of commands (``tests/forked_cli.py``'s ``commands``,
        which imports what ``arena serve`` does) when it is idle, else one of this class's."""
        for server in [commands(), *self._servers]:
            if server.idle():
                return server
        self._servers.append(Server(preload=COMMAND_MODULES))
        return self._servers[-1]

    def close(self) -> None:
        """Every forking server of this class stopped, and the commands server's command
        (a command of theirs still running: killed)."""
        commands().end_running()
        while self._servers:
            self._servers.pop().close()


FORKS = Forks()


@pytest.fixture(scope="session", autouse=True)
def serve_forks() -> Iterator[Forks]:
    """The forking servers of this process's ``arena serve``s, ended with the session."""
    try:
        yield FORKS
    finally:
        FORKS.close()


def start(
    folder: Path, db: Path | str | None, *args: str, env: dict[str, str] | None = None
) -> Served:
    """``arena serve`` over ``db`` (a file or a URL; None: no --db, so arena.db in ``folder``)
    on a free port, forked from :data:`FORKS`' idle server,
    once it answers (a port taken between the probe and the bind: tried again on another)."""
    for _attempt in range(3):
        port = free_port()
        log = folder / f"serve-{port}.log"
        command = ["serve", *(["--db", str(db)] if db is not None else [])]
        process = FORKS.idle().start(
            [*command, "--port", str(port), *args],
            cwd=folder,
            env={k: v for k, v in os.environ.items() if k != "ARENA_DB"} | (env or {}),
            log=log,
        )
        served = Served(f"http://127.0.0.1:{port}", db or folder / "arena.db", process, log)
        deadline = time.monotonic() + READY_S
        with httpx.Client(timeout=2, verify=tls()) as probe:
            while time.monotonic() < deadline and process.poll() is None:
                try:
                    if probe.get(f"{served.url}/api/health").status_code == 200:
                        return served
                except httpx.TransportError:
                    time.sleep(0.05)  # polling with a deadline, not waiting on a guess
        served.stop()
        if "address already in use" not in log.read_text(errors="replace").lower():
            raise AssertionError(f"arena serve did not start:\n{log.read_text(errors='replace')}")
    raise AssertionError("no free port for arena serve")


#: the limits the server tests run under: a bot file of 20 KiB at most, 30 uploads an hour,
#: a database that answers "busy" after 1 s
SERVER_ENV = {"ARENA_MAX_BOT_MB": "0.02", "ARENA_DB_TIMEOUT": "1"}
UPLOADS_PER_HOUR = 30


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("serve")
    db = folder / "arena.db"
    filled = fill(db)
    server = start(folder, db, "--uploads-per-hour", str(UPLOADS_PER_HOUR), env=SERVER_ENV)
    server.tokens, server.tournament, server.hostile = (
        filled.tokens,
        filled.tournament,
        filled.hostile,
    )
    try:
        yield server
    finally:
        server.stop()
