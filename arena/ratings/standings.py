"""A tournament's standings (games, points, W-D-L, average rank, faults per bot) and its
crosstable, computed once from the database's plain rows.

The database layer only reads (``db.queries.results``: each done match's seats with rank,
stored score and fault); the arithmetic lives here, above it, so ``tournament show``, its JSON,
the Python API's ``Tournament`` and ``arena crosstable`` count a pair of seats by the one rule
(``games.base.pair_points``, through :func:`~bot_arena.arena.ratings.crosstable.crosstable`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from bot_arena.arena.ratings.crosstable import Crosstable, crosstable
from bot_arena.arena.ratings.outcomes import GameResult, pair_points
from bot_arena.db.queries import PairOutcomes, PairRecord, Result, SeatFault, SeatRecord


@dataclass(slots=True)
class Standing:
    bot: str
    games: int = 0
    points: float = 0.0
    wins: int = 0  # first place alone
    draws: int = 0  # first place shared (two players: a draw)
    losses: int = 0
    rank_sum: int = 0
    faults: dict[str, int] = field(default_factory=dict)

    @property
    def score_pct(self) -> float:
        return 100.0 * self.points / self.games if self.games else 0.0

    @property
    def average_rank(self) -> float:
        return self.rank_sum / self.games if self.games else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "games": self.games,
            "points": self.points,
            "score_pct": round(self.score_pct, 2),
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "average_rank": round(self.average_rank, 3),
            "faults": dict(self.faults),
        }


def standings(rows: Sequence[Result], names: Sequence[str] = ()) -> list[Standing]:
    """The table by score (points / games), best first; ``names`` are listed even without games.
    A seat's points are its stored score (the referee's ``scores_from_ranks``)."""
    table: dict[str, Standing] = {n: Standing(n) for n in names}
    return _ranked(table, rows)


def _ranked(table: dict[str, Standing], rows: Sequence[Result]) -> list[Standing]:
    for result in rows:
        firsts = sum(1 for s in result.seats if s.rank == 1)
        for seat in result.seats:
            st = table.setdefault(seat.bot, Standing(seat.bot))
            st.games += 1
            st.points += seat.score
            st.rank_sum += seat.rank
            if seat.rank == 1 and firsts == 1:
                st.wins += 1
            elif seat.rank == 1:
                st.draws += 1
            else:
                st.losses += 1
            if seat.fault and seat.fault != "resign":  # a person's resignation: a loss only
                st.faults[seat.fault] = st.faults.get(seat.fault, 0) + 1
    return sorted(table.values(), key=lambda s: (-s.score_pct, -s.points, s.bot))


def match_crosstable(rows: Iterable[Result]) -> Crosstable:
    """The crosstable of stored matches, players by bot name (a tournament's field has
    distinct names, so no pair of seats is a bot against itself)."""
    return crosstable(
        GameResult(tuple(s.bot for s in r.seats), tuple(s.rank for s in r.seats)) for r in rows
    )


def crosstable_json(table: Crosstable) -> dict[str, dict[str, dict[str, float]]]:
    """``{row bot: {column bot: {"points", "games"}}}``, rows and columns in the order each pair
    first played (what ``tournament show --json`` and ``Tournament.crosstable`` carry)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (a, b), points in table.points.items():
        out.setdefault(a, {})[b] = {"points": points, "games": table.games[(a, b)]}
    return out


#: scores whose sums are exact in any order (a float sum of halves is), so a sum of totals
#: equals the sum match by match
EXACT_SCORES = (0.0, 0.5, 1.0)


def exact(records: Sequence[PairRecord]) -> bool:
    """Whether every stored score of ``records`` is 0, 1/2 or 1: else only the sum in play
    order gives the same float, and a caller counts match by match."""
    distinct = set(map(attrgetter("scores"), records))  # a few tuples, found at C speed
    return all(score in EXACT_SCORES for scores in distinct for score in scores)


def totals_tables(
    records: Sequence[PairRecord],
    faults: Sequence[SeatFault],
    names: Sequence[str] = (),
    width: int | None = None,
) -> tuple[list[Standing], dict[str, dict[str, dict[str, float]]]]:
    """The standings and the crosstable's JSON (``crosstable_json``) of two-player matches
    summed by ``db.queries.pair_records``, equal to ``standings`` and
    ``crosstable_json(match_crosstable(...))`` of those matches one by one: the same counts,
    bots, faults and orders. The records' scores must be ``exact`` (ValueError). ``width``: the
    crosstable holds only the cells a table of that width asks for (``grid.cells_asked``:
    those between the top bots of a large field); None: every one."""
    if not exact(records):
        raise ValueError("a stored score is not 0, 1/2 or 1: count match by match")
    table: dict[str, Standing] = {n: Standing(n) for n in names}
    for r in records:
        n = r.games
        firsts = r.ranks.count(1)
        for bot, rank, score in (
            (r.first, r.ranks[0], r.scores[0]),
            (r.second, r.ranks[1], r.scores[1]),
        ):
            st = table.get(bot)
            if st is None:
                st = table[bot] = Standing(bot)
            st.games += n
            st.points += score * n
            st.rank_sum += rank * n
            if rank != 1:
                st.losses += n
            elif firsts == 1:
                st.wins += n
            else:
                st.draws += n
    _add_faults(table, faults)
    ranked = _ranked(table, ())
    if width is not None:  # the layout's module (and tabulate) only for a table drawn
        from bot_arena.arena.ratings.grid import cells_asked

        top = cells_asked(len(ranked), width)
        if top < len(ranked):
            return ranked, pairs_json(records, {s.bot for s in ranked[:top]})
    return ranked, pairs_json(records)


