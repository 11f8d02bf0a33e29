"""An SPRT: NEW (field position 0) against BASE (position 1) in pairs of games until the
log-likelihood ratio crosses a bound (``ratings.sprt_stats``), as fishtest and fastchess test a
change.

Pair ``p`` is round ``p``: NEW takes the first seat in its first game and the second seat in the
other, both from the same opening. The test's state is a function of the stored results only
(pentanomial counts of the complete pairs, trinomial counts of every game), so a resume after a
crash carries on from exactly where the stored games left it. The bounds are checked after every
write of results; the pairs still in play when one is crossed are stopped and dropped (fastchess
stops its games too), so the test ends with the state that decided it.

The director is ``eager``: it counts a group of results when the runner hands it to the writer
thread, so the runner never waits for a write before it checks the bounds or adds pairs. The
group that crosses a bound is the last one handed over; the results that come after it are
dropped with the games still in play, so the stored games are still exactly those that decided.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot_arena.arena.ratings.sprt_stats import SprtSettings, SprtState, evaluate, game_outcome
from bot_arena.arena.tournament.directors.base import Director, NewMatch, Played

KEY = "sprt"  # the tournament's settings: SprtSettings, max_games, interval
DEFAULT_MAX_GAMES = 100_000
DEFAULT_INTERVAL = 10  # pairs between two status lines


def sprt_settings(settings: Mapping[str, Any]) -> tuple[SprtSettings, int, int]:
    """The test's settings, its game limit and its report interval, from the tournament's."""
    data = settings[KEY]
    test = {key: value for key, value in data.items() if key not in ("max_games", "interval")}
    return (
        SprtSettings.from_dict(test),
        int(data.get("max_games", DEFAULT_MAX_GAMES)),
        int(data.get("interval", DEFAULT_INTERVAL)),
    )


class Counts:
    """The test's counts, kept as results come in: NEW's trinomial (loss, draw, win) over single
    games and its pentanomial over complete pairs (pair ``p`` is round ``p``). Each result costs
    O(1), so the runner's check after every write does not grow with the test's length."""

    def __init__(self) -> None:
        self.pentanomial = [0] * 5
        self.trinomial = [0] * 3
        self._halves: dict[int, list[int]] = {}  # NEW's outcome in each game of a pair so far

    def add(self, match: Played) -> None:
        """Count a done match (NEW at field position 0)."""
        assert match.scores is not None
        outcome = game_outcome(match.scores[match.seats.index(0)])
        self.trinomial[outcome] += 1
        pair = self._halves.setdefault(match.round, [])
        pair.append(outcome)
        if len(pair) == 2:
            self.pentanomial[pair[0] + pair[1]] += 1

    def remove(self, match: Played) -> None:
        """Take back a match counted by ``add`` (its result was not stored after all)."""
        assert match.scores is not None
        outcome = game_outcome(match.scores[match.seats.index(0)])
        self.trinomial[outcome] -= 1
        pair = self._halves[match.round]
        if len(pair) == 2:
            self.pentanomial[pair[0] + pair[1]] -= 1
        pair.remove(outcome)


def state_of(settings: SprtSettings, matches: Sequence[Played]) -> SprtState:
    """The test's state after ``matches`` (a tournament's, NEW at field position 0)."""
    counts = Counts()
    for match in matches:
        if match.scores is not None:
            counts.add(match)
    return evaluate(settings, counts.pentanomial, counts.trinomial)


class SprtDirector(Director):
    eager = True  # see the module

    def __init__(self, names: Sequence[str], settings: Mapping[str, Any], seed: int) -> None:
        super().__init__(names, settings, seed)
        self.test, self.max_games, self.interval = sprt_settings(settings)
        self._counts = Counts()
        self._state: SprtState | None = None
        self._reported = 0  # complete pairs at the last status line

    @property
    def state(self) -> SprtState:
        """The test's state after the results given so far (evaluated once per change)."""
        if self._state is None:
            counts = self._counts
            self._state = evaluate(self.test, counts.pentanomial, counts.trinomial)
        return self._state

    def load(self, matches: Sequence[Played]) -> None:
        super().load(matches)
        self._counts = Counts()
        for match in self.matches.values():
            if match.scores is not None:
                self._counts.add(match)
        self._state = None
        self._reported = self.state.pairs

    def result(self, match_id: int, scores: Sequence[float]) -> None:
        before = self.matches.get(match_id)
        super().result(match_id, scores)
        if before is not None and before.scores is None:  # each match counts once
            self._counts.add(self.matches[match_id])
            self._state = None

    def retract(self, match_id: int) -> None:
        match = self.matches.get(match_id)
        if match is not None and match.scores is not None:
            self._counts.remove(match)
            self._state = None
        super().retract(match_id)

    def next(self, ahead: int) -> list[NewMatch]:
        if self.decided:
            return []
        made = self.last_round
        limit = self.max_games // 2
        if self.open >= max(2, ahead) or made >= limit:
            return []
        # fill up to twice the wish, so a long run adds pairs in batches, not one by one
        wanted = min(limit - made, max(1, (2 * max(2, ahead) - self.open + 1) // 2))
        out = []
        for pair in range(made + 1, made + wanted + 1):
            out.append(NewMatch(pair, (0, 1), new_opening=True))
            out.append(NewMatch(pair, (1, 0), new_opening=False))
        return out

    @property
    def decided(self) -> bool:
        return self.state.decision is not None

    @property
    def complete(self) -> bool:
        if self.decided:
            return True
        return self.last_round >= self.max_games // 2 and self.open == 0

    def expected_total(self) -> int:
        if self.decided:
            return len(self.matches) - self.open
        return 2 * (self.max_games // 2)

    def report(self) -> str | None:
        state = self.state
        if state.pairs < self._reported + self.interval:
            return None
        self._reported = state.pairs
        return state.line()

    def verdict(self) -> str:
        """The test's result in words."""
        test, decision = self.test, self.state.decision
        unit = "nElo" if test.model == "normalized" else "Elo"
        if decision is not None:
            kept, other = (test.elo1, test.elo0) if decision == "H1" else (test.elo0, test.elo1)
            word = "passed" if decision == "H1" else "failed"
            return (
                f"{decision} accepted ({word}): NEW is {kept:+g} {unit} against BASE rather "
                f"than {other:+g}"
            )
        if self.complete:
            return f"no decision within {self.max_games} games"
        return "running: no decision yet"

    def summary(self) -> dict[str, Any]:
        return {
            **self.state.to_dict(),
            "max_games": self.max_games,
            "verdict": self.verdict(),
            "new": self.names[0],
            "base": self.names[1],
        }

    def text(self, width: int | None) -> list[str]:
        test = self.test
        lines = [
            f"SPRT {self.names[0]} (NEW) vs {self.names[1]} (BASE): elo0 {test.elo0:g}, "
            f"elo1 {test.elo1:g}, alpha {test.alpha:g}, beta {test.beta:g}, {test.model} Elo, "
            f"{test.statistics}",
            self.state.line(),
            self.verdict(),
        ]
        if width is None:
            return lines
        import textwrap

        out = textwrap.wrap(lines[0], max(width, 40), subsequent_indent="  ")
        # the state line breaks between its fields (" | "), never inside one
        row = ""
        for part in lines[1].split(" | "):
            joined = f"{row} | {part}" if row else part
            if row and len(joined) > width:
                out.append(row)
                row = "  " + part
            else:
                row = joined
        return [*out, row, lines[2]]
