"""The leaderboard's reading by pair totals (summed in SQL) against the reading of every match,
on SQLite and PostgreSQL: the same ratings (to 1e-9), counts, faults, labels and title."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot_arena.arena.match.record import Termination
from bot_arena.arena.ratings.query import rated_table, render_leaderboard
from bot_arena.arena.ratings.render import render
from bot_arena.db.session import make_engine, session_factory
from tests.arena.test_leaderboard_db import Filler, ref
from tests.arena.test_ratings_totals import assert_same
from tests.db.dbtest import BACKENDS, example_database

SELECTIONS = [(None, None), (None, "coins"), ("t", None), (None, "nim")]


def fill_known(url: str) -> int:
    """Two versions of one bot, faults, self-play, a draw-only pair, three-player matches,
    two games; returns the tournament's id."""
    fill = Filler(url)
    a, b, c = ref("alpha"), ref("beta"), ref("gamma")
    a2 = ref("alpha", "v2")
    t = fill.tournament("coins")
    for _ in range(3):
        fill.match("coins", [(a, 1), (b, 2)], tournament=t)
    fill.match("coins", [(b, 1), (a, 2)], tournament=t, fault=(1, Termination.TIMEOUT))
    fill.match("coins", [(b, 2), (a2, 1)], tournament=t, fault=(0, Termination.CRASH))
    fill.match("coins", [(a2, 1), (a, 1)])
    fill.match("coins", [(c, 1), (c, 2)])  # self-play: counted, not rated
    fill.match("coins", [(c, 1), (b, 1)])
    fill.match("coins", [(c, 2), (a2, 1)], fault=(0, Termination.ILLEGAL_MOVE))
    fill.match("nim", [(a, 1), (b, 2), (c, 3)])
    fill.match("nim", [(c, 1), (b, 2), (a2, 2)])
    fill.match("nim", [(a, 1), (b, 2)])
    return t


def compare(url: str, tournament: int | None, game: str | None) -> None:
    with session_factory(make_engine(url, read_only=True))() as session:
        whole, expected = rated_table(session, tournament_id=tournament, game=game)
        summed, got = rated_table(session, tournament_id=tournament, game=game, totals=True)
        shown = render_leaderboard(session, tournament_id=tournament, game=game, fmt="json")
    assert summed.totals or not whole.results  # the pairs came summed
    assert_same(expected, got)
    assert summed.title() == whole.title()
    assert summed.labels == whole.labels and summed.faults == whole.faults
    assert summed.sandbox == whole.sandbox
    assert shown == render(got, "json", labels=whole.labels, faults=whole.faults)
    # the leaderboard's JSON is the per-match one but for the fit's last digits: a small field
    # of pair totals is fitted without numpy (``ratings.ml_small``), equal to 1e-9
    assert_close_json(
        json.loads(shown),
        json.loads(render(expected, "json", labels=whole.labels, faults=whole.faults)),
    )


def assert_close_json(got: object, expected: object) -> None:
    """Equal JSON values, floats to 1e-9 (relative, for ratings in the thousands)."""
    if isinstance(expected, float) and isinstance(got, float):
        assert math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9), (got, expected)
    elif isinstance(expected, dict) and isinstance(got, dict):
        assert got.keys() == expected.keys()
        for key in expected:
            assert_close_json(got[key], expected[key])
    elif isinstance(expected, list) and isinstance(got, list):
        assert len(got) == len(expected)
        for one, other in zip(got, expected, strict=True):
            assert_close_json(one, other)
    else:
        assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("selection", SELECTIONS)
def test_pair_totals_read_as_every_match(
    db_url: str, selection: tuple[str | None, str | None]
) -> None:
    t = fill_known(db_url)
    compare(db_url, t if selection[0] else None, selection[1])


matches = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c", "d"]),
        st.sampled_from(["a", "b", "c", "d"]),
        st.sampled_from([(1, 2), (2, 1), (1, 1)]),
        st.sampled_from([None, None, None, Termination.TIMEOUT, Termination.CRASH]),
    ),
    min_size=1,
    max_size=25,
)


@pytest.mark.parametrize("kind", BACKENDS)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(played=matches)
def test_generated_results_read_alike(
    kind: str, played: list[tuple[str, str, tuple[int, int], Termination | None]]
) -> None:
    with example_database(kind) as url:
        fill = Filler(url)
        for first, second, (r1, r2), fault in played:
            bad = (0 if r1 > r2 else 1, fault) if fault is not None and r1 != r2 else None
            fill.match("coins", [(ref(first), r1), (ref(second), r2)], fault=bad)
        compare(url, None, None)
