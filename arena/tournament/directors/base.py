"""What the formats whose matches are made as the results come (Swiss, knockout, SPRT) share.

A round-robin or a gauntlet is stored whole when it is created. A Swiss round is paired from the
standings after the round before, a knockout round from the winners of the last one, an SPRT
plays pairs of games until the evidence is enough: their matches cannot all be known in advance.
For them the runner asks a *director* what to add as the results are stored. A director is pure:
it sees the tournament's matches (field positions and scores, never bot processes or SQL) and
answers with the matches to add now, so the same stored results always lead to the same next
matches, whether the run was interrupted or not: that is what makes a resume exact.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Played:
    """A match of the tournament as a director sees it."""

    match_id: int
    round: int
    seats: tuple[int, ...]  # field positions in seat order
    scores: tuple[float, ...] | None  # per seat once it is done; None while it is to play


@dataclass(frozen=True, slots=True)
class NewMatch:
    """A match a director adds. ``new_opening``: it starts a new opening (the first game of a
    pair); otherwise it plays the opening of the match added just before it (seats swapped)."""

    round: int
    seats: tuple[int, ...]
    new_opening: bool = True


class Director(ABC):
    """Decides which matches a tournament plays next from those it has played.

    The runner calls ``load`` once with the stored matches, ``added`` for the matches it stores
    as they are made, ``result`` for each result it stores, and ``next`` after each of its
    writes. An ``eager`` director is told each result as its group is handed to the writer
    thread, not once it is stored: its decisions wait on no write. Groups are stored in the
    order they are handed over and the runner hands over nothing after the group that ends the
    tournament, so once those groups are stored the database holds exactly the results the
    director saw; a result its group could not store (its match voided meanwhile) is taken
    back with ``retract``."""

    eager = False

    def __init__(self, names: Sequence[str], settings: Mapping[str, Any], seed: int) -> None:
        self.names = list(names)
        self.settings = settings
        self.seed = seed
        self.matches: dict[int, Played] = {}  # by match id, in the order they were made
        self._open = 0  # matches made and not played yet
        self.last_round = 0  # the highest round made so far

    def load(self, matches: Sequence[Played]) -> None:
        for match in matches:
            self._put(match)

    def added(self, match_id: int, new: NewMatch) -> None:
        self._put(Played(match_id, new.round, new.seats, None))

    def result(self, match_id: int, scores: Sequence[float]) -> None:
        """A result of one of this tournament's matches was stored."""
        match = self.matches.get(match_id)
        if match is not None:
            self._put(Played(match_id, match.round, match.seats, tuple(scores)))

    def retract(self, match_id: int) -> None:
        """A result given to ``result`` was not stored after all (an ``eager`` director's): the
        match is to play again as far as the director knows."""
        match = self.matches.get(match_id)
        if match is not None and match.scores is not None:
            self._put(Played(match_id, match.round, match.seats, None))

    def _put(self, match: Played) -> None:
        """Keep ``match`` (new, or a later state of one kept), with the running counts."""
        before = self.matches.get(match.match_id)
        self._open += (match.scores is None) - (before is not None and before.scores is None)
        self.matches[match.match_id] = match
        self.last_round = max(self.last_round, match.round)

    @property
    def open(self) -> int:
        """Matches made and not played yet."""
        return self._open

    def rounds(self) -> dict[int, list[Played]]:
        """The matches by round, each in the order they were made."""
        out: dict[int, list[Played]] = {}
        for match in self.matches.values():
            out.setdefault(match.round, []).append(match)
        return out

    @abstractmethod
    def next(self, ahead: int) -> list[NewMatch]:
        """The matches to add now (none while the ones made must be played first). ``ahead``:
        how many matches the runner would like to have waiting (its jobs and their queues)."""

    @property
    @abstractmethod
    def complete(self) -> bool:
        """Nothing is left to add or to play: the tournament is over."""

    @property
    def decided(self) -> bool:
        """The tournament ended before its matches still to play were played (an SPRT that
        crossed a bound): the runner stops them and drops them."""
        return False

    @abstractmethod
    def expected_total(self) -> int:
        """The number of matches the tournament will have, as far as it can be known now."""

    def report(self) -> str | None:
        """A line to print as the run goes (an SPRT's state), when there is news."""
        return None

    @abstractmethod
    def summary(self) -> dict[str, Any]:
        """The format's state for ``tournament show --json`` (plain JSON values)."""

    @abstractmethod
    def text(self, width: int | None) -> list[str]:
        """The format's state for ``tournament show``, fitted to ``width`` (None: no limit)."""
