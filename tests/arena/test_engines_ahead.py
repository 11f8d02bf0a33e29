"""A ``--jobs 1`` run of engines starts its helpers and its engines ahead (issue 32's start-up
against fastchess): the sandbox's probe before the options are checked, the fork server once
the probe has answered, the engines before the tournament is stored, each started once and
sent the same commands as before. Through the real command line, in this process."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bot_arena.arena.match import digests
from bot_arena.arena.match.pool import BotPool
from bot_arena.arena.transport import forkserver_client
from bot_arena.arena.transport.sandbox import support
from bot_arena.arena.transport.sandbox.scan import Scan
from tests import inprocess

# whole runs of scripted engines: seconds a test
pytestmark = pytest.mark.slow

FAKE = Path(__file__).parent / "fixtures" / "fake_uci.py"


def _engine(folder: Path, name: str) -> tuple[str, Path]:
    """An engine program (the scripted UCI engine behind a launcher that notes each start in
    its log, then logs every line the engine reads) and its log."""
    log = folder / f"{name}.log"
    program = folder / f"{name}.py"
    program.write_text(
        "import os, sys\n"
        f"open({str(log)!r}, 'a').write('started\\n')\n"
        f"os.execv(sys.executable, [sys.executable, {str(FAKE)!r}, 'log', {str(log)!r}])\n"
    )
    return f"uci:{sys.executable} {program} name={name} option.Hash=8", log


def _tournaments(db: Path) -> int | None:
    """Tournaments stored in ``db`` (None: no database yet)."""
    if not db.exists():
        return None
    with sqlite3.connect(db) as conn:
        try:
            return int(conn.execute("SELECT count(*) FROM tournaments").fetchone()[0])
        except sqlite3.OperationalError:
            return None


@pytest.fixture
def prestarts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The tournaments stored in ``tmp_path/arena.db`` at each ``BotPool.prestart``, in order
    (None: no database yet)."""
    seen: list[int | None] = []
    prestart = BotPool.prestart

    def noted(self: BotPool, refs: list[object]) -> None:
        seen.append(_tournaments(tmp_path / "arena.db"))
        prestart(self, refs)  # type: ignore[arg-type]

    monkeypatch.setattr(BotPool, "prestart", noted)
    return seen


def test_the_engines_start_before_the_tournament_is_stored_once_each_same_commands(
    tmp_path: Path, prestarts: list[int | None]
) -> None:
    db = tmp_path / "arena.db"
    (a, log_a), (b, log_b) = _engine(tmp_path, "a"), _engine(tmp_path, "b")
    done = _two_games(tmp_path, a, b, db)
    assert done.returncode == 0, done.stderr
    # started ahead: before the tournament was stored (no database yet), then the run's own
    # prestart finds them started
    assert prestarts[0] is None and prestarts[1:] == [1], prestarts
    for log in (log_a, log_b):
        lines = log.read_text().splitlines()
        assert lines.count("started") == 1, lines  # one process played both games
        assert lines[:6] == [
            "started",
            "uci",
            "setoption name Hash value 8",
            "ucinewgame",
            "isready",
            lines[5],
        ]
        assert lines[5].startswith("position "), lines
        assert lines.count("ucinewgame") == 2 and lines.count("isready") == 2
        assert lines[-1] == "quit"


