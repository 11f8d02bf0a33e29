"""Plackett-Luce on final ranks with shared ties: equals Bradley-Terry for two players, matches
a brute-force likelihood (average over the orderings of each tie), recovers simulated ratings."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena.arena.ratings import ELO_PER_NAT, GameResult, fit_ml


def pl_loglik_bruteforce(theta: dict[str, float], results: list[GameResult]) -> float:
    """Sum over matches of the mean, over every strict order consistent with the ranks, of
    log prod_k exp(theta_(k)) / sum_{m >= k} exp(theta_(m))."""
    total = 0.0
    for res in results:
        groups: dict[int, list[str]] = {}
        for p, r in zip(res.players, res.ranks, strict=True):
            groups.setdefault(r, []).append(p)
        ordered = [groups[r] for r in sorted(groups)]
        lls = []
        for perms in itertools.product(*(itertools.permutations(g) for g in ordered)):
            order = [p for perm in perms for p in perm]
            ll = 0.0
            for k in range(len(order)):
                ll += theta[order[k]] - math.log(sum(math.exp(theta[p]) for p in order[k:]))
            lls.append(ll)
        total += sum(lls) / len(lls)
    return total


def simulate_pl(
    truth: dict[str, float], n_matches: int, seats: int, rng: random.Random, tie: float = 0.0
) -> list[GameResult]:
    """Rankings drawn from Plackett-Luce (pick the winner with probability proportional to
    10^(r/400), then the next among the rest, ...); with probability ``tie`` the last two share
    their rank."""
    names = sorted(truth)
    out = []
    for _ in range(n_matches):
        players = rng.sample(names, seats)
        left = list(players)
        order = []
        while left:
            weights = [10.0 ** (truth[p] / 400.0) for p in left]
            pick = rng.choices(left, weights)[0]
            order.append(pick)
            left.remove(pick)
        ranks = {p: i + 1 for i, p in enumerate(order)}
        if rng.random() < tie:
            ranks[order[-1]] = ranks[order[-2]]
        out.append(GameResult(tuple(players), tuple(ranks[p] for p in players)))
    return out


def test_plackett_luce_with_two_players_is_bradley_terry() -> None:
    rng = random.Random(5)
    names = ["a", "b", "c", "d"]
    results = []
    for _ in range(300):
        x, y = rng.sample(names, 2)
        results.append(GameResult.two_player(x, y, rng.choice([1.0, 0.5, 0.0, 1.0])))
    bt = fit_ml(results)  # aggregated pair counts
    pl = fit_ml(results, aggregate=False)  # every game through the Plackett-Luce stages
    for row in bt.rows:
        assert pl.row(row.bot).elo == pytest.approx(row.elo, abs=1e-8)
        assert pl.row(row.bot).error == pytest.approx(row.error, rel=1e-8)
        if row.los_next is None:
            assert pl.row(row.bot).los_next is None
        else:
            assert pl.row(row.bot).los_next == pytest.approx(row.los_next, rel=1e-8)


def test_fit_maximises_the_bruteforce_likelihood_with_ties() -> None:
    rng = random.Random(9)
    truth = {"a": 120.0, "b": 40.0, "c": 0.0, "d": -60.0, "e": -100.0}
    results = simulate_pl(truth, 120, 4, rng, tie=0.3)
    results += [GameResult(("a", "c", "e"), (1, 1, 1)), GameResult(("b", "d", "e"), (2, 1, 2))]
    table = fit_ml(results)
    assert not table.notes
    theta = {r.bot: (r.elo - 1500.0) / ELO_PER_NAT for r in table.rows}
    h = 1e-5
    for bot in theta:
        up = dict(theta, **{bot: theta[bot] + h})
        down = dict(theta, **{bot: theta[bot] - h})
        grad = (pl_loglik_bruteforce(up, results) - pl_loglik_bruteforce(down, results)) / (2 * h)
        assert abs(grad) < 1e-5, (bot, grad)
    # and it is a maximum: any shift of one bot lowers the likelihood
    best = pl_loglik_bruteforce(theta, results)
    for bot in theta:
        assert pl_loglik_bruteforce(dict(theta, **{bot: theta[bot] + 0.05}), results) < best


def test_two_way_tie_scores_half_a_win_each() -> None:
    # a 3-player match where b and c tie behind a, repeated, vs. the same with b above c
    tied = fit_ml(
        [GameResult(("a", "b", "c"), (1, 2, 2))] * 5 + [GameResult(("c", "b", "a"), (1, 2, 3))] * 5
    )
    assert tied.row("b").elo < tied.row("c").elo  # c won the other matches outright
    symmetric = fit_ml(
        [GameResult(("a", "b", "c"), (2, 1, 1)), GameResult(("a", "b", "c"), (1, 2, 2))]
    )
    assert symmetric.row("b").elo == pytest.approx(symmetric.row("c").elo, abs=1e-9)


def test_nplayer_recovery_coverage() -> None:
    rng = random.Random(77)
    truth = {"a": 150.0, "b": 70.0, "c": 0.0, "d": -20.0, "e": -80.0, "f": -120.0}
    mean = sum(truth.values()) / len(truth)
    inside = total = 0
    for _ in range(40):
        table = fit_ml(simulate_pl(truth, 250, 4, rng, tie=0.2))
        for row in table.rows:
            assert row.error is not None
            total += 1
            inside += abs((row.elo - 1500.0) - (truth[row.bot] - mean)) <= row.error
    assert 0.88 <= inside / total <= 1.0, inside / total


def test_nplayer_shuffle_and_duplicate() -> None:
    rng = random.Random(3)
    results = simulate_pl({"a": 90.0, "b": 0.0, "c": -40.0, "d": -50.0}, 200, 3, rng, tie=0.25)
    base = fit_ml(results)
    shuffled = list(results)
    rng.shuffle(shuffled)
    doubled = fit_ml(results + shuffled)
    again = fit_ml(shuffled)
    for row in base.rows:
        assert again.row(row.bot).elo == pytest.approx(row.elo, abs=1e-9)
        assert doubled.row(row.bot).elo == pytest.approx(row.elo, abs=1e-8)
        assert row.error is not None
        assert doubled.row(row.bot).error == pytest.approx(row.error / math.sqrt(2), rel=1e-9)


def test_nplayer_counts_and_edge_cases() -> None:
    results = [
        GameResult(("a", "b", "c", "d"), (1, 2, 3, 4)),
        GameResult(("b", "a", "d", "c"), (3, 1, 2, 2)),
        GameResult(("c", "d", "b", "a"), (2, 1, 3, 4)),
    ]
    table = fit_ml(results)
    a = table.row("a").stats
    assert (a.games, a.multi_games, a.firsts, a.rank_sum) == (3, 3, 2, 6)
    assert a.points == pytest.approx(3 / 3 + 3 / 3 + 0 / 3)
    assert table.row("c").stats.shared == 1
    for row in table.rows:
        assert math.isfinite(row.elo)
    # a bot that always wins: finite, flagged
    winner = fit_ml(
        [
            GameResult(("w", "x", "y"), (1, 2, 3)),
            GameResult(("x", "w", "y"), (2, 1, 3)),
            GameResult(("w", "y", "x"), (1, 3, 2)),
        ]
    )
    assert winner.row("w").note == "all wins: prior" and math.isfinite(winner.row("w").elo)
    assert winner.row("y").note == "all losses: prior" and math.isfinite(winner.row("y").elo)
    assert winner.row("x").note == "prior"
    assert [r.bot for r in winner.rows] == ["w", "x", "y"]
    # everybody tied: all equal
    flat = fit_ml([GameResult(("p", "q", "r"), (1, 1, 1))] * 3)
    assert {round(r.elo, 9) for r in flat.rows} == {1500.0}
    # a tie larger than the exact limit (12 players) is shared over rotations, still symmetric
    big = [f"b{i:02d}" for i in range(12)]
    table = fit_ml(
        [
            GameResult(tuple(big), (1,) * 12),
            GameResult(tuple(big), tuple(range(1, 13))),
            GameResult(tuple(reversed(big)), tuple(range(1, 13))),
        ]
    )
    assert all(math.isfinite(r.elo) for r in table.rows)
    assert table.row("b00").elo == pytest.approx(table.row("b11").elo, abs=1e-6)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.integers(2, 4).flatmap(
            lambda n: st.tuples(
                st.lists(st.sampled_from("abcde"), min_size=n, max_size=n),
                st.lists(st.integers(1, n), min_size=n, max_size=n),
            )
        ),
        min_size=1,
        max_size=30,
    )
)
def test_counts_match_a_naive_tally(raw: list[tuple[list[str], list[int]]]) -> None:
    """The vectorised counts against a plain loop over seats (mixed seat counts, ties,
    repeated bots, two-player self-play which is skipped)."""
    results = [GameResult(tuple(p), tuple(r)) for p, r in raw]
    expected: dict[str, list[float]] = {}
    for res in results:
        if res.self_play:
            continue
        n = len(res.players)
        for seat, bot in enumerate(res.players):
            mine = res.ranks[seat]
            beaten = sum(r > mine for r in res.ranks)
            tied = sum(r == mine for r in res.ranks) - 1
            counts = expected.setdefault(bot, [0.0] * 9)
            counts[0] += 1
            counts[1] += (beaten + tied / 2) / (n - 1)
            if n == 2:
                counts[2 if beaten else (3 if tied else 4)] += 1
            else:
                rank = n - beaten - tied
                counts[5] += 1
                counts[6] += rank
                counts[7] += rank == 1
                counts[8] += tied > 0
    table = fit_ml(results)
    assert {r.bot for r in table.rows} == set(expected)
    for row in table.rows:
        s = row.stats
        got = [s.games, s.points, s.wins, s.draws, s.losses, s.multi_games, s.rank_sum]
        got += [s.firsts, s.shared]
        assert got == pytest.approx(expected[row.bot])
        assert math.isfinite(row.elo)
