"""One pass over the results: player indices, two-player games as arrays, per-bot counts.

A million ``GameResult`` objects share few distinct player tuples and rank tuples, so each
result is reduced to two codes by C-level ``dict``/``map`` passes, and everything after that is
numpy on the codes: no Python loop per game. Two-player counts (W-D-L, points) are
``bincount``s; multi-seat matches become (matches x seats) arrays grouped by seat count.

Two-player results may also come already counted, as a ``PairTotal`` (``totals.py``) per
ordered pair (what the database sums with GROUP BY, so a leaderboard reads O(pairs) rows, not
O(matches)): each total becomes up to three weighted entries (its wins, draws and losses), and
every sum below is weighted. A result given one by one is an entry of weight 1, so the two
forms give the same numbers: the weighted sums add the same multiples of 1/4, exactly. The
totals may also come as columns (``PairTotalColumns``: a leaderboard of many bots, where pairs
are nearly as many as matches), made into the same entries, in the same order, by numpy.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import numpy as np
from numpy.typing import NDArray

from bot_arena.arena.ratings.design import FloatArray, IntArray
from bot_arena.arena.ratings.outcomes import BotStats, GameResult
from bot_arena.arena.ratings.totals import PairTotal, PairTotalColumns

Group = tuple[IntArray, IntArray, IntArray]  # players (M, n), ranks (M, n), input positions (M,)


@dataclass
class Prepared:
    names: list[str]  # sorted; only bots with at least one rated game
    first: IntArray  # two-player games (self-play dropped), in input order, then the totals'
    second: IntArray
    score: FloatArray  # first player's score: 1, 1/2, 0
    two_pos: IntArray  # input position of each two-player game (-1: from a total)
    weight: FloatArray  # the games each entry stands for (1 for a result given alone)
    groups: dict[int, Group]  # multi-seat matches by number of seats
    stats: dict[str, BotStats]

    @property
    def index(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.names)}

    def multi_in_order(self) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
        """(input position, player per seat, rank per seat) of every multi-seat match."""
        out: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
        for players, ranks, pos in self.groups.values():
            seats = map(tuple, players.tolist())
            out += zip(pos.tolist(), seats, map(tuple, ranks.tolist()), strict=True)
        out.sort()
        return out


def _codes(values: list[tuple[Any, ...]]) -> tuple[list[tuple[Any, ...]], IntArray]:
    """Distinct tuples (in first-seen order) and each value's position among them. Only the
    C-level dict and map run per game: a million results share a few thousand distinct
    (players) and a handful of distinct (ranks) tuples."""
    table: dict[tuple[Any, ...], Any] = dict.fromkeys(values)
    for i, key in enumerate(table):
        table[key] = i
    codes = np.fromiter(map(table.__getitem__, values), dtype=np.intp, count=len(values))
    return list(table), codes


def prepare(
    results: Iterable[GameResult], totals: Iterable[PairTotal] | PairTotalColumns = ()
) -> Prepared:
    """``results`` one by one (in play order) plus two-player ``totals`` (see the module
    docstring)."""
    games = results if isinstance(results, list) else list(results)
    columns = totals if isinstance(totals, PairTotalColumns) else None
    counted = [] if isinstance(totals, PairTotalColumns) else list(totals)
    seatings, seating_of = _codes(list(map(attrgetter("players"), games)))
    placings, placing_of = _codes(list(map(attrgetter("ranks"), games)))
    names = sorted(
        {p for seating in seatings for p in seating}
        | {t.first for t in counted}
        | {t.second for t in counted}
        | _column_players(columns)
    )
    index = {n: i for i, n in enumerate(names)}
    lengths = np.asarray([len(t) for t in seatings], dtype=np.intp)[seating_of]
    two = lengths == 2
    pair_a = np.asarray([index[t[0]] for t in seatings], dtype=np.intp)
    pair_b = np.asarray([index[t[1]] if len(t) == 2 else -1 for t in seatings], dtype=np.intp)
    pair_score = np.asarray(
        [
            (1.0 if r[0] < r[1] else 0.5 if r[0] == r[1] else 0.0) if len(r) == 2 else -1.0
            for r in placings
        ]
    )
    t_first, t_second, t_score, t_weight = (
        _entries(counted, index) if columns is None else _column_entries(columns, index)
    )
    if two.any():  # (else the totals' entries are all there is: no copy of them)
        t_first = np.concatenate([pair_a[seating_of[two]], t_first])
        t_second = np.concatenate([pair_b[seating_of[two]], t_second])
        t_score = np.concatenate([pair_score[placing_of[two]], t_score])
        t_weight = np.concatenate([np.ones(int(two.sum())), t_weight])
    n_totals = len(t_score) - int(two.sum())
    two_pos = np.concatenate([np.flatnonzero(two), np.full(n_totals, -1, dtype=np.intp)])
    keep = t_first != t_second  # a two-player game against oneself says nothing
    first, second, score, weight = t_first, t_second, t_score, t_weight
    del t_first, t_second, t_score, t_weight
    if not keep.all():
        first, second, score, weight, two_pos = (
            first[keep],
            second[keep],
            score[keep],
            weight[keep],
            two_pos[keep],
        )
    groups: dict[int, Group] = {}
    for n in np.unique(lengths[~two]).tolist():
        pos = np.flatnonzero(lengths == n)
        seat_rows = np.asarray(
            [[index[p] for p in t] if len(t) == n else [0] * n for t in seatings], dtype=np.intp
        )
        rank_rows = np.asarray(
            [list(r) if len(r) == n else [0] * n for r in placings], dtype=np.int64
        )
        groups[n] = (seat_rows[seating_of[pos]], rank_rows[placing_of[pos]], pos)

    used = np.zeros(len(names), dtype=bool)
    used[first] = True
    used[second] = True
    for p, _, _ in groups.values():
        used[p.ravel()] = True
    if not used.all():  # bots that only played themselves: not rated, not listed
        lookup = np.cumsum(used) - 1
        names = [n for n, u in zip(names, used.tolist(), strict=True) if u]
        first, second = lookup[first], lookup[second]
        groups = {n: (lookup[p], r, pos) for n, (p, r, pos) in groups.items()}

    stats = _two_player_stats(names, first, second, score, weight)
    for p, r, _ in groups.values():
        _add_multi(stats, names, p, r)
    return Prepared(names, first, second, score, two_pos, weight, groups, stats)


def _entries(
    totals: list[PairTotal], index: dict[str, int]
) -> tuple[IntArray, IntArray, FloatArray, FloatArray]:
    """The totals as weighted entries: (first, second, score, weight), one per outcome that
    happened (a total of 3 wins and 1 loss: two entries, weights 3 and 1)."""
    first: list[int] = []
    second: list[int] = []
    score: list[float] = []
    weight: list[float] = []
    for t in totals:
        for points, count in ((1.0, t.wins), (0.5, t.draws), (0.0, t.losses)):
            if count:
                first.append(index[t.first])
                second.append(index[t.second])
                score.append(points)
                weight.append(float(count))
    return (
        np.asarray(first, dtype=np.intp),
        np.asarray(second, dtype=np.intp),
        np.asarray(score, dtype=np.float64),
        np.asarray(weight, dtype=np.float64),
    )


def _column_players(columns: PairTotalColumns | None) -> set[str]:
    """The players the columns' rows name (a code that no row uses names nobody)."""
    if columns is None or not columns.first:
        return set()
    used = np.union1d(np.asarray(columns.first), np.asarray(columns.second))
    return {columns.players[code] for code in used.tolist()}


