"""The pure-Python fit of a small field of pair totals (``ml_small``) gives ``fit_ml``'s table
to 1e-9, and hands back (None) exactly the fields it does not fit: more than ``SMALL_LIMIT``
bots, or a pool that needs the prior."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena.arena.ratings.ml import fit_ml
from bot_arena.arena.ratings.ml_small import SMALL_LIMIT, fit_small
from bot_arena.arena.ratings.outcomes import RatingInputError
from bot_arena.arena.ratings.query import rate
from bot_arena.arena.ratings.totals import PairTotal
from tests.arena.test_ratings_totals import assert_same

BOTS = ["a", "b", "c", "d", "e", "f"]
counts = st.integers(min_value=0, max_value=6)
total = st.builds(PairTotal, st.sampled_from(BOTS), st.sampled_from(BOTS), counts, counts, counts)
anchors = st.none() | st.tuples(st.sampled_from(BOTS), st.sampled_from([0.0, 1000.0, 2850.5]))


def needs_prior(totals: list[PairTotal]) -> bool:
    table = fit_ml((), totals=totals)
    return any("prior" in note for note in table.notes)


@settings(max_examples=300, deadline=None)
@given(st.lists(total, max_size=14), st.sampled_from([1500.0, 0.0, -20.25]), anchors)
def test_the_small_fit_is_fit_ml(totals: list[PairTotal], center: float, anchor: object) -> None:
    played = {t.first for t in totals if t.games and t.first != t.second}
    played |= {t.second for t in totals if t.games and t.first != t.second}
    fixed = anchor if isinstance(anchor, tuple) and anchor[0] in played else None
    small = fit_small(totals, center=center, anchor=fixed)
    if needs_prior(totals):
        assert small is None
        return
    assert small is not None
    expected = fit_ml((), totals=totals, center=center, anchor=fixed)
    assert (small.method, small.description) == (expected.method, expected.description)
    assert_same(expected, small)


def test_an_anchor_that_did_not_play_is_refused_alike() -> None:
    totals = [PairTotal("a", "b", 2, 1, 1)]
    for fit in (fit_small, lambda t, **kw: fit_ml((), totals=t, **kw)):
        with pytest.raises(RatingInputError, match="anchor bot 'z' has no rated games"):
            fit(totals, anchor=("z", 1.0))


def test_a_large_field_goes_to_fit_ml() -> None:
    names = [f"bot{i:03d}" for i in range(SMALL_LIMIT + 1)]
    ring = [PairTotal(a, b, 1, 1, 1) for a, b in zip(names, names[1:] + names[:1], strict=True)]
    assert fit_small(ring) is None
    assert fit_small(ring[:-2]) is not None  # a chain of SMALL_LIMIT bots
    assert_same(fit_ml((), totals=ring), rate((), totals=ring))


def test_rate_uses_the_small_fit_and_its_numbers() -> None:
    totals = [
        PairTotal("a", "b", 5, 2, 3),
        PairTotal("b", "c", 4, 4, 1),
        PairTotal("c", "a", 2, 0, 3),
    ]
    got = rate((), totals=totals)
    small = fit_small(totals)
    assert small is not None and got == small
    assert_same(fit_ml((), totals=totals), got)
