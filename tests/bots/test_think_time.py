"""The time-managed built-in bots keep a reserve before the arena's deadline that scales with
the time given, and ``mcts`` keeps the cyclic collector off while it searches (issue 32, item
13). All on a fake clock: the budget arithmetic is exact, no wall clock is read."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from search_helpers import FakeClock, TickingGame

from bot_arena import games
from bot_arena.bots.base import TimeBudget
from bot_arena.bots.iterative import IterativeBot
from bot_arena.bots.mcts import MCTSBot
from bot_arena.bots.search_common import RESERVE_SHARE, think_time


@pytest.mark.parametrize("move_time", [0.01, 0.1, 0.2, 1.0, 10.0])
def test_the_reserve_scales_with_the_move_time(move_time: float) -> None:
    clock = FakeClock()
    budget = TimeBudget.per_move(move_time, clock=clock)
    assert think_time(None, budget) == pytest.approx(move_time * (1 - RESERVE_SHARE))
    assert think_time(30.0, budget) == pytest.approx(move_time * (1 - RESERVE_SHARE))
    # the bot's own shorter time stands
    assert think_time(move_time / 4, budget) == pytest.approx(move_time / 4)


def test_time_gone_before_the_search_counts() -> None:
    """The deadline is the request's arrival + the move time: what the worker spent before
    the search (reading the position) is gone from the bot's time too."""
    clock = FakeClock()
    budget = TimeBudget.per_move(0.2, clock=clock)
    clock.advance(0.05)
    # 0.15 s left, less a fifth of the 0.15 s: 0.12 s (the allocation says 0.9 * 0.15)
    assert think_time(1.0, budget) == pytest.approx(0.12)
    assert think_time(0.1, budget) == pytest.approx(0.1)
    clock.advance(0.2)  # past the deadline: no time at all
    assert think_time(1.0, budget) == 0.0


def test_a_game_clock_keeps_its_allocation_and_no_limit_stays_none() -> None:
    clock = FakeClock()
    budget = TimeBudget(remaining=2.0, increment=0.02, deadline=2.0, clock=clock)
    assert think_time(None, budget) == pytest.approx(2.0 / 30 + 0.8 * 0.02)
    assert think_time(None, TimeBudget.unlimited()) is None
    assert think_time(0.5, TimeBudget.unlimited()) == 0.5


def test_mcts_stops_at_the_reserve_with_the_collector_off() -> None:
    """A clock that moves a millisecond a read: at 0.1 s a move the search ends at the first
    read past 0.08 s, and every read during the search saw the cyclic collector off; it is on
    again once the bot has answered."""
    seen: list[bool] = []
    clock = FakeClock(per_read=0.001)

    def watched() -> float:
        seen.append(gc.isenabled())
        return clock()

    budget = TimeBudget(move_time=0.1, deadline=0.1, clock=watched)
    bot = MCTSBot(time=5.0, seed=1)
    game = games.get("connect4")
    bot.new_game(game, 0)
    assert gc.isenabled()
    decision = bot.choose_move(game, game.initial_state(), budget)
    assert gc.isenabled()
    assert decision.info is not None
    assert 0.08 <= clock.now <= 0.0835  # the reads before the search, then its last one
    # the budget's reads (collector on), then the search's, one per iteration (off)
    first = seen.index(False)
    assert first <= 3 and all(seen[:first]) and not any(seen[first:]) and len(seen) > 40


def test_iterative_stops_at_the_reserve() -> None:
    """Each new position costs a microsecond: at 0.01 s a move the search may go 0.008 s and
    at most one check interval past it."""
    tick = 1e-6
    clock = FakeClock(give_up=1.0)
    game: Any = TickingGame(games.get("connect4"), clock, tick)
    bot = IterativeBot(time=30.0)
    bot.new_game(game, 0)
    decision = bot.choose_move(game, game.initial_state(), TimeBudget.per_move(0.01, clock=clock))
    info = decision.info
    assert info is not None and info.extra["stopped"] == "time"
    assert 0.004 <= clock.now <= 0.008 + 300 * tick