def _column_entries(
    columns: PairTotalColumns, index: dict[str, int]
) -> tuple[IntArray, IntArray, FloatArray, FloatArray]:
    """``_entries`` of the columns' totals: the same entries in the same order (row by row,
    wins, draws, losses; an outcome of no game left out), by numpy."""
    if not columns.first:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty, np.zeros(0), np.zeros(0)
    codes = np.fromiter(columns.players, dtype=np.int64, count=len(columns.players))
    lookup = np.zeros(int(codes.max()) - int(codes.min()) + 1, dtype=np.intp)
    low = int(codes.min())
    # a code no row uses names no rated player: -1, never read
    lookup[codes - low] = [index.get(columns.players[c], -1) for c in codes.tolist()]
    counts = np.empty((len(columns.first), 3), dtype=np.int64)
    for place, column in enumerate((columns.wins, columns.draws, columns.losses)):
        counts[:, place] = column  # from machine integers: read in place, no Python int
    happened = np.flatnonzero(counts.ravel() > 0)  # row * 3 + outcome, in that order
    row, outcome = np.divmod(happened, 3)
    weight = counts.ravel()[happened].astype(np.float64)
    del counts, happened
    return (
        lookup[np.asarray(columns.first, dtype=np.int64)[row] - low],
        lookup[np.asarray(columns.second, dtype=np.int64)[row] - low],
        np.asarray([1.0, 0.5, 0.0])[outcome],
        weight,
    )


