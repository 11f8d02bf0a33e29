"""A ladder (issue 30): a tournament that never ends, whose next games are chosen by how much
each would tell about the standings (``ratings.matchmaking``: the rule and its reasons are in
docs/ratings.md, "Ladders").

Each choice is a game pair (the same opening, seats swapped), pair ``p`` being round ``p``. The
choice reads the stored results and the games in play: the fit is over the done games only,
from the same start every time (so it is a function of the stored totals, not of the order
results came in), and each game in play then counts as a game already decided at its expected
score, which adds its information and moves no rating (the fit's gradient is zero there): a
batch never asks again what the games in play will answer. So the same stored matches and the
same field give the same pairs, whether the run was interrupted or not.

The field (which entrants are active) and the run's limits are given by the runner's side
(``tournament/ladder_runner.py``), which reads them from the database: the director stays pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bot_arena.arena.ratings.matchmaking import LadderModel, RankInterval, choose_pairs
from bot_arena.arena.tournament.directors.base import Director, NewMatch, Played

#: A ladder is stable (``--until-stable``) when no active entrant's 95% rank interval spans
#: more than this many places beyond its own (rank 4 of "3-5" spans two), nor all of them.
STABLE_SPREAD = 2


def model_of(size: int, matches: Sequence[Played]) -> LadderModel:
    """The pair totals of the done two-seat matches among ``size`` entrants, fitted."""
    model = LadderModel(size)
    for match in matches:
        if match.scores is not None and len(match.seats) == 2:
            model.record(match.seats[0], match.seats[1], match.scores[0])
    model.fit()
    return model


class LadderDirector(Director):
    def __init__(self, names: Sequence[str], settings: Mapping[str, Any], seed: int) -> None:
        super().__init__(names, settings, seed)
        size = len(self.names)
        self.active: list[int] = list(range(size))  # field positions that get games
        self.cap: int | None = None  # make no game beyond this many (--until-games)
        self.halted = False  # make nothing more in this run (the field changed, time is up)
        self.notes: list[str] = []  # lines for the run's output
        self._games = np.zeros((size, size))  # done games of each pair
        self._points = np.zeros((size, size))  # points of a against b in them
        self._in_play: dict[int, tuple[int, ...]] = {}  # seats of the matches made, not done
        self._counted = 0  # done matches in the totals
        self._fit: tuple[int, LadderModel] | None = None  # the last fit, and of how many

    def _put(self, match: Played) -> None:
        before = self.matches.get(match.match_id)
        super()._put(match)
        if match.scores is None:
            self._in_play[match.match_id] = match.seats
            return
        self._in_play.pop(match.match_id, None)
        if (before is None or before.scores is None) and len(match.seats) == 2:
            a, b = match.seats  # each done match counted once
            self._games[a, b] += 1.0
            self._games[b, a] += 1.0
            self._points[a, b] += match.scores[0]
            self._points[b, a] += match.scores[1]
            self._counted += 1

    def dropped(self, match_ids: Sequence[int]) -> None:
        """Matches made and never played were deleted (their entrant no longer plays)."""
        for match_id in match_ids:
            match = self.matches.get(match_id)
            if match is not None and match.scores is None:
                del self.matches[match_id]
                self._in_play.pop(match_id, None)
                self._open -= 1

    def fitted(self) -> LadderModel:
        """The fit over the done games, from the prior's start (a function of the totals, so
        kept until a result comes: ``stable`` and ``pairs`` of one write share it). Read it,
        never change it."""
        if self._fit is None or self._fit[0] != self._counted:
            model = LadderModel(len(self.names))
            model.games = self._games.copy()
            model.points = self._points.copy()
            model.fit()
            self._fit = (self._counted, model)
        return self._fit[1]

    def pairs(self, count: int) -> list[tuple[int, int]]:
        """The ``count`` most informative pairs of active entrants, the games in play counted
        as decided at their expected scores."""
        done = self.fitted()
        model = LadderModel(len(self.names))
        model.games, model.points = done.games.copy(), done.points.copy()
        theta = done.theta
        for match_id in sorted(self._in_play):  # in the order they were made
            seats = self._in_play[match_id]
            if len(seats) == 2:
                a, b = seats
                model.record(a, b, 1.0 / (1.0 + math.exp(theta[b] - theta[a])))
        model.theta = theta.copy()
        model.fit(max_steps=0)  # the covariance with the games in play; the ratings as fitted
        return choose_pairs(model, self.active, count)

    def next(self, ahead: int) -> list[NewMatch]:
        if self.halted or len(self.active) < 2:
            return []
        want = max(2, ahead)
        if self.open >= want:
            return []
        count = (2 * want - self.open + 1) // 2  # fill up to twice the wish, by pairs
        if self.cap is not None:
            count = min(count, (self.cap - len(self.matches) + 1) // 2)
        if count <= 0:
            return []
        out = []
        for number, (a, b) in enumerate(self.pairs(count), start=self.last_round + 1):
            out.append(NewMatch(number, (a, b), new_opening=True))
            out.append(NewMatch(number, (b, a), new_opening=False))
        return out

    @property
    def complete(self) -> bool:
        return False  # a ladder never ends: a run stops, the ladder stays open

    def expected_total(self) -> int:
        if self.cap is not None:
            return max(self.cap, len(self.matches))
        return len(self.matches)

    def in_play_counts(self) -> list[int]:
        """Each entrant's games made and not played yet."""
        counts = [0] * len(self.names)
        for seats in self._in_play.values():
            for position in seats:
                counts[position] += 1
        return counts

    def intervals(self) -> list[RankInterval]:
        return self.fitted().rank_intervals()

    def stable(self) -> bool:
        """Every active entrant's rank is known to within ``STABLE_SPREAD`` places, and more
        closely than "anywhere among the active" (two entrants: their order is certain)."""
        if len(self.active) < 2:
            return False
        spread = min(STABLE_SPREAD, len(self.active) - 2)
        found = self.intervals()
        return all(found[i].worst - found[i].best <= spread for i in self.active)

    def report(self) -> str | None:
        if not self.notes:
            return None
        line = "; ".join(self.notes)
        self.notes.clear()
        return line

    def summary(self) -> dict[str, Any]:
        done = len(self.matches) - self.open
        return {"entrants": len(self.names), "games": done, "in_play": self.open}

    def text(self, width: int | None) -> list[str]:
        summary = self.summary()
        return [
            f"ladder of {summary['entrants']} entrants: {summary['games']} games stored, "
            f"{summary['in_play']} made and not played (arena ladder show for the standings)"
        ]
