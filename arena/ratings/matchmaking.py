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
paired first (with its most informative opponent). Then the bots that **lag** (fewer games than
the field's mean and a 95% rank interval still wider than their rank +-``SETTLED_PLACES``, once
the field has played ``MATURE_GAMES`` a bot) seat the next ``LAG_SHARE`` of the batch in turn,
fewest games first, each with its most informative opponent: a newcomer plays in every batch
until it is placed, and a bot left behind catches up (bench/ladder.py: fewer games to place a
newcomer, docs/ratings.md).

Why not Kaggle's online updates: a fit over all games does not depend on the order they
finished in, and its covariance says how settled each rank is (``rank_intervals``).

Scale (1,000 bots, a million games): ``LadderModel.update`` brings the fit up to date after a
batch of results without a full refit (quasi-Newton steps on the pairs with games, Woodbury
corrections of the covariance for the pairs whose weight moved more than ``RELATIVE_ERROR``),
refitting in full only when too many pairs moved at once; ``fit`` is the full fit whenever
asked. Candidate opponents of a bot are the ``window`` bots ranked nearest to it (a game far
apart in rating carries almost no information: ``p (1 - p)`` vanishes), and a batch's gains are
kept exactly by ``BatchGains``: matrix products over the band that the candidates need, then
rank-one updates per chosen game, O(n^2 window) a batch (bench/matchmaking.py).
"""

from __future__ import annotations

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
#: A bot *lags* when it has fewer games than the active bots' mean and its 95% rank interval
#: still spans more than its rank +-``SETTLED_PLACES``, in a field whose mean is at least
#: ``MATURE_GAMES`` (in a field that has only begun, every bot is new). A newcomer lags until
#: its rank is placed.
SETTLED_PLACES = 2
MATURE_GAMES = 20.0
#: The share of each batch's games that seat the lagging bots (fewest games first).
LAG_SHARE = 0.5
#: Fields up to this size get the contrasts' weighted Gram matrix at once (n^2 memory).
DIRECT_LIMIT = 400
#: Newton stops when no strength moves by more than this (natural units).
TOLERANCE = 1e-9
#: ``LadderModel.update`` keeps every pair's information weight within this relative error of
#: its value at the current strengths (so the covariance is within that factor of the full
#: fit's, in the order of positive matrices); a weight further off is corrected exactly.
RELATIVE_ERROR = 0.02
#: ``update`` refits in full when more pairs than this need a correction at once (a full
#: fit costs about as much as this many rank-one corrections).
CORRECTION_LIMIT = 64
#: ``update``'s quasi-Newton steps stop when no strength moves by more than this (natural
#: units); it refits in full when ``UPDATE_STEPS`` steps have not got there.
STEP_TOLERANCE = 1e-7
UPDATE_STEPS = 6
#: Rows of a batch's band of gains computed together (one matrix product each), and rows of
#: ``Q P`` (``BatchGains``): sizes that keep the products in cache.
BLOCK = 64
CHUNK = 32


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
        #: The information weight of each pair that ``cov`` inverts: ``cov`` is exactly the
        #: inverse of ``diag(used.sum(1) + precision) - used`` (see ``update``).
        self.used = np.zeros((size, size))
        #: How many full fits this model has made (``fit``, or ``update`` falling back to one).
        self.full_fits = 0
        # the pairs that have games (a < b), for ``update``'s sparse passes; pairs met since
        # the last ``fit`` or ``update`` wait in ``_met``
        self._pair_a = np.zeros(0, dtype=np.int64)
        self._pair_b = np.zeros(0, dtype=np.int64)
        self._met: list[tuple[int, int]] = []

    @property
    def size(self) -> int:
        return int(self.theta.shape[0])

    def add_bot(self) -> int:
        """A newcomer: no game, the prior's strength and spread. Its index."""
        n = self.size
        grow = np.zeros((n + 1, n + 1))
        for name in ("games", "points", "used"):
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
        """``count`` games of ``a`` against ``b``, in which ``a`` scored ``score_a`` in all.
        The fit is not touched: ``update`` (or ``fit``) brings it up to date. (``games`` and
        ``points`` change only here: ``update`` keeps its list of pairs from these calls.)"""
        if a == b:
            raise ValueError("a bot cannot play itself")
        if self.games[a, b] == 0.0:
            self._met.append((min(a, b), max(a, b)))
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
                # a climb, or a change below the objective's rounding (near the optimum the
                # full step is right and the values no longer tell it apart)
                if trial_value >= value - 1e-12 * (1.0 + abs(value)) or scale < 1e-6:
                    break
                scale *= 0.5
            theta, value = np.asarray(trial, dtype=np.float64), trial_value
            if float(np.max(np.abs(scale * step))) < TOLERANCE:
                break
        _, info = self._weights(theta)
        hess = np.diag(info.sum(axis=1) + self._precision) - info
        self.theta = theta
        self.cov = np.asarray(np.linalg.inv(hess), dtype=np.float64)
        self.used = info
        self.full_fits += 1
        self._pair_a, self._pair_b = (
            x.astype(np.int64) for x in np.nonzero(np.triu(self.games, 1))
        )
        self._met = []

    def update(self) -> bool:
        """The fit brought up to date with the games recorded since the last one, without a
        full refit when it can: quasi-Newton steps ``theta += cov @ gradient`` (the gradient
        exact, over all games), and after each the covariance corrected by a Woodbury update
        for the pairs whose information weight ``games * p (1 - p)`` at the new strengths is
        more than ``RELATIVE_ERROR`` away from the weight ``cov`` was made with (new games
        included). Afterwards the strengths are the full fit's to within the last step
        (``STEP_TOLERANCE``) and every weight is within ``RELATIVE_ERROR`` of the full fit's,
        so ``cov`` is within that factor of the full fit's covariance.

        It refits in full (and says so: True) when more than ``CORRECTION_LIMIT`` pairs need a
        correction at once, or ``UPDATE_STEPS`` steps do not converge. ``fit`` is the full fit
        whenever wanted: the same as a fresh model's (tests compare them to 1e-9)."""
        if self.size == 0:
            return False
        if self._met:
            met = np.array(sorted(set(self._met)), dtype=np.int64).reshape(-1, 2)
            self._pair_a = np.concatenate([self._pair_a, met[:, 0]])
            self._pair_b = np.concatenate([self._pair_b, met[:, 1]])
            self._met = []
        a, b = self._pair_a, self._pair_b
        games, points = self.games[a, b], self.points[a, b]  # points: a's against b
        n = self.size
        for _ in range(UPDATE_STEPS):
            p = 1.0 / (1.0 + np.exp(self.theta[b] - self.theta[a]))
            if not self._correct(a, b, games * p * (1.0 - p)):
                self.fit()
                return True
            excess = points - games * p
            grad = (
                np.bincount(a, excess, n) - np.bincount(b, excess, n) - self._precision * self.theta
            )
            step = self.cov @ grad
            self.theta = np.asarray(self.theta + step, dtype=np.float64)
            if float(np.max(np.abs(step))) < STEP_TOLERANCE:
                p = 1.0 / (1.0 + np.exp(self.theta[b] - self.theta[a]))
                if self._correct(a, b, games * p * (1.0 - p)):
                    return False
                break
        self.fit()
        return True

    def _correct(self, pair_a: IntArray, pair_b: IntArray, info: FloatArray) -> bool:
        """``cov`` and ``used`` brought within ``RELATIVE_ERROR`` of ``info`` (the weights of
        the pairs ``pair_a[k] < pair_b[k]``) by one Woodbury update; False (nothing changed)
        when that would take more than ``CORRECTION_LIMIT`` pairs."""
        used = self.used[pair_a, pair_b]
        delta = info - used
        off = (np.abs(delta) > RELATIVE_ERROR * used) & (delta != 0.0)
        if int(np.count_nonzero(off)) > CORRECTION_LIMIT:
            return False
        a, b, change = pair_a[off], pair_b[off], delta[off]
        if len(a) == 0:
            return True
        su = self.cov[:, a] - self.cov[:, b]  # S U, U's columns e_a - e_b
        k = su[a] - su[b]  # U' S U
        # (H + U C U')^-1 = S - S U (I + C U'SU)^-1 C U'S, C = diag(change): no 1/change.
        middle = np.linalg.solve(np.eye(len(a)) + change[:, None] * k, np.diag(change))
        middle = 0.5 * (middle + middle.T)
        cov = self.cov - (su @ middle) @ su.T
        self.cov = np.asarray(0.5 * (cov + cov.T), dtype=np.float64)
        self.used[a, b] = self.used[b, a] = info[off]
        return True

    def elo(self) -> FloatArray:
        return self.theta * ELO_PER_UNIT

    def order(self) -> npt.NDArray[np.int64]:
        """Bot indices, best first (ties by index, so the order is repeatable)."""
        return np.lexsort((np.arange(self.size), -self.theta))

    def rank_interval(self, bot: int, z: float = 1.959964) -> RankInterval:
        """One bot's entry of ``rank_intervals``, in O(n) rather than O(n^2)."""
        return self.rank_intervals_of([bot], z)[0]

    def rank_intervals_of(self, bots: Sequence[int], z: float = 1.959964) -> list[RankInterval]:
        """The entries of ``rank_intervals`` for ``bots``, in O(len(bots) n)."""
        rows = np.asarray(bots, dtype=np.int64)
        cov = self.cov
        diag = np.diag(cov)
        var = diag[rows, None] + diag[None, :] - 2.0 * cov[rows]
        gap = (self.theta[None, :] - self.theta[rows, None]) / np.sqrt(np.maximum(var, 1e-300))
        gap[np.arange(len(rows)), rows] = 0.0
        mine = self.theta[rows, None]
        above = self.theta[None, :] > mine
        ties = (self.theta[None, :] == mine) & (np.arange(self.size)[None, :] < rows[:, None])
        ranks = np.count_nonzero(above | ties, axis=1) + 1
        certain = np.count_nonzero(gap > z, axis=1)
        possible = np.count_nonzero(gap > -z, axis=1) - 1
        return [
            RankInterval(int(r), int(c) + 1, int(p) + 1)
            for r, c, p in zip(ranks, certain, possible, strict=True)
        ]

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


