"""Game rules behind one API; see games.base for the API and games.registry for names."""

from bot_arena.games.base import (
    Game,
    GameError,
    GameKind,
    Utility,
    UtilityBounds,
    pair_points,
    ranks_from_utilities,
    scores_from_ranks,
)
from bot_arena.games.registry import (
    GameCache,
    available,
    game_class,
    get,
    names,
    parse_params,
    register,
)

__all__ = [
    "Game",
    "GameCache",
    "GameError",
    "GameKind",
    "Utility",
    "UtilityBounds",
    "available",
    "game_class",
    "get",
    "names",
    "pair_points",
    "parse_params",
    "ranks_from_utilities",
    "register",
    "scores_from_ranks",
]
