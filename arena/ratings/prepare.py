"""One pass over the results: player indices, two-player games as arrays, per-bot counts.

A million ``GameResult`` objects are read with ``map``/``chain`` into flat numpy arrays instead
of a Python loop per game; two-player counts (W-D-L, points) are ``bincount``s. Multi-seat
matches (usually far fewer) are handled one by one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter

import numpy as np
from numpy.typing import NDArray

from arena.ratings.design import FloatArray, IntArray
from arena.ratings.results import BotStats, GameResult

Group = tuple[IntArray, IntArray, IntArray]  # players (M, n), ranks (M, n), input positions (M,)


@dataclass
class Prepared:
    names: list[str]  # sorted; only bots with at least one rated game
    first: IntArray  # two-player games (self-play dropped), in input order
    second: IntArray
    score: FloatArray  # first player's score: 1, 1/2, 0
    two_pos: IntArray  # input position of each two-player game
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


def prepare(results: Iterable[GameResult]) -> Prepared:
    games = results if isinstance(results, list) else list(results)
    players = list(map(attrgetter("players"), games))
    lengths = np.fromiter(map(len, players), dtype=np.intp, count=len(players))
    flat = list(chain.from_iterable(players))
    names = sorted(set(flat))
    index = {n: i for i, n in enumerate(names)}
    idx = np.fromiter(map(index.__getitem__, flat), dtype=np.intp, count=len(flat))
    rk = np.fromiter(
        chain.from_iterable(map(attrgetter("ranks"), games)), dtype=np.int64, count=len(flat)
    )
    starts = np.cumsum(lengths) - lengths
    two = lengths == 2
    s2 = starts[two]
    first, second = idx[s2], idx[s2 + 1]
    ra, rb = rk[s2], rk[s2 + 1]
    score = np.where(ra < rb, 1.0, np.where(ra == rb, 0.5, 0.0))
    keep = first != second  # a two-player game against oneself says nothing
    two_pos = np.flatnonzero(two)[keep]
    first, second, score = first[keep], second[keep], score[keep]
    groups: dict[int, Group] = {}
    for n in np.unique(lengths[~two]).tolist():
        pos = np.flatnonzero(lengths == n)
        seats = starts[pos][:, None] + np.arange(n)
        groups[n] = (idx[seats], rk[seats], pos)

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

    stats = _two_player_stats(names, first, second, score)
    for p, r, _ in groups.values():
        _add_multi(stats, names, p, r)
    return Prepared(names, first, second, score, two_pos, groups, stats)


def _two_player_stats(
    names: list[str], first: IntArray, second: IntArray, score: FloatArray
) -> dict[str, BotStats]:
    k = len(names)

    def count(weights_first: FloatArray, weights_second: FloatArray) -> list[float]:
        a = np.bincount(first, weights=weights_first, minlength=k)
        b = np.bincount(second, weights=weights_second, minlength=k)
        return (a + b).tolist()  # type: ignore[no-any-return]

    win = (score == 1.0).astype(np.float64)
    draw = (score == 0.5).astype(np.float64)
    loss = (score == 0.0).astype(np.float64)
    ones = np.ones(len(score))
    games = count(ones, ones)
    wins = count(win, loss)
    draws = count(draw, draw)
    losses = count(loss, win)
    points = count(score, 1.0 - score)
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
