"""Paranoid search: N-player alpha-beta in which every opponent minimises the root player's utility.

The root player maximises its own entry of the utility vector and assumes that all other players
have formed a coalition against it, which turns any N-player game into a two-sided one that
alpha-beta can prune (Sturtevant and Korf). In a two-player zero-sum game this is exactly
alpha-beta. The reported value vector is the static value at the end of the principal variation.
"""

from __future__ import annotations

from typing import Any

from bot_arena.bots.alphabeta import AlphaBetaBot
from bot_arena.games.base import Game


class ParanoidBot(AlphaBetaBot):
    """``paranoid[:depth=N,order=BOOL]`` — for any number of players."""

    name = "paranoid"
    value_key = "paranoid_value"

    def check(self, game: Game[Any, Any]) -> None:
        """Sound for every game: the coalition view makes any game two-sided."""

    def root_player(self, game: Game[Any, Any], state: Any) -> int:
        return game.current_player(state)
