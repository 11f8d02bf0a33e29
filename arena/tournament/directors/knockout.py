"""A knockout: a seeded single-elimination bracket (``arena.tournament.knockout_bracket``),
each tie a mini-match of ``games`` games, then extra pairs while it stays level (up to
``tiebreak_pairs``), then a coin drawn from the tournament's seed.

The bracket is replayed from the seeding and the stored results every time it is needed: round
1's ties come from the seeding, each later round's from the winners of the round before, each
tie's games are the round's matches between its two bots. Nothing else is stored, so a resume
plays on with the same bracket and the same coins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot_arena.arena.tournament.directors.base import Director, NewMatch, Played
from bot_arena.arena.tournament.knockout_bracket import (
    TieScore,
    TieView,
    bracket_text,
    first_round,
    game_seats,
    next_round,
    tie_decision,
)
from bot_arena.arena.tournament.schedule import derive_seed

KEY = "knockout"  # the tournament's settings: seeding, games, tiebreak_pairs, seeded_by
DEFAULT_TIEBREAK_PAIRS = 2


@dataclass(frozen=True, slots=True)
class Tie:
    """One tie of the bracket as far as it has been played."""

    round: int
    first: int | None  # field positions; None: a bye
    second: int | None
    games: tuple[Played, ...]  # its matches, in the order they were made
    winner: int | None  # once decided
    more: int  # games to add before it can be decided (0: decided, or games in play)
    by_coin: bool

    def points(self) -> tuple[float, float]:
        first = second = 0.0
        for match in self.games:
            if match.scores is not None:
                for seat, bot in enumerate(match.seats):
                    if bot == self.first:
                        first += match.scores[seat]
                    else:
                        second += match.scores[seat]
        return first, second

    def view(self) -> TieView:
        first, second = self.points()
        return TieView(
            self.first, self.second, first, second, self.winner, self.by_coin, len(self.games)
        )


class KnockoutDirector(Director):
    def __init__(self, names: Sequence[str], settings: Mapping[str, Any], seed: int) -> None:
        super().__init__(names, settings, seed)
        data = settings[KEY]
        self.seeding = [int(i) for i in data["seeding"]]
        self.games = int(data["games"])
        self.tiebreak_pairs = int(data.get("tiebreak_pairs", DEFAULT_TIEBREAK_PAIRS))

    def _tie(
        self, number: int, pair: tuple[int | None, int | None], matches: Sequence[Played]
    ) -> Tie:
        first, second = pair
        if first is None or second is None:
            return Tie(number, first, second, (), second if first is None else first, 0, False)
        games = tuple(m for m in matches if set(m.seats) == {first, second})
        played = [m for m in games if m.scores is not None]
        tie = Tie(number, first, second, games, None, 0, False)
        if len(played) < len(games):
            return tie  # games in play: nothing to decide yet
        a, b = tie.points()
        state = tie_decision(
            TieScore(first, second, len(played), a, b),
            games=self.games,
            tiebreak_pairs=self.tiebreak_pairs,
            coin_seed=derive_seed(self.seed, "tie", number),
        )
        return Tie(number, first, second, games, state.winner, state.more_games, state.by_coin)

    def bracket(self) -> list[list[Tie]]:
        """Every round as far as it is known: the played ones and the one in play."""
        by_round = self.rounds()
        pairs: list[tuple[int | None, int | None]] = list(first_round(self.seeding))
        out: list[list[Tie]] = []
        number = 1
        while pairs:
            ties = [self._tie(number, pair, by_round.get(number, [])) for pair in pairs]
            out.append(ties)
            winners = [t.winner for t in ties]
            if len(ties) == 1 or any(w is None for w in winners):
                break
            pairs = list(next_round([w for w in winners if w is not None]))
            number += 1
        return out

    def champion(self) -> int | None:
        final = self.bracket()[-1]
        return final[0].winner if len(final) == 1 else None

    def next(self, ahead: int) -> list[NewMatch]:
        current = self.bracket()[-1]
        out = []
        for tie in current:
            for g in range(len(tie.games), len(tie.games) + tie.more):
                assert tie.first is not None and tie.second is not None  # a bye needs no game
                seats = game_seats(tie.first, tie.second, g)
                out.append(NewMatch(tie.round, seats, new_opening=g % 2 == 0))
        return out

    @property
    def complete(self) -> bool:
        return self.champion() is not None

    def expected_total(self) -> int:
        """The matches made, those the current round needs now, and ``games`` for each tie of
        the rounds to come (tie-breaks cannot be foreseen)."""
        bracket = self.bracket()
        size = 1
        while size < len(self.seeding):
            size *= 2
        ties_to_come = (size - 1) - sum(len(r) for r in bracket)
        return len(self.matches) + sum(t.more for t in bracket[-1]) + ties_to_come * self.games

    def summary(self) -> dict[str, Any]:
        def name(index: int | None) -> str | None:
            return None if index is None else self.names[index]

        rounds = []
        for ties in self.bracket():
            rows = []
            for tie in ties:
                first, second = tie.points()
                rows.append(
                    {
                        "first": name(tie.first),
                        "second": name(tie.second),
                        "points": [first, second],
                        "games": len(tie.games),
                        "winner": name(tie.winner),
                        "by_coin": tie.by_coin,
                    }
                )
            rounds.append(rows)
        return {
            "seeding": [self.names[i] for i in self.seeding],
            "games": self.games,
            "tiebreak_pairs": self.tiebreak_pairs,
            "rounds": rounds,
            "champion": name(self.champion()),
        }

    def text(self, width: int | None) -> list[str]:
        views = [[tie.view() for tie in ties] for ties in self.bracket()]
        return bracket_text(views, self.names, width)
