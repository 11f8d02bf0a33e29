"""The ladder's model and its rule for choosing games (arena/ratings/matchmaking.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena.arena.ratings import GameResult, fit_ml
from bot_arena.arena.ratings import matchmaking as mm
from bot_arena.arena.ratings.matchmaking import (
    CORRECTION_LIMIT,
    ELO_PER_UNIT,
    REACH,
    RELATIVE_ERROR,
    BatchGains,
    LadderModel,
    _candidates,
    _ranked,
    choose_pairs,
    pair_gains,
    priorities,
)


def _model(n: int, results: list[tuple[int, int, float]], sd: float = 1000.0) -> LadderModel:
    model = LadderModel(n, prior_elo_sd=sd)
    model.record_all(results)
    model.fit()
    return model


def _games(n: int, count: int, seed: int) -> list[tuple[int, int, float]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        a, b = (int(x) for x in rng.choice(n, 2, replace=False))
        out.append((a, b, float(rng.integers(0, 3)) / 2))
    return out


def test_the_fit_is_the_leaderboards_maximum_likelihood_fit() -> None:
    """With a vanishing prior, the strengths are the leaderboard's ML fit (Bradley-Terry on
    scores, docs/ratings.md): the same Elo differences to a tiny fraction of an Elo."""
    results = _games(6, 400, seed=3)
    model = _model(6, results, sd=1e7)
    names = [f"b{i}" for i in range(6)]
    games = []
    for a, b, score in results:
        ranks = (1, 1) if score == 0.5 else (1, 2) if score == 1.0 else (2, 1)
        games.append(GameResult((names[a], names[b]), ranks))
    table = fit_ml(games, prior=0.0).elo()
    ours = model.elo()
    for i, j in itertools.combinations(range(6), 2):
        assert ours[i] - ours[j] == pytest.approx(table[names[i]] - table[names[j]], abs=1e-3)


def test_a_known_two_bot_fit() -> None:
    """3 wins and 1 loss: expected score 0.75 at the optimum (no prior to speak of), so
    the difference is 400 log10(3) Elo, and the variance of the difference is 1 / (n p q)."""
    model = _model(2, [(0, 1, 1.0)] * 3 + [(0, 1, 0.0)], sd=1e7)
    diff = model.elo()[0] - model.elo()[1]
    assert diff == pytest.approx(400 * np.log10(3), abs=1e-6)
    var = model.cov[0, 0] + model.cov[1, 1] - 2 * model.cov[0, 1]
    assert var == pytest.approx(1 / (4 * 0.75 * 0.25), rel=1e-6)


def test_a_newcomer_has_the_prior_and_spans_the_field() -> None:
    model = _model(5, _games(5, 300, seed=1))
    new = model.add_bot()
    assert model.theta[new] == 0.0
    assert model.cov[new, new] == pytest.approx((1000.0 / ELO_PER_UNIT) ** 2)
    interval = model.rank_intervals()[new]
    assert (interval.best, interval.worst) == (1, 6)


def test_rank_intervals_narrow_with_games_and_hold_the_rank() -> None:
    rng = np.random.default_rng(5)
    strength = np.array([0.0, 300.0, 600.0, 900.0])
    results = []
    for _ in range(2000):
        a, b = (int(x) for x in rng.choice(4, 2, replace=False))
        p = 1 / (1 + 10 ** ((strength[b] - strength[a]) / 400))
        results.append((a, b, float(rng.random() < p)))
    model = _model(4, results)
    intervals = model.rank_intervals()
    assert [iv.rank for iv in intervals] == [4, 3, 2, 1]
    assert all(iv.best == iv.rank == iv.worst for iv in intervals)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 12), count=st.integers(0, 60))
def test_one_bots_rank_interval_is_its_entry_of_all(seed: int, n: int, count: int) -> None:
    """``rank_interval(i)`` (O(n), what a simulation checks after every batch) is
    ``rank_intervals()[i]``, ties in rating included (no games: everyone at 0)."""
    model = _model(n, _games(n, count, seed) if count else [])
    intervals = model.rank_intervals()
    assert [model.rank_interval(i) for i in range(n)] == intervals


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 9), count=st.integers(5, 80))
def test_a_pairs_gain_is_the_shrink_an_explicit_refit_gives(seed: int, n: int, count: int) -> None:
    """Sherman-Morrison against an explicit inverse: add one game's information ``p q`` along
    ``e_a - e_b`` to the precision, invert, and measure the weighted shrink of the variances of
    the contrasts of bots up to ``REACH`` places apart directly (with priorities: each
    contrast's weight times the larger priority of its two bots)."""
    model = _model(n, _games(n, count, seed))
    ranked = _ranked(model, range(n))
    a, b = _candidates(ranked, n)
    priority = priorities(model, range(n))
    gains = pair_gains(model, ranked, a, b, priority)
    precision = np.linalg.inv(model.cov)
    rows = [(ranked[k], ranked[k + step]) for step in range(1, REACH + 1) for k in range(n - step)]
    contrasts = np.zeros((len(rows), n))
    for row, (upper, lower) in enumerate(rows):
        contrasts[row, upper], contrasts[row, lower] = 1.0, -1.0
    before = np.einsum("ki,ij,kj->k", contrasts, model.cov, contrasts)
    gap = contrasts @ model.theta
    weight = np.exp(-0.5 * gap**2 / before) / before
    weight *= [max(priority[upper], priority[lower]) for upper, lower in rows]
    for x, y, gain in zip(a, b, gains, strict=True):
        p = 1 / (1 + np.exp(model.theta[y] - model.theta[x]))
        u = np.zeros(n)
        u[x], u[y] = 1.0, -1.0
        after_cov = np.linalg.inv(precision + p * (1 - p) * np.outer(u, u))
        after = np.einsum("ki,ij,kj->k", contrasts, after_cov, contrasts)
        assert gain == pytest.approx(float(weight @ (before - after)), rel=1e-6, abs=1e-12)


def test_candidates_are_the_pairs_within_the_window() -> None:
    model = _model(8, _games(8, 200, seed=2))
    ranked = _ranked(model, range(8))
    a, b = _candidates(ranked, 2)
    place = {int(bot): pos for pos, bot in enumerate(ranked)}
    expected = {
        (min(x, y), max(x, y))
        for x, y in itertools.combinations(range(8), 2)
        if abs(place[x] - place[y]) <= 2
    }
    assert set(zip(a.tolist(), b.tolist(), strict=True)) == expected
    assert len(a) == len(expected)


def test_a_newcomer_is_chosen_first_and_choices_repeat() -> None:
    model = _model(10, _games(10, 600, seed=4))
    new = model.add_bot()
    pairs = choose_pairs(model, range(11), 4)
    assert new in pairs[0]
    assert sum(new in pair for pair in pairs) >= 2
    assert choose_pairs(model, range(11), 4) == pairs  # the same totals, the same pairs
    assert model.cov[new, new] == pytest.approx((1000.0 / ELO_PER_UNIT) ** 2)  # left as it was


def test_retired_bots_get_no_games_and_one_bot_gets_none() -> None:
    model = _model(6, _games(6, 300, seed=6))
    pairs = choose_pairs(model, [0, 2, 3], 10)
    assert len(pairs) == 10 and all(set(pair) <= {0, 2, 3} for pair in pairs)
    assert choose_pairs(model, [4], 3) == []


def test_the_floor_feeds_a_starving_bot_first() -> None:
    """Bot 5 has a settled rank far below the rest (its games carry little information) and
    few games: below half the field's mean, it is paired first all the same."""
    results = _games(5, 400, seed=7) + [(5, i % 5, 0.0) for i in range(40)]
    model = _model(6, results)
    played = model.games.sum(axis=1)
    assert played[5] < 0.5 * played.mean()
    assert 5 in choose_pairs(model, range(6), 1)[0]
    assert all(5 not in pair for pair in choose_pairs(model, range(6), 3, floor=0.0))


def _hessian(model: LadderModel, info: np.ndarray) -> np.ndarray:
    precision = (ELO_PER_UNIT / 1000.0) ** 2  # the prior's, as _model makes it
    return np.diag(info.sum(axis=1) + precision) - info


def _true_info(model: LadderModel) -> np.ndarray:
    p = 1 / (1 + np.exp(model.theta[None, :] - model.theta[:, None]))
    return model.games * p * (1 - p)


def _fresh_fit(model: LadderModel) -> LadderModel:
    fresh = LadderModel(model.size)
    fresh.games, fresh.points = model.games.copy(), model.points.copy()
    fresh.fit()
    return fresh


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_update_follows_the_full_fit_and_a_refit_equals_it(seed: int) -> None:
    """Batches of games applied by ``update`` (quasi-Newton steps, Woodbury corrections):
    ``cov`` stays exactly the inverse of the information it was made with, every pair's weight
    within ``RELATIVE_ERROR`` of its value at the fitted strengths, the strengths the full
    fit's; and ``fit`` then gives a fresh model's full fit to 1e-9."""
    rng = np.random.default_rng(seed)
    true = rng.uniform(-2.0, 2.0, 12)
    model = _model(12, _games(12, 300, seed))
    fits = model.full_fits
    for _ in range(20):
        for _ in range(8):
            a, b = (int(x) for x in rng.choice(12, 2, replace=False))
            model.record(a, b, float(rng.random() < 1 / (1 + np.exp(true[b] - true[a]))))
        model.update()
        fresh = _fresh_fit(model)
        assert np.max(np.abs(model.theta - fresh.theta)) < 1e-6
        np.testing.assert_allclose(
            model.cov, np.linalg.inv(_hessian(model, model.used)), rtol=1e-9, atol=1e-12
        )
        truth = _true_info(model)
        assert np.all(np.abs(model.used - truth) <= RELATIVE_ERROR * model.used + 1e-12)
        # the covariance within that factor of the full fit's, for every contrast
        for u in np.eye(12)[:-1] - np.eye(12)[1:]:
            ratio = (u @ model.cov @ u) / (u @ fresh.cov @ u)
            assert 1 / (1 + RELATIVE_ERROR) - 1e-9 <= ratio <= 1 / (1 - RELATIVE_ERROR) + 1e-9
    assert model.full_fits == fits  # no full refit was needed
    model.fit()
    fresh = _fresh_fit(model)
    np.testing.assert_allclose(model.theta, fresh.theta, rtol=0, atol=1e-9)
    np.testing.assert_allclose(model.cov, fresh.cov, rtol=1e-9, atol=1e-12)


def test_update_refits_in_full_when_too_many_pairs_changed() -> None:
    """More than ``CORRECTION_LIMIT`` pairs with new games at once: a full refit, said so."""
    n = 16
    model = _model(n, _games(n, 400, 8))
    pairs = list(itertools.combinations(range(n), 2))[: CORRECTION_LIMIT + 1]
    for a, b in pairs:
        model.record(a, b, 1.0)
    fits = model.full_fits
    assert model.update() is True
    assert model.full_fits == fits + 1
    fresh = _fresh_fit(model)
    np.testing.assert_allclose(model.theta, fresh.theta, rtol=0, atol=1e-9)
    assert model.update() is False  # nothing new: nothing to do


def test_a_newcomer_is_followed_without_a_refit() -> None:
    """A newcomer's first games move it far; ``update`` follows it with steps and corrections
    of its own pairs only, and ends on the full fit."""
    model = _model(10, _games(10, 500, 9))
    new = model.add_bot()
    fits = model.full_fits
    for opponent in range(10):
        model.record(new, opponent, 1.0 if opponent < 7 else 0.0)
    assert model.update() is False
    assert model.full_fits == fits
    assert np.max(np.abs(model.theta - _fresh_fit(model).theta)) < 1e-6


def _explicit_gains(
    model: LadderModel,
    batch: BatchGains,
    taken: list[int],
) -> np.ndarray:
    """Every candidate's gain from explicit inverses: the covariance re-inverted with the
    taken pairs' virtual games, the contrasts' weights those of the batch's start."""
    ranked = batch.ranked
    cov = model.cov[np.ix_(ranked, ranked)]
    m = len(ranked)
    theta = model.theta[ranked]
    precision = np.linalg.inv(cov)
    for index in taken:
        u = np.zeros(m)
        u[batch.i[index]], u[batch.j[index]] = 1.0, -1.0
        precision = precision + float(batch.w[index]) * np.outer(u, u)
    now = np.linalg.inv(precision)
    q = np.zeros((m, m))
    for step, weight in batch.steps:
        for k in range(m - step):
            c = np.zeros(m)
            c[k], c[k + step] = 1.0, -1.0
            q += weight[k] * np.outer(c, c)
    out = []
    for i, j in zip(batch.i, batch.j, strict=True):
        p = 1 / (1 + np.exp(theta[j] - theta[i]))
        w = p * (1 - p)
        u = np.zeros(m)
        u[i], u[j] = 1.0, -1.0
        after = np.linalg.inv(precision + w * np.outer(u, u))
        out.append(np.trace(q @ (now - after)))  # sum_k weight_k (var_k now - var_k after)
    return np.array(out)


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(3, 24),
    count=st.integers(5, 120),
    takes=st.lists(st.integers(0, 10_000), max_size=6),
)
def test_a_batchs_incremental_gains_equal_explicit_reinversion(
    seed: int, n: int, count: int, takes: list[int]
) -> None:
    """The band of ``P Q P`` (blocks of 4 rows here, so that blocks meet) and the rank-one
    updates after each virtual game give every candidate's gain as explicit inverses do,
    to a relative 1e-7 of the largest gain."""
    model = _model(n, _games(n, count, seed))
    active = [*range(0, n, 2), 1] if n > 4 else list(range(n))
    ranked = _ranked(model, active)
    saved = mm.BLOCK, mm.CHUNK
    mm.BLOCK, mm.CHUNK = 4, 3
    try:
        batch = BatchGains(model, ranked, 5, priorities(model, active))
    finally:
        mm.BLOCK, mm.CHUNK = saved
    taken: list[int] = []
    for pick in [*takes, None]:
        gains = batch.gains()
        expected = _explicit_gains(model, batch, taken)
        scale = max(float(np.abs(expected).max()), 1e-300)
        assert np.max(np.abs(gains - expected)) <= 1e-7 * scale
        if pick is not None:
            index = pick % len(gains)
            batch.take(index)
            taken.append(index)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 30), count=st.integers(20, 200))
