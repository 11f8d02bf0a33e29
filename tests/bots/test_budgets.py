"""Time-managed bots stop when their budget says so, measured on a fake clock.

Every bot that manages its time reads "now" from ``TimeBudget.clock``. Here that clock is a
FakeClock that only moves as the search works (each new position costs a tick, or each read of
the clock a step), so how much work a bot did before answering is bounded exactly, with no wall
clock involved: a bot that ignored its budget would run past the allowance (and the clock gives
up on it well before its own ``time`` option would).
"""

from __future__ import annotations

from typing import Any

import pytest
from search_helpers import FakeClock, TickingGame

from bot_arena import bots, games
from bot_arena.bots.base import TimeBudget
from bot_arena.bots.iterative import CHECK_EVERY, IterativeBot
from bot_arena.bots.mcts import MCTSBot
from bot_arena.bots.search_common import SearchAborted, think_time
from bot_arena.bots.solver import ExactSolver

TICK = 1e-6  # fake seconds per new position


def budget_for(kind: str, seconds: float, clock: FakeClock) -> TimeBudget:
    """A budget whose allocation is ``0.9 * seconds`` on ``clock`` (per move or a game clock)."""
    if kind == "per_move":
        return TimeBudget.per_move(seconds, clock=clock)
    return TimeBudget(remaining=seconds * 0.9 * 30, clock=clock)  # allocates remaining / 30


@pytest.mark.parametrize("kind", ["per_move", "game_clock"])
@pytest.mark.parametrize(
    ("name", "allowed_nodes"), [("connect4", 4_500), ("connect4", 5_000), ("rolit", 20_000)]
)
def test_iterative_respects_the_arena_budget(kind: str, name: str, allowed_nodes: int) -> None:
    """From the start, Connect Four's depth 6 ends at 1,721 nodes and depth 7 at 6,099; Rolit's
    depth 6 at 7,069 and depth 7 at 77,752. So each allowance here is spent inside an iteration
    that began before half of it was gone (the bot starts no iteration after that) and would
    overrun it: only the deadline check inside the search keeps the bot within its budget."""
    clock = FakeClock(give_up=10 * allowed_nodes * TICK)
    game: Any = TickingGame(games.get(name), clock, TICK)
    budget = budget_for(kind, allowed_nodes * TICK / 0.9, clock)
    assert budget.allocation() == pytest.approx(allowed_nodes * TICK)
    bot = IterativeBot(time=30.0)  # its own limit is far away: the budget must stop it
    bot.new_game(game, 0)
    state = game.initial_state()
    decision = bot.choose_move(game, state, budget)
    info = decision.info
    assert info is not None and info.extra["stopped"] == "time"
    assert decision.move in game.legal_moves(state)
    # at most one check interval past the deadline (plus the few positions the PV hints make)
    assert info.nodes <= allowed_nodes + CHECK_EVERY
    assert clock.now <= (allowed_nodes + CHECK_EVERY + 4 * info.depth) * TICK
    assert info.nodes >= allowed_nodes / 2  # and it did use most of its time


def test_iterative_time_option_caps_the_budget() -> None:
    clock = FakeClock(give_up=1.0)
    game: Any = TickingGame(games.get("connect4"), clock, TICK)
    bot = IterativeBot(time=5_000 * TICK)  # far less than the arena allows
    decision = bot.choose_move(game, game.initial_state(), TimeBudget.per_move(10.0, clock=clock))
    assert decision.info is not None and decision.info.extra["stopped"] == "time"
    assert decision.info.nodes <= 5_000 + CHECK_EVERY


@pytest.mark.parametrize("kind", ["per_move", "game_clock"])
def test_mcts_respects_the_arena_budget(kind: str) -> None:
    allowed = 20_000  # ticks: a few hundred playouts
    clock = FakeClock(give_up=10 * allowed * TICK)
    game: Any = TickingGame(games.get("connect4"), clock, TICK)
    bot = MCTSBot(time=30.0, seed=1)
    bot.new_game(game, 0)
    state = game.initial_state()
    budget = budget_for(kind, allowed * TICK / 0.9, clock)
    # per move, the reserve before the deadline (a fifth of the move time) comes first
    ticks = round(think_time(None, budget) / TICK)  # type: ignore[operator]
    assert ticks == (allowed if kind == "game_clock" else round(allowed * 0.8 / 0.9))
    decision = bot.choose_move(game, state, budget)
    info = decision.info
    assert info is not None and decision.move in game.legal_moves(state)
    # the clock is read before each iteration, and one iteration makes at most 42 positions
    # (an expansion and a playout to the full board)
    assert ticks <= game.applied <= ticks + 42
    assert 100 < info.extra["iterations"] < allowed


def test_solver_bot_respects_the_arena_budget() -> None:
    """The Connect Four solver works on bitboards (no ``apply``), so here its clock moves a
    second per read (the solver reads it every 2,048 nodes)."""
    clock = FakeClock(per_read=1.0, give_up=100.0)
    game = games.get("connect4")
    bot = bots.make("solver")
    state = game.parse_position("4")  # far out of reach of an exact search
    bot.new_game(game, 1)
    decision = bot.choose_move(game, state, TimeBudget.per_move(10.0, clock=clock))
    assert decision.move in game.legal_moves(state)
    assert decision.info is not None and decision.info.extra["exact"] is False
    # reads at 0 (per_move: deadline 10), 1 (allocation: 0.9 * 9 s left), 2 (the solve's
    # deadline: 2 + 8.1); the solver's reads at 3 .. 10 are in time, the one at 11 is not
    assert clock.reads == 12


@pytest.mark.parametrize(
    ("name", "params"), [("rolit", {}), ("nim", {"players": 2, "piles": "15,15,15,15,15"})]
)
def test_generic_solver_stops_at_its_deadline(name: str, params: dict[str, Any]) -> None:
    game = games.get(name, **params)
    solver = ExactSolver(game, node_limit=10**9)
    clock = FakeClock(per_read=1.0, give_up=100.0)
    with pytest.raises(SearchAborted, match="deadline passed") as caught:
        solver.solve(game.initial_state(), deadline=5.0, clock=clock)
    assert caught.value.reason == "time" and caught.value.move is None
    assert clock.reads == 7  # the reads 0.0 .. 5.0 are not past the deadline, 6.0 is
