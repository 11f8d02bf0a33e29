"""Maximum-likelihood Elo for two players: closed forms, the sandwich interval, invariances,
coverage on simulated games, and the edge cases."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena.arena.ratings import ELO_PER_NAT, GameResult, RatingInputError, elo_diff, fit_ml
from bot_arena.arena.ratings.ml import Z95

W, D, L = 1.0, 0.5, 0.0


def games(a: str, b: str, wins: int, draws: int, losses: int) -> list[GameResult]:
    return (
        [GameResult.two_player(a, b, W)] * wins
        + [GameResult.two_player(a, b, D)] * draws
        + [GameResult.two_player(b, a, W)] * losses
    )


def simulate(
    truth: dict[str, float], n_games: int, rng: random.Random, draw_share: float = 1.0
) -> list[GameResult]:
    """Games between random pairs with expected score 1/(1+10^(-d/400)); a draw happens with
    probability draw_share*min(E, 1-E), so the expectation stays E."""
    names = sorted(truth)
    out = []
    for _ in range(n_games):
        a, b = rng.sample(names, 2)
        e = 1.0 / (1.0 + 10.0 ** ((truth[b] - truth[a]) / 400.0))
        d = draw_share * min(e, 1.0 - e)
        u = rng.random()
        score = W if u < e - d / 2 else (D if u < e + d / 2 else L)
        out.append(GameResult.two_player(a, b, score))
    return out


def test_two_bots_difference_is_the_closed_form() -> None:
    for w, d, lost in [(3, 0, 1), (7, 5, 2), (1, 10, 0), (2, 1, 9), (50, 30, 20)]:
        table = fit_ml(games("a", "b", w, d, lost))
        s = (w + d / 2) / (w + d + lost)
        diff = table.row("a").elo - table.row("b").elo
        assert diff == pytest.approx(-400.0 * math.log10(1.0 / s - 1.0), abs=1e-7)
        # centred on the pool average
        assert table.row("a").elo + table.row("b").elo == pytest.approx(3000.0, abs=1e-7)
        assert not table.notes


def test_75_percent_is_190_8_elo() -> None:
    """The classical Elo table value: a 75% score is +190.8 (e.g. ordo / bayeselo docs)."""
    table = fit_ml(games("x", "y", 3, 0, 1))
    assert table.row("x").elo - table.row("y").elo == pytest.approx(190.85, abs=0.01)
    assert elo_diff(0.75) == pytest.approx(190.85, abs=0.01)


def test_sandwich_interval_closed_form_for_two_bots() -> None:
    """For one pair: var(diff) = v / (n p^2 (1-p)^2) in nats^2, with v the observed variance of
    the per-game scores and p the mean score; each centred rating is diff/2."""
    for w, d, lost in [(6, 0, 4), (6, 8, 4), (20, 50, 10)]:
        n = w + d + lost
        p = (w + d / 2) / n
        v = (w * (1 - p) ** 2 + d * (0.5 - p) ** 2 + lost * p**2) / n
        sd_diff = math.sqrt(v / (n * p**2 * (1 - p) ** 2)) * ELO_PER_NAT
        table = fit_ml(games("a", "b", w, d, lost))
        assert table.row("a").error == pytest.approx(Z95 * sd_diff / 2, rel=1e-9)
        # LOS of a over b from the same variance
        expected_los = 0.5 * (
            1 + math.erf((table.row("a").elo - table.row("b").elo) / sd_diff / math.sqrt(2))
        )
        assert table.row("a").los_next == pytest.approx(expected_los, rel=1e-9)


def test_draws_narrow_the_interval_compared_with_the_binomial() -> None:
    # same score (60%), but mostly draws: the observed variance is much smaller
    decisive = fit_ml(games("a", "b", 60, 0, 40))
    drawish = fit_ml(games("a", "b", 20, 80, 0))
    assert drawish.row("a").elo == pytest.approx(decisive.row("a").elo, abs=1e-7)
    narrow, wide = drawish.row("a").error, decisive.row("a").error
    assert narrow is not None and wide is not None and narrow < 0.5 * wide


def test_order_does_not_matter_and_duplicates_shrink_intervals_by_sqrt2() -> None:
    rng = random.Random(11)
    truth = {"a": 200.0, "b": 60.0, "c": 0.0, "d": -30.0, "e": -230.0}
    results = simulate(truth, 600, rng)
    base = fit_ml(results)
    shuffled = list(results)
    rng.shuffle(shuffled)
    again = fit_ml(shuffled)
    doubled = fit_ml(results + results)
    assert not base.notes
    for row in base.rows:
        assert row.error is not None
        assert again.row(row.bot).elo == pytest.approx(row.elo, abs=1e-9)
        assert again.row(row.bot).error == pytest.approx(row.error, rel=1e-9)
        assert doubled.row(row.bot).elo == pytest.approx(row.elo, abs=1e-8)
        assert doubled.row(row.bot).error == pytest.approx(row.error / math.sqrt(2.0), rel=1e-9)


def test_intervals_cover_the_true_ratings_about_95_percent() -> None:
    rng = random.Random(2024)
    truth = {"a": 180.0, "b": 90.0, "c": 20.0, "d": 0.0, "e": -110.0, "f": -180.0}
    mean = sum(truth.values()) / len(truth)
    inside = total = 0
    for _ in range(200):
        table = fit_ml(simulate(truth, 400, rng, draw_share=rng.choice([0.0, 0.6, 1.0])))
        for row in table.rows:
            assert row.error is not None
            total += 1
            inside += abs((row.elo - 1500.0) - (truth[row.bot] - mean)) <= row.error
    assert 0.90 <= inside / total <= 0.99, inside / total


def test_anchor_fixes_one_bot_and_keeps_the_differences() -> None:
    results = games("a", "b", 7, 2, 3) + games("b", "c", 5, 5, 5) + games("a", "c", 6, 1, 1)
    centred = fit_ml(results, center=1000.0)
    anchored = fit_ml(results, anchor=("c", 2000.0))
    assert sum(r.elo for r in centred.rows) / 3 == pytest.approx(1000.0)
    assert anchored.row("c").elo == 2000.0
    assert anchored.row("c").error == pytest.approx(0.0, abs=1e-9)
    for bot in "ab":
        assert anchored.row(bot).elo - 2000.0 == pytest.approx(
            centred.row(bot).elo - centred.row("c").elo, abs=1e-8
        )
    assert anchored.pools[0].relative_to == "anchor c = 2000"
    with pytest.raises(RatingInputError, match="zed"):
        fit_ml(results, anchor=("zed", 1.0))


def test_all_wins_and_all_losses_are_finite_with_a_note() -> None:
    results = (
        games("top", "mid", 5, 0, 0) + games("mid", "low", 3, 2, 3) + games("top", "low", 4, 0, 0)
    )
    results += games("mid", "bottom", 6, 0, 0)
    table = fit_ml(results)
    for row in table.rows:
        assert math.isfinite(row.elo) and row.error is not None and math.isfinite(row.error)
    assert table.row("top").note == "all wins: prior"
    assert table.row("bottom").note == "all losses: prior"
    assert [r.bot for r in table.rows] == ["top", "mid", "low", "bottom"]
    assert any("virtual draw" in n for n in table.notes)
    assert sum(r.elo for r in table.rows) / 4 == pytest.approx(1500.0)


def test_one_game_and_all_draws() -> None:
    one = fit_ml([GameResult.two_player("a", "b", W)])
    assert one.row("a").elo > 1500.0 > one.row("b").elo
    assert math.isfinite(one.row("a").elo - one.row("b").elo)
    draws = fit_ml(games("a", "b", 0, 4, 0) + games("b", "c", 0, 2, 0))
    for row in draws.rows:
        assert row.elo == pytest.approx(1500.0, abs=1e-9)
        assert row.error is not None and 0.0 < row.error < math.inf
        assert row.note == "model interval"
        assert row.stats.draw_rate == 1.0
    # model interval for a single pair: var(diff) = 1/(n p (1-p)) = 4/n nats^2
    pair = fit_ml(games("a", "b", 0, 4, 0))
    assert pair.row("a").error == pytest.approx(Z95 * ELO_PER_NAT * math.sqrt(4 / 4) / 2)


def test_disconnected_pools_are_rated_separately() -> None:
    results = games("a", "b", 3, 1, 1) + games("x", "y", 1, 1, 3) + games("y", "z", 2, 2, 2)
    table = fit_ml(results)
    assert len(table.pools) == 2
    assert set(table.pools[0].bots) == {"a", "b"} and set(table.pools[1].bots) == {"x", "y", "z"}
    for pool in table.pools:
        elos = [table.row(b).elo for b in pool.bots]
        assert sum(elos) / len(elos) == pytest.approx(1500.0)
    assert table.row("a").pool == 1 and table.row("z").pool == 2
    assert table.row("b").los_next is None  # no "next" across pools
    assert any("separate pools" in n for n in table.notes)
    # each pool alone gives the same numbers
    alone = fit_ml(games("x", "y", 1, 1, 3) + games("y", "z", 2, 2, 2))
    for bot in "xyz":
        assert alone.row(bot).elo == pytest.approx(table.row(bot).elo, abs=1e-8)
        assert alone.row(bot).error == pytest.approx(table.row(bot).error, rel=1e-8)


def test_counts_and_self_play() -> None:
    results = [*games("a", "b", 2, 1, 3), GameResult.two_player("a", "a", W)]
    table = fit_ml(results)
    a = table.row("a").stats
    assert (a.games, a.wins, a.draws, a.losses, a.points) == (6, 2, 1, 3, 2.5)
    assert a.score == pytest.approx(2.5 / 6) and a.draw_rate == pytest.approx(1 / 6)
    assert fit_ml([]).rows == ()


def test_a_bot_that_only_played_itself_is_not_listed() -> None:
    results = [*games("a", "b", 1, 1, 1), GameResult.two_player("solo", "solo", W)]
    assert [r.bot for r in fit_ml(results).rows] == ["a", "b"]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("abcd"), st.sampled_from("abcd"), st.sampled_from([W, D, L])),
        min_size=1,
        max_size=40,
    )
)
def test_fit_meets_the_score_equations(raw: list[tuple[str, str, float]]) -> None:
    """At the maximum (no prior needed) every bot's points equal its expected points:
    sum over its games of 1/(1 + 10^(-(r_self - r_opp)/400)). Always finite, always centred."""
    results = [GameResult.two_player(a, b, s) for a, b, s in raw if a != b]
    table = fit_ml(results)
    for pool in table.pools:
        elos = [table.row(b).elo for b in pool.bots]
        assert sum(elos) / len(elos) == pytest.approx(1500.0)
    for row in table.rows:
        assert math.isfinite(row.elo) and row.error is not None and math.isfinite(row.error)
    if any("virtual draw" in n for n in table.notes):
        return
    elo = table.elo()
    for bot in elo:
        expected = 0.0
        for res in results:
            if bot in res.players:
                other = res.players[1] if res.players[0] == bot else res.players[0]
                expected += 1.0 / (1.0 + 10.0 ** (-(elo[bot] - elo[other]) / 400.0))
        assert table.row(bot).stats.points == pytest.approx(expected, abs=1e-7)
