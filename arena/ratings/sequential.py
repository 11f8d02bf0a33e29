"""Classic sequential Elo: every game updates both ratings, in the order the games were played.

Two players: E_a = 1 / (1 + 10^((R_b - R_a)/400)), R_a += K (S_a - E_a), R_b -= the same.
N players: every pair of seats in a match is one such comparison (score 1 above, 1/2 tied,
0 below) with K / (N - 1), all from the ratings before the match. The result depends on the order
of the games, which is why the maximum-likelihood method is the default.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from arena.ratings.graph import pools
from arena.ratings.results import GameResult, pair_points, tally
from arena.ratings.table import BotRating, Pool, RatingTable


def fit_sequential(
    results: Iterable[GameResult], *, k: float = 16.0, initial: float = 1500.0
) -> RatingTable:
    games = list(results)
    stats = tally(games)
    names = sorted(stats)
    index = {n: i for i, n in enumerate(names)}
    rating = [initial] * len(names)
    link_a: list[int] = []
    link_b: list[int] = []
    for res in games:
        if res.self_play:
            continue
        players = [index[p] for p in res.players]
        ranks = res.ranks
        if len(players) == 2:
            a, b = players
            ra, rb = ranks
            score = 1.0 if ra < rb else (0.5 if ra == rb else 0.0)
            delta = k * (score - 1.0 / (1.0 + 10.0 ** ((rating[b] - rating[a]) / 400.0)))
            rating[a] += delta
            rating[b] -= delta
        else:
            before = [rating[p] for p in players]
            kk = k / (len(players) - 1)
            for s, p in enumerate(players):
                total = 0.0
                for t in range(len(players)):
                    if t != s:
                        score = pair_points(ranks, s, t)
                        total += score - 1.0 / (1.0 + 10.0 ** ((before[t] - before[s]) / 400.0))
                rating[p] += kk * total
        link_a.extend(players[:1] * (len(players) - 1))
        link_b.extend(players[1:])
    groups = pools(len(names), np.asarray(link_a, dtype=np.intp), np.asarray(link_b, dtype=np.intp))
    rows: list[BotRating] = []
    pool_rows: list[Pool] = []
    for number, group in enumerate(groups, start=1):
        order = sorted(group, key=lambda i: (-rating[i], names[i]))
        for i in order:
            rows.append(BotRating(names[i], rating[i], None, stats[names[i]], number, None))
        pool_rows.append(
            Pool(number, tuple(names[i] for i in order), f"start {initial:g}, K = {k:g}")
        )
    notes = ["order-dependent: the same games in another order give other ratings"]
    if len(groups) > 1:
        notes.append(
            f"{len(groups)} separate pools: bots in different pools never met, their ratings "
            "must not be compared"
        )
    description = f"sequential Elo (K = {k:g}, every bot starts at {initial:g}), in game order"
    return RatingTable("elo", description, tuple(rows), tuple(pool_rows), tuple(notes))
