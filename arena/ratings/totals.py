"""Two-player results counted per ordered pair: what the database sums for a leaderboard.

Kept apart from ``prepare.py`` (numpy) so that a command that reads results without fitting
them (``tournament show``, ``crosstable``) does not load numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
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


@dataclass(frozen=True, slots=True)
class PairTotalColumns:
    """Many ``PairTotal``s as columns (issue 29: a leaderboard of 1,000 bots reads nearly as
    many pairs as matches, so no object per pair): row r is ``PairTotal(players[first[r]],
    players[second[r]], wins[r], draws[r], losses[r])``. ``players`` maps a code (the
    database's version id) to its player; several codes may name one player. The columns are
    any sequences of ints: tuples, or machine integers (``array('q')``: 8 bytes a value, what
    the database's columns come as) that numpy reads without a copy."""

    players: dict[int, str]
    first: Sequence[int]
    second: Sequence[int]
    wins: Sequence[int]
    draws: Sequence[int]
    losses: Sequence[int]

    @property
    def games(self) -> int:
        return sum(self.wins) + sum(self.draws) + sum(self.losses)

    def totals(self) -> list[PairTotal]:
        """The same results one ``PairTotal`` per row (what the columns stand for)."""
        name = self.players
        return [
            PairTotal(name[a], name[b], w, d, lost)
            for a, b, w, d, lost in zip(
                self.first, self.second, self.wins, self.draws, self.losses, strict=True
            )
        ]
