"""SPRT behaviour and cost: game pairs to a decision, how often H1 is accepted, time per update.

    python bench/sprt.py [--tests 3000] [--seed 1] [--processes 2]

For nElo and logistic Elo, H0: 0 against H1: 5 or 10, alpha = beta = 0.05, pentanomial counts,
and each true strength (elo0, the midpoint, elo1), ``--tests`` SPRTs are simulated: game pairs
drawn from a pair distribution of that true strength (two independent games, draw ratio 0.4,
a first-move edge of +/- 0.05 in expected score) until the LLR leaves its bounds. Printed: the
fraction accepting H1, the mean and median number of pairs to a decision, and beside them what
fishtest's Brownian approximation predicts (its ``LLR_drift_variance_alt2``: LLR drift
(s - (s0 + s1)/2)(s1 - s0)/v and variance (s1 - s0)^2/v per pair, v the variance of a pair's
mean score, then Wald's exit probability and mean exit time of a Brownian motion between the
bounds): the numbers fishtest's SPRT calculator shows. Then the median time of one
``evaluate()`` (an LLR update with its estimates) on realistic counts, in microseconds.

Exact per-pair LLRs for thousands of tests of ~15,000 pairs each are too slow (the exact nElo
LLR costs about 50 us a row even vectorized), so the tests advance together 256 pairs at a
time and every pair is screened with the closed form N (s1 - s0)(2 mu - s0 - s1) / (2 var)
from running sums. The exact LLR (``llr_batch``) is computed at every 4th pair whose screened
value is within 0.05 + 50 / pairs of a bound (or beyond it); at the first such exact crossing
the 3 pairs before it are checked too, so a test ends at the first pair whose *exact* LLR
crosses, unless the screen put an exact crossing more than the margin away from the bound; how
far it ever did, where both were computed, is printed. The rows run in ``--processes``
processes. 3,000 tests a row keep the default run near 1 minute on 2 cores; 10,000 take about
3 to 4 minutes.

``--speed`` times real games instead: ``arena sprt``'s runner against ``tournament run``'s on
the same two fast bots (random players on tic-tac-toe), the same number of games (``--games``)
and jobs (``--jobs``), each on a fresh database (SQLite, or a fresh schema of ``--pg URL``),
alternated ``--repeats`` times; it prints games/s and CPU ms a game of each run, then the
medians and the SPRT's share of the tournament's games/s (target: at least 80%). The SPRT's
hypotheses (nElo -1 against +1, alpha = beta = 1e-12) cannot decide within a few thousand
games of two equal bots, so it plays its ``--games``.

    python bench/sprt.py --speed [--games 4000] [--repeats 3] [--jobs 2] [--pg URL]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import statistics
import sys
import time

import numpy as np

from bot_arena.arena.ratings.elo import NELO_PER_T, expected_score
from bot_arena.arena.ratings.sprt_stats import SprtSettings, evaluate, llr_batch

MARGIN = 0.05  # exact LLRs where the screen comes this close to a bound (+ SLACK / pairs)
SLACK = 50.0
THIN = 4  # ... at every THIN-th such pair, then back to the first crossing
CHUNK = 256  # pairs simulated at once
SCORES = np.arange(5) / 4.0  # a pair's mean score per pentanomial outcome


def pair_distribution(score: float, draw: float = 0.4, edge: float = 0.05) -> np.ndarray:
    def game(s: float) -> np.ndarray:
        return np.array([1.0 - s - draw / 2.0, draw, s - draw / 2.0])

    return np.convolve(game(score + edge), game(score - edge))


def moments(probs: np.ndarray) -> tuple[float, float]:
    mu = float(probs @ SCORES)
    return mu, float(probs @ (SCORES - mu) ** 2)


def pairs_with(model: str, elo: float) -> np.ndarray:
    """The pair distribution whose true strength is ``elo`` in ``model``'s Elo."""
    if model == "logistic":
        return pair_distribution(expected_score(elo))
    lo, hi = 0.3, 0.7
    for _ in range(100):  # nElo of pairs: (mu - 1/2) / sqrt(2 v) * 800 / ln 10
        mid = (lo + hi) / 2.0
        mu, var = moments(pair_distribution(mid))
        lo, hi = (mid, hi) if (mu - 0.5) / math.sqrt(2.0 * var) * NELO_PER_T < elo else (lo, mid)
    return pair_distribution((lo + hi) / 2.0)


def hypothesis_score(s: SprtSettings, elo: float, var: float) -> float:
    """H's expected pair score: logistic, or 1/2 + t sqrt(v) with the pair's t for nElo."""
    if s.model == "logistic":
        return expected_score(elo)
    return 0.5 + math.sqrt(2.0) * elo / NELO_PER_T * math.sqrt(var)


