"""Two-player results counted per ordered pair: what the database sums for a leaderboard.

Kept apart from ``prepare.py`` (numpy) so that a command that reads results without fitting
them (``tournament show``, ``crosstable``) does not load numpy.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PairTotal:
    """The two-player results of one ordered pair: ``first``'s wins, draws and losses against
    ``second`` (``first`` in the first seat)."""

    first: str
    second: str
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses
