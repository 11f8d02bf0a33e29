"""Depth-limited alpha-beta: minimax's answer with fewer nodes.

The search is scalar: it maximises player ``me``'s utility at ``me``'s nodes and minimises it at
every other player's nodes. With ``me = 0`` in a two-player zero-sum game that is textbook
alpha-beta; with ``me`` = the root player in an N-player game it is the *paranoid* search
(``bots.paranoid``), which reuses this module.

Counting follows the lectures: children in move order, fail-soft values, and a node stops
searching its children as soon as ``alpha >= beta``; ``cutoffs`` counts the stops that skipped
at least one child (a stop after the last child prunes nothing). A later
child replaces the best only when strictly better, so without move ordering the best move is the
first optimal move in move order, exactly as ``minimax`` picks it.

Move ordering (``order=True``) is a parameter of the one search (the plain search pays one
test per node for it). It uses, in this order: the game's hint if it has one (an
``ordered_moves(state)`` method returning the legal moves best-first), then two killer moves per
ply (moves that caused a cutoff at the same ply), then the history heuristic (cutoff counts per
move, weighted by depth^2). Ordering never changes the value; among equally good root moves it
may pick a different one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from bot_arena.bots.base import Bot, Decision, SearchInfo, TimeBudget
from bot_arena.bots.search_common import (
    INF,
    MAX_PLY,
    Line,
    ScalarResult,
    line_to_list,
    pv_end_vector,
    require_two_player_zero_sum,
    resolve_depth,
    shown_depth,
)
from bot_arena.games.base import Game

Reward = Callable[[Any, int, int], None]


def alphabeta(
    game: Game[Any, Any],
    state: Any,
    depth: int,
    me: int = 0,
    alpha: float = -INF,
    beta: float = INF,
    order: bool = False,
) -> ScalarResult:
    """Alpha-beta value of ``state`` for player ``me`` to ``depth`` plies (fail-soft); with
    ``order``, the moves of each node are searched best-first (:func:`_ordering`)."""
    hint: Callable[[Any], Sequence[Any]] | None = getattr(game, "ordered_moves", None)
    legal_moves: Callable[[Any], Sequence[Any]] = (
        hint if order and callable(hint) else game.legal_moves
    )
    apply = game.apply
    utility = game.utility
    evaluate = game.evaluate
    current_player = game.current_player
    size = min(depth, MAX_PLY) + 2
    lines: list[Line] = [None] * size
    order_moves, reward = _ordering(size) if order else (None, None)
    nodes = 0
    leaves = 0
    cutoffs = 0

    def frontier(state: Any, moves: Sequence[Any], alpha: float, beta: float, ply: int) -> float:
        """A node one ply above the horizon: same as ``search`` with its children inlined."""
        nonlocal nodes, leaves, cutoffs
        count = 0
        if current_player(state) == me:
            best = -INF
            for move in moves:
                count += 1
                value = evaluate(apply(state, move))[me]
                if value > best:
                    best = value
                    lines[ply] = (move, None)
                    if value > alpha:
                        alpha = value
                        if alpha >= beta:
                            if move != moves[-1]:
                                cutoffs += 1
                            if reward is not None:
                                reward(move, 1, ply)
                            break
        else:
            best = INF
            for move in moves:
                count += 1
                value = evaluate(apply(state, move))[me]
                if value < best:
                    best = value
                    lines[ply] = (move, None)
                    if value < beta:
                        beta = value
                        if alpha >= beta:
                            if move != moves[-1]:
                                cutoffs += 1
                            if reward is not None:
                                reward(move, 1, ply)
                            break
        nodes += count
        leaves += count
        return best

    def search(state: Any, depth: int, alpha: float, beta: float, ply: int) -> float:
        nonlocal nodes, leaves, cutoffs
        nodes += 1
        if depth == 0:
            leaves += 1
            lines[ply] = None
            return evaluate(state)[me]
        moves = legal_moves(state)
        if not moves:
            leaves += 1
            lines[ply] = None
            return utility(state)[me]
        if order_moves is not None:
            moves = order_moves(moves, ply)
        if depth == 1:  # the children are horizon leaves: evaluate them without a call each
            return frontier(state, moves, alpha, beta, ply)
        remaining = depth - 1
        child_ply = ply + 1
        if current_player(state) == me:
            best = -INF
            for move in moves:
                value = search(apply(state, move), remaining, alpha, beta, child_ply)
                if value > best:
                    best = value
                    lines[ply] = (move, lines[child_ply])
                    if value > alpha:
                        alpha = value
                        if alpha >= beta:
                            if move != moves[-1]:
                                cutoffs += 1
                            if reward is not None:
                                reward(move, depth, ply)
                            break
        else:
            best = INF
            for move in moves:
                value = search(apply(state, move), remaining, alpha, beta, child_ply)
                if value < best:
                    best = value
                    lines[ply] = (move, lines[child_ply])
                    if value < beta:
                        beta = value
                        if alpha >= beta:
                            if move != moves[-1]:
                                cutoffs += 1
                            if reward is not None:
                                reward(move, depth, ply)
                            break
        return best

    value = search(state, depth, alpha, beta, 0)
    return ScalarResult(value, line_to_list(lines[0]), nodes, leaves, cutoffs)


def _ordering(plies: int) -> tuple[Callable[[Sequence[Any], int], Sequence[Any]], Reward]:
    """Move ordering for one search, as two closures (hot code: no attribute lookups):
    ``ordered(moves, ply)`` puts the two killer moves of the ply (moves that caused a cutoff at
    the same ply) in front of the rest in history order (cutoff counts per move, weighted by
    depth^2; ties keep the game's order, the hint's when it gives one), and ``reward(move,
    depth, ply)`` records that ``move`` caused a cutoff ``depth`` plies above the horizon."""
    killers: list[list[Hashable]] = [[None, None] for _ in range(plies)]
    history: dict[Hashable, int] = {}
    history_get = history.get

    def score(move: Any) -> int:
        return history_get(move, 0)

    def ordered(moves: Sequence[Any], ply: int) -> Sequence[Any]:
        if len(moves) < 2:
            return moves
        out = sorted(moves, key=score, reverse=True) if history else list(moves)
        for killer in reversed(killers[ply]):
            if killer is not None and killer in out and out[0] != killer:
                out.remove(killer)
                out.insert(0, killer)
        return out

    def reward(move: Any, depth: int, ply: int) -> None:
        slot = killers[ply]
        if slot[0] != move:
            slot[1] = slot[0]
            slot[0] = move
        history[move] = history_get(move, 0) + depth * depth

    return ordered, reward


def scalar_info(
    game: Game[Any, Any], state: Any, result: ScalarResult, depth: int, elapsed: float
) -> SearchInfo:
    """SearchInfo for a scalar search: the value vector is the static value at the PV's end."""
    return SearchInfo(
        values=tuple(pv_end_vector(game, state, result.pv)),
        pv=result.pv,
        depth=len(result.pv) if shown_depth(depth) is None else depth,
        nodes=result.nodes,
        leaves=result.leaves,
        cutoffs=result.cutoffs,
        time_s=elapsed,
    )