def brownian(s: SprtSettings, probs: np.ndarray) -> tuple[float, float]:
    """fishtest's prediction: (P(accept H1), expected pairs)."""
    mu, var = moments(probs)
    s0, s1 = hypothesis_score(s, s.elo0, var), hypothesis_score(s, s.elo1, var)
    drift = (mu - (s0 + s1) / 2.0) * (s1 - s0) / var
    spread = (s1 - s0) ** 2 / var
    a, b = s.bounds
    if abs(drift) < 1e-12:
        return -a / (b - a), -a * b / spread
    k = -2.0 * drift / spread
    p1 = (1.0 - math.exp(k * a)) / (math.exp(k * b) - math.exp(k * a))
    return p1, (p1 * b + (1.0 - p1) * a) / drift


def simulate(
    s: SprtSettings, probs: np.ndarray, tests: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, float]:
    """(accepted H1 per test, pairs per test, largest |exact - screen| seen)."""
    lower, upper = s.bounds
    cum = np.cumsum(probs)[:-1]
    counts = np.zeros((tests, 5), dtype=np.int64)
    accept = np.zeros(tests, dtype=bool)
    length = np.zeros(tests, dtype=np.int64)
    live = np.arange(tests)
    played, worst = 0, 0.0
    while live.size:
        outcome = np.searchsorted(cum, rng.random((live.size, CHUNK)))
        x = SCORES[outcome]
        base = counts[live]
        n = base.sum(axis=1)[:, None] + np.arange(1, CHUNK + 1)
        s1 = (base @ SCORES)[:, None] + np.cumsum(x, axis=1)
        s2 = (base @ SCORES**2)[:, None] + np.cumsum(x * x, axis=1)
        mean = s1 / n
        var = np.maximum(s2 / n - mean * mean, 1e-12)
        if s.model == "logistic":
            h0, h1 = hypothesis_score(s, s.elo0, 0.0), hypothesis_score(s, s.elo1, 0.0)
        else:
            root = np.sqrt(var)
            h0 = 0.5 + math.sqrt(2.0) * s.elo0 / NELO_PER_T * root
            h1 = 0.5 + math.sqrt(2.0) * s.elo1 / NELO_PER_T * root
        screen = n * (h1 - h0) * (2.0 * mean - h0 - h1) / (2.0 * var)
        margin = MARGIN + SLACK / n  # the two differ more while there are few pairs
        near = (screen >= upper - margin) | (screen <= lower + margin)
        beyond = (screen >= upper) | (screen <= lower)
        # exact LLRs at every THIN-th near pair (and wherever the screen is beyond a bound);
        # a crossing found is then traced back pair by pair to the first one
        thin = near & (beyond | (np.arange(CHUNK) % THIN == THIN - 1))
        hit = np.zeros(live.size, dtype=bool)
        rows = np.flatnonzero(thin.any(axis=1))
        if rows.size:
            path = np.cumsum(outcome[rows, :, None] == np.arange(5), axis=1) + base[rows, None, :]
            r, c = np.nonzero(thin[rows])
            exact = llr_batch(path[r, c], s.elo0, s.elo1, s.model)
            # how much farther from the bounds the screen put a pair than it was, in margins
            # (past 1 a crossing could hide at the pairs that were not checked)
            sc = screen[rows[r], c]
            hidden = np.minimum(upper - sc, sc - lower) - np.minimum(upper - exact, exact - lower)
            worst = max(worst, float((hidden / margin[rows[r], c]).max()))
            crossed = (exact >= upper) | (exact <= lower)
            first = np.full(rows.size, CHUNK)
            np.minimum.at(first, r[crossed], c[crossed])
            done = np.flatnonzero(first < CHUNK)
            for back in range(1, THIN):  # the pairs just before: did one cross already?
                cols = first[done] - back
                ok = cols >= 0
                d, cc = done[ok], cols[ok]
                if d.size == 0:
                    break
                earlier = llr_batch(path[d, cc], s.elo0, s.elo1, s.model)
                moved = (earlier >= upper) | (earlier <= lower)
                first[d[moved]] = cc[moved]
            final = llr_batch(path[done, first[done]], s.elo0, s.elo1, s.model)
            which = rows[done]
            hit[which] = True
            length[live[which]] = played + first[done] + 1
            accept[live[which]] = final >= upper
        counts[live] = base + np.stack([(outcome == k).sum(axis=1) for k in range(5)], axis=1)
        live = live[~hit]
        played += CHUNK
    return accept, length, worst


