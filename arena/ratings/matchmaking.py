"""A ladder's model of its field, and the rule that chooses its next games by information.

A ladder never ends: bots join and retire while it runs, and every game it plays should teach
as much about the standings as a game can. The model is the leaderboard's two-player
Bradley-Terry fit on scores (a draw is half a win; docs/ratings.md), held as *pair totals*
(games and points of each pair) so that reading a million stored games costs what their pairs
cost, with a weak Gaussian prior on each strength (``PRIOR_ELO_SD``) so that a newcomer with no
game yet has a finite rating and a wide interval rather than none.

**The rule** (docs/ratings.md, "Ladders"): after the fit, the bots are ordered by rating; what
the standings still do not know is how each bot compares with the next one, the contrasts
``theta[r_k] - theta[r_(k+1)]``. One more game between ``a`` and ``b`` adds the Fisher
information ``w = p (1 - p)`` (``p`` the expected score) along ``u = e_a - e_b``; by the
Sherman-Morrison formula it shrinks the variance of a contrast ``c`` by
``w (c' S u)^2 / (1 + w u' S u)`` (``S`` the covariance of the fit). Each contrast counts in
proportion to how unsettled it is: its shrink relative to its variance, times
``exp(-z^2 / 2)`` with ``z`` the gap over its standard deviation, so a clear gap (z of 3 or more)
no longer asks for games while a pair the games cannot yet tell apart does. The next game is the
pair with the largest expected gain; a batch takes pairs greedily and applies each chosen
game's information before choosing the next, so a batch does not ask the same question twice
(a second game of the same pair gains less than the first, and is chosen only if it still
gains the most; a bot may play several games of one batch, as it may in a tournament).
Games are chosen for information, so a newcomer, whose contrasts with its neighbours are the
least certain, is chosen first without a special case; and a **floor** keeps
anyone from starving: an active bot whose games fall below ``floor`` times the field's mean is
paired first (with its most informative opponent).

Why not Kaggle's online updates: a fit over all games does not depend on the order they
finished in, and its covariance says how settled each rank is (``rank_intervals``).

Scale: the fit is warm-started Newton on pair totals (one or two steps a batch once the field has
settled); candidate opponents of a bot are the ``window`` bots ranked nearest to it (a game far
apart in rating carries almost no information: ``p (1 - p)`` vanishes), so a batch costs
O(n * window * n) after one n-by-n factorisation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bot_arena.arena.ratings.elo import ELO_PER_NAT as ELO_PER_UNIT

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: The prior's standard deviation on a strength, in Elo: wide (a game moves it), finite.
PRIOR_ELO_SD = 1000.0
#: How many bots ranked nearest to a bot are its candidate opponents.
WINDOW = 12
#: How far apart in rank two bots may be for their contrast to count: a rank's interval is
#: decided by the bots a few places around it, not only the next one.
REACH = 3
#: A bot whose games fall below this share of the field's mean games is paired first.
FLOOR = 0.5
#: Fields up to this size get the contrasts' weighted Gram matrix at once (n^2 memory).
DIRECT_LIMIT = 400
#: Newton stops when no strength moves by more than this (natural units).
TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class RankInterval:
    """Where a bot stands: its rank by rating and the ranks its 95% interval allows."""

    rank: int
    best: int
    worst: int


class LadderModel:
    """Pair totals of a growing field and the fit over them (strengths in natural units)."""

    def __init__(self, size: int = 0, *, prior_elo_sd: float = PRIOR_ELO_SD) -> None:
        self._precision = (ELO_PER_UNIT / prior_elo_sd) ** 2
        self.games = np.zeros((size, size))  # games[a, b] == games[b, a]
        self.points = np.zeros((size, size))  # points a scored against b
        self.theta = np.zeros(size)
        self.cov = np.eye(size) / self._precision

    @property
    def size(self) -> int:
        return int(self.theta.shape[0])

    def add_bot(self) -> int:
        """A newcomer: no game, the prior's strength and spread. Its index."""
        n = self.size
        grow = np.zeros((n + 1, n + 1))
        for name in ("games", "points"):
            table = grow.copy()
            table[:n, :n] = getattr(self, name)
            setattr(self, name, table)
        self.theta = np.append(self.theta, 0.0)
        cov = np.zeros((n + 1, n + 1))
        cov[:n, :n] = self.cov
        cov[n, n] = 1.0 / self._precision
        self.cov = cov
        return n

    def record(self, a: int, b: int, score_a: float, count: float = 1.0) -> None:
        """``count`` games of ``a`` against ``b``, in which ``a`` scored ``score_a`` in all."""
        if a == b:
            raise ValueError("a bot cannot play itself")
        self.games[a, b] += count
        self.games[b, a] += count
        self.points[a, b] += score_a
        self.points[b, a] += count - score_a

    def record_all(self, results: Iterable[tuple[int, int, float]]) -> None:
        for a, b, score in results:
            self.record(a, b, score)

    def _weights(self, theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Expected scores ``p[a, b]`` and the Fisher information ``games * p (1 - p)``."""
        p = 0.5 * (1.0 + np.tanh(0.5 * (theta[:, None] - theta[None, :])))
        return p, self.games * p * (1.0 - p)

    def _objective(self, theta: FloatArray) -> float:
        """The penalised log-likelihood (scores as fractional wins)."""
        diff = theta[:, None] - theta[None, :]
        return float(
            -(self.points * np.logaddexp(0.0, -diff)).sum()
            - 0.5 * self._precision * float(theta @ theta)
        )

    def fit(self, max_steps: int = 100) -> None:
        """Damped Newton on the penalised log-likelihood (strictly concave: the step is halved
        until it climbs), from the last strengths; then the covariance."""
        if self.size == 0:
            return
        theta = self.theta
        value = self._objective(theta)
        for _ in range(max_steps):
            p, info = self._weights(theta)
            grad = (self.points - self.games * p).sum(axis=1) - self._precision * theta
            hess = np.diag(info.sum(axis=1) + self._precision) - info
            step = np.linalg.solve(hess, grad)
            scale = 1.0
            while True:
                trial = theta + scale * step
                trial_value = self._objective(trial)
                if trial_value >= value or scale < 1e-6:
                    break
                scale *= 0.5
            theta, value = np.asarray(trial, dtype=np.float64), trial_value
            if float(np.max(np.abs(scale * step))) < TOLERANCE:
                break
        _, info = self._weights(theta)
        hess = np.diag(info.sum(axis=1) + self._precision) - info
        self.theta = theta
        self.cov = np.asarray(np.linalg.inv(hess), dtype=np.float64)

    def elo(self) -> FloatArray:
        return self.theta * ELO_PER_UNIT

    def order(self) -> npt.NDArray[np.int64]:
        """Bot indices, best first (ties by index, so the order is repeatable)."""
        return np.lexsort((np.arange(self.size), -self.theta))

    def rank_intervals(self, z: float = 1.959964) -> list[RankInterval]:
        """Each bot's rank and the ranks its interval allows: a bot ``j`` certainly above ``i``
        when ``theta_j - theta_i`` is more than ``z`` standard deviations above zero, possibly
        above when it is more than ``-z``."""
        n = self.size
        diag = np.diag(self.cov)
        var = diag[:, None] + diag[None, :] - 2.0 * self.cov
        sd = np.sqrt(np.maximum(var, 1e-300))
        gap = (self.theta[None, :] - self.theta[:, None]) / sd  # row i: how far j is above i
        np.fill_diagonal(gap, 0.0)
        certain = (gap > z).sum(axis=1)
        possible = (gap > -z).sum(axis=1) - 1  # minus i itself (gap 0 > -z)
        ranks = np.empty(n, dtype=np.int64)
        ranks[self.order()] = np.arange(1, n + 1)
        return [
            RankInterval(int(ranks[i]), int(certain[i]) + 1, int(possible[i]) + 1) for i in range(n)
        ]


def _contrasts(
    model: LadderModel, ranked: IntArray, priority: FloatArray | None = None
) -> tuple[FloatArray, FloatArray]:
    """The contrasts of each bot with the ``REACH`` bots ranked just below it, for the active
    bots in rating order: ``d[:, k] = S (e_upper(k) - e_lower(k))`` and each contrast's weight
    ``exp(-z^2 / 2) / var``, times the larger ``priority`` of its two bots."""
    uppers, lowers = [], []
    for step in range(1, min(REACH, len(ranked) - 1) + 1):
        uppers.append(ranked[:-step])
        lowers.append(ranked[step:])
    upper, lower = np.concatenate(uppers), np.concatenate(lowers)
    d = np.ascontiguousarray((model.cov[upper] - model.cov[lower]).T)  # rows: bots
    cols = np.arange(len(upper))
    var = np.maximum(d[upper, cols] - d[lower, cols], 1e-300)
    gap = model.theta[upper] - model.theta[lower]
    weight = np.exp(-0.5 * gap * gap / var) / var
    if priority is not None:
        weight = weight * np.maximum(priority[upper], priority[lower])
    return d, weight


def priorities(model: LadderModel, active: Sequence[int]) -> FloatArray:
    """Each bot's priority: ``1 + mean / (1 + games)`` (``mean``: the active bots' mean games).
    A newcomer's contrasts count many times over (the standings of a bot just handed in are
    what its author is waiting for); once a bot has played its share the factor is about 2,
    the same for everyone."""
    played = model.games.sum(axis=1)
    mean = float(played[list(active)].mean()) if len(active) else 0.0
    return np.asarray(1.0 + mean / (1.0 + played), dtype=np.float64)


def _ranked(model: LadderModel, active: Sequence[int]) -> IntArray:
    """The active bots, best first (ties by index)."""
    bots = np.array(sorted(set(active)), dtype=np.int64)
    return bots[np.lexsort((bots, -model.theta[bots]))]


def _candidates(ranked: IntArray, window: int) -> tuple[IntArray, IntArray]:
    """Each bot with the ``window`` bots ranked nearest below it: every pair within
    ``window`` places, once, as two index arrays (the lower index first)."""
    n = len(ranked)
    firsts, seconds = [], []
    for step in range(1, min(window, n - 1) + 1):
        x, y = ranked[:-step], ranked[step:]
        firsts.append(np.minimum(x, y))
        seconds.append(np.maximum(x, y))
    a, b = np.concatenate(firsts), np.concatenate(seconds)
    order = np.lexsort((b, a))
    return a[order], b[order]


def pair_gains(
    model: LadderModel,
    ranked: IntArray,
    a: IntArray,
    b: IntArray,
    priority: FloatArray | None = None,
) -> FloatArray:
    """The expected weighted shrink of the near-in-rank contrasts' variances, for each pair
    ``(a[i], b[i])``, the active bots ``ranked`` best first."""
    if len(ranked) < 2 or len(a) == 0:
        return np.zeros(len(a))
    d, weight = _contrasts(model, ranked, priority)
    p = 1.0 / (1.0 + np.exp(model.theta[b] - model.theta[a]))
    w = p * (1.0 - p)
    var_u = model.cov[a, a] + model.cov[b, b] - 2.0 * model.cov[a, b]
    if d.shape[0] <= DIRECT_LIMIT:  # sum_k weight_k (d[a,k] - d[b,k])^2 from M = d W d'
        m = (d * weight) @ d.T
        gains = m[a, a] + m[b, b] - 2.0 * m[a, b]
    else:  # in chunks, never the n-by-n M
        gains = np.empty(len(a))
        chunk = max(1, 2_000_000 // max(1, d.shape[1]))
        for start in range(0, len(a), chunk):
            part = slice(start, start + chunk)
            diff = d[a[part]] - d[b[part]]
            gains[part] = (diff * diff) @ weight
    return np.asarray(w * gains / (1.0 + w * var_u), dtype=np.float64)


def _apply_virtual(model: LadderModel, a: int, b: int) -> None:
    """The covariance once one more game of ``a`` and ``b`` is known (Sherman-Morrison)."""
    p = 1.0 / (1.0 + math.exp(model.theta[b] - model.theta[a]))
    w = p * (1.0 - p)
    su = model.cov[:, a] - model.cov[:, b]
    model.cov = model.cov - np.outer(su, su) * (w / (1.0 + w * (su[a] - su[b])))


def choose_pairs(
    model: LadderModel,
    active: Sequence[int],
    count: int,
    *,
    window: int = WINDOW,
    floor: float = FLOOR,
) -> list[tuple[int, int]]:
    """``count`` pairs to play next, best first (none when fewer than two are active).

    Deterministic: the same totals and field give the same pairs (ties go to the lower
    indices), which is what makes a ladder's resume exact."""
    ranked = _ranked(model, active)
    if len(ranked) < 2 or count <= 0:
        return []
    a, b = _candidates(ranked, window)
    played = model.games.sum(axis=1)
    mean = float(played[ranked].mean())
    starving = sorted(
        (i for i in ranked.tolist() if played[i] < floor * mean), key=lambda i: (played[i], i)
    )
    priority = priorities(model, ranked.tolist())
    chosen: list[tuple[int, int]] = []
    saved = model.cov
    try:
        for turn in range(count):
            gains = pair_gains(model, ranked, a, b, priority)
            if turn < len(starving):  # the floor: the neediest first, with its best opponent
                gains = np.where((a == starving[turn]) | (b == starving[turn]), gains, -1.0)
            best = int(np.argmax(gains))  # the first of equal gains: the lowest indices
            pair = (int(a[best]), int(b[best]))
            chosen.append(pair)
            _apply_virtual(model, *pair)
    finally:
        model.cov = saved
    return chosen
