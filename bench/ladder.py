"""How many games a ladder needs: its matchmaking by information against two baselines.

A simulation, no processes: bots of known true strengths (Elo spread evenly at random over
0-1000), games drawn from the BayesElo model (``P(win) = f(d - D)``, ``P(loss) = f(-d - D)``,
the rest draws, ``f`` the logistic Elo curve; ``D = DRAW_ELO`` gives 41% draws between equals, as
between chess engines of equal strength at short time controls). The ladder plays batches of
``BATCH`` games (its jobs); after each batch every scheme's standings are the same maximum-
likelihood fit over all its games (``arena.ratings.matchmaking.LadderModel``, brought up to date
by ``update``: the full fit's strengths, its covariance within 2%, as a ladder would run it), so
the schemes differ only in which games they choose:

- ``information``: this ladder's rule (``choose_pairs``: the pairs that most shrink the
  uncertainty of rank-adjacent differences, docs/ratings.md "Ladders");
- ``uniform``: each game between two bots drawn uniformly at random;
- ``kaggle``: Kaggle's simulation-competition scheme as its documentation describes it (the
  "Evaluation" section of its simulation competitions, e.g. ConnectX,
  https://www.kaggle.com/competitions/connectx/overview/evaluation, and Lux AI: each submission
  has a Gaussian skill N(mu, sigma^2) updated online after every episode, won games raise mu,
  lost ones lower it, draws pull both to their mean, by amounts scaled by the surprise and by
  sigma, and sigma shrinks with the information gained; newly submitted agents play more
  episodes; opponents are chosen with similar ratings). Implemented here with TrueSkill's
  two-player update with a draw margin (Herbrich, Minka, Graepel 2006), agents drawn in
  proportion to sigma^2 (new, uncertain agents favoured) and opponents weighted by
  ``exp(-(mu_a - mu_b)^2 / (2 * 200^2))`` (near in mu).

Two questions, each over ``--seeds`` seeds (medians and quartiles printed):

(a) **a newcomer**: a field of ``N - 1`` bots has played ``--warmup`` uniform games per bot
    (400 by default: a ladder that has run a while, whose own ranks are about settled, so that
    the count measures the newcomer's placing more than the field's; with 20 the field's own
    uncertainty dominates); one bot of random strength joins. Games until its 95% rank interval
    spans at most its rank +-2 places (``LadderModel.rank_interval``, checked after every
    batch). A newcomer at either end of the field is placed within a batch or two.
(b) **from scratch**: ``N`` new bots, no games. Games until the fitted order's normalised
    Kendall distance to the true order is at most ``KENDALL``.

Targets (issue 30): (a) at least 2x fewer games than uniform and 1.5x fewer than Kaggle's
scheme; (b) never worse than either.

Runs that reach ``--cap`` games (``CAP``) stop there and count as the cap (the table says how many
did).
About 7 s of CPU a seed for the three schemes and both parts; ``--log`` keeps each seed's counts
as it finishes and ``--from-log`` summarises them, so a long run can be read while it goes.

    python bench/ladder.py [--bots 50] [--seeds 200] [--first-seed 0] [--jobs 2] [--warmup 400]
        [--log FILE]
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import statistics
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from bot_arena.arena.ratings.matchmaking import (
    ELO_PER_UNIT,
    LadderModel,
    choose_pairs,
)

DRAW_ELO = 150.0
BATCH = 8
WARMUP = 400  # uniform games per bot before the newcomer joins: a settled field
KENDALL = 0.03
NEAR = 2  # (a): rank interval within +-2 places
CAP = 60_000  # games: a run that needs more is counted as CAP (and said so); --cap
BETA = 200.0  # TrueSkill's performance spread, Elo
SIGMA0 = 350.0  # a new agent's sigma, Elo

Pair = tuple[int, int]
Chooser = Callable[[LadderModel, list[int], np.random.Generator, int], list[Pair]]


def logistic(diff: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-diff / 400.0))


def play(true_elo: np.ndarray, a: int, b: int, rng: np.random.Generator) -> float:
    d = float(true_elo[a] - true_elo[b])
    win, loss = logistic(d - DRAW_ELO), logistic(-d - DRAW_ELO)
    x = rng.random()
    return 1.0 if x < win else 0.0 if x < win + loss else 0.5


class Kaggle:
    """Online Gaussian skills (TrueSkill's two-player update with draws), in Elo."""

    def __init__(self) -> None:
        self.mu: list[float] = []
        self.var: list[float] = []

    def add(self) -> None:
        self.mu.append(0.0)
        self.var.append(SIGMA0**2)

    def update(self, a: int, b: int, score: float) -> None:
        if score == 0.0:
            a, b = b, a
        c = math.sqrt(2 * BETA**2 + self.var[a] + self.var[b])
        t = (self.mu[a] - self.mu[b]) / c
        eps = DRAW_ELO / c
        pdf = lambda x: math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)  # noqa: E731
        cdf = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
        if score == 0.5:
            denom = max(cdf(eps - t) - cdf(-eps - t), 1e-12)
            v = (pdf(-eps - t) - pdf(eps - t)) / denom
            w = v * v + ((eps - t) * pdf(eps - t) + (eps + t) * pdf(eps + t)) / denom
        else:
            x = t - eps
            v = pdf(x) / max(cdf(x), 1e-12)
            w = v * (v + x)
        for player, sign in ((a, 1.0), (b, -1.0)):
            self.mu[player] += sign * self.var[player] / c * v
            self.var[player] *= max(1.0 - self.var[player] / (c * c) * w, 1e-4)

    def choose(self, active: list[int], rng: np.random.Generator, count: int) -> list[Pair]:
        var = np.array([self.var[i] for i in active])
        mu = np.array([self.mu[i] for i in active])
        out = []
        for _ in range(count):
            i = int(rng.choice(len(active), p=var / var.sum()))
            near = np.exp(-((mu - mu[i]) ** 2) / (2 * 200.0**2))
            near[i] = 0.0
            j = int(rng.choice(len(active), p=near / near.sum()))
            out.append((active[i], active[j]))
        return out


