"""Ratings from match results: maximum-likelihood Elo with robust 95% intervals (two players:
Bradley-Terry on scores; N players: Plackett-Luce on ranks), classic sequential Elo and
crosstables: pure functions over ``GameResult`` values. Leaderboards of stored results are
``ratings.query``; result files (PGN, CSV) are read by ``arena.formats``. See docs/ratings.md
for the model and formulas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from bot_arena.arena.ratings.crosstable import Crosstable, crosstable, render_crosstable
from bot_arena.arena.ratings.outcomes import BotStats, GameResult, RatingInputError
from bot_arena.arena.ratings.render import FORMATS, Faults, leaderboard_rows, render
from bot_arena.arena.ratings.table import BotRating, Pool, RatingTable

if TYPE_CHECKING:
    from bot_arena.arena.ratings.elo import ELO_PER_NAT, elo_diff, expected_score
    from bot_arena.arena.ratings.ml import fit_ml
    from bot_arena.arena.ratings.online_elo import fit_sequential

# The fits (numpy) load when first used: a command that reads only results or tables (``arena
# matches`` reads GameResult through formats.pgn, ``tournament show`` the tables) does not pay
# for them. (A name that is also a module's, ``crosstable`` and ``render``, must stay eager:
# importing the module would set the package's attribute to the module.)
_LAZY = {
    "ELO_PER_NAT": "elo",
    "elo_diff": "elo",
    "expected_score": "elo",
    "fit_ml": "ml",
    "fit_sequential": "online_elo",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ELO_PER_NAT",
    "FORMATS",
    "BotRating",
    "BotStats",
    "Crosstable",
    "Faults",
    "GameResult",
    "Pool",
    "RatingInputError",
    "RatingTable",
    "crosstable",
    "elo_diff",
    "expected_score",
    "fit_ml",
    "fit_sequential",
    "leaderboard_rows",
    "render",
    "render_crosstable",
]
