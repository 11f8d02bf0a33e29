"""The pair totals the writes keep (``db/pair_totals.py``, migration 0016) equal the GROUP BY
over the matches after any history of writes: schedules, groups of results through each of the
three writers, replays of interrupted matches, games outside a tournament, voids with and
without replay; deleting a tournament takes its totals; the migration fills the table from the
matches already stored."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.record import MatchRecord, SeatResult, Termination
from bot_arena.arena.tournament.voiding import VoidError, void_matches
from bot_arena.db import pair_totals, results
from bot_arena.db.models import Match, Tournament
from bot_arena.db.session import downgrade, make_engine, session_factory, upgrade
from bot_arena.db.store import save_match, version_for
from bot_arena.db.writer import writer_for
from tests.db.dbtest import BACKENDS, example_database

pytestmark = pytest.mark.slow

REFS = [resolve("random"), resolve("random:seed=3"), resolve("random:seed=5")]
SANDBOXES = [None, "confined", "off"]


def record(ranks: list[int]) -> MatchRecord:
    n = len(ranks)
    return MatchRecord(
        game="coins",
        params={},
        start_position="",
        seats=[
            SeatResult(f"b{i}", float(-r), r, (n - r) / max(1, n - 1)) for i, r in enumerate(ranks)
        ],
        moves=[],
        termination=Termination.NORMAL,
        final_position="",
        started=1000.0,
        finished=1001.0,
    )


def differences(engine: Engine) -> list[tuple[str, Any]]:
    with engine.connect() as conn:
        return pair_totals.differences(lambda sql: conn.execute(text(sql)).all())


def same_reads(session: Session) -> None:
    """The leaderboard's read of the table equals the ORM's GROUP BY, per selection."""
    reads = results.reads_of(session)
    tids = [t.id for t in session.query(Tournament)]
    for tid, game in [(None, None), (None, "coins"), *[(t, None) for t in tids]]:
        _, bad = results.faulted_seats(session, tournament_id=tid, game=game)
        expected = results.pair_totals(session, tournament_id=tid, game=game, leave_out=bad)
        got = reads.pair_totals(tournament_id=tid, game=game, leave_out=bad)
        assert sorted(got, key=repr) == sorted(expected, key=repr)


ranks2 = st.sampled_from([[1, 2], [2, 1], [1, 1]])
ranks3 = st.sampled_from([[1, 2, 3], [3, 1, 2], [1, 1, 3]])
step = st.one_of(
    st.tuples(
        st.just("schedule"),
        st.integers(0, 1),  # which tournament
        st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=4),
        st.booleans(),  # three players
        st.booleans(),  # fast writer
    ),
    st.tuples(
        st.just("complete"),
        st.lists(st.tuples(st.integers(0, 50), ranks2, ranks3, st.booleans()), max_size=5),
        st.sampled_from(SANDBOXES),
        st.booleans(),  # fast writer
    ),
    st.tuples(st.just("running"), st.lists(st.integers(0, 50), max_size=4), st.booleans()),
    st.tuples(st.just("void"), st.integers(0, 50), st.booleans()),
    st.tuples(
        st.just("play"), st.integers(0, 2), st.integers(0, 2), ranks2, st.sampled_from(SANDBOXES)
    ),
)


def run(engine: Engine, steps: list[Any], *, delete: bool = True) -> None:
    sessions = session_factory(engine)
    with sessions.begin() as s:
        versions = [version_for(s, ref).id for ref in REFS]
        tournaments = []
        for _ in range(2):
            t = Tournament(game="coins", format="round-robin", seed=1, status="running")
            s.add(t)
            s.flush()
            tournaments.append(t.id)
    for op in steps:
        with sessions.begin() as s:
            ids = [m.id for m in s.query(Match).order_by(Match.id)]
            if op[0] == "schedule":
                _, t, pairs, three, fast = op
                seats = [
                    [versions[a], versions[b], *([versions[a]] if three else [])] for a, b in pairs
                ]
                writer_for(s.connection(), fast=fast).insert_schedule(
                    tournaments[t], "coins", {}, {}, 3 if three else 2,
                    [(1, i, "", None, v) for i, v in enumerate(seats)],
                )  # fmt: skip
            elif op[0] == "complete" and ids:
                _, picks, sandbox, fast = op
                items = []
                for at, two, three, replace in picks:
                    match = s.get(Match, ids[at % len(ids)])
                    assert match is not None
                    ranks = two if match.players == 2 else three
                    seats = [seat.bot_version_id for seat in match.seats]
                    items.append((match.id, record(ranks), seats, replace))
                writer_for(s.connection(), fast=fast).complete_matches(items, sandbox=sandbox)
            elif op[0] == "running" and ids:
                writer_for(s.connection(), fast=op[2]).mark_running(
                    [ids[i % len(ids)] for i in op[1]]
                )
            elif op[0] == "void" and ids:
                with contextlib.suppress(VoidError):  # void already, or a replay outside one
                    void_matches(s, [ids[op[1] % len(ids)]], "wrong pairing", replay=op[2])
            elif op[0] == "play":
                _, a, b, ranks, sandbox = op
                save_match(s, record(ranks), [REFS[a], REFS[b]], sandbox=sandbox)
        assert differences(engine) == []
    with sessions() as s:
        same_reads(s)
    if delete:
        with sessions.begin() as s:  # deleting a tournament takes its totals with it
            s.delete(s.get(Tournament, tournaments[0]))
        assert differences(engine) == []


@pytest.mark.parametrize("kind", BACKENDS)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=1, max_size=12))
def test_the_kept_totals_equal_the_matches_grouped(kind: str, steps: list[Any]) -> None:
    with example_database(kind) as url:  # a schema migrated once, no row (run alters none)
        engine = make_engine(url)
        try:
            run(engine, steps)
        finally:
            engine.dispose()


@pytest.mark.parametrize("fast", [True, False])
def test_each_writer_and_a_void_keep_the_totals(db_url: str, fast: bool) -> None:
    """One history through one writer (fast: SQLite's or PostgreSQL's own; else SQLAlchemy
    Core): a group of results, an interrupted match replayed, a void with its replay, a game
    outside any tournament; the table checked after each step."""
    engine = make_engine(db_url)
    try:
        run(
            engine,
            [
                ("schedule", 0, [(0, 1), (1, 0), (0, 1), (2, 1)], False, fast),
                ("schedule", 1, [(0, 1)], True, fast),
                ("complete", [(0, [1, 2], [], False), (1, [1, 1], [], False)], None, fast),
                ("running", [2], fast),
                ("complete", [(2, [2, 1], [], True), (4, [], [1, 2, 3], False)], "off", fast),
                ("void", 0, True),
                ("complete", [(3, [1, 2], [], False), (5, [2, 1], [], False)], "off", fast),
                ("play", 1, 2, [1, 1], "confined"),
            ],
        )
    finally:
        engine.dispose()


def test_a_match_counted_twice_or_not_at_all_is_found(db_url: str) -> None:
    """The comparison itself sees a wrong table (a count kept twice, a row left behind)."""
    engine = make_engine(db_url)
    try:
        run(
            engine,
            [
                ("schedule", 0, [(0, 1)], False, True),
                ("complete", [(0, [1, 2], [], False)], None, True),
                ("play", 1, 2, [1, 1], "off"),
            ],
            delete=False,
        )
        with engine.begin() as conn:
            conn.execute(text("UPDATE pair_totals SET wins = wins + 1 WHERE wins > 0"))
        found = differences(engine)
        assert {side for side, _ in found} == {"pair_totals", "pair_totals by matches"}
        with engine.begin() as conn:
            conn.execute(
                text("DELETE FROM seat_totals WHERE id = (SELECT MIN(id) FROM seat_totals)")
            )
        assert "seat_totals by matches" in [side for side, _ in differences(engine)]
    finally:
        engine.dispose()


@pytest.mark.new_schema  # its subject: the making of the database
def test_the_migration_fills_the_table_from_the_stored_matches(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        run(
            engine,
            [
                ("schedule", 0, [(0, 1), (1, 0), (2, 2)], False, True),
                (
                    "complete",
                    [(0, [1, 2], [1, 2, 3], False), (1, [1, 1], [1, 2, 3], False)],
                    None,
                    True,
                ),
                ("complete", [(2, [2, 1], [1, 2, 3], False)], "confined", True),
                ("play", 0, 1, [1, 2], "off"),
            ],
            delete=False,
        )
        tables = [kept for kept, _ in pair_totals.STORED.values()]
        with engine.connect() as conn:
            before = [conn.execute(text(kept)).all() for kept in tables]
        assert all(before)
        downgrade(engine, "0015")
        upgrade(engine)
        with engine.connect() as conn:
            after = [conn.execute(text(kept)).all() for kept in tables]
        assert [sorted(rows, key=repr) for rows in after] == [
            sorted(rows, key=repr) for rows in before
        ]
        assert differences(engine) == []
    finally:
        engine.dispose()
