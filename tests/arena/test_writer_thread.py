"""The runner's writer thread (``tournament/committer.py``): a group is stored all-or-nothing
even when the process is killed while the thread is inside the group's transaction, a resume
then stores every match once; an error of the database in the thread ends the run with that
error (nothing hangs, the thread ends); a worker's queue deepens with its measured pace."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from bot_arena import games
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.tournament import pacing
from bot_arena.arena.tournament.create import create
from bot_arena.arena.tournament.runner import Runner
from bot_arena.db.session import make_engine, session_factory
from tests.arena.test_tournament_crash import with_group_gone
from tests.db.dbtest import Db

FIELD = ["random:seed=1", "random:seed=2", "random:seed=3"]
GAMES = 40  # per pair: 120 matches
TOTAL = 3 * GAMES
HELD_GROUP = 3  # the group commit during which the process is killed

# Creates the tournament, then runs it with two jobs; the writers' complete_matches is wrapped
# so that during the HELD_GROUP-th group (its rows written, its transaction not committed) it
# prints the group's match ids and waits on stdin for ever: the test kills it there.
SCRIPT = textwrap.dedent(
    """
    import json, sys
    from bot_arena import games
    from bot_arena.arena.match.botspec import resolve
    from bot_arena.arena.match.timecontrol import TimeControl
    from bot_arena.arena.tournament.create import create
    from bot_arena.arena.tournament.runner import Runner
    from bot_arena.db import core_writer, pg_fast, sqlite_fast
    from bot_arena.db.session import make_engine, session_factory

    url, field = sys.argv[1], json.loads(sys.argv[2])
    games_per_pair, held = int(sys.argv[3]), int(sys.argv[4])
    groups = 0

    def wrap(cls):
        original = cls.complete_matches

        def complete_matches(self, items, *, sandbox):
            global groups
            stored = original(self, items, sandbox=sandbox)
            groups += 1
            if groups == held:
                print(json.dumps([item[0] for item in items]), flush=True)
                sys.stdin.read()  # held inside the transaction until killed
            return stored

        cls.complete_matches = complete_matches

    wrap(sqlite_fast.SQLiteWriter)
    wrap(core_writer.CoreWriter)
    wrap(pg_fast.PostgresWriter)
    factory = session_factory(make_engine(url))
    refs = [resolve(s) for s in field]
    tid = create(factory, games.get("tictactoe"), field, refs, fmt="round-robin",
                 games_per_group=games_per_pair, time_control=TimeControl(move_time=5.0),
                 seed=3, opening_plies=0)
    print(tid, flush=True)
    Runner(factory, tid, refs, jobs=2).run()
    """
)


def _consistent(db: Db) -> dict[int, int]:
    """Each match's stored moves; every done match has its seats scored and its moves, every
    other one neither (nothing of a result outside a committed group)."""
    status = dict(db.query("SELECT id, status FROM matches"))
    moves = dict(db.query("SELECT match_id, count(*) FROM moves GROUP BY match_id"))
    scored = dict(
        db.query("SELECT match_id, count(*) FROM seats WHERE score IS NOT NULL GROUP BY match_id")
    )
    for mid, state in status.items():
        if state == "done":
            assert moves.get(mid, 0) > 0 and scored.get(mid) == 2, mid
        else:
            assert mid not in moves and mid not in scored, (mid, state)
    return {mid: moves.get(mid, 0) for mid in status}


def test_killed_inside_a_group_commit_the_group_is_not_stored_and_resume_stores_it_once(
    db: Db, tmp_path: Path
) -> None:
    argv = [sys.executable, "-c", SCRIPT, db.url, json.dumps(FIELD), str(GAMES), str(HELD_GROUP)]
    log = tmp_path / "run.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            start_new_session=True,
        )
    try:
        assert proc.stdout is not None
        tid = int(proc.stdout.readline())
        line = proc.stdout.readline()  # the held group: its rows written, not committed
        assert line, log.read_text()
        held = json.loads(line)
        assert held
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        with_group_gone(proc.pid)
    status = dict(db.query("SELECT id, status FROM matches"))
    assert len(status) == TOTAL
    assert not [m for m in held if status[m] == "done"]
    before = _consistent(db)
    done_before = {m for m, s in status.items() if s == "done"}
    assert 0 < len(done_before) < TOTAL  # two groups stored, the held one not

    engine = make_engine(db.url)
    try:
        refs = [resolve(s) for s in FIELD]
        outcome = Runner(session_factory(engine), tid, refs, jobs=2).run()
    finally:
        engine.dispose()
    assert outcome.finished and outcome.played == TOTAL - len(done_before)
    after = _consistent(db)
    assert all(s == "done" for (s,) in db.query("SELECT status FROM matches"))
    assert {m: after[m] for m in done_before} == {m: before[m] for m in done_before}
    plies = db.query("SELECT match_id, ply, count(*) FROM moves GROUP BY match_id, ply")
    assert all(n == 1 for _, _, n in plies)  # no move stored twice


def _tournament(tmp_path: Path, games_per_pair: int) -> tuple[Any, int, list[Any]]:
    factory = session_factory(make_engine(f"sqlite:///{tmp_path / 'arena.db'}"))
    refs = [resolve(s) for s in FIELD]
    tid = create(
        factory,
        games.get("tictactoe"),
        FIELD,
        refs,
        fmt="round-robin",
        games_per_group=games_per_pair,
        time_control=TimeControl(move_time=5.0),
        seed=1,
        opening_plies=0,
    )
    return factory, tid, refs


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_error_of_the_database_in_the_writer_thread_ends_the_run_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    from bot_arena.db import sqlite_fast

    def broken(self: Any, items: Any, *, sandbox: Any) -> list[bool]:
        raise RuntimeError("the disk is on fire")

    monkeypatch.setattr(sqlite_fast.SQLiteWriter, "complete_matches", broken)
    factory, tid, refs = _tournament(tmp_path, 10)
    with open(os.devnull, "w") as quiet:
        run = Runner(factory, tid, refs, jobs=jobs, progress_stream=quiet, tty=False)
        with pytest.raises(RuntimeError, match="the disk is on fire"):
            run.run()
    assert not [t for t in threading.enumerate() if t.name.startswith("arena-writer")]
    factory.kw["bind"].dispose()


def test_a_fast_worker_keeps_more_matches_queued() -> None:
    """Its queue holds AHEAD_S of work at its pace, between its own minimum and MAX_DEPTH."""

    class Worker:
        depth = 2
        ahead_s = 0.02

    paces = pacing.Pacing()
    fast, slow, new = Worker(), Worker(), Worker()
    paces.paces[fast] = (0.001, 0.0)
    paces.paces[slow] = (1.5, 0.0)
    assert paces.depth(new) == 2
    assert paces.depth(slow) == 2
    assert paces.depth(fast) == math.ceil(0.02 / 0.001)
    paces.paces[fast] = (1e-7, 0.0)
    assert paces.depth(fast) == pacing.MAX_DEPTH
