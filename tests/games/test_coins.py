"""The coin game: the known winning move by brute force, N-player utilities, text forms."""

from __future__ import annotations

from functools import cache

import pytest

from bot_arena import games
from bot_arena.games.base import GameError
from bot_arena.games.coins import CoinsGame, CoinsState


def mover_wins(game: CoinsGame, state: CoinsState) -> bool:
    """Two-player brute force: can the player to move force taking the last coin?"""

    @cache
    def wins(s: CoinsState) -> bool:
        if game.is_terminal(s):
            return False  # the previous player took the last coin
        return any(not wins(game.apply(s, m)) for m in game.legal_moves(s))

    return wins(state)


def test_four_coins_taking_one_is_the_only_winning_first_move() -> None:
    game = games.get("coins")
    assert isinstance(game, CoinsGame)
    start = game.initial_state()
    assert start == (4, 0) and list(game.legal_moves(start)) == [1, 2]
    winning = [m for m in game.legal_moves(start) if not mover_wins(game, game.apply(start, m))]
    assert winning == [1]


@pytest.mark.parametrize("max_take", [1, 2, 3, 4])
def test_mover_loses_exactly_on_multiples_of_max_take_plus_one(max_take: int) -> None:
    game = CoinsGame(coins=20, max_take=max_take)
    for left in range(21):
        assert mover_wins(game, (left, 0)) == (left % (max_take + 1) != 0), left


def test_utilities_two_and_three_players() -> None:
    two = CoinsGame(coins=3)
    end = two.apply(two.apply(two.initial_state(), 2), 1)  # player 1 takes the last coin
    assert two.is_terminal(end) and two.utility(end) == (-1.0, 1.0)
    three = CoinsGame(coins=3, max_take=1, players=3)
    s = three.initial_state()
    for _ in range(3):
        s = three.apply(s, 1)
    assert three.utility(s) == (0.0, 0.0, 1.0)
    assert three.kind.value == "constant-sum" and three.bounds.max_sum == 1


def test_text_forms_and_errors() -> None:
    game = CoinsGame(coins=5, players=3)
    assert game.parse_position("3@2") == (3, 2) and game.format_position((3, 2)) == "3@2"
    assert game.parse_position("3") == (3, 0)
    for bad in ("x", "3@3", "-1", "3@x"):
        with pytest.raises(GameError):
            game.parse_position(bad)
    for bad in ("0", "3", "two"):
        with pytest.raises(GameError):
            game.parse_move(bad)
    with pytest.raises(GameError, match="illegal move"):
        game.move_from_text((1, 0), "2")
    assert "player 2 took the last coin" in game.render((0, 0))


@pytest.mark.parametrize(
    ("params", "why"),
    [
        ({"coins": -1}, "coins must be"),
        ({"max_take": 0}, "max_take must be"),
        ({"players": 1}, "players must be"),
        ({"coins": "many"}, "not a valid int"),
    ],
)
def test_bad_parameters(params: dict[str, object], why: str) -> None:
    with pytest.raises(GameError, match=why):
        games.get("coins", **params)
