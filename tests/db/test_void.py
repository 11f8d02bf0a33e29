"""Void matches in the database: the runner never completes one, the schema requires a reason,
voiding is all or nothing, and a database from revision 0001 is upgraded keeping its rows."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import Engine, inspect, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from bot_arena.arena.tournament.voiding import VoidError, void_matches
from bot_arena.db import queries
from bot_arena.db.models import Match, Move, Seat, Tournament
from bot_arena.db.session import (
    current_revision,
    head_revision,
    make_engine,
    session_factory,
    upgrade,
)
from bot_arena.db.store import complete_match, complete_matches, save_match, version_for
from tests.db.test_db import REFS, make_record


def _tournament_with_pending(session: Session, n: int = 2) -> tuple[int, list[int], list[int]]:
    """A running tournament of ``n`` pending two-player matches; (id, match ids, versions)."""
    versions = [version_for(session, ref).id for ref in REFS]
    t = Tournament(game="coins", format="round-robin", seed=1, status="running")
    session.add(t)
    session.flush()
    ids = []
    for i in range(n):
        m = Match(tournament_id=t.id, round=i + 1, game="coins", players=2, seed=10 + i)
        session.add(m)
        session.flush()
        session.add_all(
            Seat(match_id=m.id, players=2, seat=s, bot_version_id=v) for s, v in enumerate(versions)
        )
        ids.append(m.id)
    session.flush()
    return t.id, ids, versions


def _snapshot(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    with engine.connect() as conn:
        return {
            table: [tuple(r) for r in conn.execute(text(f"SELECT * FROM {table} ORDER BY id"))]
            for table in ("tournaments", "matches", "seats", "moves")
        }


# --- the runner never completes a void match -------------------------------------------------


@pytest.mark.parametrize("fast", [True, False])
def test_complete_match_leaves_a_void_match_alone(
    factory: sessionmaker[Session], engine: Engine, fast: bool
) -> None:
    with factory.begin() as s:
        _, (mid, _), versions = _tournament_with_pending(s)
        void_matches(s, [mid], "wrong pairing")
    before = _snapshot(engine)
    with factory.begin() as s:
        assert complete_match(s, mid, make_record(), versions, fast=fast) is False
    assert _snapshot(engine) == before
    with factory() as s:
        m = s.get(Match, mid)
        assert m is not None and (m.status, m.termination) == ("void", None)


def test_complete_matches_skips_void_ones_in_a_group(
    factory: sessionmaker[Session], engine: Engine
) -> None:
    """The group commit (SQLite: one read picks the open matches, one executemany updates them):
    a void match in the group is not stored and does not upset the others."""
    with factory.begin() as s:
        _, (void_id, open_id), versions = _tournament_with_pending(s)
        void_matches(s, [void_id], "annulled")
    with engine.connect() as conn, conn.begin():
        stored = complete_matches(
            conn,
            [
                (void_id, make_record(), versions, False),
                (open_id, make_record(plies=2), versions, False),
            ],
        )
    assert stored == [False, True]
    with factory() as s:
        statuses = dict(s.execute(select(Match.id, Match.status)).all())
        assert statuses == {void_id: "void", open_id: "done"}
        moved = s.scalars(select(Move.match_id).distinct()).all()
        assert list(moved) == [open_id]
        seats = s.execute(select(Seat.match_id, Seat.rank).order_by(Seat.id)).all()
        assert [r for m, r in seats if m == void_id] == [None, None]


def test_a_done_match_voided_keeps_its_result_and_is_not_stored_again(
    factory: sessionmaker[Session], engine: Engine
) -> None:
    with factory.begin() as s:
        mid = save_match(s, make_record(plies=4), REFS)
        versions = [version_for(s, ref).id for ref in REFS]
        assert [v.previous_status for v in void_matches(s, [mid], "engine bug")] == ["done"]
    before = _snapshot(engine)
    with factory.begin() as s:
        assert complete_match(s, mid, make_record(scores=(0.0, 1.0)), versions) is False
    with engine.connect() as conn, conn.begin():
        assert complete_matches(conn, [(mid, make_record(), versions, True)]) == [False]
    after = _snapshot(engine)
    assert after == before
    assert len(after["moves"]) == 4  # the record of what happened stays
    with factory() as s:
        assert queries.results(s) == []  # and counts nowhere


# --- the schema -------------------------------------------------------------------------------


def test_a_void_match_needs_a_reason(factory: sessionmaker[Session]) -> None:
    with factory.begin() as s:
        _, (mid, _), _ = _tournament_with_pending(s)
    with pytest.raises(IntegrityError), factory.begin() as s:
        s.execute(text("UPDATE matches SET status = 'void' WHERE id = :m"), {"m": mid})
    with factory.begin() as s:
        s.execute(
            text("UPDATE matches SET status = 'void', void_reason = 'x' WHERE id = :m"), {"m": mid}
        )


# --- voiding: all or nothing ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ids", "reason", "replay", "fragment"),
    [
        ([1, 99], "r", False, "no match 99"),
        ([1], "  ", False, "reason is required"),
        ([1, 3], "r", False, "void already"),
        ([1, 4], "r", True, "not part of a tournament"),
    ],
)
def test_voiding_refuses_and_writes_nothing(
    factory: sessionmaker[Session],
    engine: Engine,
    ids: list[int],
    reason: str,
    replay: bool,
    fragment: str,
) -> None:
    with factory.begin() as s:
        _tournament_with_pending(s, 3)  # matches 1, 2, 3
        void_matches(s, [3], "first")
        assert save_match(s, make_record(), REFS) == 4  # outside a tournament
    before = _snapshot(engine)
    with pytest.raises(VoidError, match=fragment), factory.begin() as s:
        void_matches(s, ids, reason, replay=replay)
    assert _snapshot(engine) == before


def test_replay_copies_the_match_and_reopens_the_tournament(
    factory: sessionmaker[Session],
) -> None:
    with factory.begin() as s:
        tid, (a, b), versions = _tournament_with_pending(s)
        s.execute(
            text("UPDATE matches SET opening = '1', start_position = '3@1' WHERE id = :m"),
            {"m": a},
        )
        complete_match(s, a, make_record(), versions)
        complete_match(s, b, make_record(), versions)
        t = s.get(Tournament, tid)
        assert t is not None
        t.status = "done"
        t.finished = t.created
    with factory.begin() as s:
        (voided,) = void_matches(s, [a], "bot crashed for an arena bug", replay=True)
    assert (voided.match, voided.tournament, voided.previous_status) == (a, tid, "done")
    with factory() as s:
        old, new = s.get(Match, a), s.get(Match, voided.replay)
        assert old is not None and new is not None
        same = ("tournament_id", "round", "game", "params", "time_control", "players", "seed")
        same += ("opening", "start_position")
        assert {k: getattr(new, k) for k in same} == {k: getattr(old, k) for k in same}
        assert (new.status, new.termination, new.void_reason, new.moves) == (
            "pending",
            None,
            None,
            [],
        )
        assert [(x.seat, x.bot_version_id, x.rank) for x in new.seats] == [
            (x.seat, x.bot_version_id, None) for x in old.seats
        ]
        assert old.status == "void" and old.void_reason == "bot crashed for an arena bug"
        assert old.voided is not None and old.voided.tzinfo is not None
        t = s.get(Tournament, tid)
        assert t is not None and (t.status, t.finished) == ("running", None)
        assert queries.status_counts(s, tid) == {"pending": 1, "running": 0, "done": 1, "void": 1}


def test_voiding_the_last_matches_to_play_finishes_the_tournament(
    factory: sessionmaker[Session],
) -> None:
    with factory.begin() as s:
        tid, (a, b), versions = _tournament_with_pending(s)
        complete_match(s, a, make_record(), versions)
    with factory.begin() as s:
        void_matches(s, [b], "bot withdrew")
    with factory() as s:
        t = s.get(Tournament, tid)
        assert t is not None and t.status == "done" and t.finished is not None


# --- migration from revision 0001 -------------------------------------------------------------

OLD_ROWS = [
    "INSERT INTO bots (id, name, registered, created) VALUES"
    " (1, 'random', false, '2026-01-02 03:04:05'), (2, 'random:seed=1', false,"
    " '2026-01-02 03:04:05')",
    "INSERT INTO bot_versions (id, bot_id, kind, target, source, sha256, created) VALUES"
    f" (1, 1, 'builtin', 'random', NULL, '{'a' * 64}', '2026-01-02 03:04:05'),"
    f" (2, 2, 'builtin', 'random:seed=1', NULL, '{'b' * 64}', '2026-01-02 03:04:05')",
    "INSERT INTO tournaments (id, name, game, params, time_control, format, settings, seed,"
    " status, created, finished) VALUES (1, 'old', 'coins', '{}', '{}', 'round-robin', '{}', 5,"
    " 'done', '2026-01-02 03:04:05', '2026-01-02 03:05:00')",
    "INSERT INTO tournament_entries (id, tournament_id, position, spec, bot_version_id) VALUES"
    " (1, 1, 0, 'random', 1), (2, 1, 1, 'random:seed=1', 2)",
    "INSERT INTO matches (id, tournament_id, round, game, params, time_control, players, seed,"
    " opening, start_position, final_position, status, termination, started, finished,"
    " duration_s) VALUES"
    " (1, 1, 1, 'coins', '{}', '{}', 2, 7, '', '4@0', '0@1', 'done', 'normal',"
    " '2026-01-02 03:04:06', '2026-01-02 03:04:07', 1.0),"
    " (2, 1, 2, 'coins', '{}', '{}', 2, 8, '', '4@0', '0@0', 'done', 'normal',"
    " '2026-01-02 03:04:08', '2026-01-02 03:04:09', 1.0)",
    "INSERT INTO seats (id, match_id, players, seat, bot_version_id, utility, rank, score) VALUES"
    " (1, 1, 2, 0, 1, 1.0, 1, 1.0), (2, 1, 2, 1, 2, -1.0, 2, 0.0),"
    " (3, 2, 2, 0, 2, -1.0, 2, 0.0), (4, 2, 2, 1, 1, 1.0, 1, 1.0)",
    "INSERT INTO moves (id, match_id, ply, seat, move, time_ms, forced) VALUES"
    " (1, 1, 0, 0, '2', 1.5, false), (2, 1, 1, 1, '1', 2.5, false), (3, 1, 2, 0, '1', 0.5,"
    " false), (4, 2, 0, 0, '1', 1.0, false)",
]
OLD_TABLES = {
    "bots": "id, name, registered",
    "bot_versions": "id, bot_id, kind, target, sha256",
    "tournaments": "id, name, game, status, finished",
    "tournament_entries": "id, tournament_id, position, spec, bot_version_id",
    "matches": "id, tournament_id, round, seed, status, termination, started, finished",
    "seats": "id, match_id, seat, bot_version_id, utility, rank, score",
    "moves": "id, match_id, ply, seat, move, time_ms",
}


def _old_rows(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    with engine.connect() as conn:
        return {
            table: [tuple(r) for r in conn.execute(text(f"SELECT {cols} FROM {table} ORDER BY id"))]
            for table, cols in OLD_TABLES.items()
        }


@pytest.mark.new_schema  # its subject: the making of the database
def test_a_revision_0001_database_is_upgraded_keeping_its_rows(db_url: str) -> None:
    old = make_engine(db_url, migrate=False)
    upgrade(old, "0001")
    assert current_revision(old) == "0001"
    with old.begin() as conn:
        for statement in OLD_ROWS:
            conn.execute(text(statement))
    before = _old_rows(old)
    assert [len(before[t]) for t in ("matches", "seats", "moves")] == [2, 4, 4]
    old.dispose()

    eng = make_engine(db_url)  # what every command does: migrate on open
    try:
        assert current_revision(eng) == head_revision() != "0001"
        assert _old_rows(eng) == before  # seats and moves too (SQLite rebuilds `matches`)
        columns = {c["name"] for c in inspect(eng).get_columns("matches")}
        assert {"void_reason", "voided"} <= columns
        checks = {c["name"] for c in inspect(eng).get_check_constraints("matches")}
        assert {"ck_matches_void_reason", "ck_matches_done_result"} <= checks
        if eng.dialect.name == "sqlite":
            with eng.connect() as conn:  # foreign keys are on again and nothing dangles
                assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
                assert conn.exec_driver_sql("PRAGMA foreign_key_check").all() == []
        factory = session_factory(eng)
        with factory() as s:  # the old results read as before
            assert [len(r.seats) for r in queries.results(s, 1)] == [2, 2]
        with factory.begin() as s:  # and the new column works on the old rows
            (voided,) = void_matches(s, [2], "upgraded and annulled")
            assert voided.previous_status == "done"
        with factory() as s:
            assert [r.match_id for r in queries.results(s, 1)] == [1]
            assert len(s.scalars(select(Move).where(Move.match_id == 2)).all()) == 1
    finally:
        eng.dispose()


@pytest.mark.new_schema  # its subject: the making of the database
def test_settings_json_survives_the_upgrade(db_url: str) -> None:
    """JSON columns of the rebuilt table keep their values (SQLite copies them as text)."""
    old = make_engine(db_url, migrate=False)
    upgrade(old, "0001")
    params = {"coins": 4, "max_take": 2}
    with old.begin() as conn:
        for statement in OLD_ROWS[:3]:
            conn.execute(text(statement))
        conn.execute(
            text(
                "INSERT INTO matches (id, tournament_id, round, game, params, time_control,"
                " players, seed, opening, status) VALUES (1, 1, 0, 'coins', :p, '{}', 2, 0, '',"
                " 'pending')"
            ),
            {"p": json.dumps(params)},
        )
    old.dispose()
    eng = make_engine(db_url)
    try:
        with session_factory(eng)() as s:
            m = s.get(Match, 1)
            assert m is not None and m.params == params and m.void_reason is None
    finally:
        eng.dispose()
