"""What the ladder's director costs per batch of pairs, as the runner calls it after a write.

``LadderDirector.next`` fits the stored totals from the prior's start (so its pairs are a
function of the stored matches: resume exactness, ``directors/ladder.py``), counts the games in
play as information, then asks ``matchmaking.choose_pairs`` for a batch. This measures the CPU
time of one ``next`` (medians over repeats) on fields of ``--bots`` sizes, each with
``--games-per-bot`` stored games per bot and a batch's worth in play, against
``choose_pairs`` alone on the same fitted model (the baseline, in the same run).

    python bench/ladder_director.py [--bots 20 50 200] [--games-per-bot 40] [--repeats 7]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from bot_arena.arena.ratings.matchmaking import choose_pairs
from bot_arena.arena.tournament.directors.base import Played
from bot_arena.arena.tournament.directors.ladder import LadderDirector


def field(bots: int, per_bot: int, seed: int) -> list[Played]:
    """Stored games between bots near in strength, and 4 games in play."""
    rng = random.Random(seed)
    strength = sorted(rng.uniform(0, 1000) for _ in range(bots))
    out = []
    for number in range(bots * per_bot // 2):
        a = rng.randrange(bots)
        b = min(bots - 1, max(0, a + rng.choice((-3, -2, -1, 1, 2, 3))))
        if a == b:
            continue
        p = 1.0 / (1.0 + 10 ** ((strength[b] - strength[a]) / 400.0))
        first = 1.0 if rng.random() < p else 0.0
        out.append(Played(number, number + 1, (a, b), (first, 1.0 - first)))
    base = len(out) + 1
    out += [Played(base + i, base + i, (i, i + 1), None) for i in range(4)]
    return out


def cpu(call: Callable[[], object]) -> float:
    start = time.process_time()
    call()
    return time.process_time() - start


def measure(director: LadderDirector, ahead: int, repeats: int) -> tuple[float, float]:
    """Median CPU seconds of ``next`` and of ``choose_pairs`` alone, alternated."""
    model = director.fitted()
    pairs = (2 * ahead - director.open + 1) // 2
    full, alone = [], []
    for _ in range(repeats):  # alternated: the same machine load for both
        director._fit = None  # as after a write that stored results: the fit is made again
        full.append(cpu(lambda: director.next(ahead)))
        alone.append(cpu(lambda: choose_pairs(model, director.active, pairs)))
    return statistics.median(full), statistics.median(alone)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, nargs="+", default=[20, 50, 200])
    parser.add_argument("--games-per-bot", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--ahead", type=int, default=8, help="the runner's wish (jobs * 4)")
    args = parser.parse_args()
    print(f"{'bots':>5} {'games':>7} {'next() ms':>10} {'choose_pairs ms':>16} {'ratio':>6}")
    for bots in args.bots:
        played = field(bots, args.games_per_bot, seed=bots)
        director = LadderDirector([f"b{i}" for i in range(bots)], {}, 1)
        director.load(played)
        median_full, median_alone = measure(director, args.ahead, args.repeats)
        f, a = median_full * 1e3, median_alone * 1e3
        stored = len(played) - 4
        print(f"{bots:>5} {stored:>7} {f:>10.1f} {a:>16.1f} {f / a:>6.1f}")


if __name__ == "__main__":
    main()