def time_evaluate(repeats: int = 400) -> float:
    rng = np.random.default_rng(5)
    s = SprtSettings(0.0, 5.0)
    probs = pairs_with("normalized", 2.0)
    samples = [rng.multinomial(int(n), probs) for n in rng.integers(500, 30000, repeats)]
    times = []
    for penta in samples:
        tri = (int(penta[0] * 2 + penta[1]), int(penta[2] * 2), int(penta[4] * 2 + penta[3]))
        start = time.perf_counter()
        evaluate(s, tuple(int(c) for c in penta), tri)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def run(job: tuple[str, float, float, int, int]) -> tuple[str, float]:
    """One row of the table (a separate process): (line, largest screen gap / margin)."""
    model, elo1, true, tests, seed = job
    s = SprtSettings(0.0, elo1, model=model)
    probs = pairs_with(model, true)
    start = time.perf_counter()
    accept, length, gap = simulate(s, probs, tests, np.random.default_rng(seed))
    spent = time.perf_counter() - start
    p1, pairs = brownian(s, probs)
    line = (
        f"{model:<11}{f'[0, {elo1:g}]':<13}{true:>6g}{accept.mean():>8.3f}"
        f"{length.mean():>12,.0f}{float(np.median(length)):>9,.0f}"
        f"             {p1:>6.3f}{pairs:>8,.0f}{spent:>7.1f}s"
    )
    return line, gap


def speed(games: int, repeats: int, jobs: int, pg: str | None) -> None:
    """``arena sprt`` against ``tournament run``, alternated (see the module)."""
    import importlib.util
    import tempfile
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "bench_tournament", Path(__file__).with_name("tournament.py")
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # its dataclasses look their module up
    spec.loader.exec_module(bench)
    field = ["random", "random:seed=1"]
    test = {
        **SprtSettings(-1.0, 1.0, alpha=1e-12, beta=1e-12).to_dict(),
        "max_games": games,
        "interval": 10**9,  # no status lines
    }
    rates: dict[str, list[float]] = {"sprt": [], "tournament": []}
    cpu: dict[str, list[float]] = {"sprt": [], "tournament": []}
    print(f"sprt vs tournament run: 2 random bots, tic-tac-toe, {games} games, --jobs {jobs}")
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        for r in range(repeats):
            for kind in ("sprt", "tournament"):  # alternated: load changes hit both alike
                url = bench.fresh_url(Path(tmp), pg, f"{kind}_{r}")
                if kind == "sprt":
                    x = bench.one_run(url, jobs, games, r, field=field, fmt="sprt",
                                      format_settings=test)  # fmt: skip
                else:
                    x = bench.one_run(url, jobs, games, r, field=field)
                rates[kind].append(x.rate)
                cpu[kind].append(1000 * x.cores / x.rate)
                print(
                    f"  run {r + 1}: {kind:<10} {x.games} games, {x.rate:7.1f} games/s, "
                    f"CPU {cpu[kind][-1]:.2f} ms a game, loop held by the database "
                    f"{100 * x.held:.1f}%",
                    flush=True,
                )
    med = {kind: statistics.median(v) for kind, v in rates.items()}
    for kind in rates:
        print(
            f"  {kind:<10} median {med[kind]:7.1f} games/s, CPU "
            f"{statistics.median(cpu[kind]):.2f} ms a game"
        )
    print(f"  sprt / tournament run: {med['sprt'] / med['tournament']:.2f}  (target >= 0.80)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=3_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--speed", action="store_true", help="time real games (see above)")
    parser.add_argument("--games", type=int, default=4_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--pg", default=None, help="a PostgreSQL URL (--speed)")
    args = parser.parse_args()
    if args.speed:
        speed(args.games, args.repeats, args.jobs, args.pg)
        return
    jobs = [
        (model, elo1, true, args.tests, args.seed * 100 + i)
        for i, (model, elo1, true) in enumerate(
            (model, elo1, true)
            for model in ("normalized", "logistic")
            for elo1 in (5.0, 10.0)
            for true in (0.0, elo1 / 2.0, elo1)
        )
    ]
    print(f"{args.tests:,} simulated SPRTs per row, alpha = beta = 0.05, pentanomial counts")
    print(
        f"{'model':<11}{'[elo0, elo1]':<13}{'true':>6}{'P(H1)':>8}{'pairs mean':>12}"
        f"{'median':>9}   fishtest: {'P(H1)':>6}{'pairs':>8}{'time':>8}"
    )
    start = time.perf_counter()
    with multiprocessing.Pool(args.processes) as pool:
        rows = pool.map(run, jobs, chunksize=1)
    for line, *_ in rows:
        print(line)
    worst = max(row[1] for row in rows)
    print(
        f"screen check: at the pairs computed both ways, the screen was at most {worst:.3f} "
        "margins farther from a bound than the exact LLR (below 1: no crossing could hide)"
    )
    print(f"simulations: {time.perf_counter() - start:.0f} s on {args.processes} processes")
    print(f"evaluate() on realistic counts (nElo, pentanomial): median {time_evaluate():,.0f} us")


if __name__ == "__main__":
    main()
