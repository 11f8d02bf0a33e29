"""Paranoid search: N-player alpha-beta in which every opponent minimises the root player's utility.

The root player maximises its own entry of the utility vector and assumes that all other players
have formed a coalition against it, which turns any N-player game into a two-sided one that
alpha-beta can prune (Sturtevant and Korf). In a two-player zero-sum game this is exactly
alpha-beta. The reported value vector is the static value at the end of the principal variation.
"""

from __future__ import annotations

import time
from typing import Any

from bots.alphabeta import alphabeta, scalar_info
from bots.base import Bot, Decision, TimeBudget
from bots.search_common import resolve_depth
from games.base import Game


class ParanoidBot(Bot):
    """``paranoid[:depth=N,order=BOOL]`` — for any number of players."""

    name = "paranoid"

    def __init__(
        self, depth: int | None = None, order: bool = False, spec: str | None = None
    ) -> None:
        super().__init__(spec)
        if depth is not None and depth < 1:
            raise ValueError(f"depth must be >= 1, not {depth}")
        self.depth = depth
        self.order = order

    def choose_move(self, game: Game[Any, Any], state: Any, budget: TimeBudget) -> Decision:
        depth = resolve_depth(game, self.depth)
        me = game.current_player(state)
        start = time.perf_counter()
        result = alphabeta(game, state, depth, me=me, order=self.order)
        info = scalar_info(game, state, result, depth, time.perf_counter() - start)
        info.extra["paranoid_value"] = result.value
        return Decision(result.pv[0], info)

    def options(self) -> dict[str, Any]:
        return {"depth": self.depth, "order": self.order}
