"""max^n (Luckhardt and Irani): N-player search over utility vectors.

Every player picks the child that maximises its own entry of the backed-up vector. Ties go to the
first such child in the game's move order (a later child must be strictly better), which makes
the search deterministic and, in two-player zero-sum games, equal to minimax.

Korf's *shallow pruning* is used when the game declares non-negative utilities whose sum is at
most ``bounds.max_sum``: once the player at a node has secured ``v`` for itself, the parent's
player can get at most ``max_sum - v`` here, so if that is no better than what the parent already
has, the remaining children cannot matter and are skipped. Deep pruning is never done — it can
change the max^n value. Heuristic vectors at the horizon must obey the same bounds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from bot_arena.bots.base import Bot, Decision, SearchInfo, TimeBudget
from bot_arena.bots.search_common import (
    INF,
    MAX_PLY,
    Line,
    line_to_list,
    resolve_depth,
    shown_depth,
)
from bot_arena.games.base import Game, Utility


@dataclass(slots=True)
class VectorResult:
    values: Utility
    pv: list[Hashable] = field(default_factory=list)
    nodes: int = 0
    leaves: int = 0
    cutoffs: int = 0


def shallow_pruning_applies(game: Game[Any, Any]) -> bool:
    """Whether the game's declared bounds make Korf's shallow pruning sound."""
    bounds = game.bounds
    return bounds.nonnegative and math.isfinite(bounds.max_sum)


def maxn(game: Game[Any, Any], state: Any, depth: int, prune: bool = True) -> VectorResult:
    """The max^n value vector of ``state`` to ``depth`` plies."""
    legal_moves = game.legal_moves
    apply = game.apply
    utility = game.utility
    evaluate = game.evaluate
    current_player = game.current_player
    # INF disables the test below: INF - bound is INF for every finite or -INF bound.
    max_sum = float(game.bounds.max_sum) if prune and shallow_pruning_applies(game) else INF
    lines: list[Line] = [None] * (min(depth, MAX_PLY) + 2)
    nodes = 0
    leaves = 0
    cutoffs = 0

    def search(state: Any, depth: int, ply: int, parent: int, bound: float) -> Utility:
        """``parent`` moved into this node and already has ``bound`` from earlier siblings."""
        nonlocal nodes, leaves, cutoffs
        nodes += 1
        if depth == 0:
            leaves += 1
            lines[ply] = None
            return evaluate(state)
        moves = legal_moves(state)
        if not moves:
            leaves += 1
            lines[ply] = None
            return utility(state)
        player = current_player(state)
        limit = max_sum - bound if player != parent else INF
        depth -= 1
        child_ply = ply + 1
        best: Utility = ()
        mine = -INF
        for move in moves:
            values = search(apply(state, move), depth, child_ply, player, mine)
            if values[player] > mine:
                mine = values[player]
                best = values
                lines[ply] = (move, lines[child_ply])
                if mine >= limit:
                    if move != moves[-1]:
                        cutoffs += 1
                    break
        return best

    values = search(state, depth, 0, -1, -INF)
    return VectorResult(tuple(values), line_to_list(lines[0]), nodes, leaves, cutoffs)


class MaxNBot(Bot):
    """``maxn[:depth=N,prune=BOOL]`` — max^n for any number of players."""

    name = "maxn"

    def __init__(
        self, depth: int | None = None, prune: bool = True, spec: str | None = None
    ) -> None:
        super().__init__(spec)
        if depth is not None and depth < 1:
            raise ValueError(f"depth must be >= 1, not {depth}")
        self.depth = depth
        self.prune = prune

    def choose_move(self, game: Game[Any, Any], state: Any, budget: TimeBudget) -> Decision:
        depth = resolve_depth(game, self.depth)
        start = time.perf_counter()
        result = maxn(game, state, depth, self.prune)
        info = SearchInfo(
            values=result.values,
            pv=result.pv,
            depth=len(result.pv) if shown_depth(depth) is None else depth,
            nodes=result.nodes,
            leaves=result.leaves,
            cutoffs=result.cutoffs,
            time_s=time.perf_counter() - start,
        )
        info.extra["shallow_pruning"] = self.prune and shallow_pruning_applies(game)
        return Decision(result.pv[0], info)

    def options(self) -> dict[str, Any]:
        return {"depth": self.depth, "prune": self.prune}
