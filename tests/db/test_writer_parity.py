"""The two writers of ``db.writer`` write the same rows.

One scenario runs every write operation (schedules of two and three seats and an empty one;
claims of pending, running, done and missing matches; completions that are stored, replace a
crashed attempt's moves, or are refused: done, void, missing, wrong seat count, twice in one
call; each sandbox level) on a fresh database, once with each writer, and the databases are
compared after every step. The reference is always ``SQLiteWriter`` on a SQLite file;
``CoreWriter`` runs on the backend of the ``db_url`` fixture: SQLite (then the stored bytes
must agree too: SQLite's ``quote()`` of every column tells text from numbers and reals from
integers) and, with ``$ARENA_TEST_PG_URL``, PostgreSQL (the typed values read back must agree).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, cast

import pytest
from sqlalchemy import Connection, Engine, Table, insert, select, update
from sqlalchemy.exc import StatementError
from sqlalchemy.orm import Session

from bot_arena.arena.match.botref import BotRef, sha256_text
from bot_arena.arena.match.record import MatchRecord, Termination
from bot_arena.db import tournaments
from bot_arena.db.core_writer import CoreWriter
from bot_arena.db.models import Match, Move, Seat
from bot_arena.db.pg_fast import PostgresWriter
from bot_arena.db.session import make_engine
from bot_arena.db.sqlite_fast import SQLiteWriter
from bot_arena.db.store import versions_for
from bot_arena.db.writer import MatchWriter, writer_connection, writer_for
from tests.db.written_records import T0, written_record

WRITTEN = ("matches", "seats", "moves")  # the tables the writers write


def _record(seats: int, plies: int, *, tc: dict[str, Any], shift: float = 0.0) -> MatchRecord:
    names = [f"bot{i}" for i in range(seats)]
    return written_record(names, plies, tc=tc, params={"coins": 4}, shift=shift)


def _refs() -> list[BotRef]:
    return [
        BotRef(f"bot{i}", "module", f"bot{i}.py", f"v{i}", sha256_text(f"v{i}")) for i in range(3)
    ]


Step = tuple[str, Callable[[MatchWriter], object]]


def _setup(engine: Engine) -> tuple[list[int], list[int]]:
    """Three bot versions and three tournaments (no match yet): (version ids, tournament ids),
    written by the same code for both writers."""
    with Session(engine) as session, session.begin():
        versions = [v.id for v in versions_for(session, _refs())]
        tids = [
            tournaments.create_tournament(
                session,
                name=f"t{i}",
                game="coins",
                params={},
                time_control={},
                fmt="round-robin",
                settings={},
                seed=i,
                entries=[(f"bot{j}", versions[j]) for j in range(3)],
            )
            for i in range(3)
        ]
    return versions, tids


def _steps(versions: list[int], tids: list[int]) -> Iterator[Step]:
    """The write operations in order. Ids are those of a fresh database (both runs agree)."""
    two, three = versions[:2], versions
    params = {"coins": 4, "nested": {"a": [1, 2.5, None]}, "text": "ü"}
    tc = {"move_time": 0.5, "margin": 0.05}
    schedule_2p = [
        (1, 1001, "", None, two),
        (1, 1002, "1 2", "3@1", two[::-1]),
        (2, 1003, "2", None, two),
        (2, 1004, "", "2@0", two[::-1]),
        (3, 1005, "1", None, two),
    ]
    yield (
        "insert_schedule 2p",
        lambda w: w.insert_schedule(tids[0], "coins", params, tc, 2, schedule_2p),
    )
    schedule_3p = [(1, 7, "", None, three), (2, 8, "", "9@2", three[::-1])]
    yield (
        "insert_schedule 3p",
        lambda w: w.insert_schedule(tids[1], "coins", {}, {}, 3, schedule_3p),
    )
    yield "insert_schedule empty", lambda w: w.insert_schedule(tids[2], "coins", {}, tc, 2, [])
    # matches 1-5 are 2-player, 6-7 3-player
    yield "mark_running", lambda w: w.mark_running([1, 2, 2, 999])
    yield "mark_running none", lambda w: w.mark_running([])
    per_seat = {"seats": [{"move_time": 1.0}, {"move_time": 2.0}]}
    first, second = _record(2, 5, tc=tc), _record(2, 2, tc=per_seat, shift=10.0)
    second.termination = Termination.ADJUDICATED  # its verdict is stored beside it
    second.adjudication = {"rule": "draw", "winner": None, "scores": [3, -5, 0, 10]}
    yield (
        "complete_matches",
        lambda w: w.complete_matches(
            [
                (1, first, two, True),  # running, with a crashed attempt's moves: replaced
                (2, second, two[::-1], False),
                (2, first, two, True),  # twice in one call: stored once
                (6, first, two, True),  # a 3-player match, a 2-seat record
                (5, first, two, False),  # void
                (999, first, two, False),  # missing
            ],
            sandbox="partial",
        ),
    )
    yield (
        "complete_matches done",
        lambda w: w.complete_matches([(1, second, two, True)], sandbox="off"),
    )
    yield "complete_matches none", lambda w: w.complete_matches([], sandbox="confined")
    yield "mark_running done and pending", lambda w: w.mark_running([1, 3, 4])
    late = _record(2, 0, tc={}, shift=-5.0)
    late.finished = late.started - 1.0  # a clock that went back: duration 0
    yield (
        "complete_matches again",
        lambda w: w.complete_matches(
            [
                (3, late, two, True),
                (7, _record(3, 4, tc=tc, shift=20.0), three[::-1], False),
                # moves beyond one multi-row INSERT of the SQLite writer (71 rows), and a rest
                (4, _record(2, 150, tc=tc, shift=30.0), two, True),
            ],
            sandbox="confined",
        ),
    )
    yield (
        "complete_matches unconfined",
        lambda w: w.complete_matches(
            [(6, _record(3, 2, tc=tc, shift=40.0), three, False)], sandbox="off"
        ),
    )
    # more matches (and seats) than one multi-row INSERT of the SQLite writer holds, and a rest
    long = [(1 + i // 10, 5000 + i, str(i), None, two[:: 1 - 2 * (i % 2)]) for i in range(130)]
    yield (
        "insert_schedule long",
        lambda w: w.insert_schedule(tids[2], "coins", params, tc, 2, long),
    )


def _prepare_between(conn: Connection, step: str) -> None:
    """What happens between the writes (other code, identical for both runs)."""
    if step == "mark_running":
        conn.execute(  # an interrupted attempt left a move on running match 1
            insert(Move), [{"match_id": 1, "ply": 7, "seat": 0, "move": "stale", "time_ms": 1.0}]
        )
        conn.execute(
            update(Match)
            .where(Match.id == 5)
            .values(status="void", void_reason="annulled", voided=datetime.fromtimestamp(T0, UTC))
        )


Rows = dict[str, list[dict[str, Any]]]


def _typed(engine: Engine) -> Rows:
    """Every row of the written tables as SQLAlchemy reads them (the column types' values).
    Moves without their id: SQLite gives a deleted move's id to the next one, PostgreSQL's
    sequence does not (a move is (match, ply) anyway)."""
    matches, seats = (cast(Table, model.__table__) for model in (Match, Seat))
    moves = cast(Table, Move.__table__)
    with engine.connect() as conn:
        out = {
            t.name: [r._asdict() for r in conn.execute(select(t).order_by(t.c.id))]
            for t in (matches, seats)
        }
        columns = [c for c in moves.c if c.name != "id"]
        query = select(*columns).order_by(moves.c.match_id, moves.c.ply)
        out["moves"] = [r._asdict() for r in conn.execute(query)]
    return out


def _stored(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the written tables as SQLite stores it: ``quote()`` of each column."""
    out = {}
    with engine.connect() as conn:
        for table in WRITTEN:
            columns = [r[1] for r in conn.exec_driver_sql(f"PRAGMA table_info({table})")]
            quoted = ", ".join(f"quote({c})" for c in columns)
            rows = conn.exec_driver_sql(f"SELECT {quoted} FROM {table} ORDER BY id")
            out[table] = [tuple(r) for r in rows]
    return out


Run = list[tuple[str, object, Rows, dict[str, list[tuple[Any, ...]]]]]


def _run(url: str, make: Callable[[Connection], MatchWriter]) -> Run:
    """Every step on a fresh database with one writer (made once for its connection): per step
    its name, what the writer returned and the rows after it (typed, and stored on SQLite)."""
    engine = make_engine(url)
    try:
        versions, tids = _setup(engine)
        out: Run = []
        with engine.connect() as conn:
            writer = make(conn)
            for name, write in _steps(versions, tids):
                with conn.begin():
                    _prepare_between(conn, name)
                    returned = write(writer)
                stored = _stored(engine) if engine.dialect.name == "sqlite" else {}
                out.append((name, returned, _typed(engine), stored))
        return out
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The scenario written by the SQLite fast path."""
    path = tmp_path_factory.mktemp("reference") / "fast.db"
    return _run(f"sqlite:///{path}", SQLiteWriter)


def test_the_core_writer_writes_the_rows_of_the_sqlite_writer(db_url: str, reference: Run) -> None:
    core = _run(db_url, CoreWriter)
    assert [step[0] for step in core] == [step[0] for step in reference]
    for (name, got, typed, stored), (_, want, want_typed, want_stored) in zip(
        core, reference, strict=True
    ):
        assert got == want, name
        assert typed == want_typed, name
        if stored:  # SQLite: the same bytes, not only the same values
            assert stored == want_stored, name
    # the scenario did what it says (so the comparison covers each case)
    returned = dict((name, got) for name, got, _, _ in core)
    assert returned["insert_schedule 2p"] == [1, 2, 3, 4, 5]
    assert returned["insert_schedule empty"] == []
    assert returned["complete_matches"] == [True, True, False, False, False, False]
    assert returned["complete_matches done"] == [False]
    assert returned["complete_matches again"] == [True, True, True]
    assert returned["complete_matches unconfined"] == [True]
    assert returned["insert_schedule long"] == list(range(8, 138))
    statuses = [row["status"] for row in core[-1][2]["matches"]]
    assert statuses == ["done", "done", "done", "done", "void", "done", "done"] + ["pending"] * 130
    levels = [row["sandbox"] for row in core[-1][2]["matches"]][:7]
    assert levels == ["partial", "partial", "confined", "confined", None, "off", "confined"]
    moves_of_1 = [row["move"] for row in core[-1][2]["moves"] if row["match_id"] == 1]
    assert moves_of_1 == ["1", "2", "1", "2", "1"]  # the stale move is gone


def test_the_postgres_writer_writes_the_rows_of_the_sqlite_writer(
    db_url: str, reference: Run
) -> None:
    """``PostgresWriter`` (arrays and COPY, one statement per table) writes on PostgreSQL the
    rows ``CoreWriter`` writes there, which are the reference's (the test above)."""
    if not db_url.startswith("postgresql"):
        pytest.skip("PostgreSQL only")
    fast = _run(db_url, PostgresWriter)
    assert [step[0] for step in fast] == [step[0] for step in reference]
    for (name, got, typed, _), (_, want, want_typed, _) in zip(fast, reference, strict=True):
        assert got == want, name
        assert typed == want_typed, name


def test_the_claims_mark_pending_matches_only(reference: Run) -> None:
    """Statuses after the claims: a pending match claimed becomes running, a done one stays."""
    after_claims = dict((name, typed) for name, _, typed, _ in reference)
    first = [row["status"] for row in after_claims["mark_running"]["matches"]]
    assert first == ["running", "running", "pending", "pending", "void", "pending", "pending"]
    again = [row["status"] for row in after_claims["mark_running done and pending"]["matches"]]
    assert again == ["done", "done", "running", "running", "void", "pending", "pending"]


def test_writer_for_takes_the_fast_path_on_sqlite_only(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            fast = engine.dialect.name == "sqlite"
            assert isinstance(writer_for(conn), SQLiteWriter if fast else PostgresWriter)
            assert isinstance(writer_for(conn, fast=False), CoreWriter)
            if not fast:
                with pytest.raises(ValueError, match="SQLiteWriter on a postgresql"):
                    SQLiteWriter(conn)
    finally:
        engine.dispose()


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("where", ["info", "fault", "adjudication"])
def test_both_writers_refuse_a_number_json_cannot_carry(
    db_url: str, fast: bool, where: str
) -> None:
    """A NaN or an infinity that reached a record (the protocol drops them from a bot's info,
    so this is a bug of ours) fails the write loudly and stores nothing: never a ``NaN`` token
    in a JSON column, which browsers and strict parsers refuse when it is read back."""
    record = _record(2, 3, tc={"move_time": 0.5})
    if where == "info":
        record.moves[1].info = {"values": [math.nan, 0.5]}
    elif where == "fault":
        fault = record.seats[1].fault
        assert fault is not None
        fault.detail["overrun_ms"] = math.inf
    else:
        record.termination = Termination.ADJUDICATED
        record.adjudication = {"rule": "draw", "scores": [-math.inf]}
    engine = make_engine(db_url)
    try:
        versions, tids = _setup(engine)
        with engine.connect() as conn:
            writer = writer_for(conn, fast=fast)
            with conn.begin():
                writer.insert_schedule(
                    tids[0], "coins", {}, {}, 2, [(1, 1, "", None, versions[:2])]
                )
            # SQLAlchemy may wrap the serializer's ValueError in its StatementError
            refused = pytest.raises((ValueError, StatementError), match="not JSON compliant")
            with refused, conn.begin():
                writer.complete_matches([(1, record, versions[:2], False)], sandbox="off")
        typed = _typed(engine)
        assert [m["status"] for m in typed["matches"]] == ["pending"]
        assert typed["moves"] == []
    finally:
        engine.dispose()


def test_the_writer_thread_s_connection_does_not_wait_for_the_log_flush_on_postgresql(
    db_url: str,
) -> None:
    """Its commits have SQLite's ``synchronous=NORMAL`` durability (``writer_connection``);
    every other connection keeps the server's setting."""
    engine = make_engine(db_url)
    try:
        with writer_connection(engine) as conn:
            if engine.dialect.name != "postgresql":
                assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
                return
            with conn.begin():  # as the writer thread uses it: a transaction at a time
                assert conn.exec_driver_sql("SHOW synchronous_commit").scalar() == "off"
        with engine.connect() as other:
            assert other.exec_driver_sql("SHOW synchronous_commit").scalar() == "on"
    finally:
        engine.dispose()