def contrast_weights(gap: FloatArray, var: FloatArray) -> FloatArray:
    """How much a contrast's variance counts, per unit: ``exp(-z^2 / 2) / var`` with ``z`` the
    gap over its standard deviation (a relative shrink; a settled gap asks for nothing)."""
    return np.asarray(np.exp(-0.5 * gap * gap / var) / var, dtype=np.float64)


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
    weight = contrast_weights(gap, var)
    if priority is not None:
        weight = weight * np.maximum(priority[upper], priority[lower])
    return d, weight


def lagging(model: LadderModel, ranked: IntArray, most: int | None = None) -> list[int]:
    """The active bots (``ranked``) that lag (see ``SETTLED_PLACES``), fewest games first
    (ties by index); ``most``: only the first that many (their intervals alone computed)."""
    played = model.games.sum(axis=1)
    mean = float(played[ranked].mean()) if len(ranked) else 0.0
    if mean < MATURE_GAMES:
        return []
    behind = sorted((b for b in ranked.tolist() if played[b] < mean), key=lambda i: (played[i], i))
    out: list[int] = []
    step = max(16, most or 0)
    for start in range(0, len(behind), step):
        chunk = behind[start : start + step]
        out += [
            bot
            for bot, iv in zip(chunk, model.rank_intervals_of(chunk), strict=True)
            if iv.rank - iv.best > SETTLED_PLACES or iv.worst - iv.rank > SETTLED_PLACES
        ]
        if most is not None and len(out) >= most:
            return out[:most]
    return out


