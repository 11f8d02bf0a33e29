"""Classic sequential (online) Elo: every game updates both ratings, in the order the games were
played (not the sequential test: that is ``sprt_stats``).

Two players: E_a = ``elo.expected_score(R_a - R_b)``, R_a += K (S_a - E_a), R_b -= the same.
N players: every pair of seats in a match is one such comparison (score 1 above, 1/2 tied,
0 below) with K / (N - 1), all from the ratings before the match. The result depends on the order
of the games, which is why the maximum-likelihood method is the default.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from bot_arena.arena.ratings.elo import expected_score
from bot_arena.arena.ratings.graph import pools
from bot_arena.arena.ratings.outcomes import GameResult, RatingInputError, pair_points
from bot_arena.arena.ratings.prepare import prepare
from bot_arena.arena.ratings.table import BotRating, Pool, RatingTable


def fit_sequential(
    results: Iterable[GameResult],
    *,
    k: float = 16.0,
    initial: float = 1500.0,
    anchor: tuple[str, float] | None = None,
) -> RatingTable:
    """Elo after replaying ``results`` in order. With ``anchor=(name, elo)`` that bot's pool is
    shifted afterwards so the bot shows exactly ``elo`` (differences are unchanged)."""
    prep = prepare(results)
    names, stats = prep.names, prep.stats
    if anchor is not None and anchor[0] not in stats:
        raise RatingInputError(f"anchor bot {anchor[0]!r} has no rated games")
    rating = [initial] * len(names)
    firsts, seconds, scores = prep.first.tolist(), prep.second.tolist(), prep.score.tolist()
    if prep.groups:
        # two-player games and multi-seat matches replayed together in input order
        events: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = prep.multi_in_order()
        events += [
            (pos, (a, b), (1, 1) if s == 0.5 else ((1, 2) if s == 1.0 else (2, 1)))
            for pos, a, b, s in zip(prep.two_pos.tolist(), firsts, seconds, scores, strict=True)
        ]
        events.sort()
        for _, players, ranks in events:
            if len(players) == 2:
                _update_pair(rating, players[0], players[1], pair_points(ranks, 0, 1), k)
            else:
                _update_multi(rating, players, ranks, k)
    else:  # the common case, kept tight: a million games in well under a second
        for a, b, score in zip(firsts, seconds, scores, strict=True):
            delta = k * (score - expected_score(rating[a] - rating[b]))
            rating[a] += delta
            rating[b] -= delta
    link_a = [prep.first]
    link_b = [prep.second]
    for seats, _, _ in prep.groups.values():
        link_a.append(np.repeat(seats[:, 0], seats.shape[1] - 1))
        link_b.append(seats[:, 1:].ravel())
    groups = pools(len(names), np.concatenate(link_a), np.concatenate(link_b))
    rows: list[BotRating] = []
    pool_rows: list[Pool] = []
    for number, group in enumerate(groups, start=1):
        order = sorted(group, key=lambda i: (-rating[i], names[i]))
        shift = 0.0
        relative = f"start {initial:g}, K = {k:g}"
        if anchor is not None and names.index(anchor[0]) in group:
            shift = anchor[1] - rating[names.index(anchor[0])]
            relative = f"anchor {anchor[0]} = {anchor[1]:g} (K = {k:g})"
        for i in order:
            rows.append(BotRating(names[i], rating[i] + shift, None, stats[names[i]], number, None))
        pool_rows.append(Pool(number, tuple(names[i] for i in order), relative))
    notes = ["order-dependent: the same games in another order give other ratings"]
    if len(groups) > 1:
        notes.append(
            f"{len(groups)} separate pools: bots in different pools never met, their ratings "
            "must not be compared"
        )
    description = f"sequential Elo (K = {k:g}, every bot starts at {initial:g}), in game order"
    return RatingTable("elo", description, tuple(rows), tuple(pool_rows), tuple(notes))


def _update_pair(rating: list[float], a: int, b: int, score: float, k: float) -> None:
    delta = k * (score - expected_score(rating[a] - rating[b]))
    rating[a] += delta
    rating[b] -= delta


def _update_multi(
    rating: list[float], players: tuple[int, ...], ranks: tuple[int, ...], k: float
) -> None:
    """Every pair of seats is one comparison with K/(N-1), all from pre-match ratings."""
    before = [rating[p] for p in players]
    kk = k / (len(players) - 1)
    for s, p in enumerate(players):
        total = 0.0
        for t in range(len(players)):
            if t != s:
                total += pair_points(ranks, s, t) - expected_score(before[s] - before[t])
        rating[p] += kk * total
