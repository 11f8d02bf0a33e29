"""Database failures through the real command line: one line naming the database and what to
do, exit 2, never a traceback, never a game played and then lost; SIGTERM ends a tournament
as Ctrl-C does."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from tests import inprocess
from tests.db.dbtest import sqlite_copy
from tests.forked_cli import Server

# each test runs the arena command (tournaments, several processes): seconds a test
pytestmark = pytest.mark.slow

ARENA = [sys.executable, "-m", "bot_arena.arena.cli.app"]
NOBODY = 65534


def run(
    *args: str,
    cwd: Path,
    user: int | None = None,
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> Any:
    """``arena ARGS`` (``env`` added to this process's environment): in this process
    (``tests/inprocess.py``), or in a fresh one as ``user`` when given (a uid to drop to)."""
    if user is None:
        return inprocess.run(*args, cwd=cwd, env=env)
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user else []
    return subprocess.run(
        [*prefix, *ARENA, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def one_line(proc: Any) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return str(lines[0])


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with a finished tournament in it, played once for the module's tests (each
    takes a copy: ``played_db``)."""
    folder = tmp_path_factory.mktemp("played")
    db = folder / "arena.db"
    args = ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1"]
    proc = run(*args, "--games", "2", "--jobs", "1", "--db", f"sqlite:///{db}", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    return db


def played_db(played: Path, folder: Path) -> Path:
    """A copy of the ``played`` database in ``folder``, the test's own."""
    db = folder / "arena.db"
    sqlite_copy(played, db)
    return db


def as_nobody_possible(folder: Path) -> bool:
    """Whether this test can run the arena as another user (root dropping to nobody)."""
    if os.getuid() != 0 or shutil.which("setpriv") is None:
        return False
    probe = run("games", cwd=folder, user=NOBODY)
    return probe.returncode == 0


def test_a_read_only_database_is_refused_before_any_game(played: Path, tmp_path: Path) -> None:
    db = played_db(played, tmp_path)
    before = db.read_bytes()
    # a folder another user can reach (pytest's own are private to this one)
    folder = Path(tempfile.mkdtemp(prefix="arena-ro-"))
    ro = folder / "arena.db"
    shutil.copy(db, ro)
    if os.getuid() == 0:
        if not as_nobody_possible(tmp_path):
            pytest.skip("running as root, and cannot drop to another user here")
        user: int | None = NOBODY
        folder.chmod(0o755)
        ro.chmod(0o644)  # root's file: nobody may read, not write
    else:
        user = None
        ro.chmod(0o444)
        folder.chmod(0o555)
    try:
        url = f"sqlite:///{ro}"
        for args in (
            ["play", "tictactoe", "--no-show"],
            ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=3"],
            [
                "bots",
                "add",
                str(Path(__file__).parent / "fixtures" / "first_legal.py"),
                "-n",
                "b",
                "-g",
                "tictactoe",
            ],
        ):
            line = one_line(run(*args, "--db", url, cwd=tmp_path, user=user))
            assert str(ro) in line and "read-only" in line, line
        assert ro.read_bytes() == before  # nothing written
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_damaged_database_is_one_line_naming_the_file_and_the_fix(
    played: Path, tmp_path: Path
) -> None:
    db = played_db(played, tmp_path)
    with sqlite3.connect(db) as conn:  # out of WAL, so the pages are in the file itself
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        roots = [  # every table's first page but the schema version's: the file still opens
            r
            for (r,) in conn.execute(
                "SELECT rootpage FROM sqlite_master WHERE type = 'table'"
                " AND name NOT IN ('alembic_version', 'sqlite_sequence')"
            )
        ]
    data = bytearray(db.read_bytes())
    for root in roots:
        start = (root - 1) * page
        data[start : start + 100] = os.urandom(100)
    db.write_bytes(bytes(data))
    url = f"sqlite:///{db}"
    for args in (
        ["bots", "list"],
        ["leaderboard"],
        ["matches"],
        ["export", "--format", "csv"],
        ["tournament", "show", "1"],
        ["tournament", "list"],
    ):
        line = one_line(run(*args, "--db", url, cwd=tmp_path))
        assert str(db) in line and "is damaged" in line, (args, line)
        assert line.endswith(f"save what is intact with: sqlite3 {db} .recover"), line


def test_a_database_locked_by_another_process_is_one_line_after_the_wait(
    played: Path, tmp_path: Path
) -> None:
    """Another process holds the write lock for longer than $ARENA_DB_TIMEOUT: every command
    that writes says so in one line after the wait, those that play before playing (each of
    their transactions begins by taking the lock); commands that only read open the file
    read-only and read the last commit without waiting (WAL); a bad timeout value is one line
    too."""
    db = played_db(played, tmp_path)
    url = f"sqlite:///{db}"
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # the write lock, held until the rollback below
        # the lock is held until the rollback below, so any wait ends in the error: the
        # shortest that still prints as a number of seconds (0.3 s waited 0.6 s more)
        quick = {"ARENA_DB_TIMEOUT": "0.1"}
        for args in (
            ["play", "tictactoe", "--no-show"],
            ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=3"],
            ["matches", "void", "1", "--reason", "test"],
        ):
            line = one_line(run(*args, "--db", url, cwd=tmp_path, env=quick))
            assert line == (
                f"error: database {url} stayed locked by another process for 0.1 s (database is "
                "locked); try again when it is done, or wait longer with $ARENA_DB_TIMEOUT"
            ), line
        for args in (["matches"], ["leaderboard"]):
            read = run(*args, "--db", url, cwd=tmp_path, env=quick)
            assert read.returncode == 0 and "random" in read.stdout, read.stderr
    finally:
        holder.rollback()
        holder.close()
    for bad in ("soon", "-1", "nan"):
        line = one_line(run("matches", "--db", url, cwd=tmp_path, env={"ARENA_DB_TIMEOUT": bad}))
        assert line == f"error: $ARENA_DB_TIMEOUT {bad!r}: give seconds, e.g. 60", line
    listed = run("matches", "--json", "--db", url, cwd=tmp_path)  # the lock is gone
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 2, listed.stderr


def test_a_game_whose_result_cannot_be_stored_is_kept_in_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database fails after the game (a full disk, say): the one line names the file that
    holds the record, and that file holds the whole game."""
    from sqlalchemy.exc import OperationalError

    import bot_arena.db.store as store

    def full(*_: Any, **__: Any) -> int:
        raise OperationalError("INSERT", {}, sqlite3.OperationalError("database or disk is full"))

    monkeypatch.setattr(store, "save_match", full)
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "arena.db"
    result = CliRunner().invoke(
        app, ["play", "tictactoe", "--no-show", "--seed", "4", "--db", f"sqlite:///{db}"]
    )
    assert result.exit_code == 1, result.output
    line = result.stderr.strip().splitlines()[-1]
    assert "the disk is full" in line and "the game's record is in " in line, line
    kept = Path(line.rpartition("the game's record is in ")[2])
    record = json.loads(kept.read_text())
    assert record["seed"] == 4 and record["moves"] and record["seats"][0]["bot"] == "random"


def test_a_game_stored_without_sqlalchemy_that_cannot_be_stored_is_kept_in_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same into a database that is there (``db/sqlite_play.py``'s plain path, which
    ``db.store`` never sees): its sqlite3 error is the same one line, the record kept."""
    from bot_arena.db.session import make_engine
    from bot_arena.db.sqlite_play import PlainStore

    def full(*_: Any, **__: Any) -> int:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(PlainStore, "save", full)
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "arena.db"
    make_engine(f"sqlite:///{db}").dispose()
    result = CliRunner().invoke(
        app, ["play", "tictactoe", "--no-show", "--seed", "4", "--db", f"sqlite:///{db}"]
    )
    assert result.exit_code == 1, result.output
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: database sqlite:///{db}: the disk is full"), line
    assert "the game's record is in " in line, line
    kept = Path(line.rpartition("the game's record is in ")[2])
    record = json.loads(kept.read_text())
    assert record["seed"] == 4 and record["moves"] and record["seats"][0]["bot"] == "random"


def test_an_unreachable_server_is_one_line(tmp_path: Path) -> None:
    url = "postgresql+psycopg://postgres@127.0.0.1:1/test"
    line = one_line(run("leaderboard", "--db", url, cwd=tmp_path))
    assert "127.0.0.1:1" in line and "cannot open database" in line, line


def test_sigterm_ends_a_tournament_as_ctrl_c_does(tmp_path: Path, arena_cli: Server) -> None:
    """A real tournament (a process forked from ``arena_cli``) told to stop by SIGTERM once
    some results are stored: exit 130 with the resume hint, and a resume plays exactly what
    was left."""
    db = tmp_path / "arena.db"
    gate = tmp_path / "gate"
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import os, time\n\n"
        "def choose_move(game, state, budget):\n"
        f"    while not os.path.exists({str(gate)!r}):\n"
        "        time.sleep(0.01)\n"
        "    return game.legal_moves(state)[0]\n"
    )
    args = ["tournament", "run", "tictactoe", "--bot", str(slow), "--bot", "random"]
    args += ["--games", "6", "--jobs", "1", "--move-time", "60", "--db", f"sqlite:///{db}"]
    out, err_log = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    proc = arena_cli.start(
        args, cwd=tmp_path, env=os.environ, log=out, stderr=err_log, session=False
    )
    try:
        # the first game waits for the gate: the bot is thinking when SIGTERM comes
        end = time.monotonic() + 60
        while not _running(db) and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        assert _running(db), "the tournament never started a match"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = err_log.read_text()
    assert proc.returncode == 130, err
    assert "continue with: arena tournament resume 1" in err, err
    gate.write_text("")
    resumed = run(
        "tournament", "resume", "1", "--jobs", "1", "--db", f"sqlite:///{db}", cwd=tmp_path
    )
    assert resumed.returncode == 0, resumed.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM matches WHERE status = 'done'").fetchone() == (6,)


def _running(db: Path) -> bool:
    if not db.exists():
        return False
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            row = conn.execute("SELECT count(*) FROM matches WHERE status = 'running'").fetchone()
    except sqlite3.OperationalError:
        return False
    return bool(row and row[0])