def priorities(model: LadderModel, active: Sequence[int]) -> FloatArray:
    """Each bot's priority: ``1 + mean / (1 + games)`` (``mean``: the active bots' mean games).
    A newcomer's contrasts count many times over (the standings of a bot just handed in are
    what its author is waiting for); once a bot has played its share the factor is about 2,
    the same for everyone."""
    return _priorities(model.games.sum(axis=1), active)


def _priorities(played: FloatArray, active: Sequence[int]) -> FloatArray:
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


class BatchGains:
    """The gains of every candidate pair through one greedy batch, kept by rank-one updates.

    In rating order (positions ``0..m-1`` of the active bots, ``P`` the covariance in that
    order) the weighted contrasts form a banded matrix ``Q = sum_k weight_k c_k c_k'``
    (``REACH`` diagonals either side), and a pair's gain is ``w num / (1 + w var)`` with
    ``num = u' P Q P u`` and ``var = u' P u``. The ``num`` of every candidate comes from the
    band of ``M = P Q P`` around its diagonal, ``BLOCK`` positions at a time: the rows of the
    covariance those positions and their neighbours need are gathered, multiplied by ``Q``'s
    block and then by the next rows (two matrix products), so the cost is O(m^2 (window +
    REACH)) in products and the covariance is never reordered whole. Once a pair is taken its
    virtual game turns ``P`` into ``P - beta s s'`` (``s = P u*``); every candidate's ``num``
    and ``var`` follow exactly from ``s``, ``P Q s`` and ``s' Q s``: one product by the
    covariance a pair. The contrasts' weights stay those of the batch's start (each game of a
    batch is chosen for what the standings did not know when the batch began).
    """

    def __init__(
        self,
        model: LadderModel,
        ranked: IntArray,
        window: int,
        priority: FloatArray | None = None,
    ) -> None:
        m = len(ranked)
        self.ranked = ranked
        self.cov = model.cov[np.ix_(ranked, ranked)]  # P: the covariance in rating order
        theta = model.theta[ranked]
        diag = np.diag(self.cov).copy()
        # the contrasts of each position with the REACH positions below it
        self.steps: list[tuple[int, FloatArray]] = []
        for step in range(1, min(REACH, m - 1) + 1):
            near = np.diagonal(self.cov, step)
            var = np.maximum(diag[:-step] + diag[step:] - 2.0 * near, 1e-300)
            gap = theta[:-step] - theta[step:]
            weight = contrast_weights(gap, var)
            if priority is not None:
                weight = weight * np.maximum(priority[ranked[:-step]], priority[ranked[step:]])
            self.steps.append((step, weight))
        # candidates: positions (i, i + t), t = 1..window, ordered by bot indices (ties repeat)
        firsts, seconds = [], []
        for t in range(1, min(window, m - 1) + 1):
            firsts.append(np.arange(m - t))
            seconds.append(np.arange(t, m))
        i, j = np.concatenate(firsts), np.concatenate(seconds)
        a, b = ranked[i], ranked[j]
        order = np.lexsort((np.maximum(a, b), np.minimum(a, b)))
        self.i, self.j = i[order], j[order]
        self.a, self.b = np.minimum(a, b)[order], np.maximum(a, b)[order]
        p = 1.0 / (1.0 + np.exp(theta[self.j] - theta[self.i]))
        self.w = p * (1.0 - p)
        self.var = diag[self.i] + diag[self.j] - 2.0 * self.cov[self.i, self.j]
        self.num = self._band_nums(min(window, m - 1))
        self._taken: list[tuple[float, FloatArray]] = []

    def _apply_q(self, x: FloatArray) -> FloatArray:
        """``x Q`` for a vector or the rows of a matrix (positions in rating order; ``Q`` is
        symmetric, so for a vector this is ``Q x``)."""
        out = np.zeros_like(x)
        for step, weight in self.steps:
            diff = (x[..., :-step] - x[..., step:]) * weight
            out[..., :-step] += diff
            out[..., step:] -= diff
        return out

    def _band_nums(self, width: int) -> FloatArray:
        """``u' P Q P u`` for every candidate, from the band of ``M = P Q P`` of that width.

        ``Q P`` is made ``CHUNK`` rows at a time as a small dense block of ``Q`` (its band)
        times the rows of ``P`` it reaches; then ``M``'s band ``BLOCK`` rows at a time as
        ``(Q P)[:, rows]' P[:, near]`` (``M = (Q P)' P``, ``P`` symmetric): matrix products
        only, whose diagonals are read through strided views."""
        m = len(self.ranked)
        q = np.zeros((m, 2 * REACH + 1))  # q[k, REACH + d] = Q[k, k + d]
        for step, weight in self.steps:
            q[:-step, REACH] += weight
            q[step:, REACH] += weight
            q[:-step, REACH + step] -= weight
            q[step:, REACH - step] -= weight
        qp = np.empty((m, m))
        for start in range(0, m, CHUNK):
            stop = min(m, start + CHUNK)
            rows = stop - start
            dense = np.zeros((rows, rows + 2 * REACH))  # columns: positions start-REACH..
            _diagonals(dense, 2 * REACH + 1)[:] = q[start:stop]
            low, high = max(0, start - REACH), min(m, stop + REACH)
            qp[start:stop] = (
                dense[:, low - start + REACH : high - start + REACH] @ self.cov[low:high]
            )
        band = np.zeros((m, width + 1))  # band[r, t] = M[r, r + t]
        for start in range(0, m, BLOCK):
            stop, end = min(m, start + BLOCK), min(m, start + BLOCK + width)
            rows = stop - start
            block = np.zeros((rows, rows + width))
            block[:, : end - start] = qp[:, start:stop].T @ self.cov[:, start:end]
            band[start:stop] = _diagonals(block, width + 1)
        return np.asarray(
            band[self.i, 0] + band[self.j, 0] - 2.0 * band[self.i, self.j - self.i],
            dtype=np.float64,
        )

    def gains(self) -> FloatArray:
        """Each candidate's gain now (the virtual games of the pairs taken included)."""
        return np.asarray(self.w * self.num / (1.0 + self.w * self.var), dtype=np.float64)

    def _corrected(self, px: FloatArray, x: FloatArray) -> FloatArray:
        """``P_now x`` from ``P x``: the virtual games taken so far applied (in place)."""
        for beta, s in self._taken:
            px -= (beta * float(s @ x)) * s
        return px

    def take(self, index: int) -> None:
        """One virtual game of candidate ``index``: every candidate's gain updated."""
        pi, pj = int(self.i[index]), int(self.j[index])
        s = self.cov[pi] - self.cov[pj]
        for beta_t, s_t in self._taken:  # P_now u, u = e_pi - e_pj
            s -= (beta_t * (s_t[pi] - s_t[pj])) * s_t
        w = float(self.w[index])
        beta = w / (1.0 + w * (s[pi] - s[pj]))
        q = self._apply_q(s)
        r = self._corrected(self.cov @ q, q)
        sq = float(s @ q)
        su = np.take(s, self.i) - np.take(s, self.j)
        ru = np.take(r, self.i) - np.take(r, self.j)
        # num - 2 beta su ru + beta^2 su^2 sq;  var - beta su^2
        self.num -= su * (2.0 * beta * ru - (beta * beta * sq) * su)
        self.var -= beta * su * su
        self._taken.append((beta, s))


