"""N-player Nim: placement utilities, text forms, and the digit-sum rule checked by brute force.

What the brute force establishes (plain max^n: each player maximises its own entry):

1. The max^n outcome does not depend on how ties are broken: placement utilities are rotations
   of (0, 1, ..., N-1), so a mover's own entry tells which player took the last stone and hence
   the whole vector; equal values for the mover mean equal vectors. (Checked: ties to the first
   move and ties to the last move give the same vector everywhere.)
2. The player who just moved takes the last stone (gets N-1) exactly when, in every binary
   digit, the pile sizes sum to 0 mod N. Checked for N = 2, 3, 4 on all positions with up to
   4 piles of at most 3 stones, 3 piles of at most 5 (N = 2, 3) and 5 piles of at most 2 (N = 4).
3. Consequently the player to move wins exactly when it can move to such a position; for N = 3
   every other position is won by the player after the mover.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena import games
from bot_arena.games.base import GameError
from bot_arena.games.nim import NimGame, NimState

Vector = tuple[float, ...]


def digit_rule(piles: tuple[int, ...], n: int) -> bool:
    """Every binary digit of the pile sizes sums to 0 mod n (written independently of nim.py)."""
    digits = [format(p, "b")[::-1] for p in piles]
    width = max((len(d) for d in digits), default=0)
    return all(sum(int(d[i]) for d in digits if i < len(d)) % n == 0 for i in range(width))


def solver(game: NimGame, ties_to_first: bool = True) -> Callable[[NimState], Vector]:
    """Plain max^n over the game API: each player maximises its own utility entry."""

    @cache
    def value(state: NimState) -> Vector:
        if game.is_terminal(state):
            return game.utility(state)
        me = game.current_player(state)
        best: Vector | None = None
        for move in game.legal_moves(state):
            v = value(game.apply(state, move))
            if best is None or v[me] > best[me] or (not ties_to_first and v[me] == best[me]):
                best = v
        assert best is not None
        return best

    return value


def positions(max_pile: int, count: int) -> list[tuple[int, ...]]:
    return [p for p in itertools.product(range(max_pile + 1), repeat=count) if any(p)]


SHAPES = [(3, 4), (5, 3)]  # (largest pile, number of piles)
RULE_CASES = [(2, 3, 4), (2, 5, 3), (3, 3, 4), (3, 5, 3), (4, 3, 4), (4, 2, 5)]


@pytest.mark.parametrize(("n", "max_pile", "count"), RULE_CASES)
def test_player_who_just_moved_wins_exactly_on_the_digit_rule(
    n: int, max_pile: int, count: int
) -> None:
    game = NimGame(players=n, piles=",".join("1" * count))
    first, last = solver(game, True), solver(game, False)
    rule_positions = 0
    for piles in positions(max_pile, count):
        for mover in range(n):
            state = (piles, mover)
            v = first(state)
            assert v == last(state), f"tie-breaking changed the outcome at {piles}@{mover}"
            just_moved = (mover - 1) % n
            assert (v[just_moved] == n - 1) == digit_rule(piles, n), (piles, mover, v)
            rule_positions += digit_rule(piles, n)
    assert rule_positions > n  # the rule is not vacuous on these shapes


@pytest.mark.parametrize(("max_pile", "count"), SHAPES)
def test_three_players_mover_wins_iff_it_reaches_the_rule_else_the_next_player(
    max_pile: int, count: int
) -> None:
    n = 3
    game = NimGame(players=n, piles=",".join("1" * count))
    value = solver(game)
    outcomes = {"just moved": 0, "mover": 0, "next": 0}
    for piles in positions(max_pile, count):
        state = (piles, 0)
        winner = value(state).index(n - 1)
        reaches = any(digit_rule(game.apply(state, m)[0], n) for m in game.legal_moves(state))
        if digit_rule(piles, n):
            assert winner == 2
            outcomes["just moved"] += 1
        elif reaches:
            assert winner == 0, piles
            outcomes["mover"] += 1
        else:
            assert winner == 1, piles
            outcomes["next"] += 1
    assert min(outcomes.values()) > 0


def test_two_players_is_bouton() -> None:
    game = NimGame(players=2, piles="1,1,1")
    value = solver(game)
    for piles in positions(5, 3):
        mover_wins = value((piles, 0))[0] == 1
        assert mover_wins == (piles[0] ^ piles[1] ^ piles[2] != 0)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_evaluate_is_exact_wherever_it_names_a_winner(n: int) -> None:
    game = NimGame(players=n, piles="1,1,1,1")
    value = solver(game)
    named = 0
    for piles in positions(3, 4):
        for mover in range(n):
            state = (piles, mover)
            e = game.evaluate(state)
            assert sum(e) == pytest.approx(n * (n - 1) / 2)
            if n - 1 in e:
                assert e.index(n - 1) == value(state).index(n - 1), (piles, mover)
                named += 1
    everything = len(positions(3, 4)) * n
    if n <= 3:  # two and three players: the rule names the winner of every position
        assert named == everything
    else:
        assert 0 < named < everything
    two = NimGame(players=2, piles="1,1,1,1")
    assert all(two.evaluate((p, 0)) == solver(two)((p, 0)) for p in positions(3, 4))


def test_placement_utilities_follow_the_move_order() -> None:
    game = NimGame(players=3, piles="1,1")
    s = game.initial_state()
    s = game.apply(s, game.move_from_text(s, "1:1"))  # player 0
    s = game.apply(s, game.move_from_text(s, "2:1"))  # player 1 takes the last stone
    assert game.is_terminal(s) and game.format_position(s) == "0,0@2"
    assert game.utility(s) == (1.0, 2.0, 0.0)
    assert game.utility(game.parse_position("0,0@0")) == (0.0, 1.0, 2.0)
    four = NimGame(players=4, piles="2")
    assert four.utility(four.parse_position("0@1")) == (3.0, 0.0, 1.0, 2.0)
    two = NimGame(players=2, piles="2")
    assert two.utility(two.parse_position("0@0")) == (0.0, 1.0)


def test_metadata_and_defaults() -> None:
    game = games.get("nim")
    assert isinstance(game, NimGame)
    assert game.num_players == 3 and game.params == {"players": 3, "piles": "3,4,5"}
    assert game.initial_state() == ((3, 4, 5), 0)
    assert game.bounds.min_each == 0 and game.bounds.max_each == 2 and game.bounds.max_sum == 3
    assert game.kind.value == "constant-sum"
    g4 = games.get("nim", players="4", piles="1, 2")
    assert g4.bounds.max_sum == 6 and g4.params["piles"] == "1,2"


def test_moves_text_and_default_order() -> None:
    game = NimGame(players=3, piles="2,1")
    moves = [game.format_move(m) for m in game.legal_moves(game.initial_state())]
    assert moves == ["1:2", "1:1", "2:1"]
    assert game.parse_move(" 2:1 ") == (1, 1)
    with pytest.raises(GameError, match="illegal move"):
        game.move_from_text(game.initial_state(), "2:2")
    with pytest.raises(GameError, match="illegal move"):
        game.move_from_text(game.initial_state(), "3:1")


@pytest.mark.parametrize("text", ["0:1", "1:0", "1-2", "a:b", "12", "", "1:-1"])
def test_bad_moves(text: str) -> None:
    with pytest.raises(GameError, match="PILE:COUNT"):
        NimGame().parse_move(text)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("3,4,x", "not pile sizes"),
        ("3,-4", "negative pile"),
        ("3,4@3", "player 3 is not 0..2"),
        ("3,4@a", "not a number"),
        ("@1", "not pile sizes"),
        ("", "not pile sizes"),
    ],
)
def test_bad_positions(text: str, why: str) -> None:
    with pytest.raises(GameError, match=why):
        NimGame().parse_position(text)


@pytest.mark.parametrize(
    "params", [{"players": 1}, {"piles": ""}, {"piles": "3,-1"}, {"piles": "a"}, {"players": "x"}]
)
def test_bad_parameters(params: dict[str, object]) -> None:
    with pytest.raises(GameError, match="nim"):
        games.get("nim", **params)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=6), st.integers(2, 5), st.data())
def test_position_text_round_trips(piles: list[int], n: int, data: st.DataObject) -> None:
    game = NimGame(players=n)
    player = data.draw(st.integers(0, n - 1))
    state = (tuple(piles), player)
    text = game.format_position(state)
    assert game.parse_position(text) == state
    if player == 0:
        assert game.parse_position(text.partition("@")[0]) == state
    assert game.is_terminal(state) == (not game.legal_moves(state))
    assert len(game.legal_moves(state)) == sum(piles)


def test_render() -> None:
    game = NimGame(players=3, piles="3,0")
    text = game.render(game.initial_state())
    assert "pile 1: ||| (3)" in text and "pile 2: - (0)" in text and "player 0 to move" in text
    end = game.render(game.parse_position("0,0@1"))
    assert "players 0, 2, 1" in end
