"""Crash safety: a tournament killed (SIGKILL, Ctrl-C) at several points and resumed plays
exactly its schedule, every match once; two tournaments share one database at once. Both on
SQLite and, with $ARENA_TEST_PG_URL, on PostgreSQL."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.tournament.schedule import schedule
from bot_arena.arena.transport.process import descendants
from tests.db.dbtest import Db
from tests.forked_cli import Forked, Server

# each test plays tournaments or whole games through separate processes: seconds a test
pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parent / "fixtures"
GAMES = 40
SEED = 3
TOTAL = 3 * GAMES  # C(3, 2) pairs
POLL_LIMIT_S = 120.0  # a guard against a hung run, never a guess at how long something takes


def arena_cmd(db: Db, *args: str) -> list[str]:
    return [sys.executable, "-m", "bot_arena.arena.cli.app", *args, "--db", db.url]


def run_cmd(db: Db, jobs: int, field: list[str], *extra: str) -> list[str]:
    args = ["tournament", "run", "tictactoe", "--games", str(GAMES), "--seed", str(SEED)]
    for spec in field:
        args += ["--bot", spec]
    return arena_cmd(db, *args, "--jobs", str(jobs), "--move-time", "5", *extra)


def count(db: Db, sql: str) -> int:
    rows = db.query(sql)
    return int(rows[0][0]) if rows else 0


def done(db: Db) -> int:
    return count(db, "SELECT count(*) FROM matches WHERE status = 'done'")


class Gate:
    """The gated bot (``fixtures/gated_random.py``, copied into ``folder`` with its helper
    package ``move_gate/``) and its tokens: bytes in the FIFO ``move_gate/tokens``, one per move,
    taken by whichever of its processes reads first. It only reads a file of its own package, so
    it runs confined as well as not. While ``hold`` is in force this end keeps the FIFO open
    (read and write: neither end's open blocks) and the bot waits for tokens; otherwise it reads
    end-of-file and moves freely."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        shutil.copyfile(FIXTURES / "gated_random.py", folder / "gated_random.py")
        (folder / "move_gate").mkdir()
        # a regular package (a data folder that is only a namespace package is not opened to
        # a confined bot: paths._is_package)
        (folder / "move_gate" / "__init__.py").write_text("")
        self.fifo = folder / "move_gate" / "tokens"
        os.mkfifo(self.fifo)
        self.bot = str(folder / "gated_random.py")
        self.fd: int | None = None

    def field(self) -> list[str]:
        return ["random", "random:seed=1", self.bot]  # the gated bot moves only with tokens

    def hold(self) -> None:
        """From now on the bot waits for tokens (none yet)."""
        self.fd = os.open(self.fifo, os.O_RDWR | os.O_NONBLOCK)

    def give(self, moves: int) -> None:
        """Let the gated bot make ``moves`` more moves (across all its processes)."""
        assert self.fd is not None and 0 < moves < 4096  # well within a pipe's buffer
        assert os.write(self.fd, b"t" * moves) == moves

    def left(self) -> int:
        """Tokens not taken yet (bytes in the pipe)."""
        assert self.fd is not None
        return int(struct.unpack("i", fcntl.ioctl(self.fd, termios.FIONREAD, b"\0" * 4))[0])

    def release(self) -> None:
        """No gate any more: the bot moves freely."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def ended(proc: subprocess.Popen[bytes] | Forked) -> None:
    """``proc`` (a Popen, or a fork's handle) killed if it still runs, waited for, and its
    process group gone."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    with_group_gone(proc.pid)


@contextmanager
def started(cmd: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The command running in its own process group."""
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield proc
    finally:
        ended(proc)


@pytest.fixture
def cli(arena_cli: Server) -> Server:
    """The runs killed and resumed here, forked from the test process's server of commands,
    which started Python and imported the CLI once (tests/forked_cli.py): the subject is what
    a killed run leaves and what a resume makes of it, not the interpreter's start-up (about
    0.6 s of CPU a run)."""
    return arena_cli


@contextmanager
def forked(cli: Server, cmd: list[str], log: Path) -> Iterator[Forked]:
    """``started`` for an ``arena`` command (``cmd`` as ``arena_cmd`` makes it) as a fork of
    ``cli``: its own pid and session, stdout and stderr into ``log``, this run's environment."""
    assert cmd[:3] == [sys.executable, "-m", "bot_arena.arena.cli.app"], cmd
    proc = cli.start(cmd[3:], cwd=os.getcwd(), env=os.environ, log=log)
    try:
        yield proc
    finally:
        ended(proc)


@contextmanager
def ctrl_c_heard() -> Iterator[None]:
    """A command started here hears Ctrl-C even when this test run ignores it (as a run started
    in the background by a non-interactive shell does): an ignored SIGINT stays ignored across
    exec, a caught one is reset to its default there, which Python turns into KeyboardInterrupt."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def with_group_gone(pgid: int) -> None:
    """Wait until the job processes noticed their parent is gone and left (bounded), then make
    sure of it."""
    end = time.monotonic() + 30.0
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    with suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def wait_until(proc: subprocess.Popen[bytes] | Forked, condition: Any, log: Path) -> None:
    end = time.monotonic() + POLL_LIMIT_S
    while not condition():
        assert proc.poll() is None, f"runner exited early:\n{log.read_text()}"
        assert time.monotonic() < end, f"condition not reached:\n{log.read_text()}"
        time.sleep(0.02)


def done_snapshot(db: Db) -> dict[int, str]:
    """Each done match with a digest of everything stored about it: its row, its seats' rows
    in seat order and its moves' rows in ply order (three queries in all, each row led by its
    match's id, which the digest leaves out)."""
    rows: dict[int, list[tuple[Any, ...]]] = {}
    for sql in (
        "SELECT m.id, m.* FROM matches m WHERE m.status = 'done' ORDER BY m.id",
        "SELECT s.match_id, s.* FROM seats s JOIN matches m ON m.id = s.match_id"
        " WHERE m.status = 'done' ORDER BY s.match_id, s.seat",
        "SELECT mv.match_id, mv.* FROM moves mv JOIN matches m ON m.id = mv.match_id"
        " WHERE m.status = 'done' ORDER BY mv.match_id, mv.ply",
    ):
        for row in db.query(sql):
            rows.setdefault(int(row[0]), []).append(row[1:])
    return {mid: hashlib.sha256(repr(found).encode()).hexdigest() for mid, found in rows.items()}


def test_killed_at_several_points_then_resumed_plays_the_schedule_exactly(
    tmp_path: Path, db: Db, cli: Server
) -> None:
    log = tmp_path / "log.txt"
    gate = Gate(tmp_path / "gated")
    field = gate.field()
    kept: dict[int, str] = {}
    # Every kill lands mid-run whatever the machine's speed: the gated bot (in two thirds of the
    # matches, some 200 moves in all) gets a few tokens per step, and each signal is sent only
    # once they are all taken, while it waits for the next one.
    gate.hold()
    try:
        # 1. killed once the schedule is written and the gated bot is stuck at its first move
        with forked(cli, run_cmd(db, 2, field), log) as proc:
            wait_until(proc, lambda: count(db, "SELECT count(*) FROM matches") == TOTAL, log)
            proc.send_signal(signal.SIGKILL)
        assert done(db) < TOTAL
        kept.update(done_snapshot(db))

        # 2. resumed, killed with SIGKILL once the gated bot has made 30 more moves
        resume = arena_cmd(db, "tournament", "resume", "1", "--jobs", "2")
        before = done(db)
        gate.give(30)
        with forked(cli, resume, log) as proc:
            wait_until(proc, lambda: gate.left() == 0 and done(db) > before, log)
            proc.send_signal(signal.SIGKILL)
        snap = done_snapshot(db)
        assert all(snap[m] == digest for m, digest in kept.items())  # nothing done was touched
        kept.update(snap)

        # 3. resumed in one job, interrupted with Ctrl-C (SIGINT to the whole process group)
        resume1 = arena_cmd(db, "tournament", "resume", "1", "--jobs", "1")
        before = done(db)
        gate.give(30)
        with ctrl_c_heard(), started(resume1, log) as proc:
            wait_until(proc, lambda: gate.left() == 0 and done(db) > before, log)
            os.killpg(proc.pid, signal.SIGINT)
            assert proc.wait(timeout=POLL_LIMIT_S) == 130
        assert "arena tournament resume 1" in log.read_text()
        snap = done_snapshot(db)
        assert all(snap[m] == digest for m, digest in kept.items())
        kept.update(snap)
    finally:
        gate.release()

    # 4. resumed to the end
    with forked(cli, resume1, log) as proc:
        assert proc.wait(timeout=POLL_LIMIT_S) == 0, log.read_text()
    snap = done_snapshot(db)
    assert all(snap[m] == digest for m, digest in kept.items())

    assert db.query("SELECT status, count(*) FROM matches GROUP BY status") == [("done", TOTAL)]
    assert db.query("SELECT status FROM tournaments") == [("done",)]
    if db.sqlite is not None:
        assert db.query("PRAGMA integrity_check") == [("ok",)]
        assert db.query("PRAGMA foreign_key_check") == []
    # exactly the schedule: the same seatings in the same order, no duplicates
    seated: dict[int, list[str]] = {}
    for mid, name in db.query(
        "SELECT s.match_id, b.name FROM seats s JOIN bot_versions v ON v.id = s.bot_version_id"
        " JOIN bots b ON b.id = v.bot_id ORDER BY s.match_id, s.seat"
    ):
        seated.setdefault(mid, []).append(name)
    names = [resolve(spec).name for spec in field]
    expected = [[names[i] for i in p.seats] for p in schedule("round-robin", 3, 2, GAMES, SEED)]
    assert [seated[mid] for mid in sorted(seated)] == expected
    # every match's moves are plies 0..n-1 with no gaps or repeats
    for mid, plies, top in db.query(
        "SELECT match_id, count(*), max(ply) FROM moves GROUP BY match_id"
    ):
        assert plies == top + 1, mid
    assert count(db, "SELECT count(*) FROM seats WHERE rank IS NULL") == 0


@pytest.mark.new_schema  # its subject: the making of the database
def test_two_tournaments_share_one_database(tmp_path: Path, db: Db) -> None:
    logs = [tmp_path / "a.txt", tmp_path / "b.txt"]
    field = Gate(tmp_path / "gated").field()  # never held: the gated bot moves freely
    # unconfined: two runs writing one database are the subject, not the bots' confinement
    # (the sandbox's probe and bots started as clean interpreters: 0.35 s of CPU a run)
    run = run_cmd(db, 1, field, "--sandbox", "off")
    with started(run, logs[0]) as a, started(run, logs[1]) as b:
        assert a.wait(timeout=POLL_LIMIT_S) == 0, logs[0].read_text()
        assert b.wait(timeout=POLL_LIMIT_S) == 0, logs[1].read_text()
    for log in logs:
        assert "locked" not in log.read_text()
    assert count(db, "SELECT count(*) FROM seats WHERE fault IS NOT NULL") == 0  # all played
    assert db.query("SELECT id, status FROM tournaments ORDER BY id") == [(1, "done"), (2, "done")]
    assert db.query(
        "SELECT tournament_id, count(*) FROM matches WHERE status='done' GROUP BY 1 ORDER BY 1"
    ) == [(1, TOTAL), (2, TOTAL)]
    if db.sqlite is not None:
        assert db.query("PRAGMA integrity_check") == [("ok",)]


def runner_pid(db: Db) -> int | None:
    rows = db.query("SELECT settings FROM tournaments")
    if not rows:
        return None
    settings = json.loads(rows[0][0]) if isinstance(rows[0][0], str) else rows[0][0]
    pid = settings.get("runner", {}).get("pid")
    return int(pid) if pid is not None else None


def test_a_tournament_being_played_is_not_resumed_twice(tmp_path: Path) -> None:
    db = Db(f"sqlite:///{tmp_path / 'twice.db'}")
    log = tmp_path / "log.txt"
    # The gated bot, held without tokens: the first runner is still playing its first game
    # however long the refused resume takes to start (a bot sleeping a second a move finished
    # both games first at load 30).
    gate = Gate(tmp_path / "gated")
    gate.hold()
    field = ["--bot", gate.bot, "--bot", "random"]
    run = arena_cmd(
        db, "tournament", "run", "tictactoe", *field, "--jobs", "1", "--move-time", "600"
    )
    resume = arena_cmd(db, "tournament", "resume", "1", "--jobs", "1")
    # fresh processes: a runner is told live by its command line (``arena``'s, which a fork of
    # tests/forked_cli.py does not have), so what this test checks is how a real one looks
    with started(run, log) as proc:
        wait_until(proc, lambda: runner_pid(db) == proc.pid, log)
        second = subprocess.run(resume, capture_output=True, text=True, timeout=POLL_LIMIT_S)
        assert second.returncode == 2
        assert f"is being played by process {proc.pid}" in second.stderr
        assert done(db) == 0
        proc.send_signal(signal.SIGKILL)
    with started(resume, log) as proc:  # the killed runner no longer counts
        wait_until(proc, lambda: runner_pid(db) == proc.pid, log)
    gate.release()


@pytest.fixture(autouse=True)
def _no_arena_db_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_DB", raising=False)


def named_process(root: int, name: str) -> int | None:
    """The process under ``root`` whose argv[0] is ``name``, from /proc outside any sandbox."""
    return next((pid for pid in descendants(root) if argv0(pid) == name), None)


def argv0(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except (OSError, UnicodeDecodeError):
        return None


def test_the_database_shows_as_running_the_match_in_play(tmp_path: Path, cli: Server) -> None:
    """While a bot thinks in the second match, the database says: the first done, the second
    running, the third pending (upcoming matches are not marked running ahead of time). The bot
    thinks by running ``sleep`` under a unique name, which the test finds from outside and kills
    to let it go on (it writes nothing: it works confined)."""
    name = f"arena-thinking-{uuid.uuid4().hex}"
    bot = tmp_path / "slow_second.py"
    bot.write_text(
        "import subprocess\n"
        "games = 0\n"
        "waited = False\n"
        "def choose_move(game, state, budget):\n"
        "    global games, waited\n"
        "    if game.format_position(state).count('.') >= 8:  # its first move of a game\n"
        "        games += 1\n"
        "    if games == 2 and not waited:\n"
        "        waited = True\n"
        f"        subprocess.run([{name!r}, '86400'], executable='/bin/sleep')  # until killed\n"
        "    return game.legal_moves(state)[0]\n"
    )
    url = f"sqlite:///{tmp_path / 'running.db'}"
    run = cli.start(
        [
            "tournament",
            "run",
            "tictactoe",
            "--bot",
            str(bot),
            "--bot",
            "random",
            "--games",
            "3",
            "--jobs",
            "1",
            "--move-time",
            "120",
            "--db",
            url,
            "--json",
        ],
        cwd=tmp_path,
        env=os.environ,
        log=tmp_path / "log.txt",
    )
    thinking: int | None = None
    try:
        end = time.monotonic() + POLL_LIMIT_S
        while (thinking := named_process(run.pid, name)) is None:
            assert run.poll() is None and time.monotonic() < end, "the bot never got stuck"
            time.sleep(0.01)
        # the first match's result is stored by the writer thread while the second plays:
        # waited for (the bot thinks until killed), then the second is running, the third not
        listed = "SELECT status FROM matches ORDER BY id"
        while (statuses := [s for (s,) in Db(url).query(listed)])[:1] != ["done"]:
            assert time.monotonic() < end, f"the first match never stored: {statuses}"
            time.sleep(0.01)
        assert statuses == ["done", "running", "pending"]
        os.kill(thinking, signal.SIGKILL)  # the bot goes on
        assert run.wait(POLL_LIMIT_S) == 0
        statuses = Db(url).query("SELECT status FROM matches ORDER BY id")
        assert [s for (s,) in statuses] == ["done", "done", "done"]
    finally:
        if thinking is not None and argv0(thinking) == name:
            with suppress(ProcessLookupError):
                os.kill(thinking, signal.SIGKILL)
        if run.poll() is None:
            run.kill()
            run.wait()
