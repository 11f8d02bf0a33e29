"""What the rating code reads: one finished match as players and final ranks.

The rating math never sees the database or the match record; callers turn whatever they have
(database rows, a PGN file, a CSV) into ``GameResult`` values first.
"""

from __future__ import annotations

from dataclasses import dataclass

# the one points rule (1 above, 1/2 tied) lives with the game rules; named here for the rating code
from bot_arena.games.base import pair_points as pair_points


class RatingInputError(ValueError):
    """The results cannot be rated as given (bad ranks, a player listed without a rank, ...)."""


@dataclass(frozen=True, slots=True)
class GameResult:
    """One match: the players (by rating key) and their final ranks, 1 = best.

    Equal ranks are ties. Two players: rank 1 vs 2 is a win, 1 vs 1 a draw. A player may occupy
    more than one seat of an N-player match (``random`` three times); a two-player game of a bot
    against itself carries no information and is left out of ratings and counts.
    """

    players: tuple[str, ...]
    ranks: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.players) != len(self.ranks):
            raise RatingInputError(
                f"{len(self.players)} players but {len(self.ranks)} ranks in one result"
            )
        if len(self.players) < 2:
            raise RatingInputError("a rated result needs at least two players")

    @classmethod
    def two_player(cls, first: str, second: str, score: float) -> GameResult:
        """``score`` is the first player's: 1 win, 0.5 draw, 0 loss."""
        if score not in (0.0, 0.5, 1.0):
            raise RatingInputError(f"a two-player score must be 1, 1/2 or 0, not {score}")
        ranks = (1, 1) if score == 0.5 else ((1, 2) if score == 1.0 else (2, 1))
        return cls((first, second), ranks)

    @property
    def self_play(self) -> bool:
        return len(self.players) == 2 and self.players[0] == self.players[1]


@dataclass(slots=True)
class BotStats:
    """Counts for one bot over the rated results (what the table shows beside the rating)."""

    games: int = 0
    points: float = 0.0  # two players: 1 / 1/2 / 0; N players: share of players beaten
    wins: int = 0  # two-player games only
    draws: int = 0
    losses: int = 0
    multi_games: int = 0  # games with three or more seats
    rank_sum: int = 0  # over multi-player games
    firsts: int = 0  # multi-player games with rank 1 (shared or not)
    shared: int = 0  # multi-player games where the bot tied with another seat

    @property
    def score(self) -> float:
        return self.points / self.games if self.games else 0.0

    @property
    def draw_rate(self) -> float:
        return (self.draws + self.shared) / self.games if self.games else 0.0

    @property
    def avg_rank(self) -> float | None:
        return self.rank_sum / self.multi_games if self.multi_games else None