def _add_faults(table: dict[str, Standing], faults: Sequence[SeatFault]) -> None:
    for fault in faults:  # in match and seat order, as ``standings`` meets them
        st = table.setdefault(fault.bot, Standing(fault.bot))
        if fault.termination and fault.termination != "resign":
            st.faults[fault.termination] = st.faults.get(fault.termination, 0) + 1


def seats_exact(records: Sequence[SeatRecord]) -> bool:
    """``exact`` for ``SeatRecord``s: every stored score is 0, 1/2 or 1."""
    return all(score in EXACT_SCORES for score in {r.score for r in records})


def seat_standings(
    records: Sequence[SeatRecord], faults: Sequence[SeatFault], names: Sequence[str] = ()
) -> list[Standing]:
    """The standings of ``totals_tables`` from the same matches summed per seat
    (``db.queries.seat_records``: a few rows a bot, not a row a pair and outcome): the same
    table. The records' scores must be exact (``seats_exact``; ValueError)."""
    if not seats_exact(records):
        raise ValueError("a stored score is not 0, 1/2 or 1: count match by match")
    table: dict[str, Standing] = {n: Standing(n) for n in names}
    for r in records:
        n = r.games
        st = table.get(r.bot)
        if st is None:
            st = table[r.bot] = Standing(r.bot)
        st.games += n
        st.points += r.score * n
        st.rank_sum += r.rank * n
        if r.rank != 1:
            st.losses += n
        elif r.other_rank != 1:  # first place alone
            st.wins += n
        else:
            st.draws += n
    _add_faults(table, faults)
    return _ranked(table, ())


def pairs_json(
    records: Sequence[PairRecord], among: set[str] | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """``crosstable_json`` of the records' matches (of ``totals_tables``, and of a caller that
    summed only the pairs among some bots): each ordered pair where it first played
    (its first match, the seat-0 bot's row first, as ``crosstable`` meets them); ``among``:
    only the pairs of those bots."""
    # (row bot, column bot) -> [points, games, where it first played: 2 * match + position]
    cells: dict[tuple[str, str], list[Any]] = {}
    for r in records:
        if r.first == r.second:
            continue
        if among is not None and (r.first not in among or r.second not in among):
            continue
        n, seen = r.games, 2 * r.first_match
        for key, got, position in (
            ((r.first, r.second), pair_points(r.ranks, 0, 1), 0),
            ((r.second, r.first), pair_points(r.ranks, 1, 0), 1),
        ):
            cell = cells.get(key)
            if cell is None:
                cells[key] = [got * n, n, seen + position]
                continue
            cell[0] += got * n
            cell[1] += n
            if seen + position < cell[2]:
                cell[2] = seen + position
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (a, b), (points, games, _) in sorted(cells.items(), key=lambda item: item[1][2]):
        out.setdefault(a, {})[b] = {"points": points, "games": games}
    return out


def outcomes_json(
    outcomes: Sequence[PairOutcomes], among: set[str]
) -> dict[str, dict[str, dict[str, float]]]:
    """``pairs_json``'s cells among the bots ``among`` from pairs summed by outcome alone
    (``db.queries.pair_outcomes``: the kept totals, which hold no match id): the same points
    and games (halves, which add up exactly in any order), the rows and their columns in name
    order (where each pair first played is not known)."""
    cells: dict[tuple[str, str], list[Any]] = {}  # (row bot, column bot) -> [points, games]
    for o in outcomes:
        if o.first == o.second or o.first not in among or o.second not in among:
            continue
        for ranks, n in (((1, 2), o.wins), ((1, 1), o.draws), ((2, 1), o.losses)):
            if not n:
                continue
            for key, got in (
                ((o.first, o.second), pair_points(ranks, 0, 1)),
                ((o.second, o.first), pair_points(ranks, 1, 0)),
            ):
                cell = cells.setdefault(key, [0.0, 0])
                cell[0] += got * n
                cell[1] += n
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (a, b), (points, games) in sorted(cells.items()):
        out.setdefault(a, {})[b] = {"points": points, "games": games}
    return out