def run(
    scheme: str,
    true_elo: np.ndarray,
    rng: np.random.Generator,
    done: Callable[[LadderModel], bool],
    model: LadderModel,
    kaggle: Kaggle,
    cap: int,
) -> int:
    active = list(range(model.size))
    games = 0
    while games < cap:
        if scheme == "information":
            pairs = choose_pairs(model, active, BATCH)
        elif scheme == "uniform":
            pairs = uniform_pairs(len(active), rng)
        else:
            pairs = kaggle.choose(active, rng, BATCH)
        for a, b in pairs:
            if rng.random() < 0.5:
                a, b = b, a  # colours
            score = play(true_elo, a, b, rng)
            model.record(a, b, score)
            if scheme == "kaggle":  # its online skills choose its games; nobody else reads them
                kaggle.update(a, b, score)
        games += len(pairs)
        model.update()  # the full fit's strengths; refits in full only now and then
        if done(model):
            return games
    return cap


def uniform_pairs(bots: int, rng: np.random.Generator) -> list[Pair]:
    """``BATCH`` pairs of distinct bots, each pair uniform over all pairs."""
    first = rng.integers(0, bots, BATCH)
    second = (first + rng.integers(1, bots, BATCH)) % bots
    return list(zip(first.tolist(), second.tolist(), strict=True))


def kendall(order: np.ndarray, true_elo: np.ndarray) -> float:
    ranked = true_elo[order]
    n = len(ranked)
    discordant = int(np.count_nonzero(np.triu(ranked[:, None] < ranked[None, :], 1)))
    return discordant / (n * (n - 1) / 2)


