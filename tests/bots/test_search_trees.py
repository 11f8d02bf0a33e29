"""Exact searches on explicit trees: the lectures' trees, random trees, Knuth and Moore's counts."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from search_helpers import (
    brute_minimax,
    count_leaves,
    decide,
    lecture_trees,
    uniform_tree,
    worst_ordered_tree,
    zero_sum_trees,
)

from bot_arena.bots.alphabeta import alphabeta
from bot_arena.bots.base import BotError, TimeBudget
from bot_arena.bots.minimax import minimax
from bot_arena.bots.registry import make
from bot_arena.bots.search_common import UNLIMITED
from bot_arena.bots.trace import traced_search
from bot_arena.games.tree import TreeGame

EXACT_BOTS = [
    "minimax",
    "alphabeta",
    "alphabeta:order=true",
    "iterative:time=0",
    "paranoid",
    "maxn",
]
TREES = lecture_trees()


def test_the_five_lecture_trees_are_there() -> None:
    assert len(TREES) == 5


def test_copies_match_shared_data(shared_data: Any) -> None:
    for tree in TREES:
        original = json.loads((shared_data / "trees" / f"{tree['name']}.json").read_text())
        assert original == tree


@pytest.mark.parametrize("tree", TREES, ids=[t["name"] for t in TREES])
@pytest.mark.parametrize("spec", EXACT_BOTS)
def test_every_exact_bot_finds_the_lecture_value_and_move(tree: dict[str, Any], spec: str) -> None:
    game = TreeGame.from_data(tree)
    decision = decide(spec, game, game.initial_state())
    assert decision.info is not None and decision.info.values is not None
    assert decision.info.values[0] == tree["expected"]["value"]
    assert decision.move == tree["expected"]["best_move"]
    assert decision.info.pv[0] == decision.move


@pytest.mark.parametrize("tree", TREES, ids=[t["name"] for t in TREES])
def test_leaf_counts_are_the_lectures(tree: dict[str, Any]) -> None:
    game = TreeGame.from_data(tree)
    expected = tree["expected"]
    ab = decide("alphabeta", game, 0).info
    mm = decide("minimax", game, 0).info
    assert ab is not None and mm is not None
    assert ab.leaves == expected["alphabeta_leaves"]
    assert mm.leaves == expected["minimax_leaves"] == count_leaves(tree["root"])


def test_deep_cut_tree_counts_nodes_and_cuts() -> None:
    tree = next(t for t in TREES if t["name"] == "lecture-alphabeta-deep-cut")
    game = TreeGame.from_data(tree)
    result = alphabeta(game, 0, UNLIMITED)
    # 31 nodes in the full tree; 6 pruned leaves and the two inner nodes above pruned pairs.
    assert (result.nodes, result.leaves, result.cutoffs) == (23, 10, 4)
    assert result.pv == [1, 0, 1, 0]


@settings(max_examples=400, deadline=None)
@given(zero_sum_trees())
def test_alphabeta_equals_minimax_on_random_trees(data: Any) -> None:
    game = TreeGame.from_data(data)
    if game.is_terminal(0):
        return
    mm = minimax(game, 0, UNLIMITED)
    ab = alphabeta(game, 0, UNLIMITED)
    value, move = brute_minimax(data)
    assert mm.value == ab.value == value
    assert mm.pv[0] == ab.pv[0] == move
    assert ab.leaves <= mm.leaves == count_leaves(data)
    assert mm.nodes >= ab.nodes
    # the teaching trace walks the very same search
    traced = traced_search(game, 0, UNLIMITED, prune=True, limit=10_000)
    assert (traced.nodes, traced.leaves, traced.cutoffs) == (ab.nodes, ab.leaves, ab.cutoffs)
    assert traced.root.value == ab.value and traced.root.best == ab.pv[0]
    plain = traced_search(game, 0, UNLIMITED, prune=False, limit=10_000)
    assert (plain.nodes, plain.leaves, plain.root.value) == (mm.nodes, mm.leaves, mm.value)


def random_tree(rng: random.Random, depth: int) -> Any:
    if depth == 0 or rng.random() < 0.15:
        return rng.randint(-5, 5)
    return [random_tree(rng, depth - 1) for _ in range(rng.randint(1, 4))]


def test_alphabeta_equals_minimax_on_three_thousand_seeded_random_trees() -> None:
    rng = random.Random(2024)
    checked = 0
    while checked < 3000:
        data = random_tree(rng, rng.randint(1, 5))
        if not isinstance(data, list):
            continue
        game = TreeGame.from_data(data)
        depth = rng.choice([1, 2, 3, UNLIMITED])
        mm = minimax(game, 0, depth)
        ab = alphabeta(game, 0, depth)
        assert (ab.value, ab.pv[0]) == (mm.value, mm.pv[0]), data
        assert ab.leaves <= mm.leaves
        checked += 1


@settings(max_examples=120, deadline=None)
@given(zero_sum_trees(), st.integers(1, 4))
def test_ordered_iterative_and_paranoid_agree_with_minimax(data: Any, depth: int) -> None:
    game = TreeGame.from_data(data)
    if game.is_terminal(0):
        return
    mm = minimax(game, 0, depth)
    ordered = alphabeta(game, 0, depth, order=True)
    assert ordered.value == mm.value
    for spec in (f"paranoid:depth={depth}", f"iterative:time=0,max_depth={depth}"):
        info = decide(spec, game, 0).info
        assert info is not None and info.values is not None
        assert info.values[0] == mm.value, spec
    # alphabeta's move is the first optimal one, as minimax's; the trees have no heuristics, so
    # the horizon value is 0 for every unfinished line
    assert alphabeta(game, 0, depth).pv[0] == mm.pv[0]


@pytest.mark.parametrize(
    ("branch", "depth"), [(2, 1), (2, 2), (2, 3), (2, 4), (2, 5), (3, 3), (3, 4), (4, 3)]
)
@pytest.mark.parametrize("seed", [1, 2])
def test_knuth_moore_best_ordering(branch: int, depth: int, seed: int) -> None:
    data = uniform_tree(branch, depth, best_first=True, seed=seed)
    result = alphabeta(TreeGame.from_data(data), 0, UNLIMITED)
    expected = branch ** math.ceil(depth / 2) + branch ** math.floor(depth / 2) - 1
    assert result.leaves == expected
    assert result.value == brute_minimax(data)[0]
    assert result.pv[0] == 0  # the best child is first everywhere


@pytest.mark.parametrize(("branch", "depth"), [(2, 3), (2, 5), (3, 3), (3, 4), (4, 4)])
def test_worst_ordering_evaluates_every_leaf(branch: int, depth: int) -> None:
    data = worst_ordered_tree(branch, depth)
    result = alphabeta(TreeGame.from_data(data), 0, UNLIMITED)
    assert result.leaves == branch**depth
    assert result.cutoffs == 0
    assert result.value == brute_minimax(data)[0]
    assert result.pv[0] == branch - 1


def test_minimax_and_alphabeta_refuse_n_player_trees() -> None:
    data = {"players": 3, "root": [{"utility": [1, 0, 0]}, {"utility": [0, 1, 0]}]}
    game = TreeGame.from_data(data)
    for spec in ("minimax", "alphabeta"):
        bot = make(spec)
        with pytest.raises(BotError, match="two-player zero-sum"):
            bot.new_game(game, 0)
        with pytest.raises(BotError, match="two-player zero-sum"):
            bot.choose_move(game, 0, TimeBudget.unlimited())