def _diagonals(block: FloatArray, count: int) -> FloatArray:
    """A view of ``block`` (rows ``r``, at least ``r + count - 1`` columns): ``view[r, t] =
    block[r, r + t]``, writable."""
    stride_row, stride_col = block.strides
    return np.lib.stride_tricks.as_strided(
        block, shape=(block.shape[0], count), strides=(stride_row + stride_col, stride_col)
    )


def choose_pairs(
    model: LadderModel,
    active: Sequence[int],
    count: int,
    *,
    window: int = WINDOW,
    floor: float = FLOOR,
    lag: float = LAG_SHARE,
) -> list[tuple[int, int]]:
    """``count`` pairs to play next, best first (none when fewer than two are active).

    Deterministic: the same totals and field give the same pairs (ties go to the lower
    indices), which is what makes a ladder's resume exact."""
    ranked = _ranked(model, active)
    if len(ranked) < 2 or count <= 0:
        return []
    played = model.games.sum(axis=1)
    mean = float(played[ranked].mean())
    starving = sorted(
        (i for i in ranked.tolist() if played[i] < floor * mean), key=lambda i: (played[i], i)
    )
    batch = BatchGains(model, ranked, window, _priorities(played, ranked.tolist()))
    # the bot each of the first turns must seat: the floor's, then the lagging ones in turn
    must = starving[:count]
    turns = max(1, round(lag * count)) if lag > 0 else 0
    behind = lagging(model, ranked, turns) if turns else []
    if behind:
        must += [behind[k % len(behind)] for k in range(turns)]
    chosen: list[tuple[int, int]] = []
    for turn in range(count):
        gains = batch.gains()
        if turn < len(must):  # the neediest first, each with its most informative opponent
            gains = np.where((batch.a == must[turn]) | (batch.b == must[turn]), gains, -1.0)
        best = int(np.argmax(gains))  # the first of equal gains: the lowest indices
        chosen.append((int(batch.a[best]), int(batch.b[best])))
        if turn + 1 < count:
            batch.take(best)
    return chosen