class AlphaBetaBot(Bot):
    """``alphabeta[:depth=N,order=BOOL]`` — alpha-beta for two-player zero-sum games."""

    name = "alphabeta"
    value_key: str | None = None  # where to report the root player's scalar value, if at all

    def __init__(
        self, depth: int | None = None, order: bool = False, spec: str | None = None
    ) -> None:
        super().__init__(spec)
        if depth is not None and depth < 1:
            raise ValueError(f"depth must be >= 1, not {depth}")
        self.depth = depth
        self.order = order

    def new_game(self, game: Game[Any, Any], seat: int) -> None:
        self.check(game)

    def check(self, game: Game[Any, Any]) -> None:
        """Refuse games this search is not sound for (subclasses widen it)."""
        require_two_player_zero_sum(game, "alphabeta")

    def root_player(self, game: Game[Any, Any], state: Any) -> int:
        """Whose utility the search maximises: player 0's value, as the lectures report it."""
        return 0

    def choose_move(self, game: Game[Any, Any], state: Any, budget: TimeBudget) -> Decision:
        self.check(game)
        depth = resolve_depth(game, self.depth)
        start = time.perf_counter()
        me = self.root_player(game, state)
        result = alphabeta(game, state, depth, me=me, order=self.order)
        info = scalar_info(game, state, result, depth, time.perf_counter() - start)
        if self.value_key:
            info.extra[self.value_key] = result.value
        return Decision(result.pv[0], info)

    def options(self) -> dict[str, Any]:
        return {"depth": self.depth, "order": self.order}