def test_the_engines_read_uci_before_the_tournament_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engines started ahead are greeted as they start: each has read ``uci`` while the
    run was still to store its tournament (the first prestart waits here for the engines'
    logs to say so; a greeting left to the first game's start never comes while it waits),
    and once only."""
    db = tmp_path / "arena.db"
    (a, log_a), (b, log_b) = _engine(tmp_path, "a"), _engine(tmp_path, "b")
    seen: list[tuple[int | None, bool]] = []
    prestart = BotPool.prestart

    def greeted(self: BotPool, refs: list[object]) -> None:
        prestart(self, refs)  # type: ignore[arg-type]
        if seen:
            return
        end = time.monotonic() + 30.0
        while not (said := all("uci" in _lines(log) for log in (log_a, log_b))):
            if time.monotonic() > end:
                break
            time.sleep(0.02)
        seen.append((_tournaments(db), said))

    monkeypatch.setattr(BotPool, "prestart", greeted)
    done = _two_games(tmp_path, a, b, db)
    assert done.returncode == 0, done.stderr
    assert seen == [(None, True)]
    for log in (log_a, log_b):
        assert _lines(log).count("uci") == 1 and _lines(log).count("ucinewgame") == 2


def _two_games(tmp_path: Path, a: str, b: str, db: Path) -> subprocess.CompletedProcess[str]:
    """``tournament run``: two games of the engines ``a`` and ``b`` in one process each."""
    return inprocess.run(
        "tournament", "run", "chess", "--bot", a, "--bot", b, "--games", "2", "--jobs", "1",
        "--max-moves", "6", "--sandbox", "off", "--db", f"sqlite:///{db}", "--json",
        cwd=tmp_path,
    )  # fmt: skip


def _lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_the_python_api_starts_its_engines_before_the_tournament_is_stored(
    tmp_path: Path, prestarts: list[int | None]
) -> None:
    """``tournament()`` takes the command's one path (``api/new_run.py``): a ``jobs=1`` run's
    engines start before its database is made, one process each for both games."""
    from bot_arena.arena.api.tournaments import tournament

    db = tmp_path / "arena.db"
    (a, log_a), (b, log_b) = _engine(tmp_path, "a"), _engine(tmp_path, "b")
    played = tournament(
        "chess", [a, b], games=2, jobs=1, max_moves=6, sandbox="off", db=f"sqlite:///{db}"
    )
    assert played.finished and len(played.matches) == 2
    assert prestarts[0] is None and prestarts[1:] == [1], prestarts
    for log in (log_a, log_b):
        assert log.read_text().splitlines().count("started") == 1


def test_a_run_refused_after_its_fork_server_started_leaves_no_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fork server starts once the sandbox is known, before the bots are resolved: a bot
    refused then (its program missing) gives the server back on the way out (kept for the
    thread's next run, its processes killed, or ended), not left with the run."""
    servers: list[forkserver_client.ForkServer] = []
    start = forkserver_client.start_forkserver

    def kept(*args: object, **kwargs: object) -> forkserver_client.ForkServer | None:
        server = start(*args, **kwargs)  # type: ignore[arg-type]
        if server is not None:
            servers.append(server)
        return server

    monkeypatch.setattr(forkserver_client, "start_forkserver", kept)
    from bot_arena.arena.tournament import job_handle

    monkeypatch.setattr(job_handle, "start_forkserver", kept)
    done = inprocess.run(
        "tournament", "run", "chess", "--bot", "uci:./no-such-engine", "--bot", "random",
        "--jobs", "1", "--db", f"sqlite:///{tmp_path / 'arena.db'}",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and "no-such-engine" in done.stderr, done.stderr
    assert len(servers) == 1
    # given back on the way out: kept idle for this thread's next run, or ended
    assert servers[0] in forkserver_client.kept_servers() or servers[0].closed
    forkserver_client.close_kept()
    assert servers[0].process is not None and servers[0].process.poll() is not None


def test_the_probe_started_ahead_is_the_one_read(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[object] = []
    make = support._probe_process

    def counted() -> object:
        started.append(make())
        return started[-1]

    monkeypatch.setattr(support, "_probe_process", counted)
    support.forget()
    try:
        support.start()
        assert len(started) == 1
        support.start()  # running already: not another
        assert len(started) == 1
        layers, missing = support.probe()
        assert len(started) == 1  # its answer read, no second probe
        support.start()  # known: nothing to start
        assert len(started) == 1
    finally:
        support.forget()
    assert (layers, missing) == support.probe()  # the same answer as a probe of its own


def test_no_probe_is_started_ahead_for_sandbox_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot_arena.arena.api.sandbox import probe_ahead

    started: list[str] = []
    monkeypatch.setattr(support, "start", lambda: started.append("probe"))
    monkeypatch.delenv("ARENA_SANDBOX", raising=False)
    probe_ahead("off")
    probe_ahead("no-such-mode")  # refused later, where the options are checked
    assert started == []
    probe_ahead(None)
    assert started == ["probe"]
    assert os.environ.get("ARENA_SANDBOX") is None


def test_the_fork_server_starts_before_the_probe_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local run's fork server is started with the confined bots' environment as soon as
    the run begins, before the sandbox's probe is read (the probe takes a fresh interpreter's
    start): one server for the whole run."""
    from bot_arena.arena.match.confinement import server_env
    from bot_arena.arena.tournament import job_handle
    from bot_arena.arena.transport.sandbox.mode import CONFINED

    events: list[str] = []
    level_for, start = support.level_for, job_handle.start_job_server

    def probed(mode: object) -> object:
        events.append("probe read")
        return level_for(mode)  # type: ignore[arg-type]

    def started(env: dict[str, str] | None = None) -> object:
        events.append("server" if env == server_env(CONFINED) else f"server env {env}")
        return start(env)

    monkeypatch.setattr(support, "level_for", probed)
    monkeypatch.setattr(job_handle, "start_job_server", started)
    monkeypatch.delenv("ARENA_SANDBOX", raising=False)
    done = inprocess.run(
        "tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1",
        "--jobs", "1", "--db", f"sqlite:///{tmp_path / 'arena.db'}", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert events[:2] == ["server", "probe read"], events
    assert events.count("server") == 1, events


@pytest.mark.parametrize(
    "bad", [["--jobs", "0"], ["--opening-plies", "-1"], ["-p", "size=9"]], ids=str
)
def test_a_run_its_options_refuse_starts_no_fork_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: list[str]
) -> None:
    """The options are checked before the fork server is started ahead: a refused run (one
    line, exit 2) never paid for a fresh interpreter it could not use."""
    from bot_arena.arena.tournament import job_handle

    started: list[object] = []
    start = job_handle.start_job_server

    def counted(env: dict[str, str] | None = None) -> object:
        started.append(env)
        return start(env)

    monkeypatch.setattr(job_handle, "start_job_server", counted)
    done = inprocess.run(
        "tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1", *bad,
        "--db", f"sqlite:///{tmp_path / 'arena.db'}", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.startswith("error: "), done.stderr
    assert started == []


@pytest.mark.parametrize(("level", "same"), [("confined", True), ("partial", True), ("off", False)])
def test_a_server_started_ahead_is_kept_only_for_its_level(
    monkeypatch: pytest.MonkeyPatch, level: str, same: bool
) -> None:
    """The server started ahead has the confined bots' environment; a probe that finds no layer
    at all (level off: the arena's own environment) has it replaced, the first one closed."""
    import contextlib

    from bot_arena.arena.api import new_run
    from bot_arena.arena.match.confinement import server_env
    from bot_arena.arena.tournament import job_handle
    from bot_arena.arena.transport.sandbox.mode import CONFINED

    class Server:
        def __init__(self, env: dict[str, str] | None) -> None:
            self.env, self.closed, self.released = env, False, False

        def close(self) -> None:
            self.closed = True

        def release(self) -> None:
            self.released = True

    monkeypatch.setattr(job_handle, "start_job_server", Server)
    ahead = Server(server_env(CONFINED))
    with contextlib.ExitStack() as helpers:
        chosen = new_run._server_for(level, ahead, helpers)  # type: ignore[arg-type]
        assert (chosen is ahead) is same
        assert ahead.closed is not same
        assert chosen is not None and chosen.env == server_env(level)
    assert chosen.released is not same  # a server started here is given back with the run


def test_the_engines_programs_are_hashed_beside_the_checks_not_before_their_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new run hashes its engines' programs on a thread of its own while it checks its
    options (``botspec.hash_ahead``): a large program (stockfish is 47 MB) is read there, once,
    while the options are still being checked (here the check waits until both are read: it
    waits in vain when nothing reads them ahead), and the run's own resolve finds each digest
    kept and reads neither again."""
    from bot_arena.arena.api.spec import TournamentSpec

    monkeypatch.setattr(digests, "SETTLED_S", 0.0)  # the programs were written just now
    digests.forget()
    db = tmp_path / "arena.db"
    (a, _), (b, _) = _engine(tmp_path, "a"), _engine(tmp_path, "b")
    for name in ("a", "b"):  # large enough for their digests to be kept
        with (tmp_path / f"{name}.py").open("a") as program:
            program.write("#" + "x" * digests.MIN_CACHED + "\n")
    readers: list[tuple[str, str]] = []
    both_read = threading.Event()
    read, validate = Scan.read, TournamentSpec.validate

    def noted(self: Scan, real: str) -> bytes:
        data = read(self, real)
        readers.append((Path(real).name, threading.current_thread().name))
        if {"a.py", "b.py"} <= {name for name, _ in readers}:
            both_read.set()
        return data

    read_during_checks: list[bool] = []

    def checked_once_read(self: TournamentSpec) -> object:
        read_during_checks.append(both_read.wait(30))  # a bound, not a guess at a time
        return validate(self)

    monkeypatch.setattr(Scan, "read", noted)
    monkeypatch.setattr(TournamentSpec, "validate", checked_once_read)
    try:
        done = _two_games(tmp_path, a, b, db)
    finally:
        digests.forget()
    assert done.returncode == 0, done.stderr
    assert read_during_checks == [True], readers
    programs = sorted(r for r in readers if r[0] in ("a.py", "b.py"))
    assert programs == [("a.py", "hash-ahead"), ("b.py", "hash-ahead")], readers