def test_a_batchs_first_pair_is_the_reference_rules_best(seed: int, n: int, count: int) -> None:
    """The first pair of a batch (no floor) is the candidate of largest gain as ``pair_gains``,
    the whole-covariance reference, computes it."""
    model = _model(n, _games(n, count, seed))
    ranked = _ranked(model, range(n))
    a, b = _candidates(ranked, mm.WINDOW)
    gains = pair_gains(model, ranked, a, b, priorities(model, range(n)))
    best = int(np.argmax(gains))
    first = choose_pairs(model, range(n), 3, floor=0.0, lag=0.0)[0]
    chosen = int(np.flatnonzero((a == first[0]) & (b == first[1]))[0])
    assert gains[chosen] >= gains[best] * (1 - 1e-9)


def _graded(n: int, count: int, seed: int) -> list[tuple[int, int, float]]:
    """Games between bots 600 Elo apart from first to last, won as the strengths say."""
    rng = np.random.default_rng(seed)
    elo = np.linspace(0.0, 600.0, n)
    out = []
    for _ in range(count):
        a, b = (int(x) for x in rng.choice(n, 2, replace=False))
        p = 1.0 / (1.0 + 10.0 ** ((elo[b] - elo[a]) / 400.0))
        out.append((a, b, 1.0 if rng.random() < p else 0.0))
    return out