def _two_player_stats(
    names: list[str], first: IntArray, second: IntArray, score: FloatArray, weight: FloatArray
) -> dict[str, BotStats]:
    """Each bot's games, points, wins, draws and losses: two weighted bincounts of (player,
    outcome), the first's and the second's (no array per outcome: at 1M matches the entries
    are a million). Counts and points are sums of integers and halves: exact in any order."""
    k = len(names)
    outcome = (2.0 - 2.0 * score).astype(np.intp)  # the first's: 0 win, 1 draw, 2 loss
    # (k, 3): each bot's weighted wins, draws and losses, as first and as second
    as_first = np.bincount(first * 3 + outcome, weights=weight, minlength=3 * k).reshape(k, 3)
    as_second = np.bincount(second * 3 + outcome, weights=weight, minlength=3 * k).reshape(k, 3)
    del outcome
    record = as_first + as_second[:, ::-1]  # the second's win is the first's loss
    wins, draws, losses = (record[:, c].tolist() for c in range(3))
    games = record.sum(axis=1).tolist()
    points = (record[:, 0] + 0.5 * record[:, 1]).tolist()
    return {
        n: BotStats(
            games=int(games[i]),
            points=points[i],
            wins=int(wins[i]),
            draws=int(draws[i]),
            losses=int(losses[i]),
        )
        for i, n in enumerate(names)
    }


def _add_multi(
    stats: dict[str, BotStats], names: list[str], players: IntArray, ranks: IntArray
) -> None:
    """Counts for matches of n seats: beaten / tied per seat by broadcasting (M, n, n)."""
    k, n = len(names), players.shape[1]
    beaten = (ranks[:, None, :] > ranks[:, :, None]).sum(axis=2)
    tied = (ranks[:, None, :] == ranks[:, :, None]).sum(axis=2) - 1
    rank = n - beaten - tied  # competition rank: 1 + seats strictly better
    flat = players.ravel()

    def total(values: NDArray[np.generic]) -> list[float]:
        counts = np.bincount(flat, weights=values.ravel().astype(np.float64), minlength=k)
        return counts.tolist()  # type: ignore[no-any-return]

    games = total(np.ones_like(rank))
    points = total((beaten + 0.5 * tied) / (n - 1))
    rank_sum = total(rank)
    firsts = total(rank == 1)
    shared = total(tied > 0)
    for i, name in enumerate(names):
        if games[i]:
            st = stats[name]
            st.games += int(games[i])
            st.multi_games += int(games[i])
            st.points += points[i]
            st.rank_sum += int(rank_sum[i])
            st.firsts += int(firsts[i])
            st.shared += int(shared[i])
