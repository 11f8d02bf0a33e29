"""Issue 27: ratings that hold for any field. Large fields cost what was played (no
players-squared arrays), ties of any size cost O(n) per match, and any number of seats ranks
correctly (the tie pattern used to be a 64-bit mask). Checked against a brute-force
likelihood, against values stored from the code before the change, and through ``arena rate``.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import random
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena.arena.ratings import GameResult, fit_ml, ml
from bot_arena.arena.ratings.design import Design, aggregate_pairs
from bot_arena.arena.ratings.prepare import prepare
from bot_arena.arena.ratings.ties import _subsets, tie_terms
from tests import inprocess

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures"


# -- references --------------------------------------------------------------------------------


def brute_loglik(theta: dict[str, float], res: GameResult) -> float:
    """The mean, over every strict order consistent with the ranks, of the Plackett-Luce
    log-likelihood (suffix log-sum-exps with numpy, so long orders stay cheap)."""
    groups: dict[int, list[str]] = {}
    for p, r in zip(res.players, res.ranks, strict=True):
        groups.setdefault(r, []).append(p)
    ordered = [groups[r] for r in sorted(groups)]
    lls = []
    for perms in itertools.product(*(itertools.permutations(g) for g in ordered)):
        t = np.array([theta[p] for perm in perms for p in perm])
        suffix = np.logaddexp.accumulate(t[::-1])[::-1]
        lls.append(float(t.sum() - suffix.sum()))
    return sum(lls) / len(lls)


def design_of(results: list[GameResult]) -> tuple[Design, dict[str, int]]:
    """The multi-seat matches of ``results`` alone, as the fit builds them."""
    prep = prepare(results)
    design = Design(len(prep.names))
    design.set_matches(prep.groups)
    return design, prep.index


def ranked_match(n: int, ties: list[range], reverse: bool = False) -> tuple[int, ...]:
    """Ranks of n seats: seat i at place i (or n-1-i), the seats of each range sharing the
    best rank among them."""
    rank = [(n - i if reverse else i + 1) for i in range(n)]
    for span in ties:
        best = min(rank[x] for x in span)
        for x in span:
            rank[x] = best
    return tuple(rank)


# -- the design against brute force ------------------------------------------------------------


match_strategy = st.integers(3, 6).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from("abcdefg"), min_size=n, max_size=n),
        st.lists(st.integers(1, n), min_size=n, max_size=n),
    )
)


@settings(max_examples=60, deadline=None)
@given(st.lists(match_strategy, min_size=1, max_size=6), st.integers(0, 2**32 - 1))
def test_loglik_and_gradient_equal_brute_force(
    raw: list[tuple[list[str], list[int]]], seed: int
) -> None:
    results = [GameResult(tuple(p), tuple(r)) for p, r in raw]
    design, index = design_of(results)
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.5, len(index))
    named = {p: float(theta[i]) for p, i in index.items()}
    expected = sum(brute_loglik(named, res) for res in results)
    ll, grad, info = design.evaluate(theta)
    assert ll == pytest.approx(expected, abs=1e-9)
    assert design.loglik(theta) == pytest.approx(expected, abs=1e-9)
    h = 1e-5
    for p, i in index.items():
        up = sum(brute_loglik(dict(named, **{p: named[p] + h}), r) for r in results)
        down = sum(brute_loglik(dict(named, **{p: named[p] - h}), r) for r in results)
        assert grad[i] == pytest.approx((up - down) / (2 * h), abs=1e-6)
    dense = info.dense()
    assert np.allclose(dense, dense.T, atol=1e-12)
    assert np.allclose(dense.sum(axis=1), 0.0, atol=1e-9)  # a common shift changes nothing


@pytest.mark.parametrize("n", [10, 64, 65, 66, 100, 1000])
def test_many_seats_equal_brute_force(n: int) -> None:
    """Ties at any place, past the 64th seat too (the old bitmask's limit)."""
    ties = [range(n - 2, n)]
    if n >= 100:
        ties.append(range(62, 66))  # a four-way tie across the 64th and 65th seats
    players = tuple(f"s{i:04d}" for i in range(n))
    results = [GameResult(players, ranked_match(n, ties))]
    design, index = design_of(results)
    theta = np.random.default_rng(n).normal(0.0, 1.0, len(index))
    named = {p: float(theta[i]) for p, i in index.items()}
    assert design.loglik(theta) == pytest.approx(brute_loglik(named, results[0]), rel=1e-12)


def test_large_tie_approximation() -> None:
    """Above 10 tied players the stages are approximated in O(m): exactly the shared tie when
    the tied players are equally strong, close to it otherwise, symmetric in the group."""
    m = 12
    remain, w = _subsets(m)

    def exact(gamma: np.ndarray, below: float) -> float:
        return float(np.log(remain @ gamma + below) @ w)

    rng = np.random.default_rng(5)
    for below in (0.0, 0.7, 30.0):
        equal = np.full(m, 0.4)
        got = tie_terms(equal[None, :], np.array([below]))
        assert got.lse[0] == pytest.approx(exact(equal, below), rel=1e-12)
        spread = np.exp(rng.normal(0.0, 0.3, m))
        got = tie_terms(spread[None, :], np.array([below]))
        # log of the mean fraction >= the mean of the logs (Jensen): a little above, close
        assert exact(spread, below) <= got.lse[0] <= exact(spread, below) * (1 + 1e-2)
        swapped = tie_terms(spread[None, ::-1], np.array([below]))
        assert swapped.lse[0] == pytest.approx(got.lse[0], rel=1e-13)
        assert swapped.a1[0, ::-1] == pytest.approx(got.a1[0], rel=1e-13)


# -- the same numbers as before ----------------------------------------------------------------


def test_fits_equal_values_stored_before_the_change() -> None:
    """60 random small fields (2 to 7 bots, 2 to 6 seats, ties, repeated bots, pools that
    need the prior) rated by the code before issue 27, stored as JSON: ratings, intervals,
    LOS, notes and pools are the same to 1e-9."""
    cases = json.loads((FIXTURES / "ratings_before_issue27.json").read_text(encoding="utf-8"))
    assert len(cases) == 60
    for case in cases:
        results = [GameResult(tuple(p), tuple(r)) for p, r in case["results"]]
        table = fit_ml(results)
        assert list(table.notes) == case["notes"]
        assert len(table.rows) == len(case["rows"])
        for row, (bot, elo, error, los, note, pool) in zip(table.rows, case["rows"], strict=True):
            assert (row.bot, row.note, row.pool) == (bot, note, pool)
            assert row.elo == pytest.approx(elo, abs=1e-9)
            assert row.error == pytest.approx(error, abs=1e-9)
            if los is None:
                assert row.los_next is None
            else:
                assert row.los_next == pytest.approx(los, abs=1e-9)


# -- invariants of large fits ------------------------------------------------------------------


def test_gradient_is_zero_at_a_large_sparse_fit() -> None:
    """Above the dense limit (conjugate gradients): the fitted ratings are a maximum. Every
    pair that met won once each way and played a third game, so no prior is needed."""
    rng = random.Random(11)
    k = 2500
    edges = [(i, rng.randrange(i)) for i in range(1, k)]
    edges += [tuple(rng.sample(range(k), 2)) for _ in range(2 * k)]
    results = []
    for a, b in edges:
        results += [
            GameResult.two_player(f"p{a}", f"p{b}", 1.0),
            GameResult.two_player(f"p{a}", f"p{b}", 0.0),
            GameResult.two_player(f"p{a}", f"p{b}", rng.choice([0.0, 0.5, 1.0])),
        ]
    table = fit_ml(results)
    assert len(table.rows) == k
    assert any("approximate intervals" in note for note in table.notes)
    assert not any(row.note for row in table.rows)
    prep = prepare(results)
    design = Design(len(prep.names))
    design.set_pairs(*aggregate_pairs(prep.first, prep.second, prep.score, len(prep.names)))
    theta = np.array([table.row(n).elo for n in prep.names]) * math.log(10.0) / 400.0
    _, grad, _ = design.evaluate(theta)
    assert float(np.max(np.abs(grad))) < 1e-6
    for row in table.rows:
        assert row.error is not None and 0.0 < row.error < math.inf


def test_sparse_path_equals_dense_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same field solved densely and, with the limit lowered, by conjugate gradients: the
    same ratings and notes; the approximate intervals (each bot's own variance) narrower."""
    rng = random.Random(4)
    k = 600
    edges = [(i, rng.randrange(i)) for i in range(1, k)]
    edges += [(a, b) for a, b in (rng.sample(range(k), 2) for _ in range(2 * k))]
    results = [
        GameResult.two_player(f"p{a}", f"p{b}", rng.choice([0.0, 0.5, 1.0])) for a, b in edges
    ]
    results += [GameResult.two_player(f"p{a}", f"p{b}", 0.5) for a, b in edges[:50]]
    exact = fit_ml(results)
    monkeypatch.setattr(ml, "DENSE_LIMIT", 100)
    sparse = fit_ml(results)
    assert not any("approximate" in note for note in exact.notes)
    assert any("approximate" in note for note in sparse.notes)
    assert [r.bot for r in sparse.rows] == [r.bot for r in exact.rows]
    ratios = []
    for row in sparse.rows:
        assert row.elo == pytest.approx(exact.row(row.bot).elo, abs=1e-9)
        assert row.note == exact.row(row.bot).note
        assert row.error is not None
        ratios.append(row.error / (exact.row(row.bot).error or math.inf))
    ratios.sort()
    # mostly a little narrower (median 0.91 here), a thinly connected bot much narrower (0.32)
    assert ratios[0] > 0.25 and ratios[-1] <= 1.05, (ratios[0], ratios[-1])
    assert 0.8 < ratios[len(ratios) // 2] < 1.0


# -- through the command line ------------------------------------------------------------------


def arena_bin() -> str:
    found = shutil.which("arena") or str(Path(sys.executable).with_name("arena"))
    assert Path(found).exists(), "the arena console script is not installed"
    return found


def rate(path: Path, *args: str, memory: int | None = None) -> subprocess.CompletedProcess[str]:
    """``arena rate PATH ARGS``: under an address-space limit of ``memory`` bytes, a process of
    its own (the limit is the subject); without one, in this process (``tests/inprocess.py``:
    the ratings printed are the subject, and a process's start-up, numpy's imports included,
    cost more CPU than the fits of the tied fields)."""
    if memory is None:
        return inprocess.run("rate", str(path), *args, cwd=Path.cwd())

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [arena_bin(), "rate", str(path), *args],
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=limit,
    )


def csv_rows(out: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(out)))


@pytest.mark.timeout(900)
def test_rate_twenty_thousand_players_under_a_memory_limit(tmp_path: Path) -> None:
    """20,001 players, 22,000 games (a random tree joining them all, then random games):
    players-squared arrays would need about 3 GiB each; the fit must stay under 2.5 GB of
    address space and print the leaderboard."""
    rng = random.Random(27)
    k = 20_001
    lines = ["white,black,result"]
    outcomes = ["1-0", "0-1", "1/2-1/2"]
    for i in range(1, k):
        lines.append(f"p{i},p{rng.randrange(i)},{rng.choice(outcomes)}")
    for _ in range(2000):
        a, b = rng.sample(range(k), 2)
        lines.append(f"p{a},p{b},{rng.choice(outcomes)}")
    path = tmp_path / "field.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = rate(path, "--format", "csv", memory=2_500_000_000)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = csv_rows(done.stdout)
    assert len(rows) == k
    assert {r["bot"] for r in rows} == {f"p{i}" for i in range(k)}
    assert all(math.isfinite(float(r["elo"])) and float(r["error"]) > 0 for r in rows)
    table = rate(path, memory=2_500_000_000)  # the text table too
    assert table.returncode == 0 and "p0" in table.stdout


@pytest.mark.timeout(600)
@pytest.mark.parametrize("tied", [200, 1000])
def test_rate_one_match_of_many_tied_players(tmp_path: Path, tied: int) -> None:
    path = tmp_path / "tie.csv"
    path.write_text(
        "match,bot,rank\n" + "".join(f"1,t{i},1\n" for i in range(tied)), encoding="utf-8"
    )
    done = rate(path, "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(done.stdout)
    assert len(rows) == tied
    assert all(r["elo"] == pytest.approx(1500.0, abs=1e-9) for r in rows)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("n", [10, 65, 66, 100, 1000])
def test_rate_tied_players_get_equal_ratings_at_any_seat_count(tmp_path: Path, n: int) -> None:
    """Two matches of n seats, one the other's reverse, with the same players tied in both:
    swapping two tied players changes no result, so they must get equal ratings (10 seats:
    the control that worked before)."""
    ties = [range(n - 2, n), range(20, 32) if n > 10 else range(2, 5)]  # 12 tied: above 10
    if n >= 100:
        ties.append(range(62, 66))  # across the 64th and 65th seats
    players = [f"s{i:04d}" for i in range(n)]
    lines = ["match,bot,rank"]
    for number, reverse in ((1, False), (2, True)):
        ranks = ranked_match(n, ties, reverse)
        lines += [f"{number},{p},{r}" for p, r in zip(players, ranks, strict=True)]
    path = tmp_path / "seats.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = rate(path, "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    elo = {r["bot"]: r["elo"] for r in json.loads(done.stdout)}
    assert len(elo) == n
    for span in ties:
        group = [elo[players[x]] for x in span]
        assert max(group) - min(group) < 1e-6, (span, group)
