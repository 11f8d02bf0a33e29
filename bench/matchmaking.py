"""How long a ladder takes to choose its next games, at 100 and 1,000 bots with 1M games stored.

The games are held as pair totals (``LadderModel.record`` with a count): each bot has played its
``WINDOW`` nearest neighbours in true strength most, and a few bots further away, a million
games in all, with the scores the true strengths give. Printed, as CPU-time medians (one BLAS
thread, so that the numbers are the work done, not the cores borrowed):

- ``pick``: ``choose_pairs`` for a batch of ``--batch`` pairs (the issue's bound: under 50 ms at
  1,000 bots);
- ``update``: ``LadderModel.update`` after a batch of results (quasi-Newton steps and Woodbury
  corrections), and how often it fell back to a full fit;
- ``fit``: a full fit, warm-started from the previous strengths, and from scratch;
- the baseline, the previous rule's cost in the same run: each turn of a batch recomputed
  every candidate's gain from the whole covariance (``pair_gains``) and applied the chosen
  game to the whole covariance (``--baseline-reps`` runs; 0 to skip).

    python bench/matchmaking.py [--sizes 100,1000] [--games 1000000] [--batch 16] [--reps 15]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads BLAS

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from bot_arena.arena.ratings.matchmaking import (
    WINDOW,
    LadderModel,
    _candidates,
    _ranked,
    choose_pairs,
    pair_gains,
    priorities,
)


def stored(bots: int, games: int, seed: int) -> tuple[LadderModel, np.ndarray]:
    """A model holding ``games`` games of ``bots`` bots as pair totals, and the true Elo."""
    rng = np.random.default_rng(seed)
    true = rng.uniform(0.0, 1000.0, bots)
    by_strength = np.argsort(true)
    firsts, seconds = [], []
    for step in range(1, min(WINDOW, bots - 1) + 1):
        firsts.append(by_strength[:-step])
        seconds.append(by_strength[step:])
    far = rng.integers(0, bots, (2, bots * 4))  # a few games far apart
    keep = far[0] != far[1]
    a = np.concatenate([*firsts, far[0][keep]])
    b = np.concatenate([*seconds, far[1][keep]])
    share = rng.dirichlet(np.ones(len(a)) * 4.0) * games
    counts = np.maximum(1, np.round(share))
    expected = 1.0 / (1.0 + 10.0 ** ((true[b] - true[a]) / 400.0))
    points = rng.binomial(counts.astype(np.int64), expected).astype(np.float64)
    model = LadderModel(bots)
    for x, y, n, s in zip(a.tolist(), b.tolist(), counts.tolist(), points.tolist(), strict=True):
        model.record(x, y, s, n)
    return model, true


def cpu(action: Callable[[], object], reps: int) -> list[float]:
    times = []
    for _ in range(reps):
        start = time.process_time()
        action()
        times.append(time.process_time() - start)
    return times


def baseline_choose(model: LadderModel, active: list[int], count: int) -> list[tuple[int, int]]:
    """The previous rule's batch (no floor): every turn, every candidate's gain from the whole
    covariance, then the chosen game applied to the whole covariance."""
    ranked = _ranked(model, active)
    a, b = _candidates(ranked, WINDOW)
    priority = priorities(model, active)
    cov = model.cov.copy()
    chosen = []
    saved = model.cov
    try:
        for _ in range(count):
            model.cov = cov
            best = int(np.argmax(pair_gains(model, ranked, a, b, priority)))
            x, y = int(a[best]), int(b[best])
            chosen.append((x, y))
            p = 1.0 / (1.0 + np.exp(model.theta[y] - model.theta[x]))
            su = cov[:, x] - cov[:, y]
            cov = cov - np.outer(su, su) * (p * (1 - p) / (1 + p * (1 - p) * (su[x] - su[y])))
    finally:
        model.cov = saved
    return chosen


def ms(values: list[float]) -> str:
    return f"{1000 * statistics.median(values):8.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--baseline-reps", type=int, default=1)
    args = parser.parse_args()
    print(f"{args.games:,} games as pair totals, batches of {args.batch}, CPU-time medians")
    for bots in (int(x) for x in args.sizes.split(",")):
        measure(bots, args)


def measure(bots: int, args: argparse.Namespace) -> None:
    model, true = stored(bots, args.games, seed=bots)
    pairs = int(np.count_nonzero(np.triu(model.games, 1)))
    scratch = cpu(model.fit, 1)
    model.theta = model.theta + 0.01  # a warm start a little off, as after a batch
    warm = cpu(model.fit, 3)
    active = list(range(bots))
    pick = cpu(lambda: choose_pairs(model, active, args.batch), args.reps)
    rng = np.random.default_rng(bots + 1)
    updates, refits = [], 0
    for _ in range(args.reps):
        for x, y in choose_pairs(model, active, args.batch):
            p = 1.0 / (1.0 + 10.0 ** ((true[y] - true[x]) / 400.0))
            model.record(x, y, float(rng.random() < p))
        start = time.process_time()
        refits += model.update()
        updates.append(time.process_time() - start)
    print(f"{bots} bots ({pairs:,} pairs with games):")
    print(f"  pick a batch  {ms(pick)}")
    print(f"  update        {ms(updates)}   ({refits} of {args.reps} fell back to a full fit)")
    print(f"  fit, warm     {ms(warm)}   from scratch {ms(scratch)}")
    if args.baseline_reps:
        base = cpu(lambda: baseline_choose(model, active, args.batch), args.baseline_reps)
        again = cpu(lambda: choose_pairs(model, active, args.batch), args.reps)
        ratio = statistics.median(base) / statistics.median(again)
        print(f"  baseline pick {ms(base)}   ({ratio:.0f}x the time of {ms(again).strip()})")


if __name__ == "__main__":
    main()
