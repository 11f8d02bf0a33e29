"""The one score <-> Elo conversion (``arena/ratings/elo.py``): pinned values, the round trip,
and the fits that call it agree with it."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot_arena.arena.ratings import GameResult, fit_sequential
from bot_arena.arena.ratings.elo import ELO_PER_NAT, NELO_PER_T, elo_diff, expected_score
from bot_arena.arena.ratings.sprt_stats import SprtSettings, evaluate


def test_pinned_values() -> None:
    assert elo_diff(0.5) == 0.0
    assert elo_diff(0.75) == pytest.approx(190.848501, abs=1e-6)
    assert elo_diff(0.25) == pytest.approx(-190.848501, abs=1e-6)
    assert elo_diff(0.9) == pytest.approx(381.697003, abs=1e-6)
    assert expected_score(0.0) == 0.5
    assert expected_score(400.0) == pytest.approx(10 / 11, abs=1e-15)
    assert expected_score(-400.0) == pytest.approx(1 / 11, abs=1e-15)
    assert abs(ELO_PER_NAT - 173.7177927613007) < 1e-12
    assert abs(NELO_PER_T - 347.4355855226014) < 1e-12


def test_far_beyond_the_scale_the_score_is_zero_or_one_not_an_overflow() -> None:
    assert expected_score(-200_000.0) == 0.0
    assert expected_score(200_000.0) == 1.0


@given(st.floats(min_value=-2000.0, max_value=2000.0))
def test_round_trip_from_elo(diff: float) -> None:
    assert elo_diff(expected_score(diff)) == pytest.approx(diff, abs=1e-7)


@given(st.floats(min_value=1e-6, max_value=1.0 - 1e-6))
def test_round_trip_from_score(score: float) -> None:
    assert expected_score(elo_diff(score)) == pytest.approx(score, rel=1e-9, abs=1e-12)


@given(st.floats(min_value=-3000.0, max_value=3000.0))
def test_symmetric_and_in_natural_units_the_logistic(diff: float) -> None:
    assert expected_score(diff) + expected_score(-diff) == pytest.approx(1.0, abs=1e-12)
    logistic = 1.0 / (1.0 + math.exp(-diff / ELO_PER_NAT))
    assert expected_score(diff) == pytest.approx(logistic, rel=1e-9, abs=1e-300)


def test_sequential_elo_updates_by_the_expected_score() -> None:
    # b starts 100 above a (after one game a lost): the second game's update uses the curve
    results = [GameResult.two_player("a", "b", 0.0), GameResult.two_player("a", "b", 1.0)]
    table = fit_sequential(results, k=32.0, initial=1500.0)
    first = 32.0 * (0.0 - expected_score(0.0))
    a = 1500.0 + first
    b = 1500.0 - first
    second = 32.0 * (1.0 - expected_score(a - b))
    assert table.row("a").elo == pytest.approx(a + second, abs=1e-12)
    assert table.row("b").elo == pytest.approx(b - second, abs=1e-12)


def test_the_sprt_elo_estimate_is_the_curve_inverted() -> None:
    state = evaluate(SprtSettings(0.0, 5.0, statistics="trinomial"), (0, 0, 0, 0, 0), (10, 20, 30))
    mu = (20 * 0.5 + 30 * 1.0) / 60
    assert state.elo.value == pytest.approx(elo_diff(mu), abs=1e-9)