def warmed_field(
    seed: int, bots: int, warmup: int, true_elo: np.ndarray
) -> tuple[LadderModel, Kaggle]:
    """(a)'s field before the newcomer: ``bots - 1`` bots, ``warmup`` uniform games per bot,
    fitted (the ladder's model) and rated online (Kaggle's skills)."""
    model, kaggle = LadderModel(bots - 1), Kaggle()
    for _ in range(bots - 1):
        kaggle.add()
    warm = np.random.default_rng(seed + 1_000_000)
    for _ in range(warmup * (bots - 1) // (2 * BATCH)):
        for a, b in uniform_pairs(bots - 1, warm):
            score = play(true_elo, a, b, warm)
            model.record(a, b, score)
            kaggle.update(a, b, score)
    model.fit()
    return model, kaggle


def trial(args: tuple[int, int, tuple[str, ...], str, int, int]) -> dict[str, tuple[int, int]]:
    """One seed: every scheme on the same true strengths, the same warmed field and the same
    random numbers (each scheme its own generators, seeded by the seed alone: a scheme's
    counts do not depend on which other schemes run, so logs of separate runs merge)."""
    seed, bots, schemes, parts, warmup, cap = args
    true_elo = np.random.default_rng(seed).uniform(0.0, 1000.0, bots)
    field = warmed_field(seed, bots, warmup, true_elo) if "a" in parts else None
    out: dict[str, tuple[int, int]] = {}
    for scheme in schemes:
        newcomer = scratch = 0
        if field is not None:  # (a): the newcomer is the last bot
            model, kaggle = copy.deepcopy(field)
            new = model.add_bot()
            kaggle.add()

            def settled(m: LadderModel, new: int = new) -> bool:
                iv = m.rank_interval(new)
                return iv.rank - iv.best <= NEAR and iv.worst - iv.rank <= NEAR

            rng = np.random.default_rng(seed + 3_000_000)
            newcomer = run(scheme, true_elo, rng, settled, model, kaggle, cap)
        if "b" in parts:  # (b): from scratch
            model, kaggle = LadderModel(bots), Kaggle()
            for _ in range(bots):
                kaggle.add()

            def order_ok(m: LadderModel) -> bool:
                return kendall(m.order(), true_elo) <= KENDALL

            rng = np.random.default_rng(seed + 2_000_000)
            scratch = run(scheme, true_elo, rng, order_ok, model, kaggle, cap)
        out[scheme] = (newcomer, scratch)
    return out


def quartiles(values: list[int]) -> str:
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return f"{q2:8.0f}  [{q1:.0f}-{q3:.0f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=50)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument(
        "--first-seed", type=int, default=0, help="seeds first..first+seeds-1 (a run in parts)"
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--schemes", default="information,uniform,kaggle")
    parser.add_argument("--parts", default="ab", help="a: the newcomer, b: from scratch")
    parser.add_argument("--warmup", type=int, default=WARMUP, help="(a): games per bot first")
    parser.add_argument("--cap", type=int, default=CAP, help="games at most a run")
    parser.add_argument("--log", help="append each seed's counts to this file as it finishes")
    parser.add_argument(
        "--from-log",
        nargs="+",
        help="summarise the seeds of earlier --log files (several: their schemes merged by "
        "seed, the seeds they all have); play none",
    )
    args = parser.parse_args()
    schemes = tuple(args.schemes.split(","))
    if args.from_log:
        results, caps = read_logs(args.from_log, schemes)
    else:
        results, caps = [], dict.fromkeys(schemes, args.cap)
        seeds = range(args.first_seed, args.first_seed + args.seeds)
        jobs = [(s, args.bots, schemes, args.parts, args.warmup, args.cap) for s in seeds]
        with ProcessPoolExecutor(args.jobs) as pool:
            for seed, result in zip(seeds, pool.map(trial, jobs), strict=True):
                results.append(result)
                if args.log:
                    with open(args.log, "a", encoding="utf-8") as log:
                        row = {"seed": seed, "cap": args.cap, **result}
                        log.write(json.dumps(row) + "\n")
    summarise(results, schemes, caps, args.bots, args.warmup)


def read_logs(
    paths: list[str], schemes: tuple[str, ...]
) -> tuple[list[dict[str, tuple[int, int]]], dict[str, int]]:
    """The seeds every scheme has in one of the logs, and each scheme's cap."""
    by_seed: dict[int, dict[str, tuple[int, int]]] = {}
    caps: dict[str, int] = {}
    for path in paths:
        with open(path, encoding="utf-8") as log:
            for line in log:
                row = json.loads(line)
                for scheme in schemes:
                    if scheme in row:
                        by_seed.setdefault(row["seed"], {})[scheme] = tuple(row[scheme])
                        caps[scheme] = int(row.get("cap", 12_000))
    results = [r for _, r in sorted(by_seed.items()) if all(s in r for s in schemes)]
    return results, caps


def summarise(
    results: list[dict[str, tuple[int, int]]],
    schemes: tuple[str, ...],
    caps: dict[str, int],
    bots: int,
    warmup: int,
) -> None:
    print(
        f"{bots} bots, Elo 0-1000, draws D={DRAW_ELO:.0f}, batches of {BATCH}, "
        f"{len(results)} seeds; (a) after {warmup} uniform games per bot"
    )
    print(
        f"games until: (a) a newcomer's rank within +-{NEAR} places; "
        f"(b) Kendall distance <= {KENDALL}"
    )
    print(f"{'scheme':12} {'(a) median [q1-q3]':>24} {'(b) median [q1-q3]':>24}")
    medians = {}
    for scheme in schemes:
        a = [r[scheme][0] for r in results]
        b = [r[scheme][1] for r in results]
        medians[scheme] = (statistics.median(a), statistics.median(b))
        cap = caps[scheme]
        capped = sum(x >= cap for x in a), sum(x >= cap for x in b)
        print(
            f"{scheme:12} {quartiles(a):>24} {quartiles(b):>24}   "
            f"at the cap of {cap:,}: {capped[0]}, {capped[1]}"
        )
    for base in [s for s in schemes if s != "information" and "information" in schemes]:
        info = medians["information"]
        ma, mb = medians[base]
        ra, rb = ma / max(info[0], 1), mb / max(info[1], 1)
        print(f"{base} / information: (a) {ra:.2f}x  (b) {rb:.2f}x")
    print(
        "(a run at its cap is counted as the cap: a median at the cap is a lower bound; "
        f"Elo per natural unit {ELO_PER_UNIT:.1f})"
    )


if __name__ == "__main__":
    main()
