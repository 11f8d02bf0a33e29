"""Ratings from two-player totals per ordered pair equal ratings from the same results one by
one (to 1e-9): what lets the leaderboard read pair totals summed by the database."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena.arena.ratings.ml import fit_ml
from bot_arena.arena.ratings.outcomes import GameResult
from bot_arena.arena.ratings.prepare import prepare
from bot_arena.arena.ratings.table import RatingTable
from bot_arena.arena.ratings.totals import PairTotal, PairTotalColumns

BOTS = ["a", "b", "c", "d", "e"]


def totals_of(results: list[GameResult]) -> tuple[list[GameResult], list[PairTotal]]:
    """The two-player results counted per ordered pair (wins, draws, losses of the first
    seat), the others as they are."""
    counts: Counter[tuple[str, str, int]] = Counter()
    others: list[GameResult] = []
    for r in results:
        if len(r.players) != 2:
            others.append(r)
            continue
        a, b = r.ranks
        counts[(*r.players, 0 if a < b else 1 if a == b else 2)] += 1  # type: ignore[arg-type]
    pairs = {(first, second) for first, second, _ in counts}
    totals = [
        PairTotal(
            first,
            second,
            counts[(first, second, 0)],
            counts[(first, second, 1)],
            counts[(first, second, 2)],
        )
        for first, second in sorted(pairs)
    ]
    return others, totals


def assert_same(expected: RatingTable, got: RatingTable) -> None:
    """The same table: ratings to 1e-9; an interval by its variance (error squared) to 1e-9,
    since a square root turns rounding in a variance of nearly 0 (a bot with draws only
    against an anchor) into 1e-6; LOS to 1e-6, as Phi(difference / spread) magnifies rounding
    where two bots' ratings move together. Both fits then agree on every shown digit."""
    assert [r.bot for r in got.rows] == [r.bot for r in expected.rows]
    assert got.pools == expected.pools and got.notes == expected.notes
    for e, g in zip(expected.rows, got.rows, strict=True):
        assert abs(e.elo - g.elo) <= 1e-9, (e, g)
        assert (e.error is None) == (g.error is None)
        if e.error is not None and g.error is not None:
            assert abs(e.error**2 - g.error**2) <= 1e-9 * max(1.0, e.error**2), (e, g)
        assert (e.los_next is None) == (g.los_next is None)
        assert e.los_next is None or g.los_next is None or abs(e.los_next - g.los_next) <= 1e-6
        assert g.stats == e.stats and g.pool == e.pool and g.note == e.note


two_player = st.tuples(
    st.sampled_from(BOTS), st.sampled_from(BOTS), st.sampled_from([(1, 2), (2, 1), (1, 1)])
).map(lambda t: GameResult((t[0], t[1]), t[2]))
three_player = st.tuples(
    st.permutations(BOTS).map(lambda p: tuple(p[:3])),
    st.lists(st.integers(1, 3), min_size=3, max_size=3),
).map(lambda t: GameResult(t[0], tuple(t[1])))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(two_player, min_size=1, max_size=60),
    st.lists(three_player, max_size=6),
    st.randoms(use_true_random=False),
)
def test_totals_rate_as_the_results_one_by_one(
    pairs: list[GameResult], multi: list[GameResult], rng: object
) -> None:
    results = pairs + multi
    rng.shuffle(results)  # type: ignore[attr-defined]
    others, totals = totals_of(results)
    assert_same(fit_ml(results), fit_ml(others, totals=totals))


def test_a_known_field_with_self_play_ties_and_a_prior() -> None:
    results = [GameResult(("a", "b"), (1, 2))] * 7 + [GameResult(("b", "a"), (1, 1))] * 3
    results += [GameResult(("a", "a"), (1, 2)), GameResult(("c", "b"), (1, 2))]
    results += [GameResult(("a", "b", "c"), (2, 2, 1))]
    others, totals = totals_of(results)
    expected = fit_ml(results)
    assert "prior" in " ".join(expected.notes)  # c never lost: a ghost joins its pool
    assert_same(expected, fit_ml(others, totals=totals))
    assert_same(expected, fit_ml(others, totals=totals, aggregate=False))


def columns_of(totals: list[PairTotal], rng: Any) -> PairTotalColumns:
    """``totals`` as columns whose codes are shuffled ids, some players under two codes (as
    two versions can share a key) and a code no row uses."""
    names = sorted({t.first for t in totals} | {t.second for t in totals})
    codes: dict[str, list[int]] = {}
    players: dict[int, str] = {}
    ids = rng.sample(range(3, 1000), 2 * len(names) + 1)
    for i, name in enumerate(names):
        codes[name] = ids[2 * i : 2 * i + 2]
        players.update({c: name for c in codes[name]})
    players[ids[-1]] = "nobody"
    first = tuple(rng.choice(codes[t.first]) for t in totals)
    second = tuple(rng.choice(codes[t.second]) for t in totals)
    wins, draws, losses = (
        tuple(getattr(t, f) for t in totals) for f in ("wins", "draws", "losses")
    )
    return PairTotalColumns(players, first, second, wins, draws, losses)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(two_player, min_size=1, max_size=60),
    st.lists(three_player, max_size=6),
    st.randoms(use_true_random=False),
)
def test_totals_as_columns_rate_as_the_results_one_by_one(
    pairs: list[GameResult], multi: list[GameResult], rng: Any
) -> None:
    results = pairs + multi
    rng.shuffle(results)
    others, totals = totals_of(results)
    columns = columns_of(totals, rng)
    assert columns.totals() == totals
    assert columns.games == sum(t.games for t in totals)
    assert_same(fit_ml(results), fit_ml(others, totals=columns))


def test_columns_make_the_entries_of_the_totals_in_their_order() -> None:
    totals = [
        PairTotal("b", "a", 2, 0, 1),
        PairTotal("a", "c", 0, 3, 0),
        PairTotal("c", "b", 0, 0, 0),
    ]
    columns = PairTotalColumns(
        {7: "a", 9: "b", 4: "c", 5: "a"}, (9, 5, 4), (7, 4, 9), (2, 0, 0), (0, 3, 0), (1, 0, 0)
    )
    assert columns.totals() == totals
    by_list, by_columns = prepare([], totals), prepare([], columns)
    for field in ("first", "second", "score", "weight", "two_pos"):
        assert getattr(by_columns, field).tolist() == getattr(by_list, field).tolist(), field
    assert by_columns.names == by_list.names == ["a", "b", "c"]
    assert by_columns.stats == by_list.stats
    empty = prepare([], PairTotalColumns({}, (), (), (), (), ()))
    assert empty.names == [] and len(empty.first) == 0
