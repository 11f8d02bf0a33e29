"""Ratings from match results: maximum-likelihood Elo with robust 95% intervals (two players:
Bradley-Terry on scores; N players: Plackett-Luce on ranks), classic sequential Elo and
crosstables: pure functions over ``GameResult`` values. Leaderboards of stored results are
``ratings.query``; result files (PGN, CSV) are read by ``arena.formats``. See docs/ratings.md
for the model and formulas.
"""

from bot_arena.arena.ratings.crosstable import Crosstable, crosstable, render_crosstable
from bot_arena.arena.ratings.ml import ELO_PER_NAT, elo_diff, expected_score, fit_ml
from bot_arena.arena.ratings.render import FORMATS, Faults, leaderboard_rows, render
from bot_arena.arena.ratings.results import BotStats, GameResult, RatingInputError
from bot_arena.arena.ratings.sequential import fit_sequential
from bot_arena.arena.ratings.table import BotRating, Pool, RatingTable

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
