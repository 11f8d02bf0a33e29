"""One runner a tournament, claimed atomically (issue 31): two real processes resume the same
tournament at the same instant (released together by a barrier), round after round, each as
``arena tournament resume`` does (``check_resume``, then the runner reads what is left to play
and records itself: ``Runner._prepare``). Exactly one of them gets to play each time; the
other is refused with the resume's own line. On both backends. The last test runs the command
itself (a fork of a started CLI: tests/forked_cli.py) against a live runner."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bot_arena import games
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.tournament.create import create, played_by
from bot_arena.db.session import make_engine, session_factory
from tests.db.dbtest import Db
from tests.forked_cli import Server
from tests.racers import line, race

ROUNDS = 40  # tournaments raced for: a check-then-record resume lets both play in some round

# The racer: for each tournament, say "ready", wait for the barrier's "go", then resume it as
# the command does up to the point where the run starts playing; say what it got. Its command
# line names bot_arena, so each sees the other as a live arena process (the one that plays the
# last round must still be alive when the other reads its command line).
RACER = """
import sys
from bot_arena.arena.api.errors import ArenaError
from bot_arena.arena.api.resume import check_resume
from bot_arena.arena.tournament.create import TournamentError
from bot_arena.arena.tournament.runner import Runner
from bot_arena.db.session import make_engine, session_factory
from bot_arena.db.store import lookup_bot
factory = session_factory(make_engine(sys.argv[1]))
for tid in map(int, sys.argv[2:]):
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        sys.exit(3)
    try:
        with factory() as session:
            field = check_resume(session, tid, lambda name: lookup_bot(session, name))
        Runner(factory, tid, field.refs, jobs=1)._prepare()
    except (ArenaError, TournamentError) as exc:
        print(f"refused: {exc}", flush=True)
    else:
        print("playing", flush=True)
sys.stdin.read()  # alive, as a runner that plays, until the last round is checked
"""

# what the racer imports before its first round (check_resume's lazy imports with it), once
# for both racers: they are forks of the interpreter that imported them
PRELOAD = (
    "bot_arena.arena.api.errors",
    "bot_arena.arena.api.resume",
    "bot_arena.arena.tournament.create",
    "bot_arena.arena.tournament.runner",
    "bot_arena.arena.tournament.schedule",
    "bot_arena.arena.transport.limits",
    "bot_arena.db.queries",
    "bot_arena.db.session",
    "bot_arena.db.store",
    "bot_arena.games",
)


def _tournaments(url: str, count: int) -> list[int]:
    """Tournaments stored with every match pending, as a run killed before its first game."""
    specs = ["random", "random:seed=2"]
    engine = make_engine(url)
    try:
        return [
            create(
                session_factory(engine),
                games.get("tictactoe"),
                specs,
                [resolve(s) for s in specs],
                fmt="round-robin",
                games_per_group=2,
                time_control=TimeControl(move_time=5.0),
                seed=i,
                opening_plies=0,
            )
            for i in range(count)
        ]
    finally:
        engine.dispose()


def test_two_resumes_at_the_same_instant_exactly_one_plays(db: Db) -> None:
    ids = _tournaments(db.url, ROUNDS)

    def check(tid: int, got: list[str], pids: list[int]) -> None:
        assert got.count("playing") == 1, (tid, got)  # exactly one plays
        winner, loser = (0, 1) if got[0] == "playing" else (1, 0)
        assert got[loser] == f"refused: {played_by(tid, pids[winner])}", got

    race(RACER, [db.url, *map(str, ids)], ids, check, preload=PRELOAD)


# A live runner holding a tournament: it claims it, says so, and waits for its stdin to close.
HOLDER = """
import sys
from bot_arena.arena.tournament.create import claim_runner
from bot_arena.db.session import make_engine, session_factory
factory = session_factory(make_engine(sys.argv[1]))
with factory.begin() as session:
    assert claim_runner(session, int(sys.argv[2])) is None
print("holding", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def cli(arena_cli: Server) -> Server:
    """The resume commands, forked from the test process's server of commands, which started
    Python and imported the CLI and what a resume imports once (tests/forked_cli.py): their
    subject is what the command says of a live runner, the holder, which stays a process of
    its own (it is told by its ``/proc`` command line), not the interpreter's start-up."""
    return arena_cli


def test_resume_while_another_process_plays_is_one_line_and_exit_2(db: Db, cli: Server) -> None:
    (tid,) = _tournaments(db.url, 1)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, db.url, str(tid)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert line(holder) == "holding"
        done = cli.run(
            ["tournament", "resume", str(tid), "--jobs", "1", "--db", db.url],
            cwd=os.getcwd(), env=os.environ, timeout=300,
        )  # fmt: skip
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines() == [f"error: {played_by(tid, holder.pid)}"]
    assert db.query(f"SELECT COUNT(*) FROM matches WHERE tournament_id = {tid} "
                    "AND status <> 'pending'") == [(0,)]  # fmt: skip
