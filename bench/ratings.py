"""Rating fit time: 100 bots, 1,000,000 two-player games (target: ml under 2 s).

Prints medians over a few repeats of: a bare pass over the results (baseline: the cost of
reading a million GameResult objects at all), ``fit_ml`` (aggregation into pair counts, Newton,
sandwich), ``fit_sequential`` (one Elo update per game), and an N-player fit for scale; then
the large cases of issue 27, each with the peak memory its fit allocated (tracemalloc, numpy
included): a sparse field of 20,001 players (a random tree joining them, then random games:
conjugate gradients, no players-squared arrays), one match of 1,000 tied players, and a match
of 1,000 seats with ties past the 64th.

    python bench/ratings.py [--games 1000000] [--bots 100] [--repeats 3] [--large-only]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from bot_arena.arena.ratings import GameResult, fit_ml, fit_sequential
from bot_arena.arena.ratings.elo import ELO_PER_NAT, expected_score


def two_player_games(bots: int, games: int, seed: int) -> tuple[list[GameResult], np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.normal(0.0, 200.0, bots)
    a = rng.integers(0, bots, games)
    b = (a + rng.integers(1, bots, games)) % bots
    e = np.array([expected_score(d) for d in (truth[a] - truth[b]).tolist()])
    draw = np.minimum(e, 1.0 - e) * 0.8
    u = rng.random(games)
    ranks = np.where(u < e - draw / 2, 0, np.where(u < e + draw / 2, 1, 2))
    names = [f"bot{i:03d}" for i in range(bots)]
    table = {0: (1, 2), 1: (1, 1), 2: (2, 1)}
    results = [
        GameResult((names[x], names[y]), table[r])
        for x, y, r in zip(a.tolist(), b.tolist(), ranks.tolist(), strict=True)
    ]
    return results, truth


def multi_player_games(bots: int, games: int, seats: int, seed: int) -> list[GameResult]:
    rng = np.random.default_rng(seed)
    truth = rng.normal(0.0, 200.0, bots)
    names = [f"bot{i:03d}" for i in range(bots)]
    out = []
    for _ in range(games):
        players = rng.choice(bots, seats, replace=False)
        noise = rng.gumbel(size=seats)  # Gumbel-max sampling = Plackett-Luce order
        order = np.argsort(-(truth[players] / ELO_PER_NAT + noise))
        ranks = np.empty(seats, dtype=int)
        ranks[order] = np.arange(1, seats + 1)
        out.append(GameResult(tuple(names[p] for p in players), tuple(ranks.tolist())))
    return out


def sparse_field(players: int, extra: int, seed: int) -> list[GameResult]:
    """A random tree over ``players`` (each joins an earlier one), then ``extra`` random games."""
    rng = random.Random(seed)
    pairs = [(i, rng.randrange(i)) for i in range(1, players)]
    pairs += [(a, b) for a, b in (rng.sample(range(players), 2) for _ in range(extra))]
    return [GameResult.two_player(f"p{a}", f"p{b}", rng.choice([0.0, 0.5, 1.0])) for a, b in pairs]


def big_match(seats: int, ties: list[range]) -> GameResult:
    ranks = list(range(1, seats + 1))
    for span in ties:
        for x in span:
            ranks[x] = span[0] + 1
    return GameResult(tuple(f"s{i:04d}" for i in range(seats)), tuple(ranks))


def peak_memory(fn: Callable[[], object]) -> float:
    """MB allocated at the peak of one call (tracemalloc sees numpy's arrays)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def large_cases(repeats: int) -> None:
    cases: list[tuple[str, list[GameResult]]] = [
        ("20,001 players, 22,000 games (sparse)", sparse_field(20_001, 2_000, seed=3)),
        ("one match, 1,000 tied players", [big_match(1000, [range(1000)])]),
        (
            "one match, 1,000 seats, ties past seat 64",
            [big_match(1000, [range(62, 65), range(500, 512), range(998, 1000)])] * 2,
        ),
    ]
    for label, results in cases:
        seconds = median_time(lambda results=results: fit_ml(results), repeats)
        peak = peak_memory(lambda results=results: fit_ml(results))
        print(f"fit_ml, {label:42s} {seconds:7.3f} s   peak {peak:7.1f} MB")


def median_time(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--bots", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--large-only", action="store_true", help="only the cases of issue 27")
    args = parser.parse_args()
    if args.large_only:
        large_cases(args.repeats)
        return

    start = time.perf_counter()
    results, truth = two_player_games(args.bots, args.games, seed=1)
    print(
        f"generated {args.games:,} games between {args.bots} bots "
        f"in {time.perf_counter() - start:.2f} s (not timed below)"
    )

    def bare() -> None:
        n = 0
        for r in results:
            n += len(r.players) + r.ranks[0]

    base = median_time(bare, args.repeats)
    ml = median_time(lambda: fit_ml(results), args.repeats)
    seq = median_time(lambda: fit_sequential(results), args.repeats)
    print(f"baseline: one pass over the results    {base:7.3f} s")
    print(f"fit_ml (method ml, with intervals)     {ml:7.3f} s   target < 2 s")
    print(f"fit_sequential (method elo, K=16)      {seq:7.3f} s")

    table = fit_ml(results)
    fitted = np.array([table.row(f"bot{i:03d}").elo - 1500.0 for i in range(args.bots)])
    err = np.array([table.row(f"bot{i:03d}").error or 0.0 for i in range(args.bots)])
    inside = np.mean(np.abs(fitted - (truth - truth.mean())) <= err)
    print(
        f"  sanity: {inside:.0%} of true ratings inside their 95% intervals, "
        f"median ±{np.median(err):.1f} Elo"
    )

    n_multi = max(1, args.games // 10)
    multi = multi_player_games(args.bots, n_multi, 4, seed=2)
    pl = median_time(lambda: fit_ml(multi), args.repeats)
    print(f"fit_ml, {n_multi:,} four-player matches    {pl:7.3f} s")
    large_cases(args.repeats)


if __name__ == "__main__":
    main()
