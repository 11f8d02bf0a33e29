"""UCT: finds wins in small won positions, is reproducible from its seed, plays any game."""

from __future__ import annotations

import pytest
from search_helpers import decide

from bot_arena import games
from bot_arena.bots.base import TimeBudget
from bot_arena.bots.mcts import MCTSBot


def test_four_coins_take_one() -> None:
    game = games.get("coins", coins=4)
    decision = decide("mcts:iterations=2000,seed=1", game, game.initial_state())
    assert decision.move == 1
    info = decision.info
    assert info is not None and info.values is not None
    assert info.values[0] > 0.5  # the first player is winning
    assert info.extra["iterations"] == 2000 == info.leaves


@pytest.mark.parametrize(
    ("position", "winning"),
    [
        ("xx./oo./...", "3"),  # x completes the top row
        ("x.x/.o./o..", "2"),  # x completes the top row in the middle
        ("o.x/.x./o.x", "4"),  # o to move wins the left column (x threatens 6)
    ],
)
def test_tictactoe_mate_in_one(position: str, winning: str) -> None:
    game = games.get("tictactoe")
    state = game.parse_position(position)
    decision = decide("mcts:iterations=3000,seed=7", game, state)
    assert game.format_move(decision.move) == winning


def test_same_seed_same_search() -> None:
    game = games.get("tictactoe")
    state = game.initial_state()
    a = decide("mcts:iterations=800,seed=42", game, state)
    b = decide("mcts:iterations=800,seed=42", game, state)
    assert a.move == b.move
    assert a.info is not None and b.info is not None
    assert a.info.to_dict(game) | {"time_s": 0} == b.info.to_dict(game) | {"time_s": 0}


@pytest.mark.parametrize(
    ("name", "params"),
    [("nim", {"players": 3}), ("coins", {"coins": 9, "players": 4}), ("connect4", {})],
)
def test_plays_any_game_and_reports_values_on_its_scale(name: str, params: dict[str, int]) -> None:
    game = games.get(name, **params)
    bot = MCTSBot(iterations=300, seed=3)
    bot.new_game(game, 0)
    state = game.initial_state()
    decision = bot.choose_move(game, state, TimeBudget.unlimited())
    assert decision.move in game.legal_moves(state)
    info = decision.info
    assert info is not None and info.values is not None
    assert len(info.values) == game.num_players
    assert all(game.bounds.min_each - 1e-9 <= v <= game.bounds.max_each + 1e-9 for v in info.values)
    assert info.pv[0] == decision.move
    assert 1 < info.nodes <= 301  # one new node per iteration at most, plus the root


def test_time_budget_from_the_arena() -> None:
    game = games.get("connect4")
    bot = MCTSBot(time=30.0, seed=1)
    decision = bot.choose_move(game, game.initial_state(), TimeBudget.per_move(0.1))
    assert decision.info is not None and decision.info.extra["iterations"] > 0