def test_half_of_each_batch_seats_the_bots_that_lag() -> None:
    """In a field that has played (mean games >= MATURE_GAMES), the bots with fewer games than
    the mean whose rank is not yet within +-SETTLED_PLACES lag: the first half of a batch seats
    them in turn, fewest games first (a newcomer first), each with its best opponent."""
    results = _graded(12, 1500, seed=4)
    few = [i for i, r in enumerate(results) if 6 in r[:2]][:20]  # bot 6: 20 games only
    model = _model(12, [r for i, r in enumerate(results) if 6 not in r[:2] or i in few])
    new = model.add_bot()
    model.record_all([(new, 5, 1.0), (new, 6, 0.0), (new, 7, 0.5)])
    model.fit()
    ranked = _ranked(model, range(13))
    behind = mm.lagging(model, ranked)
    played = model.games.sum(axis=1)
    assert behind[:2] == [new, 6]
    assert mm.lagging(model, ranked, 1) == [new]  # the first ones only, the same
    assert [played[i] for i in behind] == sorted(played[i] for i in behind)
    for bot in behind:
        iv = model.rank_interval(bot)
        assert played[bot] < played.mean() and iv.worst - iv.best > 2 * mm.SETTLED_PLACES
    pairs = choose_pairs(model, range(13), 8, floor=0.0)
    turns = [behind[k % len(behind)] for k in range(4)]
    assert all(bot in pair for bot, pair in zip(turns, pairs, strict=False))
    assert choose_pairs(model, range(13), 8, floor=0.0) == pairs  # the same totals, the same pairs
    without = choose_pairs(model, range(13), 8, floor=0.0, lag=0.0)  # the gains alone
    assert not all(bot in pair for bot, pair in zip(turns, without, strict=False))


def test_no_bot_lags_in_a_young_field_or_once_its_rank_is_placed() -> None:
    young = _model(12, _graded(12, 60, seed=5))  # 10 games a bot on average
    assert mm.lagging(young, _ranked(young, range(12))) == []
    # a bot behind in games whose rank is certain (it lost every game, to everyone) does not lag
    results = _graded(8, 1200, seed=6) + [(8, i % 8, 0.0) for i in range(120)]
    model = _model(9, results, sd=400.0)
    played = model.games.sum(axis=1)
    assert played[8] < played[:8].mean()
    assert model.rank_interval(8).best >= 9 - mm.SETTLED_PLACES
    assert 8 not in mm.lagging(model, _ranked(model, range(9)))


def test_several_rank_intervals_at_once_are_each_ones() -> None:
    model = _model(9, _games(9, 500, seed=8))
    model.theta[3] = model.theta[5]  # a tie: broken by index, as in the whole table
    assert model.rank_intervals_of(range(9)) == model.rank_intervals()
    assert model.rank_intervals_of([4, 1]) == [model.rank_interval(4), model.rank_interval(1)]
