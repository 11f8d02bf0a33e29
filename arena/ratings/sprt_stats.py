"""SPRT statistics: is NEW stronger than BASE? Decided with as few games as the error rates allow.

The test (Wald's sequential probability ratio test) plays games until a log-likelihood ratio
(LLR) leaves the interval (log(beta / (1 - alpha)), log((1 - beta) / alpha)): above it, accept
H1 (NEW is elo1 stronger) with a false-positive rate of at most about ``alpha``; below it,
accept H0 (NEW is elo0 stronger: not better) with a false-negative rate of about ``beta``.
alpha = beta = 0.05 gives the bounds -2.944 and +2.944.

The likelihood is that of the observed outcome counts: trinomial (loss, draw, win of single
games) or pentanomial (NEW's points over a pair of games with the colours or seats swapped:
0, 1/2, 1, 3/2 or 2). Pairs are the better unit when the two games of a pair are correlated
(the same opening played from both sides): their spread is what the games really show.

H0 and H1 do not fix the outcome probabilities, only one number of them, so this is the
*generalized* SPRT that fishtest and fastchess use, after Michel Van den Bergh ("Comments on
Normalized Elo", https://www.cantate.be/Fishtest/normalized_elo_practical.pdf, and
https://www.cantate.be/Fishtest/support_MLE_multinomial.pdf)::

    LLR = N * sum_i phat_i * log(p1_i / p0_i)

where phat is the empirical distribution of the N outcomes (scores a_i = i / (k - 1) per game,
the pair's mean for pentanomial) and p0, p1 are the distributions of highest likelihood that
satisfy H0 and H1:

* logistic Elo: the expected score is s = 1 / (1 + 10^(-elo / 400)). The constrained maximum is
  p_i = phat_i / (1 + x (a_i - s)) with the Lagrange multiplier x the root of the secular
  equation sum_i phat_i (a_i - s) / (1 + x (a_i - s)) = 0 between its two poles.
* normalized Elo (nElo): (mu - 1/2) / sigma equals t, where nElo = t * 800 / ln 10 per game
  (sigma the standard deviation of one game's score), so t = nElo / (800 / ln 10) for
  trinomial counts and t = sqrt(2) * nElo / (800 / ln 10) for pairs (the pair's mean score has
  sigma / sqrt(2) when its games are independent; fishtest and fastchess use the same
  constants). The maximum is p_i = phat_i / (1 + x g_i) with
  g_i = a_i - mu - t ((a_i - mu)^2 - sigma^2) / (2 sigma) and mu = 1/2 + t sigma, x again a
  secular root. fishtest and fastchess find it by a fixed point from the uniform distribution;
  that reaches *a* stationary point, and with concentrated data (nearly every pair drawn) it
  can be the lesser of two maxima. Here every stationary point is a root in sigma of
  mean(p(sigma)) - (1/2 + t sigma): a scan over sigma (points 14% apart) brackets them,
  false position polishes each, and the most likely wins. Where the fixed point finds the
  maximum (ordinary data) the two agree to rounding; among 1,000 simulated samples with
  nearly every pair drawn and |t| <= 0.3 it missed it in 84. Below |t| = 1e-4 (hypotheses
  within 0.035 nElo of 0) F's sign changes drown in rounding, and the fixed point from the
  t = 0 maximum (unique there) is used: the two methods agree to rounding where both work.

An outcome that has not occurred counts 1e-3 instead of 0 (fishtest's and fastchess's
regularisation), so all-wins or all-draws data still give a finite LLR that can end the test;
only no data at all gives 0.0. The closed-form approximation ``llr_approx``,
N (s1 - s0)(2 mu - s0 - s1) / (2 var), agrees for large N and is kept as a cross-check.

The estimates beside the LLR follow fastchess and fishtest: the mean score mu, its standard
error sqrt(var / N) over the counted units (pairs or games), Elo = -400 log10(1 / mu - 1) with
the 95% interval from the transformed interval of mu (scores clamped to [0.001, 0.999], so
|Elo| <= 1200), nElo = (mu - 1/2) / sigma_game * 800 / ln 10 with its interval scaled alike, and
LOS = Phi((mu - 1/2) / se). Counts of one outcome only (34 wins and nothing else) have no
spread: there the estimates are fastchess's, from the counts as they are, said as what they are:
an infinite Elo (all wins or all losses) with an undefined interval, an undefined nElo (all
draws), a LOS of 100%, 0% or undefined (``Estimate.text``), never a large finite number that
the regularization made up (34-0 was "Elo 1199.8 +/- 142.5, nElo 11695.5"). In JSON these
values are null, with a ``shown`` text beside them.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from bot_arena.arena.ratings.elo import NELO_PER_T, elo_diff, expected_score

MODELS = ("normalized", "logistic")
STATISTICS = ("pentanomial", "trinomial")
#: NEW's points over the two games of a pair: 0, 1/2, 1, 3/2, 2.
PENTANOMIAL_LABELS = ("LL", "LD", "DD/WL", "WD", "WW")
#: NEW's single games: loss, draw, win.
TRINOMIAL_LABELS = ("L", "D", "W")

#: Two-sided 95% normal quantile.
Z95 = 1.959963984540054
#: What an outcome that has not occurred counts (fishtest's and fastchess's choice).
REGULARIZATION = 1e-3
#: Scores are clamped to [SCORE_CLAMP, 1 - SCORE_CLAMP] before they become Elo (as fishtest).
SCORE_CLAMP = 1e-3

FloatArray = NDArray[np.float64]

_SECULAR_ITERATIONS = 200
# normalized Elo: the scan for the maxima's sigma (neighbours 14% apart from 1e-9 of the
# largest possible sigma up to it) and the iterations that polish each root it brackets
_SIGMA_GRID = 160
_POLISH_ITERATIONS = 100
# below this |t| (0.035 nElo a game) the maximum is the fixed point of sd(p(sigma)) from t = 0
_SMALL_T = 1e-4
_SMALL_T_ITERATIONS = 60


class SprtError(ValueError):
    """Settings or counts an SPRT cannot use; the message is one line."""


# --- settings -------------------------------------------------------------------------------


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SprtError(f"SPRT {name} must be a number, not {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise SprtError(f"SPRT {name} must be finite, not {value!r}")
    return number


@dataclass(frozen=True, slots=True)
class SprtSettings:
    """H0: NEW is ``elo0`` stronger than BASE; H1: ``elo1`` stronger (elo0 < elo1), in the
    ``model``'s Elo; ``alpha`` and ``beta`` are the false-positive and false-negative rates."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"
    statistics: str = "pentanomial"

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            object.__setattr__(self, name, _number(name, getattr(self, name)))
        if self.elo0 >= self.elo1:
            raise SprtError(f"SPRT elo0 ({self.elo0:g}) must be less than elo1 ({self.elo1:g})")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 1.0:
                raise SprtError(f"SPRT {name} must be between 0 and 1, not {value:g}")
        if self.alpha + self.beta >= 1.0:
            raise SprtError("SPRT alpha + beta must be less than 1")
        if self.model not in MODELS:
            raise SprtError(f"SPRT model must be one of {', '.join(MODELS)}, not {self.model!r}")
        if self.statistics not in STATISTICS:
            raise SprtError(
                f"SPRT statistics must be one of {', '.join(STATISTICS)}, not {self.statistics!r}"
            )

    @property
    def bounds(self) -> tuple[float, float]:
        """(lower, upper): accept H0 at or below ``lower``, H1 at or above ``upper``."""
        return (
            math.log(self.beta / (1.0 - self.alpha)),
            math.log((1.0 - self.beta) / self.alpha),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "elo0": self.elo0,
            "elo1": self.elo1,
            "alpha": self.alpha,
            "beta": self.beta,
            "model": self.model,
            "statistics": self.statistics,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SprtSettings:
        """The inverse of ``to_dict``; ``alpha``, ``beta``, ``model`` and ``statistics`` may be
        left out (the defaults). Unknown keys or wrong types raise ``SprtError``."""
        if not isinstance(data, Mapping):
            raise SprtError(f"SPRT settings must be a mapping, not {type(data).__name__}")
        known = ("elo0", "elo1", "alpha", "beta", "model", "statistics")
        unknown = sorted(str(key) for key in data if key not in known)
        if unknown:
            raise SprtError(f"unknown SPRT setting(s): {', '.join(unknown)}")
        for key in ("elo0", "elo1"):
            if key not in data:
                raise SprtError(f"SPRT settings need {key}")
        for key in ("model", "statistics"):
            if key in data and not isinstance(data[key], str):
                raise SprtError(f"SPRT {key} must be a string, not {data[key]!r}")
        return cls(**{key: data[key] for key in known if key in data})


# --- counts ---------------------------------------------------------------------------------


def _counts(counts: Sequence[int], sizes: tuple[int, ...], what: str) -> tuple[int, ...]:
    values = tuple(counts)
    if len(values) not in sizes:
        wanted = " or ".join(str(size) for size in sizes)
        raise SprtError(f"{what} needs {wanted} counts, not {len(values)}")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
            raise SprtError(f"{what} counts must be non-negative integers, not {value!r}")
    return tuple(int(value) for value in values)


def pair_outcome(first: float, second: float) -> int:
    """The pentanomial index (0..4: NEW's points over the pair, in halves) of NEW's scores in
    the two games of a pair, each 0, 0.5 or 1."""
    return game_outcome(first) + game_outcome(second)


def game_outcome(score: float) -> int:
    """0 for a loss, 1 for a draw, 2 for a win (NEW's score 0, 0.5 or 1)."""
    if not math.isfinite(score):
        raise SprtError(f"a game score must be 0, 0.5 or 1, not {score!r}")
    halves = round(2.0 * score)
    if halves not in (0, 1, 2) or abs(2.0 * score - halves) > 1e-9:
        raise SprtError(f"a game score must be 0, 0.5 or 1, not {score!r}")
    return int(halves)


# --- the constrained maximum-likelihood distributions ---------------------------------------


def _distribution(counts: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Rows of counts -> (N, scores a_i, phat): zero counts regularized, scores i / (k - 1)."""
    k = counts.shape[1]
    regular = np.where(counts > 0, counts, REGULARIZATION)
    total = regular.sum(axis=1)
    return total, np.arange(k) / (k - 1), regular / total[:, None]


def _secular_root(phat: FloatArray, g: FloatArray, start: FloatArray | None = None) -> FloatArray:
    """Per row, the x in (-1 / max g, -1 / min g) with sum_i phat_i g_i / (1 + x g_i) = 0, or NaN
    where the g of a row do not change sign (no such x).

    The left side falls strictly from +inf to -inf between the poles, so the root is unique:
    Newton's method from ``start`` (where it lies between the poles) or else 0, kept inside a
    shrinking bracket (a bisection step whenever Newton would leave it)."""
    gmax = g.max(axis=1)
    gmin = g.min(axis=1)
    usable = (gmin < 0.0) & (gmax > 0.0)
    with np.errstate(divide="ignore"):
        lo = np.where(usable, -1.0 / np.where(usable, gmax, 1.0), np.nan)
        hi = np.where(usable, -1.0 / np.where(usable, gmin, -1.0), np.nan)
    x = np.where(usable, 0.0, np.nan)
    if start is not None:
        x = np.where(usable & (start > lo) & (start < hi), start, x)
    idx = np.flatnonzero(usable)  # the rows still iterating, their state compacted below
    xa, lo_a, hi_a, ga = x[idx], lo[idx], hi[idx], g[idx]
    pga = phat[idx] * ga
    for _ in range(_SECULAR_ITERATIONS):
        if idx.size == 0:
            break
        r = 1.0 / (1.0 + xa[:, None] * ga)
        term = pga * r
        f = term.sum(axis=1)
        slope = -(term * ga * r).sum(axis=1)
        lo_a = np.where(f > 0.0, xa, lo_a)
        hi_a = np.where(f < 0.0, xa, hi_a)
        newton = xa - f / slope
        inside = (newton > lo_a) & (newton < hi_a)
        scale = np.maximum(1.0, np.abs(xa))
        # done when Newton's step is down to rounding (taken when it stays inside the bracket,
        # which rounding can break at the root itself) or the bracket is
        done = (np.abs(newton - xa) <= 1e-15 * scale) | (hi_a - lo_a <= 4e-16 * scale) | (f == 0.0)
        xa = np.where(inside, newton, np.where(done, xa, 0.5 * (lo_a + hi_a)))
        if done.any():
            x[idx[done]] = xa[done]
            going = ~done
            idx, xa, lo_a, hi_a, ga, pga = (
                idx[going],
                xa[going],
                lo_a[going],
                hi_a[going],
                ga[going],
                pga[going],
            )
    x[idx] = xa
    return x


def _mle_expected(phat: FloatArray, scores: FloatArray, s: float) -> FloatArray:
    """The distribution of highest likelihood for ``phat`` with expected score ``s``."""
    return _mle_expected_each(phat, scores, np.full(len(phat), s))


def _mle_expected_each(phat: FloatArray, scores: FloatArray, s: FloatArray) -> FloatArray:
    """``_mle_expected`` with an expected score for each row."""
    g = scores[None, :] - s[:, None]
    x = _secular_root(phat, g)
    return phat / (1.0 + x[:, None] * g)


def _curve_g(scores: FloatArray, t: float, sigma: FloatArray) -> FloatArray:
    """g_i(sigma) = a_i - mu - t ((a_i - mu)^2 - sigma^2) / (2 sigma), mu = 1/2 + t sigma."""
    dev = scores[None, :] - (0.5 + t * sigma)[:, None]
    return dev - t * (dev * dev - (sigma * sigma)[:, None]) / (2.0 * sigma[:, None])


def _on_curve(
    phat: FloatArray, scores: FloatArray, t: float, sigma: FloatArray, start: FloatArray | None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The candidate p(sigma) = phat / (1 + x g(sigma)) of each row for its ``sigma``:
    (F = mean of p(sigma) - (1/2 + t sigma), the multipliers x, the distributions p); NaN
    where the secular equation has no root. ``start`` starts the root search."""
    g = _curve_g(scores, t, sigma)
    x = _secular_root(phat, g, start)
    p = phat / (1.0 + x[:, None] * g)
    return (p * scores).sum(axis=1) - (0.5 + t * sigma), x, p


def _mle_small_t(phat: FloatArray, scores: FloatArray, t: float) -> FloatArray:
    """``_mle_t_value`` for |t| < ``_SMALL_T``, where F(sigma) is O(t) and its sign changes
    drown in rounding: the fixed point sigma <- sd(p(sigma)) from the t = 0 maximum (whose
    maximum is unique: a linear constraint on a concave likelihood). The map moves sigma by
    O(t) per unit of change, so it contracts fast, and it stays with the maximum that the t = 0
    one continues into (the only one this close to t = 0)."""
    p = _mle_expected(phat, scores, 0.5)
    sigma = np.sqrt((p * (scores - 0.5) ** 2).sum(axis=1))
    x = None
    for _ in range(_SMALL_T_ITERATIONS):
        _, x, p = _on_curve(phat, scores, t, sigma, x)
        mean = (p * scores).sum(axis=1)
        nxt = np.sqrt((p * (scores - mean[:, None]) ** 2).sum(axis=1))
        done = np.abs(nxt - sigma) <= 1e-15 * sigma
        sigma = nxt
        if done.all():
            break
    _, _, p = _on_curve(phat, scores, t, sigma, x)
    return p


def _mle_t_value(phat: FloatArray, scores: FloatArray, t: float) -> FloatArray:
    """The distribution of highest likelihood for ``phat`` with (mu - 1/2) / sigma = ``t``.

    Its Lagrange conditions (Van den Bergh, section 4.1) make it p = phat / (1 + x g) with
    g_i = a_i - mu - t ((a_i - mu)^2 - sigma^2) / (2 sigma), x the secular root that makes p
    sum to 1, and mu = 1/2 + t sigma. So every stationary point is p(sigma) for a sigma where
    F(sigma) = mean(p(sigma)) - (1/2 + t sigma) is 0. fishtest and fastchess iterate
    sigma -> sd(p(sigma)) from the uniform distribution, which reaches *a* stationary point:
    with concentrated data (almost every pair drawn) it can be the lesser of two maxima, an
    LLR off by tenths. Here F is scanned on a geometric grid of sigma (every sign change is a
    root), each root is polished by false position (Illinois), and the root of highest
    likelihood wins."""
    if t == 0.0:
        return _mle_expected(phat, scores, 0.5)
    if abs(t) < _SMALL_T:
        return _mle_small_t(phat, scores, t)
    return _mle_t_scan(phat, scores, t)


def _mle_t_scan(phat: FloatArray, scores: FloatArray, t: float) -> FloatArray:
    """``_mle_t_value`` by the scan over sigma (|t| >= ``_SMALL_T``)."""
    grid = 0.5 / math.sqrt(1.0 + t * t) * np.geomspace(1e-9, 1.0 - 1e-9, _SIGMA_GRID)
    g = _curve_g(scores, t, grid)
    # where g keeps one sign p(sigma) does not exist; g is the same for every row
    grid = grid[(g.min(axis=1) < 0.0) & (g.max(axis=1) > 0.0)]
    rows, size = len(phat), len(grid)
    f, x, _ = _on_curve(np.repeat(phat, size, axis=0), scores, t, np.tile(grid, rows), None)
    f, x = f.reshape(rows, size), x.reshape(rows, size)
    with np.errstate(invalid="ignore"):
        brackets = f[:, :-1] * f[:, 1:] <= 0.0  # False where either end is NaN
    row, cell = np.nonzero(brackets)
    missing = np.setdiff1d(np.arange(rows), row)
    if missing.size:
        raise ArithmeticError(f"no distribution found with t-value {t:g}")
    a, b = grid[cell], grid[cell + 1]
    fa, fb = f[row, cell], f[row, cell + 1]
    xb = x[row, cell + 1]
    active = np.arange(len(row))
    for _ in range(_POLISH_ITERATIONS):
        if active.size == 0:
            break
        aa, bb, faa, fbb = a[active], b[active], fa[active], fb[active]
        with np.errstate(invalid="ignore", divide="ignore"):
            c = bb - fbb * (bb - aa) / (fbb - faa)
        inside = (c - aa) * (c - bb) <= 0.0  # also False for NaN
        c = np.where(inside, c, 0.5 * (aa + bb))
        fc, xc, _ = _on_curve(phat[row[active]], scores, t, c, xb[active])
        fc = np.where(np.isnan(fc), 0.0, fc)  # cannot happen between two roots' ends; stop
        flip = fc * fbb < 0.0
        # Illinois: the end kept twice has its F halved, so both ends move in
        a[active] = np.where(flip, bb, aa)
        fa[active] = np.where(flip, fbb, 0.5 * faa)
        b[active], fb[active], xb[active] = c, fc, xc
        done = (fc == 0.0) | (np.abs(c - np.where(flip, bb, aa)) <= 1e-15 * c)
        active = active[~done]
    _, _, p = _on_curve(phat[row], scores, t, b, xb)
    loglik = (phat[row] * np.log(p)).sum(axis=1)
    order = np.lexsort((loglik, row))  # by row, then likelihood: the last of each row wins
    last = np.append(row[order][1:] != row[order][:-1], True)
    return p[order[last]]  # type: ignore[no-any-return]


def _llr_rows(counts: FloatArray, elo0: float, elo1: float, model: str) -> FloatArray:
    total, scores, phat = _distribution(counts)
    if model == "logistic":
        s0, s1 = expected_score(elo0), expected_score(elo1)
        if not (0.0 < s0 < 1.0 and 0.0 < s1 < 1.0):
            raise SprtError(f"logistic Elo {elo0:g} or {elo1:g} is out of range")
        p0 = _mle_expected(phat, scores, s0)
        p1 = _mle_expected(phat, scores, s1)
    else:
        scale = math.sqrt(2.0) if counts.shape[1] == 5 else 1.0
        p0 = _mle_t_value(phat, scores, scale * elo0 / NELO_PER_T)
        p1 = _mle_t_value(phat, scores, scale * elo1 / NELO_PER_T)
    value = total * (phat * (np.log(p1) - np.log(p0))).sum(axis=1)
    return np.where(counts.sum(axis=1) > 0, value, 0.0)


def _check_model(model: str) -> None:
    if model not in MODELS:
        raise SprtError(f"SPRT model must be one of {', '.join(MODELS)}, not {model!r}")


def llr(counts: Sequence[int], elo0: float, elo1: float, model: str = "normalized") -> float:
    """The generalized SPRT log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for 5
    pentanomial counts (pair scores 0, 1/2, ..., 2) or 3 trinomial counts (losses, draws, wins).

    Zero counts count 1e-3 (fishtest's and fastchess's regularisation), so one-sided data give a
    finite value; no data gives 0.0. Swapping elo0 and elo1 negates the value."""
    _check_model(model)
    return _llr_of(_counts(counts, (3, 5), "an LLR"), elo0, elo1, model)


@functools.lru_cache(maxsize=256)
def _llr_of(values: tuple[int, ...], elo0: float, elo1: float, model: str) -> float:
    """``llr`` of checked counts, kept for the last few: a director's state and a recount of
    the same stored results ask for the same counts, and each is a numerical search."""
    return float(llr_batch(np.array([values], dtype=float), elo0, elo1, model)[0])


def llr_batch(
    counts: NDArray[Any], elo0: float, elo1: float, model: str = "normalized"
) -> FloatArray:
    """``llr`` for every row of a 2-D array of counts (all rows 3 or all rows 5 wide) at once:
    what simulations use."""
    _check_model(model)
    rows = np.asarray(counts, dtype=float)
    if rows.ndim != 2 or rows.shape[1] not in (3, 5):
        raise SprtError(f"llr_batch needs rows of 3 or 5 counts, not shape {rows.shape}")
    if rows.size and (not np.isfinite(rows).all() or (rows < 0).any()):
        raise SprtError("LLR counts must be non-negative")
    e0, e1 = _number("elo0", elo0), _number("elo1", elo1)
    if len(rows) == 0:
        return np.zeros(0)
    return _llr_rows(rows, e0, e1, model)


def llr_approx(counts: Sequence[int], elo0: float, elo1: float, model: str = "normalized") -> float:
    """The closed form N (s1 - s0)(2 mu - s0 - s1) / (2 var) (Van den Bergh, "GSPRT
    approximation"; fastchess's LLR before its exact one), for the same counts as ``llr``:
    mu and var the mean and variance of the (regularized) empirical distribution of the scores,
    s0 and s1 the expected scores of H0 and H1; for normalized Elo s = 1/2 + t sigma."""
    _check_model(model)
    values = _counts(counts, (3, 5), "an LLR")
    e0, e1 = _number("elo0", elo0), _number("elo1", elo1)
    if sum(values) == 0:
        return 0.0
    total, scores, phat = _distribution(np.array([values], dtype=float))
    mu = float((phat[0] * scores).sum())
    var = float((phat[0] * (scores - mu) ** 2).sum())
    if model == "logistic":
        s0, s1 = expected_score(e0), expected_score(e1)
    else:
        scale = math.sqrt(2.0) if len(values) == 5 else 1.0
        sigma = math.sqrt(var)
        s0, s1 = (0.5 + scale * elo / NELO_PER_T * sigma for elo in (e0, e1))
    return float(total[0]) * (s1 - s0) * (2.0 * mu - s0 - s1) / (2.0 * var)


# --- estimates and the state of a test ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Estimate:
    """A value with its 95% interval [low, high]."""

    value: float
    low: float
    high: float

    @property
    def error(self) -> float:
        """Half the interval's width: the "+/-" fastchess prints (NaN: undefined)."""
        return (self.high - self.low) / 2.0

    def text(self) -> str:
        """``12.3 +/- 4.5``; an infinite value or an undefined one (NaN) said as such."""
        return f"{number_text(self.value, '.1f')} +/- {number_text(self.error, '.1f')}"

    def to_dict(self) -> dict[str, Any]:
        """Finite numbers as they are; where one is not (one outcome only), JSON's null and the
        estimate as ``text`` shows it under ``shown``."""
        out: dict[str, Any] = {
            "value": _finite_or_none(self.value),
            "low": _finite_or_none(self.low),
            "high": _finite_or_none(self.high),
        }
        if None in out.values():
            out["shown"] = self.text()
        return out


def number_text(value: float, spec: str) -> str:
    """``value`` formatted by ``spec``; ``inf``, ``-inf`` or ``undefined`` (NaN) when it is not
    a finite number."""
    if math.isnan(value):
        return "undefined"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return format(value, spec)


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _elo_of(score: float) -> float:
    return elo_diff(min(max(score, SCORE_CLAMP), 1.0 - SCORE_CLAMP))


def _estimates(counts: tuple[int, ...]) -> tuple[Estimate, Estimate, float]:
    """(Elo, nElo, LOS) from pentanomial or trinomial counts (regularized like the LLR), or
    fastchess's for counts of one outcome only (``_one_outcome``)."""
    if sum(1 for count in counts if count) == 1:
        return _one_outcome(counts)
    total, scores, phat = _distribution(np.array([counts], dtype=float))
    n = float(total[0])
    mu = float((phat[0] * scores).sum())
    var = float((phat[0] * (scores - mu) ** 2).sum())
    se = math.sqrt(var / n)
    sigma_game = math.sqrt(2.0 * var if len(counts) == 5 else var)
    elo = Estimate(_elo_of(mu), _elo_of(mu - Z95 * se), _elo_of(mu + Z95 * se))
    nelo_value = (mu - 0.5) / sigma_game * NELO_PER_T
    nelo_error = Z95 * se / sigma_game * NELO_PER_T
    nelo = Estimate(nelo_value, nelo_value - nelo_error, nelo_value + nelo_error)
    los = 0.5 * math.erfc(-(mu - 0.5) / (se * math.sqrt(2.0)))
    return elo, nelo, los


def _one_outcome(counts: tuple[int, ...]) -> tuple[Estimate, Estimate, float]:
    """The estimates of counts that hold one outcome only, as fastchess computes them from the
    counts unregularized: no spread, so the score's interval is the point ``a`` (Elo ``a``'s,
    +/- 0, and infinite at 0 or 1 with an undefined interval: inf - inf); nElo divides by the
    zero spread (infinite, undefined at a = 1/2, its interval undefined); LOS is 100% above 1/2,
    0% below it and undefined at it."""
    index = next(i for i, count in enumerate(counts) if count)
    score = index / (len(counts) - 1)
    nan, side = math.nan, (score > 0.5) - (score < 0.5)
    if 0.0 < score < 1.0:
        value = elo_diff(score) + 0.0  # 0.0, not -0.0, at 1/2
        elo = Estimate(value, value, value)
    else:
        elo = Estimate(math.copysign(math.inf, score - 0.5), nan, nan)
    nelo = Estimate(side * math.inf if side else nan, nan, nan)
    los = {1: 1.0, -1: 0.0}.get(side, nan)
    return elo, nelo, los


@dataclass(frozen=True, slots=True)
class SprtState:
    """Where a test stands after the games so far (NEW's point of view)."""

    settings: SprtSettings
    pentanomial: tuple[int, int, int, int, int]
    trinomial: tuple[int, int, int]  # (losses, draws, wins) of NEW over single games
    llr: float
    lower: float
    upper: float
    decision: str | None  # "H0" (not better), "H1" (elo1 better) or None (go on)
    elo: Estimate  # logistic Elo of NEW against BASE
    nelo: Estimate  # normalized Elo
    los: float  # likelihood of superiority, 0..1
    draw_ratio: float  # fraction of single games drawn (0 with no games)

    @property
    def games(self) -> int:
        """Single games counted (the trinomial total)."""
        return sum(self.trinomial)

    @property
    def pairs(self) -> int:
        """Complete game pairs counted (the pentanomial total)."""
        return sum(self.pentanomial)

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings.to_dict(),
            "pentanomial": list(self.pentanomial),
            "trinomial": list(self.trinomial),
            "games": self.games,
            "pairs": self.pairs,
            "llr": self.llr,
            "lower": self.lower,
            "upper": self.upper,
            "decision": self.decision,
            "elo": self.elo.to_dict(),
            "nelo": self.nelo.to_dict(),
            "los": _finite_or_none(self.los),
            "draw_ratio": self.draw_ratio,
        }

    def line(self) -> str:
        """One status line, e.g. ``LLR 1.23 (-2.94, 2.94) [0.00, 5.00] nElo | ...``."""
        s = self.settings
        verdict = {"H0": " H0 accepted", "H1": " H1 accepted"}.get(self.decision or "", "")
        unit = "nElo" if s.model == "normalized" else "Elo"
        if s.statistics == "pentanomial":
            counts = f"Ptnml(0-2) [{', '.join(str(c) for c in self.pentanomial)}]"
        else:
            counts = f"LDW [{', '.join(str(c) for c in self.trinomial)}]"
        return (
            f"LLR {self.llr:.2f} ({self.lower:.2f}, {self.upper:.2f}) "
            f"[{s.elo0:.2f}, {s.elo1:.2f}] {unit}{verdict} | "
            f"Elo {self.elo.text()} | nElo {self.nelo.text()} | "
            f"LOS {number_text(100.0 * self.los, '.1f')}{'' if math.isnan(self.los) else '%'} | "
            f"DrawRatio {100.0 * self.draw_ratio:.1f}% | "
            f"{counts} | games {self.games}"
        )


def evaluate(
    settings: SprtSettings, pentanomial: Sequence[int], trinomial: Sequence[int]
) -> SprtState:
    """The state of a test: the LLR of ``settings.statistics`` counts in ``settings.model``,
    the decision (H1 when llr >= upper, H0 when llr <= lower) and the estimates, which come
    from the same counts (pairs or games)."""
    penta = _counts(pentanomial, (5,), "the pentanomial")
    tri = _counts(trinomial, (3,), "the trinomial")
    counts = penta if settings.statistics == "pentanomial" else tri
    value = llr(counts, settings.elo0, settings.elo1, settings.model)
    lower, upper = settings.bounds
    decision = "H1" if value >= upper else "H0" if value <= lower else None
    elo, nelo, los = _estimates(counts)
    games = sum(tri)
    return SprtState(
        settings=settings,
        pentanomial=(penta[0], penta[1], penta[2], penta[3], penta[4]),
        trinomial=(tri[0], tri[1], tri[2]),
        llr=value,
        lower=lower,
        upper=upper,
        decision=decision,
        elo=elo,
        nelo=nelo,
        los=los,
        draw_ratio=tri[1] / games if games else 0.0,
    )
