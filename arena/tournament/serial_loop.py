"""``--jobs 1``: the runner's own process plays the matches, one at a time, with one BotPool
(bot processes reused between its games), storing their results between games.

The next match is claimed before the results of the last are handed over, so one write marks
it 'running' with them; the results are stored once their group is due, counting the next game
as taking as long as the last one did.
"""

from __future__ import annotations

import time

from bot_arena.arena.match.pool import BotPool, ServerDied
from bot_arena.arena.match.record import MatchRecord
from bot_arena.arena.tournament.job import play
from bot_arena.arena.tournament.recovery import Recovery
from bot_arena.arena.tournament.run_state import RunState
from bot_arena.arena.tournament.worker_loop import Storing


def play_serially(state: RunState, pool: BotPool, storing: Storing, recovery: Recovery) -> None:
    """Play ``state.todo`` on ``pool`` (its bots started) until the line is empty or the run
    must stop (what is still to play is then dropped)."""
    plan, todo, commits = state.plan, state.todo, storing.commits
    first = state.take(1)
    if not first:
        return
    job = first[0]
    commits.claim(job)
    commits.flush_marks()
    while True:
        began = time.monotonic()
        record: MatchRecord | None = None
        try:
            record = play(pool, state.game, plan, job)
        except ServerDied as exc:
            recovery.incident(job, str(exc))
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:
            state.fail(f"match {job.match_id}: arena error: {type(exc).__name__}: {exc}")
        following = next(iter(state.take(1)), None)
        if following is not None:
            commits.claim(following)
        commits.collect()
        if record is not None:
            storing.accept(state, job, record)
        # the next game will probably take as long as this one did
        if following is None or commits.due(time.monotonic() - began):
            if storing.store(state):
                return  # decided: what is still to play is dropped
            if following is None and todo:
                following = next(iter(state.take(1)), None)
                if following is not None:
                    commits.claim(following)
        if following is None:
            return
        job = following
