"""A Swiss tournament: ``rounds`` rounds, each pairing bots of equal or close scores who have not
met (``arena.tournament.swiss_pairing.pair_round``), each pairing a mini-match of ``games`` games.

Round ``r + 1`` is paired only once every match of round ``r`` is stored, from the stored results
alone: the standings, who met whom, who had the first seat and who had a bye are all read back
from the rounds' matches (a bot that plays no match in a round had its bye), so an interrupted
Swiss resumes with the very pairings it would have made. A bye is worth a won mini-match
(``games`` points), as a pairing-allocated bye is worth a win in the FIDE rules.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from bot_arena.arena.tournament.directors.base import Director, NewMatch, Played
from bot_arena.arena.tournament.swiss_pairing import (
    SwissPlayer,
    buchholz,
    pair_round,
    standings_order,
)

KEY = "swiss"  # the tournament's settings: {"rounds": R, "games": G}


def default_rounds(field_size: int) -> int:
    """Enough rounds for one winner to stand out: ceil(log2 n), as chess Swisses are sized."""
    return max(1, math.ceil(math.log2(max(2, field_size))))


def swiss_players(
    field_size: int, rounds: Mapping[int, Sequence[Played]], games: int
) -> list[SwissPlayer]:
    """Each bot's Swiss record after the complete rounds among ``rounds`` (by round number)."""
    points = [0.0] * field_size
    opponents: list[list[int]] = [[] for _ in range(field_size)]
    colours: list[list[int]] = [[] for _ in range(field_size)]
    byes = [0] * field_size
    for number in sorted(rounds):
        matches = rounds[number]
        if any(m.scores is None for m in matches):
            continue  # not played yet
        first_game: dict[frozenset[int], Played] = {}
        for match in matches:
            first_game.setdefault(frozenset(match.seats), match)
            assert match.scores is not None
            for seat, bot in enumerate(match.seats):
                points[bot] += match.scores[seat]
        seated = set()
        for pair, match in first_game.items():
            for seat, bot in enumerate(match.seats):
                other = next(iter(pair - {bot}))
                opponents[bot].append(other)
                colours[bot].append(seat)
                seated.add(bot)
        for bot in range(field_size):
            if bot not in seated:
                byes[bot] += 1
                points[bot] += games
    return [
        SwissPlayer(i, points[i], tuple(opponents[i]), tuple(colours[i]), byes[i])
        for i in range(field_size)
    ]


class SwissDirector(Director):
    def __init__(self, names: Sequence[str], settings: Mapping[str, Any], seed: int) -> None:
        super().__init__(names, settings, seed)
        data = settings[KEY]
        self.total_rounds = int(data["rounds"])
        self.games = int(data["games"])

    def players(self) -> list[SwissPlayer]:
        return swiss_players(len(self.names), self.rounds(), self.games)

    def next(self, ahead: int) -> list[NewMatch]:
        made = self.last_round
        if made >= self.total_rounds or self.open:
            return []
        paired = pair_round(self.players())
        out = []
        for first, second in paired.pairs:
            for g in range(self.games):
                seats = (first, second) if g % 2 == 0 else (second, first)
                out.append(NewMatch(made + 1, seats, new_opening=g % 2 == 0))
        return out

    @property
    def complete(self) -> bool:
        return self.last_round >= self.total_rounds and self.open == 0

    def expected_total(self) -> int:
        return self.total_rounds * (len(self.names) // 2) * self.games

    def _boards(self) -> list[tuple[int, list[tuple[int, int, float, float]], int | None]]:
        """Each round made: its boards (first seat of the first game, second, their points
        in the round) and its bye."""
        out = []
        for number, matches in sorted(self.rounds().items()):
            boards: dict[frozenset[int], list[float]] = {}
            order: list[tuple[int, int]] = []
            for match in matches:
                key = frozenset(match.seats)
                if key not in boards:
                    boards[key] = [0.0, 0.0]
                    order.append((match.seats[0], match.seats[1]))
                if match.scores is not None:
                    first = next(o for o in order if frozenset(o) == key)
                    for seat, bot in enumerate(match.seats):
                        boards[key][0 if bot == first[0] else 1] += match.scores[seat]
            seated = {bot for pair in order for bot in pair}
            bye = next((i for i in range(len(self.names)) if i not in seated), None)
            rows = []
            for a, b in order:
                first_points, second_points = boards[frozenset((a, b))]
                rows.append((a, b, first_points, second_points))
            out.append((number, rows, bye))
        return out

    def summary(self) -> dict[str, Any]:
        players = self.players()
        tie_break = buchholz(players)
        complete = sum(1 for ms in self.rounds().values() if all(m.scores is not None for m in ms))
        return {
            "rounds": self.total_rounds,
            "complete_rounds": complete,
            "games": self.games,
            "standings": [
                {
                    "bot": self.names[i],
                    "points": players[i].score,
                    "buchholz": tie_break[i],
                    "byes": players[i].byes,
                    "opponents": [self.names[o] for o in players[i].opponents],
                }
                for i in standings_order(players)
            ],
            "pairings": [
                {
                    "round": number,
                    "boards": [
                        {"first": self.names[a], "second": self.names[b], "points": [pa, pb]}
                        for a, b, pa, pb in boards
                    ],
                    "bye": None if bye is None else self.names[bye],
                }
                for number, boards, bye in self._boards()
            ],
        }

    def text(self, width: int | None) -> list[str]:
        data = self.summary()
        lines = [
            f"Swiss after {data['complete_rounds']} of {self.total_rounds} rounds "
            "(Bh: Buchholz, the opponents' points)"
        ]
        for place, row in enumerate(data["standings"], 1):
            byes = f", bye {row['byes']}" if row["byes"] else ""
            lines.append(
                f"  {place:>2}. {row['bot']}  {row['points']:g} (Bh {row['buchholz']:g}{byes})"
            )
        for entry in data["pairings"]:
            boards = [
                f"{b['first']} {b['points'][0]:g}-{b['points'][1]:g} {b['second']}"
                for b in entry["boards"]
            ]
            if entry["bye"] is not None:
                boards.append(f"bye {entry['bye']}")
            lines.append(f"  round {entry['round']}: " + "; ".join(boards))
        if width is None:
            return lines
        import textwrap

        out: list[str] = []
        for line in lines:
            out += textwrap.wrap(line, max(width, 40), subsequent_indent="      ") or [line]
        return out
