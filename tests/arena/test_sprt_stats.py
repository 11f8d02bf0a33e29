"""SPRT statistics (arena/ratings/sprt_stats.py) against independent computations, published numbers
and simulated tests.

The constrained maxima are checked by other methods than the module's Lagrange root: a closed
form (logistic, trinomial), a grid search along the constraint (normalized, trinomial) and the
first-order optimality conditions (pentanomial). Zero counts count 1e-3 everywhere (the
module's regularisation, fishtest's and fastchess's), so the checks regularize the same way.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena.arena.ratings import sprt_stats
from bot_arena.arena.ratings.elo import NELO_PER_T
from bot_arena.arena.ratings.sprt_stats import (
    SprtError,
    SprtSettings,
    evaluate,
    game_outcome,
    llr,
    llr_approx,
    llr_batch,
    pair_outcome,
)

EPS = 1e-3  # what a zero count counts


def regular(counts: tuple[int, ...]) -> list[float]:
    return [float(c) if c > 0 else EPS for c in counts]


def logistic(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


# --- independent maxima for trinomial counts ------------------------------------------------


def mle_mean_trinomial(counts: tuple[int, int, int], s: float) -> list[float]:
    """Maximise nL log pL + nD log pD + nW log pW with pW + pD/2 = s along the constraint: with
    u = pD, pW = s - u/2 and pL = 1 - s - u/2, the log-likelihood is concave in u and its
    derivative nD/u - nW/(2 pW) - nL/(2 pL) falls from +inf to -inf on (0, min(2s, 2(1-s))):
    bisection finds its zero."""
    n_l, n_d, n_w = regular(counts)

    def slope(u: float) -> float:
        return n_d / u - n_w / (2.0 * s - u) - n_l / (2.0 * (1.0 - s) - u)

    lo, hi = 0.0, min(2.0 * s, 2.0 * (1.0 - s))
    for _ in range(200):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if slope(mid) > 0.0 else (lo, mid)
    u = (lo + hi) / 2.0
    return [1.0 - s - u / 2.0, u, s - u / 2.0]


def test_logistic_llr_by_hand() -> None:
    """10 losses, 20 draws, 30 wins; H0: score 1/2 (0 Elo), H1: score 2/3 (400 log10 2 Elo).
    H1 is the data's own mean, so p1 = (1/6, 1/3, 1/2). For H0, with pD = u the zero of
    20/u - 30/(1 - u) - 10/(1 - u) is u = 1/3, so p0 = (1/3, 1/3, 1/3).
    LLR = 10 ln((1/6)/(1/3)) + 20 ln 1 + 30 ln((1/2)/(1/3)) = 30 ln 1.5 - 10 ln 2 = 5.2324..."""
    expected = 30.0 * math.log(1.5) - 10.0 * math.log(2.0)
    elo1 = 400.0 * math.log10(2.0)
    assert llr((10, 20, 30), 0.0, elo1, "logistic") == pytest.approx(expected, rel=1e-12)
    assert mle_mean_trinomial((10, 20, 30), 0.5) == pytest.approx([1 / 3] * 3, rel=1e-12)


def _golden_max(fn: Callable[[float], float], lo: float, hi: float) -> float:
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(200):
        x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if fn(x1) < fn(x2):
            lo = x1
        else:
            hi = x2
    return (lo + hi) / 2.0


def mle_t_trinomial(counts: tuple[int, int, int], t: float) -> list[float]:
    """Brute force along the constraint (mu - 1/2) / sigma = t: for a mean mu the variance is
    ((mu - 1/2) / t)^2, and since var = mu (1 - mu) - pD / 4 that fixes pD, pW = mu - pD/2 and
    pL = 1 - mu - pD/2. Search mu on a fine grid, then refine the best cell by golden section.
    (t = 0 is mu = 1/2, the closed form above.)"""
    if t == 0.0:
        return mle_mean_trinomial(counts, 0.5)
    weights = np.array(regular(counts))
    weights = weights / weights.sum()

    def probs(mu: float) -> tuple[float, float, float]:
        p_d = 4.0 * (mu * (1.0 - mu) - ((mu - 0.5) / t) ** 2)
        return 1.0 - mu - p_d / 2.0, p_d, mu - p_d / 2.0

    def loglik(mu: float) -> float:
        p = probs(mu)
        if min(p) <= 0.0:
            return -math.inf
        return float(sum(w * math.log(q) for w, q in zip(weights, p, strict=True)))

    grid = np.linspace(0.5, 1.0, 200_001) if t > 0 else np.linspace(0.0, 0.5, 200_001)
    mu = grid[1:-1]
    p_d = 4.0 * (mu * (1.0 - mu) - ((mu - 0.5) / t) ** 2)
    p = np.stack([1.0 - mu - p_d / 2.0, p_d, mu - p_d / 2.0])
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where((p > 0).all(axis=0), (weights[:, None] * np.log(p)).sum(axis=0), -np.inf)
    best = int(np.argmax(values))
    step = float(grid[1] - grid[0])
    lo = max(float(mu[best]) - 2.0 * step, float(grid[0]))
    hi = min(float(mu[best]) + 2.0 * step, float(grid[-1]))
    return list(probs(_golden_max(loglik, lo, hi)))


def llr_from(counts: tuple[int, ...], p0: list[float], p1: list[float]) -> float:
    return sum(
        n * (math.log(b) - math.log(a)) for n, a, b in zip(regular(counts), p0, p1, strict=True)
    )


trinomials = st.tuples(*[st.integers(0, 3000)] * 3).filter(lambda c: sum(c) > 0)
pentanomials = st.tuples(*[st.integers(0, 3000)] * 5).filter(lambda c: sum(c) > 0)
elo_pairs = st.tuples(st.floats(-60.0, 60.0), st.floats(-60.0, 60.0)).filter(
    lambda e: abs(e[0] - e[1]) > 0.1
)


@settings(max_examples=60, deadline=None)
@given(counts=trinomials, elos=elo_pairs)
def test_logistic_trinomial_llr_matches_a_search_along_the_constraint(
    counts: tuple[int, int, int], elos: tuple[float, float]
) -> None:
    elo0, elo1 = elos
    p0 = mle_mean_trinomial(counts, logistic(elo0))
    p1 = mle_mean_trinomial(counts, logistic(elo1))
    _, _, phat = sprt_stats._distribution(np.array([counts], dtype=float))
    mine = sprt_stats._mle_expected(phat, np.array([0.0, 0.5, 1.0]), logistic(elo0))[0]
    assert mine == pytest.approx(p0, rel=1e-9, abs=1e-12)
    assert llr(counts, elo0, elo1, "logistic") == pytest.approx(
        llr_from(counts, p0, p1), rel=1e-8, abs=1e-8
    )


NORMALIZED_TRINOMIAL_CASES = [
    ((1200, 2500, 1300), 0.0, 5.0),
    ((1200, 2500, 1300), -3.0, 2.0),
    ((40, 30, 10), 0.0, 10.0),  # data far below both hypotheses
    ((5, 3, 80), -20.0, 40.0),  # far above
    ((300, 0, 400), 0.0, 5.0),  # no draws (regularized)
    ((0, 16700, 0), 0.0, 5.0),  # draws only: the data satisfy H0 exactly
    ((0, 0, 16700), 0.0, 5.0),  # wins only
    ((7, 0, 0), -10.0, 10.0),  # losses only, few games
    ((36027, 68692, 36433), 0.0, 2.0),
    ((500, 200, 800), 150.0, 300.0),  # hypotheses of hundreds of nElo (continuation)
]


@pytest.mark.parametrize(("counts", "elo0", "elo1"), NORMALIZED_TRINOMIAL_CASES)
def test_normalized_trinomial_llr_matches_a_grid_search(
    counts: tuple[int, int, int], elo0: float, elo1: float
) -> None:
    p0 = mle_t_trinomial(counts, elo0 / NELO_PER_T)
    p1 = mle_t_trinomial(counts, elo1 / NELO_PER_T)
    _, _, phat = sprt_stats._distribution(np.array([counts], dtype=float))
    for elo, brute in ((elo0, p0), (elo1, p1)):
        mine = sprt_stats._mle_t_value(phat, np.array([0.0, 0.5, 1.0]), elo / NELO_PER_T)[0]
        assert mine == pytest.approx(brute, abs=1e-6)
    assert llr(counts, elo0, elo1, "normalized") == pytest.approx(
        llr_from(counts, p0, p1), rel=1e-6, abs=1e-6
    )


def _kkt_residual(phat: np.ndarray, p: np.ndarray, grad: np.ndarray) -> float:
    """How far the log-likelihood's gradient phat / p is from the span of the constraints'
    gradients (sum p = 1: ones; the model's constraint: ``grad``), relative to its size."""
    basis = np.stack([np.ones_like(p), grad], axis=1)
    r = phat / p
    coef, *_ = np.linalg.lstsq(basis, r, rcond=None)
    return float(np.linalg.norm(basis @ coef - r) / np.linalg.norm(r))


@settings(max_examples=60, deadline=None)
@given(counts=pentanomials, elo=st.floats(-60.0, 60.0))
def test_pentanomial_maxima_satisfy_the_optimality_conditions(
    counts: tuple[int, ...], elo: float
) -> None:
    _, a, phat_rows = sprt_stats._distribution(np.array([counts], dtype=float))
    phat = phat_rows[0]
    # logistic: a linear constraint and a concave objective, so these conditions prove the
    # global maximum
    s = logistic(elo)
    p = sprt_stats._mle_expected(phat_rows, a, s)[0]
    # (one-sided data put the root next to a pole, where rounding x costs about 1e-11)
    assert p.sum() == pytest.approx(1.0, abs=1e-10)
    assert p @ a == pytest.approx(s, abs=1e-10)
    assert _kkt_residual(phat, p, a) < 1e-8
    # normalized: c(p) = mu - 1/2 - t sigma, dc/dp_i = a_i - t (a_i^2 - 2 mu a_i) / (2 sigma)
    t = math.sqrt(2.0) * elo / NELO_PER_T
    p = sprt_stats._mle_t_value(phat_rows, a, t)[0]
    mu = p @ a
    sigma = math.sqrt(p @ (a - mu) ** 2)
    assert p.sum() == pytest.approx(1.0, abs=1e-10)
    assert (mu - 0.5) / sigma == pytest.approx(t, abs=1e-8)
    assert _kkt_residual(phat, p, a - t * (a * a - 2.0 * mu * a) / (2.0 * sigma)) < 1e-7


def test_normalized_maximum_is_global_for_nearly_all_draws() -> None:
    """5,024 pairs, 5,000 of them drawn, and t = -0.144 (-35 nElo): the likelihood has two
    maxima on the constraint. The fixed point from the uniform distribution (fishtest's and
    fastchess's method) stops at the lesser one, mean log-likelihood -0.0537200 (p about
    0.016 on LL); a profile over the mean with the variance fixed by the constraint (an inner
    convex problem per mean, 4,000 means) reaches -0.0536386 (mass on LD instead). The module
    must find at least that."""
    _, a, phat = sprt_stats._distribution(np.array([[3, 10, 5000, 1, 10]], dtype=float))
    p = sprt_stats._mle_t_value(phat, a, -0.144)[0]
    mu = p @ a
    assert (mu - 0.5) / math.sqrt(p @ (a - mu) ** 2) == pytest.approx(-0.144, abs=1e-9)
    assert phat[0] @ np.log(p) >= -0.0536386
    assert p[1] > p[0]


# Published values: fastchess app/tests/sprt_test.cpp (Disservin/fastchess), which states them
# to 1% (doctest::Approx(...).epsilon(0.01)). fastchess's Stats(wins, losses, draws) and
# Stats(ll, ld, wl, dd, wd, ww) become our (L, D, W) and (LL, LD, WL + DD, WD, WW).
FASTCHESS_LLR = [
    ((36027, 68692, 36433), 0.0, 2.0, "normalized", 0.92),
    ((10650, 20431, 10871), -1.75, 0.25, "normalized", 2.30),
    ((21184, 40708, 21404), 0.5, 2.5, "logistic", -1.57),
    ((57030, 106593, 57433), 0.0, 2.0, "logistic", -2.59),
    ((365, 16618, 36029 + 200, 16974, 390), 0.0, 2.0, "normalized", 2.25),
    ((127, 4883, 10311 + 401, 5150, 104), -1.75, 0.25, "normalized", 3.01),
    ((223, 9863, 20279 + 1000, 10037, 246), 0.5, 2.5, "logistic", -3.07),
    ((871, 26175, 55003 + 980, 26678, 821), 0.0, 2.0, "logistic", -4.98),
]


@pytest.mark.parametrize(("counts", "elo0", "elo1", "model", "published"), FASTCHESS_LLR)
def test_llr_matches_fastchess_published_values(
    counts: tuple[int, ...], elo0: float, elo1: float, model: str, published: float
) -> None:
    assert llr(counts, elo0, elo1, model) == pytest.approx(published, rel=0.01)


def test_one_sided_data_follow_the_exact_maximum_not_fastchess_rounding() -> None:
    """fastchess's tests also list 16,700 draws (+2.97, nElo [0, 5]) and 104 pairs won 2-0
    (+2.94). Those are artefacts of its root tolerance near a pole: 16,700 draws have mean
    exactly 1/2, so H0's maximum is the data's own distribution and the LLR cannot be positive
    (Gibbs' inequality); the grid search above agrees with our -3.45. For 104 pairs won 2-0,
    both maxima put almost all mass on 0 and 2 (two points: t = (q - 1/2) / sqrt(q (1 - q))),
    so LLR ~ 104 ln(q1 / q0) with q0 = 1/2, q1 solving that for t1 = sqrt(2) 5 / (800 / ln 10)."""
    assert llr((0, 16700, 0), 0.0, 5.0) == pytest.approx(-3.4505, abs=1e-3)
    t1 = math.sqrt(2.0) * 5.0 / NELO_PER_T
    q1 = 0.5 + 0.5 * t1 / math.sqrt(1.0 + t1 * t1)  # (q - 1/2)^2 = t^2 q (1 - q)
    assert llr((0, 0, 0, 0, 104), 0.0, 5.0) == pytest.approx(104 * math.log(q1 / 0.5), rel=1e-3)


# fastchess app/tests/elo_test.cpp: (nElo, its +/-, Elo, its +/-, LOS) to 1% (LOS as printed).
FASTCHESS_ESTIMATES = [
    ((89, 123, 76), "trinomial", (-20.76, 40.13, None, None, 15.53)),
    ((96, 111, 136), "trinomial", (49.77, 36.77, 40.70, 30.43, 99.60)),
    ((356, 0, 34), "trinomial", (-508.44, 34.48, None, None, None)),
    ((34, 54, 31 + 32, 64, 75), "pentanomial", (57.94, 28.28, 55.58, 27.65, 100.00)),
    ((332, 433, 457 + 41, 333, 334), "pentanomial", (-9.17, 10.96, -8.64, 10.33, 5.05)),
    ((7895, 8757, 5485 + 200, 568, 9999), "pentanomial", (-19.01, 2.65, -21.04, 2.95, None)),
]


@pytest.mark.parametrize(("counts", "statistics", "published"), FASTCHESS_ESTIMATES)
def test_estimates_match_fastchess_published_values(
    counts: tuple[int, ...], statistics: str, published: tuple[float | None, ...]
) -> None:
    s = SprtSettings(0.0, 5.0, statistics=statistics)
    if statistics == "trinomial":
        state = evaluate(s, (0, 0, 0, 0, 0), counts)
    else:
        state = evaluate(s, counts, (0, 0, 0))
    nelo, nelo_err, elo, elo_err, los = published
    assert state.nelo.value == pytest.approx(nelo, rel=0.01)
    assert state.nelo.error == pytest.approx(nelo_err, rel=0.01)
    if elo is not None:
        assert state.elo.value == pytest.approx(elo, rel=0.01)
        assert state.elo.error == pytest.approx(elo_err, rel=0.01)
    if los is not None:
        assert 100.0 * state.los == pytest.approx(los, abs=0.006)


def test_estimates_by_hand() -> None:
    # 10 losses, 20 draws, 30 wins: mu = (20 / 2 + 30) / 60 = 2/3,
    # var = (10 (2/3)^2 + 20 (1/6)^2 + 30 (1/3)^2) / 60 = (40/9 + 5/9 + 30/9) / 60 = 5/36
    state = evaluate(SprtSettings(0, 5, statistics="trinomial"), (0,) * 5, (10, 20, 30))
    mu, var, n = 2.0 / 3.0, 5.0 / 36.0, 60
    se = math.sqrt(var / n)
    assert state.elo.value == pytest.approx(-400 * math.log10(1 / mu - 1), rel=1e-12)
    assert state.elo.low == pytest.approx(-400 * math.log10(1 / (mu - 1.959964 * se) - 1))
    assert state.elo.high == pytest.approx(-400 * math.log10(1 / (mu + 1.959964 * se) - 1))
    assert state.nelo.value == pytest.approx((mu - 0.5) / math.sqrt(var) * 800 / math.log(10))
    assert state.nelo.error == pytest.approx(1.959964 * 800 / math.log(10) / math.sqrt(n))
    assert state.los == pytest.approx(0.5 * math.erfc(-(mu - 0.5) / se / math.sqrt(2)))
    assert state.draw_ratio == pytest.approx(1 / 3)
    assert (state.games, state.pairs) == (60, 0)


# --- the approximation, symmetries and monotonicity -----------------------------------------


@pytest.mark.parametrize("model", ["normalized", "logistic"])
@pytest.mark.parametrize(
    ("counts", "elo0", "elo1"),
    [
        ((12, 90, 200, 95, 14), 0.0, 5.0),
        ((30, 100, 120, 105, 28), -2.0, 3.0),
        ((5, 40, 100, 45, 5), 0.0, 10.0),
        ((120, 250, 130), 0.0, 5.0),
        ((300, 500, 320), -3.0, 1.0),
    ],
)
def test_llr_and_the_closed_form_agree_for_large_n(
    counts: tuple[int, ...], elo0: float, elo1: float, model: str
) -> None:
    big = tuple(1000 * c for c in counts)
    exact = llr(big, elo0, elo1, model)
    assert abs(exact) > 1.0  # a meaningful comparison
    assert llr_approx(big, elo0, elo1, model) == pytest.approx(exact, rel=1e-2)
    # both grow with N at the same empirical distribution
    assert exact == pytest.approx(1000 * llr(counts, elo0, elo1, model), rel=1e-3)


@settings(max_examples=40, deadline=None)
@given(counts=st.one_of(trinomials, pentanomials), elos=elo_pairs)
def test_mirror_symmetry(counts: tuple[int, ...], elos: tuple[float, float]) -> None:
    """Reversing the counts (NEW and BASE change places: score a -> 1 - a) and negating both
    Elos is the same test; swapping elo0 and elo1 negates the LLR."""
    elo0, elo1 = elos
    mirrored = tuple(reversed(counts))
    for model in ("normalized", "logistic"):
        value = llr(counts, elo0, elo1, model)
        tol = 1e-7 * max(1.0, abs(value))
        assert llr(mirrored, -elo0, -elo1, model) == pytest.approx(value, abs=tol)
        assert llr(counts, elo1, elo0, model) == pytest.approx(-value, abs=tol)


@settings(max_examples=40, deadline=None)
@given(
    counts=st.tuples(*[st.integers(5, 2000)] * 3),
    elo0=st.floats(-20.0, 20.0),
    width=st.floats(1.0, 20.0),
)
def test_llr_grows_with_wins(counts: tuple[int, int, int], elo0: float, width: float) -> None:
    losses, draws, wins = counts
    for model in ("normalized", "logistic"):
        base = llr(counts, elo0, elo0 + width, model)
        assert llr((losses - 1, draws, wins + 1), elo0, elo0 + width, model) > base
        assert llr((losses, draws - 1, wins + 1), elo0, elo0 + width, model) > base
        assert llr((losses, draws, wins + 1), elo0, elo0 + width, model) > base


@settings(max_examples=30, deadline=None)
@given(half=st.tuples(*[st.integers(0, 500)] * 2), middle=st.integers(0, 500))
def test_data_exactly_at_h0_never_favour_h1(half: tuple[int, int], middle: int) -> None:
    """Mirror-symmetric counts have mean 1/2 (t = 0), so with elo0 = 0 H0's maximum is the data's
    own distribution and the LLR is at most 0 (Gibbs' inequality)."""
    counts = (*half, middle, *reversed(half))
    for model in ("normalized", "logistic"):
        assert llr(counts, 0.0, 5.0, model) <= 1e-9


def test_no_data_gives_zero_and_batch_matches_single() -> None:
    assert llr((0, 0, 0, 0, 0), 0.0, 5.0) == 0.0
    assert llr((0, 0, 0), 0.0, 5.0, "logistic") == 0.0
    rng = np.random.default_rng(7)
    rows = rng.integers(0, 400, size=(25, 5))
    rows[0] = 0
    rows[1] = (0, 0, 0, 0, 9)
    for model in ("normalized", "logistic"):
        batch = llr_batch(rows, -1.0, 4.0, model)
        single = [llr(tuple(int(c) for c in row), -1.0, 4.0, model) for row in rows]
        assert batch == pytest.approx(single, rel=1e-12, abs=1e-12)


def test_normalized_pentanomial_uses_the_pair_scaling() -> None:
    """t = sqrt(2) nElo / (800 / ln 10) for pairs: independent games (each L/D/W 0.3/0.4/0.3
    shifted by a small score edge) give the same nElo scale whether counted as pairs or games,
    so the two LLRs agree closely."""
    game = np.array([0.29, 0.4, 0.31])
    pair = np.convolve(game, game)
    tri = tuple(round(x) for x in 200_000 * game)
    penta = tuple(round(x) for x in 100_000 * pair)
    by_pairs = llr(penta, 0.0, 5.0, "normalized")
    by_games = llr(tri, 0.0, 5.0, "normalized")
    assert by_pairs == pytest.approx(by_games, rel=0.02)
    # without the sqrt(2) the pair LLR would be far off
    assert abs(by_pairs) > 10.0


# --- settings, outcomes, the state ----------------------------------------------------------


def test_bounds() -> None:
    lower, upper = SprtSettings(0, 5).bounds
    assert lower == pytest.approx(-2.944439, abs=1e-6)
    assert upper == pytest.approx(2.944439, abs=1e-6)
    lower, upper = SprtSettings(0, 5, alpha=0.01, beta=0.1).bounds
    assert lower == pytest.approx(math.log(0.1 / 0.99))
    assert upper == pytest.approx(math.log(0.9 / 0.01))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"elo0": 5, "elo1": 5}, "less than elo1"),
        ({"elo0": 5, "elo1": 0}, "less than elo1"),
        ({"elo0": 0, "elo1": 5, "alpha": 0}, "alpha must be between"),
        ({"elo0": 0, "elo1": 5, "beta": 1.0}, "beta must be between"),
        ({"elo0": 0, "elo1": 5, "alpha": 0.6, "beta": 0.5}, r"alpha \+ beta"),
        ({"elo0": 0, "elo1": 5, "model": "bayes"}, "model must be one of"),
        ({"elo0": 0, "elo1": 5, "statistics": "wdl"}, "statistics must be one of"),
        ({"elo0": math.nan, "elo1": 5}, "finite"),
        ({"elo0": True, "elo1": 5}, "number"),
        ({"elo0": "0", "elo1": 5}, "number"),
    ],
)
def test_bad_settings_are_refused_in_one_line(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(SprtError, match=message) as info:
        SprtSettings(**kwargs)  # type: ignore[arg-type]
    assert "\n" not in str(info.value)


def test_settings_round_trip() -> None:
    s = SprtSettings(-1, 3, alpha=0.1, beta=0.02, model="logistic", statistics="trinomial")
    assert SprtSettings.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    assert SprtSettings.from_dict({"elo0": 0, "elo1": 2}) == SprtSettings(0.0, 2.0)
    assert isinstance(SprtSettings(0, 2).elo0, float)
    with pytest.raises(SprtError, match="unknown SPRT setting"):
        SprtSettings.from_dict({"elo0": 0, "elo1": 2, "elo2": 3})
    with pytest.raises(SprtError, match="need elo1"):
        SprtSettings.from_dict({"elo0": 0})
    with pytest.raises(SprtError, match="model must be a string"):
        SprtSettings.from_dict({"elo0": 0, "elo1": 2, "model": 1})


def test_outcomes() -> None:
    assert [game_outcome(s) for s in (0, 0.5, 1.0)] == [0, 1, 2]
    table = {(a, b): pair_outcome(a, b) for a in (0.0, 0.5, 1.0) for b in (0.0, 0.5, 1.0)}
    assert table == {
        (0.0, 0.0): 0,
        (0.0, 0.5): 1,
        (0.5, 0.0): 1,
        (0.0, 1.0): 2,
        (1.0, 0.0): 2,
        (0.5, 0.5): 2,
        (0.5, 1.0): 3,
        (1.0, 0.5): 3,
        (1.0, 1.0): 4,
    }
    assert pair_outcome(0.1 + 0.2 + 0.2, 0.3 - 0.1 - 0.2) == 1  # float noise is rounded
    for bad in (0.3, -0.5, 1.5, math.nan):
        with pytest.raises(SprtError):
            game_outcome(bad)


def test_bad_counts_are_refused() -> None:
    with pytest.raises(SprtError, match="3 or 5 counts"):
        llr((1, 2, 3, 4), 0, 5)
    with pytest.raises(SprtError, match="non-negative integers"):
        llr((1, -2, 3), 0, 5)
    with pytest.raises(SprtError, match="non-negative integers"):
        llr((1, 2.5, 3), 0, 5)  # type: ignore[arg-type]
    with pytest.raises(SprtError, match="model"):
        llr((1, 2, 3), 0, 5, "bayes")
    with pytest.raises(SprtError, match="pentanomial needs 5"):
        evaluate(SprtSettings(0, 5), (1, 2, 3), (1, 2, 3))


def test_state_decides_and_reports() -> None:
    s = SprtSettings(0, 5)
    empty = evaluate(s, (0,) * 5, (0,) * 3)
    assert (empty.llr, empty.decision, empty.los, empty.draw_ratio) == (0.0, None, 0.5, 0.0)
    assert empty.elo.value == 0.0 and empty.elo.low < -1000 and empty.elo.high > 1000
    good = evaluate(s, (10, 150, 500, 300, 40), (500, 1000, 500))
    assert good.llr >= good.upper and good.decision == "H1"
    bad = evaluate(s, (40, 300, 500, 150, 10), (500, 1000, 500))
    assert bad.llr <= bad.lower and bad.decision == "H0"
    going = evaluate(s, (3, 40, 100, 45, 5), (80, 226, 80))
    assert going.decision is None and going.lower < going.llr < going.upper
    assert (going.pairs, going.games) == (193, 386)
    # the statistic chooses the counts the LLR reads
    tri = evaluate(SprtSettings(0, 5, statistics="trinomial"), (3, 40, 100, 45, 5), (80, 226, 80))
    assert tri.llr == pytest.approx(llr((80, 226, 80), 0, 5))

    data = json.loads(json.dumps(good.to_dict()))
    assert data["decision"] == "H1" and data["pentanomial"] == [10, 150, 500, 300, 40]
    assert data["settings"] == s.to_dict() and data["pairs"] == 1000 and data["games"] == 2000
    assert set(data) >= {"llr", "lower", "upper", "elo", "nelo", "los", "draw_ratio"}
    assert data["elo"]["low"] < data["elo"]["value"] < data["elo"]["high"]

    line = going.line()
    assert "\n" not in line and len(line) < 160
    for part in ("LLR", "(-2.94, 2.94)", "[0.00, 5.00]", "nElo", "LOS", "Ptnml(0-2) [3, 40, 100"):
        assert part in line
    assert "H1 accepted" in good.line() and "H0 accepted" in bad.line()
    assert "LDW [80, 226, 80]" in tri.line()


# --- simulated tests ------------------------------------------------------------------------


def pair_distribution(score: float, draw: float = 0.4, edge: float = 0.05) -> np.ndarray:
    """NEW's pair outcome probabilities (0..4 half points) when its two games are independent
    with expected scores score + edge and score - edge (the first move's advantage) and draw
    ratio ``draw`` each."""

    def game(s: float) -> np.ndarray:
        return np.array([1.0 - s - draw / 2.0, draw, s - draw / 2.0])

    return np.convolve(game(score + edge), game(score - edge))  # type: ignore[no-any-return]


def pair_nelo(probs: np.ndarray) -> float:
    """The normalized Elo the pentanomial model assigns to a pair distribution."""
    a = np.arange(5) / 4.0
    mu = probs @ a
    return float((mu - 0.5) / math.sqrt(2.0 * probs @ (a - mu) ** 2) * NELO_PER_T)


def pairs_with_nelo(nelo: float) -> np.ndarray:
    lo, hi = 0.3, 0.7
    for _ in range(100):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if pair_nelo(pair_distribution(mid)) < nelo else (lo, mid)
    return pair_distribution((lo + hi) / 2.0)


def simulate(
    settings: SprtSettings, probs: np.ndarray, tests: int, seed: int, chunk: int = 16
) -> tuple[float, float]:
    """Run ``tests`` SPRTs on outcomes drawn from ``probs`` (pairs, or games for trinomial
    counts), the exact LLR after every one: (fraction accepting H1, mean outcomes to a
    decision). The tests advance together ``chunk`` outcomes at a time, each LLR of the chunk
    in one vectorized call; a test stops at its first crossing of a bound."""
    rng = np.random.default_rng(seed)
    k = len(probs)
    lower, upper = settings.bounds
    counts = np.zeros((tests, k))
    accept_h1 = np.zeros(tests, dtype=bool)
    length = np.zeros(tests)
    live = np.arange(tests)
    played = 0
    while live.size:
        draws = rng.choice(k, size=(live.size, chunk), p=probs)
        path = (draws[..., None] == np.arange(k)).cumsum(axis=1) + counts[live][:, None, :]
        unique, inverse = np.unique(path.reshape(-1, k), axis=0, return_inverse=True)
        values = llr_batch(unique, settings.elo0, settings.elo1, settings.model)
        values = values[inverse.ravel()].reshape(live.size, chunk)
        crossed = (values >= upper) | (values <= lower)
        hit = crossed.any(axis=1)
        first = crossed.argmax(axis=1)[hit]
        accept_h1[live[hit]] = values[hit, first] >= upper
        length[live[hit]] = played + first + 1
        counts[live] = path[:, -1, :]
        live = live[~hit]
        played += chunk
        assert played < 5000, "simulated SPRTs did not end"
    return float(accept_h1.mean()), float(length.mean())


def test_simulated_normalized_pentanomial_sprts_keep_their_error_rates() -> None:
    """alpha = beta = 0.1 and nElo [0, 60]: a few dozen pairs a test. The SPRT's error rates
    are at most about alpha and beta (the overshoot of the bounds makes them smaller), and at
    the midpoint the test is a coin flip. Tolerances are 3 binomial standard deviations."""
    s = SprtSettings(0.0, 60.0, alpha=0.1, beta=0.1)
    n = 300
    tol = 3.0 * math.sqrt(0.1 * 0.9 / n)
    at_h0 = pairs_with_nelo(0.0)
    at_h1 = pairs_with_nelo(60.0)
    assert pair_nelo(at_h1) == pytest.approx(60.0, abs=1e-6)
    false_pos, _ = simulate(s, at_h0, n, seed=1)
    true_pos, length = simulate(s, at_h1, n, seed=2)
    assert 0.1 / 4.0 <= false_pos <= 0.1 + tol
    assert 0.9 - tol <= true_pos <= 1.0 - 0.1 / 4.0
    assert 30 < length < 120
    middle, _ = simulate(s, pairs_with_nelo(30.0), n, seed=3)
    assert middle == pytest.approx(0.5, abs=3.0 * math.sqrt(0.25 / n))


def test_simulated_logistic_trinomial_sprts_keep_their_error_rates() -> None:
    s = SprtSettings(0.0, 50.0, alpha=0.1, beta=0.1, model="logistic", statistics="trinomial")
    n = 300
    tol = 3.0 * math.sqrt(0.1 * 0.9 / n)

    def games(elo: float) -> np.ndarray:
        score = logistic(elo)
        return np.array([1.0 - score - 0.2, 0.4, score - 0.2])

    false_pos, _ = simulate(s, games(0.0), n, seed=4)
    true_pos, _ = simulate(s, games(50.0), n, seed=5)
    assert 0.1 / 4.0 <= false_pos <= 0.1 + tol
    assert 0.9 - tol <= true_pos <= 1.0 - 0.1 / 4.0
    middle, _ = simulate(s, games(25.0), n, seed=6)
    assert middle == pytest.approx(0.5, abs=3.0 * math.sqrt(0.25 / n))


def test_hypotheses_near_zero_nelo_are_continuous() -> None:
    """|t| below 1e-4 goes by a fixed point (the scan's sign changes drown in rounding there:
    elo0 = -1e-5 nElo once gave NaN); the two methods agree to rounding where both work, and
    the LLR moves smoothly through elo0 = 0."""
    rng = np.random.default_rng(3)
    a3, a5 = np.arange(3) / 2.0, np.arange(5) / 4.0
    for k, a in ((3, a3), (5, a5)):
        for _ in range(10):
            _, _, phat = sprt_stats._distribution(rng.integers(0, 500, size=(1, k)).astype(float))
            for t in (1e-6, 1e-5, 1e-3, -1e-3, 1e-2):
                fixed = sprt_stats._mle_small_t(phat, a, t)[0]
                assert fixed == pytest.approx(sprt_stats._mle_t_scan(phat, a, t)[0], abs=1e-12)
    base = llr((5, 5, 8), 0.0, 1.0)
    for shift in (1e-12, 1e-9, 2.9e-8, 1e-7, 1e-5, 1e-4):
        for sign in (1.0, -1.0):
            value = llr((5, 5, 8), sign * shift, 1.0 + sign * shift)
            assert math.isfinite(value) and value == pytest.approx(base, abs=1e-3)
