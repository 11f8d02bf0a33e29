"""Sequential Elo against numbers worked out by hand."""

from __future__ import annotations

import math

import pytest

from bot_arena.arena.ratings import GameResult, fit_sequential

# E_a = 1 / (1 + 10^((R_b - R_a) / 400));  R_a += K (S_a - E_a);  R_b -= K (S_a - E_a)


def test_hand_computed_sequence() -> None:
    games = [
        GameResult.two_player("A", "B", 1.0),  # A beats B
        GameResult.two_player("B", "C", 0.5),  # B draws C
        GameResult.two_player("C", "A", 1.0),  # C beats A
    ]
    table = fit_sequential(games, k=16.0, initial=1500.0)
    # 1. equal ratings: E_A = 0.5, A = 1500 + 16 * 0.5 = 1508, B = 1492
    # 2. E_B = 1 / (1 + 10^(8/400)) = 1 / (1 + 1.0471285) = 0.4884889;
    #    B += 16 * (0.5 - 0.4884889) = 0.1841743 -> B = 1492.18417, C = 1499.81583
    # 3. E_C = 1 / (1 + 10^((1508 - 1499.81583)/400)) = 1 / (1 + 1.0482389) = 0.4882248;
    #    C += 16 * (1 - 0.4882248) = 8.1884027 -> C = 1508.00424, A = 1499.81160
    assert table.row("A").elo == pytest.approx(1499.81160, abs=1e-4)
    assert table.row("B").elo == pytest.approx(1492.18417, abs=1e-4)
    assert table.row("C").elo == pytest.approx(1508.00424, abs=1e-4)
    assert [r.bot for r in table.rows] == ["C", "A", "B"]
    assert all(r.error is None and r.los_next is None for r in table.rows)
    assert any("order-dependent" in n for n in table.notes)
    # the sum of ratings is conserved by every two-player update
    assert sum(r.elo for r in table.rows) == pytest.approx(4500.0)
    # an anchor shifts the pool, differences stay
    anchored = fit_sequential(games, anchor=("B", 1000.0))
    assert anchored.row("B").elo == 1000.0
    assert anchored.row("C").elo - 1000.0 == pytest.approx(1508.00424 - 1492.18417, abs=1e-4)


def test_order_matters_and_k_scales() -> None:
    games = [GameResult.two_player("A", "B", 1.0), GameResult.two_player("B", "A", 1.0)]
    forward = fit_sequential(games)
    backward = fit_sequential(list(reversed(games)))
    # A wins first: A = 1508, then B (at 1492) beats A: E_B = 1/(1+10^(16/400)) = 1/2.0964782
    # = 0.4769906, B += 16 * 0.5230094 = 8.368150 -> A = 1499.63185; the reverse mirrors it
    assert forward.row("A").elo == pytest.approx(1499.63185, abs=1e-4)
    assert backward.row("B").elo == pytest.approx(1499.63185, abs=1e-4)
    assert fit_sequential(games[:1], k=32.0, initial=1000.0).row("A").elo == 1016.0


def test_n_player_pairs_share_k() -> None:
    # A first, B and C tied second; K/(N-1) = 32/2 = 16 per pair, all from pre-match ratings:
    # A: 16*((1-.5)+(1-.5)) = +16; B: 16*((0-.5)+(.5-.5)) = -8; C likewise -8
    table = fit_sequential([GameResult(("A", "B", "C"), (1, 2, 2))], k=32.0)
    assert table.elo() == {"A": 1516.0, "B": 1492.0, "C": 1492.0}


def test_mixed_two_and_three_player_games_in_input_order() -> None:
    games = [
        GameResult.two_player("A", "B", 1.0),  # A = 1508, B = 1492
        GameResult(("A", "B", "C"), (1, 2, 2)),  # K/(N-1) = 8 per pair, pre-match ratings
    ]

    def e(diff: float) -> float:
        return 1.0 / (1.0 + math.pow(10.0, -diff / 400.0))

    a = 1508 + 8 * ((1 - e(16)) + (1 - e(8)))  # 1508 + 8 * (0.4769906 + 0.4884889)
    b = 1492 + 8 * ((0 - e(-16)) + (0.5 - e(-8)))
    c = 1500 + 8 * ((0 - e(-8)) + (0.5 - e(8)))
    table = fit_sequential(games, k=16.0)
    assert table.row("A").elo == pytest.approx(a, abs=1e-9)
    assert table.row("A").elo == pytest.approx(1515.72384, abs=1e-4)
    assert table.row("B").elo == pytest.approx(b, abs=1e-9)
    assert table.row("C").elo == pytest.approx(c, abs=1e-9)
    # the other order: the match first, all at 1500 (A 1508, B 1496, C 1496), then A beats B
    reverse = fit_sequential(games[::-1], k=16.0)
    b_reverse = 1496 - 16 * (1 - e(1508 - 1496))
    assert reverse.row("B").elo == pytest.approx(b_reverse, abs=1e-9)
    assert abs(b_reverse - b) > 1e-5  # small, but far beyond the 1e-9 tolerance above
