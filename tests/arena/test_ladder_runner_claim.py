"""One runner a ladder, claimed atomically (issue 31): two real processes released together
by a barrier claim the same ladder, round after round, and exactly one of them gets it each
time; the other is told the winner's pid. On both backends."""

from __future__ import annotations

from tests.db.dbtest import Db
from tests.racers import race

ROUNDS = 12  # ladders raced for: a read-then-write claim lets both win in some round

# The racer: for each ladder, say "ready", wait for the barrier's "go", claim, say what it got.
# Its command line names bot_arena, so each sees the other as a live arena process.
RACER = """
import os, sys
from bot_arena.db.session import make_engine, session_factory
from bot_arena.arena.tournament.create import claim_runner
factory = session_factory(make_engine(sys.argv[1]))
for tid in sys.argv[2:]:
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        sys.exit(3)
    with factory.begin() as session:
        running = claim_runner(session, int(tid))
    print("claimed" if running is None else f"held {running}", flush=True)
"""


def _ladders(url: str, count: int) -> list[int]:
    from bot_arena.arena.api.ladders import ladder_create

    return [ladder_create(f"race{i}", "tictactoe", db=url, seed=i) for i in range(count)]


def test_two_processes_racing_for_a_ladder_exactly_one_claims_it(db: Db) -> None:
    ids = _ladders(db.url, ROUNDS)

    def check(_: int, got: list[str], pids: list[int]) -> None:
        assert got.count("claimed") == 1, got  # exactly one plays
        winner, loser = (0, 1) if got[0] == "claimed" else (1, 0)
        assert got[loser] == f"held {pids[winner]}", got

    race(RACER, [db.url, *map(str, ids)], ids, check)
