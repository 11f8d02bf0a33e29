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

from arena.ratings.design import FloatArray, IntArray
from arena.ratings.results import BotStats, GameResult

Multi = list[tuple[tuple[int, ...], tuple[int, ...]]]


@dataclass
class Prepared:
    names: list[str]  # sorted; only bots with at least one rated game
    first: IntArray  # two-player games (self-play dropped), in input order
    second: IntArray
    score: FloatArray  # first player's score: 1, 1/2, 0
    two_pos: IntArray  # input position of each two-player game
    multi: Multi  # multi-seat matches: (player index per seat, ranks)
    multi_pos: list[int]
    stats: dict[str, BotStats]

    @property
    def index(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.names)}


def prepare(results: Iterable[GameResult]) -> Prepared:
    games = results if isinstance(results, list) else list(results)
    players = list(map(attrgetter("players"), games))
    ranks = list(map(attrgetter("ranks"), games))
    lengths = np.fromiter(map(len, players), dtype=np.intp, count=len(players))
    flat = list(chain.from_iterable(players))
    names = sorted(set(flat))
    index = {n: i for i, n in enumerate(names)}
    idx = np.fromiter(map(index.__getitem__, flat), dtype=np.intp, count=len(flat))
    rk = np.fromiter(chain.from_iterable(ranks), dtype=np.int64, count=len(flat))
    starts = np.cumsum(lengths) - lengths
    two = lengths == 2
    s2 = starts[two]
    first, second = idx[s2], idx[s2 + 1]
    ra, rb = rk[s2], rk[s2 + 1]
    score = np.where(ra < rb, 1.0, np.where(ra == rb, 0.5, 0.0))
    keep = first != second  # a two-player game against oneself says nothing
    two_pos = np.flatnonzero(two)[keep]
    first, second, score = first[keep], second[keep], score[keep]
    multi_pos = np.flatnonzero(~two).tolist()
    multi: Multi = [
        (tuple(idx[starts[p] : starts[p] + lengths[p]].tolist()), ranks[p]) for p in multi_pos
    ]

    k = len(names)
    used = np.zeros(k, dtype=bool)
    used[first] = True
    used[second] = True
    for seats, _ in multi:
        used[list(seats)] = True
    if not used.all():  # bots that only played themselves: not rated, not listed
        lookup = np.cumsum(used) - 1
        names = [n for n, u in zip(names, used.tolist(), strict=True) if u]
        first, second = lookup[first], lookup[second]
        multi = [(tuple(int(lookup[s]) for s in seats), r) for seats, r in multi]
        k = len(names)

    stats = _two_player_stats(names, first, second, score)
    for seats, r in multi:
        _add_multi(stats, [names[s] for s in seats], r)
    return Prepared(names, first, second, score, two_pos, multi, multi_pos, stats)


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


def _add_multi(stats: dict[str, BotStats], players: list[str], ranks: tuple[int, ...]) -> None:
    n = len(players)
    for seat, name in enumerate(players):
        st = stats[name]
        mine = ranks[seat]
        beaten = sum(1 for r in ranks if r > mine)
        tied = sum(1 for r in ranks if r == mine) - 1
        rank = n - beaten - tied  # competition rank: 1 + seats strictly better
        st.games += 1
        st.points += (beaten + 0.5 * tied) / (n - 1)
        st.multi_games += 1
        st.rank_sum += rank
        st.firsts += rank == 1
        st.shared += tied > 0
