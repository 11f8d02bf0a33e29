"""``tournament show``'s standings and crosstable from totals summed by the database
(``queries.pair_records``, ``standings.totals_tables``) against the count match by match, on
SQLite and PostgreSQL: the same dicts, in the same orders (what ``--json`` prints)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from bot_arena.arena.match.record import Termination
from bot_arena.arena.ratings import grid
from bot_arena.arena.ratings.standings import (
    crosstable_json,
    exact,
    match_crosstable,
    outcomes_json,
    pairs_json,
    standings,
    totals_tables,
)
from bot_arena.arena.tournament import summary
from bot_arena.db import pair_totals, queries
from bot_arena.db.session import make_engine, session_factory
from tests.arena.test_leaderboard_db import Filler, ref
from tests.db.dbtest import BACKENDS, example_database

# generated tournaments on both backends: seconds a test
pytestmark = pytest.mark.slow

NAMES = ["a", "b", "c", "z"]  # z never plays: listed all the same
played = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from([(1, 2), (2, 1), (1, 1), (2, 2)]),
        st.sampled_from([None, None, Termination.TIMEOUT, Termination.CRASH, Termination.RESIGN]),
        st.booleans(),  # in the tournament (else a match outside it)
    ),
    min_size=0,
    max_size=20,
)


@contextmanager
def reading(url: str) -> Iterator[sessionmaker[Session]]:
    """Sessions on one read-only engine of ``url`` for an example's reads, disposed after
    them: an engine made for each read (nine an example, never disposed) was opened as a
    command opens the database, its revision checked and, on PostgreSQL, a connection and
    the server's settings read each time: most of the reads' CPU. Each read is still a
    session of its own."""
    engine = make_engine(url, read_only=True)
    try:
        yield session_factory(engine)
    finally:
        engine.dispose()


def per_match(sessions: sessionmaker[Session], tid: int) -> tuple[object, object]:
    with sessions() as session:
        rows = queries.results(session, tid)
        expected = [s.to_dict() for s in standings(rows, NAMES)]
        return expected, crosstable_json(match_crosstable(rows))


def summed(sessions: sessionmaker[Session], tid: int) -> tuple[object, object]:
    with sessions() as session:
        return summary._tables(session, tid, NAMES)


def change(url: str, sql: str) -> None:
    """``sql`` run by hand, the kept totals summed afresh after it (as a writer storing that
    result would have kept them)."""
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text(sql))
        for statement in pair_totals.REFILL:
            conn.exec_driver_sql(statement)
    engine.dispose()


@pytest.mark.parametrize("kind", BACKENDS)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matches=played, extra=st.sampled_from(["", "multi", "inexact", "malformed"]))
@example(  # b-a first met with b in seat 0, summed after a-b (a's version is older: it played
    # outside the tournament first), so only the seat tells which row comes first
    matches=[
        ("a", "c", (1, 2), None, False),
        ("b", "a", (1, 2), None, True),
        ("a", "b", (1, 2), None, True),
    ],
    extra="",
)
def test_totals_count_as_every_match(
    kind: str,
    matches: list[tuple[str, str, tuple[int, int], Termination | None, bool]],
    extra: str,
) -> None:
    with example_database(kind) as url:
        fill = Filler(url)
        t = fill.tournament("coins")
        for first, second, (r1, r2), fault, in_t in matches:
            bad = (0 if r1 >= r2 else 1, fault) if fault is not None else None
            fill.match("coins", [(ref(first), r1), (ref(second), r2)], fault=bad,
                       tournament=t if in_t else None)  # fmt: skip
        if extra == "multi":  # a three-seat match: counted match by match
            fill.match("coins", [(ref("a"), 1), (ref("b"), 2), (ref("c"), 2)], tournament=t)
        elif extra == "inexact":  # a score whose sums depend on their order
            fill.match("coins", [(ref("a"), 1), (ref("b"), 2)], tournament=t)
            change(url, "UPDATE seats SET score = 0.1 WHERE id = (SELECT MAX(id) FROM seats)")
        elif extra == "malformed":  # left out by both, and said
            fill.match("coins", [(ref("a"), 1), (ref("b"), 2)], tournament=t)
            change(url, "UPDATE seats SET fault = '[2]' WHERE id = (SELECT MAX(id) FROM seats)")
        with reading(url) as sessions:
            check_tables(sessions, t)


def check_tables(sessions: sessionmaker[Session], t: int) -> None:
    expected = per_match(sessions, t)
    got = summed(sessions, t)
    assert json.dumps(got) == json.dumps(expected)  # orders too
    with pytest.MonkeyPatch.context() as patch:  # the top 1, 2, 3 bots of 4 at width 1-3
        patch.setattr(grid, "cells_asked", lambda field, width: min(field, width))
        for width in (1, 2, 3):  # the top's cells come from the kept pair totals,
            # which hold no match id: in name order (the text looks them up), the
            # standings in theirs
            got, want = narrow(sessions, t, width), pairs_at(sessions, t, width)
            assert json.dumps(got[0]) == json.dumps(want[0])
            assert json.dumps(got[1], sort_keys=True) == json.dumps(want[1], sort_keys=True)


def narrow(sessions: sessionmaker[Session], tid: int, width: int) -> tuple[object, object]:
    """``tournament show``'s tables at ``width``: standings per seat, the top's cells only."""
    with sessions() as session:
        return summary._tables(session, tid, NAMES, width)


def pairs_at(sessions: sessionmaker[Session], tid: int, width: int) -> tuple[object, object]:
    """The same from every pair summed (``totals_tables`` at ``width``), or match by match."""
    with sessions() as session:
        if queries.two_player_only(session, tid):
            records = queries.pair_records(session, tid)
            if exact(records):
                faults, bad = queries.seat_faults(session, tid)
                records = queries.pair_records(session, tid, bad) if bad else records
                table, cross = totals_tables(records, faults, NAMES, width)
                return [s.to_dict() for s in table], cross
        return per_match(sessions, tid)


def test_a_malformed_match_is_said_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    fill = Filler(url)
    t = fill.tournament("coins")
    fill.match("coins", [(ref("a"), 1), (ref("b"), 2)], tournament=t)
    fill.match("coins", [(ref("b"), 1), (ref("a"), 2)], tournament=t)
    change(url, "UPDATE seats SET fault = 'nope' WHERE match_id = 2 AND seat = 0")
    with reading(url) as sessions:
        expected = per_match(sessions, t)
        said = capsys.readouterr().err
        assert json.dumps(summed(sessions, t)) == json.dumps(expected)
    assert capsys.readouterr().err == said
    assert said.count("warning: match 2 left out") == 1


@pytest.mark.parametrize("among", [{"a", "b", "c"}, {"a", "b"}, {"c"}])
def test_cells_by_outcome_are_the_cells_by_record(among: set[str]) -> None:
    """``outcomes_json`` (the kept totals: counts by outcome) gives ``pairs_json``'s cells
    (records by ranks, with where each pair first played) for the same matches."""
    records = [
        queries.PairRecord("a", "b", (1, 2), (1.0, 0.0), 3, 5),
        queries.PairRecord("a", "b", (1, 1), (0.5, 0.5), 2, 1),
        queries.PairRecord("b", "a", (2, 1), (0.0, 1.0), 4, 2),
        queries.PairRecord("a", "c", (2, 2), (0.5, 0.5), 1, 7),
        queries.PairRecord("c", "b", (2, 1), (0.0, 1.0), 2, 8),
        queries.PairRecord("c", "c", (1, 2), (1.0, 0.0), 1, 9),  # two versions of c
    ]
    outcomes = [
        queries.PairOutcomes("a", "b", 3, 2, 0),
        queries.PairOutcomes("b", "a", 0, 0, 4),
        queries.PairOutcomes("a", "c", 0, 1, 0),
        queries.PairOutcomes("c", "b", 0, 0, 2),
        queries.PairOutcomes("c", "c", 1, 0, 0),
    ]
    assert outcomes_json(outcomes, among) == pairs_json(records, among)
