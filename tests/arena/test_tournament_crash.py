"""Crash safety: a tournament killed (SIGKILL, Ctrl-C) at several points and resumed plays
exactly its schedule, every match once; two tournaments share one SQLite file at once."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

from arena.schedule import schedule

FIELD = ["random", "random:seed=1", "random:seed=2"]
GAMES = 40  # enough matches that every kill lands mid-run, however fast the games
SEED = 3
TOTAL = 3 * GAMES  # C(3, 2) pairs
POLL_LIMIT_S = 120.0  # a guard against a hung run, never a guess at how long something takes


def arena_cmd(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "arena.cli.app", *args, "--db", f"sqlite:///{db}"]


def run_cmd(db: Path, jobs: int) -> list[str]:
    args = ["tournament", "run", "tictactoe", "--games", str(GAMES), "--seed", str(SEED)]
    for spec in FIELD:
        args += ["--bot", spec]
    return arena_cmd(db, *args, "--jobs", str(jobs), "--move-time", "5")


def query(db: Path, sql: str) -> list[tuple[Any, ...]]:
    """Read-only look at the database (the runner may be writing)."""
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return list(conn.execute(sql))
    except sqlite3.OperationalError as exc:  # schema not created yet
        if "no such table" in str(exc):
            return []
        raise
    finally:
        conn.close()


def count(db: Path, sql: str) -> int:
    rows = query(db, sql)
    return int(rows[0][0]) if rows else 0


def done(db: Path) -> int:
    return count(db, "SELECT count(*) FROM matches WHERE status = 'done'")


@contextmanager
def started(cmd: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        with_group_gone(proc.pid)


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


def wait_until(proc: subprocess.Popen[bytes], condition: Any, log: Path) -> None:
    end = time.monotonic() + POLL_LIMIT_S
    while not condition():
        assert proc.poll() is None, f"runner exited early:\n{log.read_text()}"
        assert time.monotonic() < end, f"condition not reached:\n{log.read_text()}"
        time.sleep(0.02)


def done_snapshot(db: Path) -> dict[int, str]:
    """Each done match with a digest of everything stored about it."""
    out: dict[int, str] = {}
    for (mid,) in query(db, "SELECT id FROM matches WHERE status = 'done'"):
        rows = query(db, f"SELECT * FROM matches WHERE id = {mid}")
        rows += query(db, f"SELECT * FROM seats WHERE match_id = {mid} ORDER BY seat")
        rows += query(db, f"SELECT * FROM moves WHERE match_id = {mid} ORDER BY ply")
        out[mid] = hashlib.sha256(repr(rows).encode()).hexdigest()
    return out


def test_killed_at_several_points_then_resumed_plays_the_schedule_exactly(
    tmp_path: Path,
) -> None:
    db = tmp_path / "crash.db"
    log = tmp_path / "log.txt"
    kept: dict[int, str] = {}

    # 1. killed the moment the schedule is written, before any game is stored
    with started(run_cmd(db, jobs=2), log) as proc:
        wait_until(proc, lambda: count(db, "SELECT count(*) FROM matches") == TOTAL, log)
        proc.send_signal(signal.SIGKILL)
    assert done(db) < TOTAL
    kept.update(done_snapshot(db))

    # 2. resumed, killed with SIGKILL after a few matches
    resume = arena_cmd(db, "tournament", "resume", "1", "--jobs", "2")
    before = done(db)
    with started(resume, log) as proc:
        wait_until(proc, lambda: done(db) >= before + 5, log)
        proc.send_signal(signal.SIGKILL)
    snap = done_snapshot(db)
    assert all(snap[m] == digest for m, digest in kept.items())  # nothing done was touched
    kept.update(snap)

    # 3. resumed in one job, interrupted with Ctrl-C (SIGINT to the whole process group)
    resume1 = arena_cmd(db, "tournament", "resume", "1", "--jobs", "1")
    before = done(db)
    with started(resume1, log) as proc:
        wait_until(proc, lambda: done(db) >= before + 5, log)  # the runner is under way
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=POLL_LIMIT_S) == 130
    assert "arena tournament resume 1" in log.read_text()
    snap = done_snapshot(db)
    assert all(snap[m] == digest for m, digest in kept.items())
    kept.update(snap)

    # 4. resumed to the end
    with started(resume1, log) as proc:
        assert proc.wait(timeout=POLL_LIMIT_S) == 0, log.read_text()
    snap = done_snapshot(db)
    assert all(snap[m] == digest for m, digest in kept.items())

    assert query(db, "SELECT status, count(*) FROM matches GROUP BY status") == [("done", TOTAL)]
    assert query(db, "SELECT status FROM tournaments") == [("done",)]
    assert query(db, "PRAGMA integrity_check") == [("ok",)]
    assert query(db, "PRAGMA foreign_key_check") == []
    # exactly the schedule: the same seatings in the same order, no duplicates
    seated = query(
        db,
        "SELECT m.id, group_concat(b.name, ',') FROM (SELECT * FROM seats ORDER BY seat) s"
        " JOIN matches m ON m.id = s.match_id JOIN bot_versions v ON v.id = s.bot_version_id"
        " JOIN bots b ON b.id = v.bot_id GROUP BY m.id ORDER BY m.id",
    )
    expected = [
        ",".join(FIELD[i] for i in p.seats) for p in schedule("round-robin", 3, 2, GAMES, SEED)
    ]
    assert [names for _, names in seated] == expected
    # every match's moves are plies 0..n-1 with no gaps or repeats
    for mid, plies, top in query(
        db, "SELECT match_id, count(*), max(ply) FROM moves GROUP BY match_id"
    ):
        assert plies == top + 1, mid
    assert count(db, "SELECT count(*) FROM seats WHERE rank IS NULL") == 0


def test_two_tournaments_share_one_database(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    logs = [tmp_path / "a.txt", tmp_path / "b.txt"]
    with started(run_cmd(db, jobs=1), logs[0]) as a, started(run_cmd(db, jobs=1), logs[1]) as b:
        assert a.wait(timeout=POLL_LIMIT_S) == 0, logs[0].read_text()
        assert b.wait(timeout=POLL_LIMIT_S) == 0, logs[1].read_text()
    for log in logs:
        assert "locked" not in log.read_text()
    assert query(db, "SELECT id, status FROM tournaments ORDER BY id") == [(1, "done"), (2, "done")]
    assert query(
        db, "SELECT tournament_id, count(*) FROM matches WHERE status='done' GROUP BY 1"
    ) == [(1, TOTAL), (2, TOTAL)]
    assert query(db, "PRAGMA integrity_check") == [("ok",)]


@pytest.fixture(autouse=True)
def _no_arena_db_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_DB", raising=False)
