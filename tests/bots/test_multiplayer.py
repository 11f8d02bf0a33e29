"""N-player searches: max^n (with and without shallow pruning) and paranoid, against brute force."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from search_helpers import brute_maxn, brute_paranoid, decide, vector_trees

from bot_arena import games
from bot_arena.bots.alphabeta import alphabeta
from bot_arena.bots.maxn import maxn, shallow_pruning_applies
from bot_arena.bots.search_common import UNLIMITED
from bot_arena.games.nim import NimGame, p_position
from bot_arena.games.tree import TreeGame


@settings(max_examples=300, deadline=None)
@given(st.data(), st.sampled_from([3, 4]))
def test_maxn_matches_brute_force_and_shallow_pruning_only_saves_work(
    data: st.DataObject, players: int
) -> None:
    tree = data.draw(vector_trees(players))
    game = TreeGame.from_data(tree)
    assert shallow_pruning_applies(game) == (game.bounds.min_each >= 0)
    value, move = brute_maxn(tree["root"], players)
    plain = maxn(game, 0, UNLIMITED, prune=False)
    pruned = maxn(game, 0, UNLIMITED, prune=True)
    assert plain.values == value and plain.pv[0] == move
    assert pruned.values == value and pruned.pv[0] == move
    assert pruned.leaves <= plain.leaves
    assert plain.cutoffs == 0


def test_shallow_pruning_cuts_where_korf_says() -> None:
    # Three players, sum at most 10. Root (player 0) gets 6 from its first child, so at its second
    # child player 1 can stop as soon as it has 4 or more: player 0 can then get at most 6 there.
    tree = {
        "players": 3,
        "root": [
            [{"utility": [6, 2, 2]}, {"utility": [7, 1, 2]}],
            [{"utility": [1, 5, 4]}, {"utility": [9, 1, 0]}],
        ],
    }
    game = TreeGame.from_data(tree)
    pruned = maxn(game, 0, UNLIMITED, prune=True)
    plain = maxn(game, 0, UNLIMITED, prune=False)
    assert pruned.values == plain.values == (6.0, 2.0, 2.0)
    assert (pruned.leaves, plain.leaves, pruned.cutoffs) == (3, 4, 1)


def test_no_pruning_with_negative_utilities() -> None:
    tree = {"players": 3, "root": [[{"utility": [1, -1, 0]}, {"utility": [0, 2, -2]}]] * 2}
    game = TreeGame.from_data(tree)
    assert not shallow_pruning_applies(game)
    assert maxn(game, 0, UNLIMITED).cutoffs == 0


@settings(max_examples=120, deadline=None)
@given(st.data(), st.sampled_from([2, 3, 4]))
def test_paranoid_matches_brute_force(data: st.DataObject, players: int) -> None:
    tree = data.draw(vector_trees(players))
    game = TreeGame.from_data(tree)
    result = alphabeta(game, 0, UNLIMITED, me=0)
    assert result.value == brute_paranoid(tree["root"], players)
    info = decide("paranoid", game, 0).info
    assert info is not None and info.values is not None
    assert info.values[0] == result.value  # the vector at the end of the PV carries the value


def _nim_brute(game: NimGame) -> Any:
    """max^n over nim with ties to the first move in the game's order, memoised."""

    @functools.cache
    def value(state: Any) -> tuple[float, ...]:
        moves = game.legal_moves(state)
        if not moves:
            return game.utility(state)
        player = game.current_player(state)
        best: tuple[float, ...] | None = None
        for move in moves:
            v = value(game.apply(state, move))
            if best is None or v[player] > best[player]:
                best = v
        assert best is not None
        return best

    return value


@pytest.mark.parametrize("prune", [True, False])
def test_maxn_on_three_player_nim_agrees_with_brute_force_and_the_digit_rule(prune: bool) -> None:
    game = games.get("nim", players=3, piles="1")
    assert isinstance(game, NimGame)
    brute = _nim_brute(game)
    checked = 0
    for piles in itertools.product(range(4), repeat=3):
        if not any(piles) or sum(piles) > 7:
            continue
        state = (piles, checked % 3)
        result = maxn(game, state, UNLIMITED, prune=prune)
        assert result.values == brute(state)
        winner = result.values.index(2.0)
        just_moved = (state[1] - 1) % 3
        assert (winner == just_moved) == p_position(piles, 3)
        checked += 1
    assert checked > 50


def test_maxn_prunes_on_nim() -> None:
    game = games.get("nim", players=3, piles="2,3,3")
    state = game.initial_state()
    pruned = maxn(game, state, UNLIMITED, prune=True)
    plain = maxn(game, state, UNLIMITED, prune=False)
    assert pruned.values == plain.values
    assert pruned.leaves < plain.leaves and pruned.cutoffs > 0


def test_maxn_and_paranoid_play_n_player_coins() -> None:
    game = games.get("coins", coins=7, players=3)
    for spec in ("maxn", "maxn:prune=false", "paranoid", "maxn:depth=2"):
        decision = decide(spec, game, game.initial_state())
        assert decision.move in game.legal_moves(game.initial_state())
        assert decision.info is not None and len(decision.info.values or ()) == 3
