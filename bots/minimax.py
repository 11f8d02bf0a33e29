"""Plain depth-limited minimax: the textbook algorithm, no pruning, every node visited.

Values are player 0's utility (player 0 maximises, player 1 minimises). Children are searched in
the game's move order and a later child replaces the best only when strictly better, so ties go to
the first move in move order — the answer ``alphabeta`` must reproduce exactly.
"""

from __future__ import annotations

import time
from typing import Any

from bot_arena.bots.base import Bot, Decision, SearchInfo, TimeBudget
from bot_arena.bots.search_common import (
    INF,
    MAX_PLY,
    Line,
    ScalarResult,
    line_to_list,
    require_two_player_zero_sum,
    resolve_depth,
    shown_depth,
    zero_sum_vector,
)
from bot_arena.games.base import Game


def minimax(game: Game[Any, Any], state: Any, depth: int) -> ScalarResult:
    """Minimax value of ``state`` for player 0 to ``depth`` plies (``UNLIMITED``: to the end)."""
    legal_moves = game.legal_moves
    apply = game.apply
    utility = game.utility
    evaluate = game.evaluate
    current_player = game.current_player
    lines: list[Line] = [None] * (min(depth, MAX_PLY) + 2)
    nodes = 0
    leaves = 0

    def search(state: Any, depth: int, ply: int) -> float:
        nonlocal nodes, leaves
        nodes += 1
        if depth == 0:
            leaves += 1
            lines[ply] = None
            return evaluate(state)[0]
        moves = legal_moves(state)
        if not moves:
            leaves += 1
            lines[ply] = None
            return utility(state)[0]
        depth -= 1
        child_ply = ply + 1
        if current_player(state) == 0:
            best = -INF
            for move in moves:
                value = search(apply(state, move), depth, child_ply)
                if value > best:
                    best = value
                    lines[ply] = (move, lines[child_ply])
        else:
            best = INF
            for move in moves:
                value = search(apply(state, move), depth, child_ply)
                if value < best:
                    best = value
                    lines[ply] = (move, lines[child_ply])
        return best

    value = search(state, depth, 0)
    return ScalarResult(value, line_to_list(lines[0]), nodes, leaves, 0)


class MinimaxBot(Bot):
    """``minimax[:depth=N]`` — exhaustive minimax for two-player zero-sum games."""

    name = "minimax"

    def __init__(self, depth: int | None = None, spec: str | None = None) -> None:
        super().__init__(spec)
        self.depth = depth
        if depth is not None and depth < 1:
            raise ValueError(f"depth must be >= 1, not {depth}")

    def new_game(self, game: Game[Any, Any], seat: int) -> None:
        require_two_player_zero_sum(game, "minimax")

    def choose_move(self, game: Game[Any, Any], state: Any, budget: TimeBudget) -> Decision:
        require_two_player_zero_sum(game, "minimax")
        depth = resolve_depth(game, self.depth)
        start = time.perf_counter()
        result = minimax(game, state, depth)
        elapsed = time.perf_counter() - start
        info = SearchInfo(
            values=zero_sum_vector(result.value),
            pv=result.pv,
            depth=len(result.pv) if shown_depth(depth) is None else depth,
            nodes=result.nodes,
            leaves=result.leaves,
            time_s=elapsed,
        )
        return Decision(result.pv[0], info)

    def options(self) -> dict[str, Any]:
        return {"depth": self.depth}
