"""Independent reference searches and generators for the search-bot tests.

The brute forces here work on the raw JSON tree data (nested lists), not through TreeGame, so a
bug shared by the game and the bots cannot hide itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from bot_arena.bots.base import Decision, TimeBudget
from bot_arena.bots.registry import make
from bot_arena.games.base import Game

TREES_DIR = Path(__file__).parent / "data" / "trees"

Vector = tuple[float, ...]


def lecture_trees() -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(TREES_DIR.glob("*.json"))]


def decide(spec: str, game: Game[Any, Any], state: Any) -> Decision:
    bot = make(spec)
    bot.new_game(game, game.current_player(state))
    return bot.choose_move(game, state, TimeBudget.unlimited())


# --- generators ------------------------------------------------------------------------------
@st.composite
def zero_sum_trees(draw: st.DrawFn, max_depth: int = 4, max_branch: int = 4) -> Any:
    """Nested lists with small integer leaves (ties are common on purpose)."""

    def node(depth: int) -> Any:
        if depth == 0 or (depth < max_depth and draw(st.integers(0, 4)) == 0):
            return draw(st.integers(-5, 5))
        return [node(depth - 1) for _ in range(draw(st.integers(1, max_branch)))]

    return node(draw(st.integers(1, max_depth)))


@st.composite
def vector_trees(
    draw: st.DrawFn, players: int, max_depth: int = 4, max_branch: int = 3, total: int = 6
) -> Any:
    """N-player trees whose leaves are non-negative vectors with a sum of at most ``total``."""

    def leaf() -> dict[str, list[int]]:
        values = [draw(st.integers(0, total)) for _ in range(players)]
        while sum(values) > total:
            i = values.index(max(values))
            values[i] -= 1
        return {"utility": values}

    def node(depth: int) -> Any:
        if depth == 0 or (depth < max_depth and draw(st.integers(0, 5)) == 0):
            return leaf()
        return [node(depth - 1) for _ in range(draw(st.integers(1, max_branch)))]

    root = node(draw(st.integers(1, max_depth)))
    if not isinstance(root, list):
        root = [root]
    return {"players": players, "root": root}


# --- brute forces on raw data ----------------------------------------------------------------
def is_leaf(node: Any) -> bool:
    return not isinstance(node, list)


def leaf_vector(node: Any, players: int) -> Vector:
    if isinstance(node, dict):
        return tuple(float(v) for v in node["utility"])
    return (float(node), -float(node))


def brute_minimax(node: Any, player: int = 0) -> tuple[float, int | None]:
    """Player 0's minimax value and the first optimal child (players alternate by depth)."""
    if is_leaf(node):
        return float(node), None
    values = [brute_minimax(child, 1 - player)[0] for child in node]
    best = max(values) if player == 0 else min(values)
    return best, values.index(best)


def brute_maxn(node: Any, players: int, depth: int = 0) -> tuple[Vector, int | None]:
    """max^n vector with ties to the first child (mover = depth mod players)."""
    if is_leaf(node):
        return leaf_vector(node, players), None
    mover = depth % players
    best: Vector | None = None
    best_i = 0
    for i, child in enumerate(node):
        v, _ = brute_maxn(child, players, depth + 1)
        if best is None or v[mover] > best[mover]:
            best, best_i = v, i
    assert best is not None
    return best, best_i


def brute_paranoid(node: Any, players: int, me: int = 0, depth: int = 0) -> float:
    """``me``'s value when ``me`` maximises and every other player minimises it."""
    if is_leaf(node):
        return leaf_vector(node, players)[me]
    values = [brute_paranoid(child, players, me, depth + 1) for child in node]
    return max(values) if depth % players == me else min(values)


def count_leaves(node: Any) -> int:
    return 1 if is_leaf(node) else sum(count_leaves(c) for c in node)


# --- uniform trees for Knuth and Moore -------------------------------------------------------
def worst_ordered_tree(branch: int, depth: int) -> Any:
    """A uniform tree on which alpha-beta can cut nothing (player 0 maximising at the root).

    Every node's value lies strictly inside an interval; a node splits its interval into
    ``branch`` parts and gives them to its children from worst to best for its mover, so each
    child improves on all earlier siblings and enters with a window containing its own interval.
    """

    def build(d: int, lo: int, hi: int) -> Any:
        if d == depth:
            return lo + 1
        step = (hi - lo) // branch
        parts = [(lo + i * step, lo + (i + 1) * step) for i in range(branch)]
        if d % 2 == 1:  # MIN: best (lowest) last
            parts.reverse()
        return [build(d + 1, a, b) for a, b in parts]

    return build(0, 0, 2 * branch ** (depth + 1))


def uniform_tree(branch: int, depth: int, best_first: bool, seed: int) -> Any:
    """A uniform tree with distinct leaves whose children are sorted best-first for the mover at
    every node (or worst-first), player 0 maximising at even depths."""
    import random

    rng = random.Random(seed)
    leaves = rng.sample(range(10 * branch**depth + 10), branch**depth)
    it = iter(leaves)

    def build(d: int) -> Any:
        if d == depth:
            return next(it)
        return [build(d + 1) for _ in range(branch)]

    def order(node: Any, d: int) -> tuple[Any, float]:
        if is_leaf(node):
            return node, float(node)
        kids = [order(child, d + 1) for child in node]
        maximizing = d % 2 == 0
        kids.sort(key=lambda kv: kv[1], reverse=maximizing == best_first)
        values = [v for _, v in kids]
        return [k for k, _ in kids], (max(values) if maximizing else min(values))

    return order(build(0), 0)[0]


# --- time that passes as a search works --------------------------------------------------------
class RanPastDeadline(AssertionError):
    """A fake clock ran far past the budget: the search ignores it (raised to end the test)."""


class FakeClock:
    """A time source for ``TimeBudget(clock=...)``: reads ``now``, which only moves when told to.

    ``per_read`` seconds pass at every read (for searches whose work the clock cannot see, such
    as the Connect Four solver's bitboards). Past ``give_up`` it raises RanPastDeadline, so a
    search that ignores its budget fails fast instead of running for its own time limit.
    """

    def __init__(self, per_read: float = 0.0, give_up: float = float("inf")) -> None:
        self.now = 0.0
        self.per_read = per_read
        self.give_up = give_up
        self.reads = 0

    def advance(self, seconds: float) -> None:
        self.now += seconds
        if self.now > self.give_up:
            raise RanPastDeadline(f"the search ran on to t={self.now:g} s (fake)")

    def __call__(self) -> float:
        self.reads += 1
        now = self.now
        if self.per_read:
            self.advance(self.per_read)
        return now


class TickingGame:
    """A game whose every new position (``apply``) costs ``tick`` seconds of a FakeClock, so the
    fake time a search has spent is (about) the number of nodes it made, times ``tick``."""

    def __init__(self, game: Game[Any, Any], clock: FakeClock, tick: float) -> None:
        self._game = game
        self._clock = clock
        self._tick = tick
        self.applied = 0

    def apply(self, state: Any, move: Any) -> Any:
        self.applied += 1
        self._clock.advance(self._tick)
        return self._game.apply(state, move)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._game, name)
