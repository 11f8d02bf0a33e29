"""``matches.sandbox``: the confinement level a result's bots ran under. Every store path writes
it, the schema accepts only the arena's levels, and a database from revision 0002 is upgraded
with its old results unrecorded (NULL, read as unconfined)."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import inspect, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from bot_arena.arena.ratings.query import confinement_summary, render_leaderboard
from bot_arena.arena.transport.sandbox.mode import LEVELS
from bot_arena.db import queries
from bot_arena.db.models import SANDBOX_LEVELS, Match, Seat, Tournament
from bot_arena.db.session import (
    current_revision,
    head_revision,
    make_engine,
    session_factory,
    upgrade,
)
from bot_arena.db.store import complete_match, complete_matches, save_match, version_for
from tests.db.test_db import REFS, make_record
from tests.db.test_void import OLD_ROWS, _old_rows


def test_the_schema_knows_the_levels_of_the_sandbox() -> None:
    assert SANDBOX_LEVELS == LEVELS


def _pending(session: Session, n: int) -> tuple[int, list[int], list[int]]:
    """A running tournament of ``n`` pending two-player matches: (id, match ids, versions)."""
    versions = [version_for(session, ref).id for ref in REFS]
    t = Tournament(game="coins", format="round-robin", seed=1, status="running")
    session.add(t)
    session.flush()
    ids = []
    for i in range(n):
        m = Match(tournament_id=t.id, round=i + 1, game="coins", players=2, seed=i)
        session.add(m)
        session.flush()
        session.add_all(
            Seat(match_id=m.id, players=2, seat=s, bot_version_id=v) for s, v in enumerate(versions)
        )
        ids.append(m.id)
    return t.id, ids, versions


@pytest.mark.parametrize("fast", [True, False])
def test_every_store_path_writes_the_level(factory: sessionmaker[Session], fast: bool) -> None:
    with factory.begin() as s:
        tid, (a, b, c, d), versions = _pending(s, 4)
        assert complete_match(s, a, make_record(), versions, fast=fast, sandbox="partial")
        assert complete_match(s, b, make_record(), versions, fast=fast)  # not known: NULL
        conn = s.connection()
        assert complete_matches(conn, [(c, make_record(), versions, True)], sandbox="off") == [True]
        assert save_match(s, make_record(), REFS, tid, d, sandbox="confined") == d
        free = save_match(s, make_record(), REFS, sandbox="off")  # outside a tournament
    with factory() as s:
        got = dict(s.execute(select(Match.id, Match.sandbox)).all())
        assert got == {a: "partial", b: None, c: "off", d: "confined", free: "off"}
        assert queries.sandbox_counts(s, tid) == {"partial": 1, None: 1, "off": 1, "confined": 1}


def test_only_the_levels_are_accepted(factory: sessionmaker[Session]) -> None:
    with factory.begin() as s:
        _, (a,), versions = _pending(s, 1)
    with pytest.raises((IntegrityError, sqlite3.IntegrityError)), factory.begin() as s:
        complete_match(s, a, make_record(), versions, sandbox="sort of")
    with factory() as s:
        match = s.get(Match, a)
        assert match is not None and match.status == "pending" and match.sandbox is None


def test_sandbox_counts_read_done_matches_only(factory: sessionmaker[Session]) -> None:
    with factory.begin() as s:
        tid, (a, _b), versions = _pending(s, 2)
        complete_match(s, a, make_record(), versions, sandbox="partial")
    with factory() as s:
        assert queries.sandbox_counts(s, tid) == {"partial": 1}  # the pending one is not a result


def test_the_summary_line() -> None:
    assert confinement_summary({}) is None
    assert confinement_summary({"confined": 7}) is None
    assert (
        confinement_summary({"confined": 28, "off": 8, None: 2, "partial": 2})
        == "12 of 40 results from bots not fully confined (off 10, partial 2)"
    )
    assert (
        confinement_summary({"partial": 1}, "rated results")
        == "1 of 1 rated results from bots not fully confined (partial 1)"
    )
    assert confinement_summary({None: 3, "confined": 1}) == (
        "3 of 4 results from bots not fully confined (off 3)"
    )


@pytest.mark.new_schema  # its subject: the making of the database
def test_a_revision_0002_database_is_upgraded_with_its_results_unrecorded(db_url: str) -> None:
    old = make_engine(db_url, migrate=False)
    upgrade(old, "0002")
    assert current_revision(old) == "0002"
    with old.begin() as conn:
        for statement in OLD_ROWS:
            conn.execute(text(statement))
    before = _old_rows(old)
    assert "sandbox" not in {c["name"] for c in inspect(old).get_columns("matches")}
    old.dispose()

    eng = make_engine(db_url)  # what every command does: migrate on open
    try:
        assert current_revision(eng) == head_revision() != "0002"
        assert _old_rows(eng) == before  # seats and moves too (SQLite rebuilds `matches`)
        assert "sandbox" in {c["name"] for c in inspect(eng).get_columns("matches")}
        checks = {c["name"] for c in inspect(eng).get_check_constraints("matches")}
        assert {"ck_matches_sandbox", "ck_matches_void_reason", "ck_matches_done_result"} <= checks
        if eng.dialect.name == "sqlite":
            with eng.connect() as conn:  # foreign keys are on again and nothing dangles
                assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
                assert conn.exec_driver_sql("PRAGMA foreign_key_check").all() == []
        factory = session_factory(eng)
        with factory() as s:
            assert s.execute(select(Match.sandbox).order_by(Match.id)).scalars().all() == [
                None,
                None,
            ]
            assert queries.sandbox_counts(s, 1) == {None: 2}
            board = render_leaderboard(s, tournament_id=1)
            assert board.splitlines()[-1] == (
                "note: 2 of 2 rated results from bots not fully confined (off 2)"
            )
        with factory.begin() as s:  # a new result in the upgraded database records its level
            # (explicit ids, as the old rows have: PostgreSQL's sequences never saw those)
            s.execute(
                text(
                    "INSERT INTO matches (id, tournament_id, round, game, params, time_control,"
                    " players, seed, opening, status) VALUES (3, 1, 3, 'coins', '{}', '{}', 2,"
                    " 9, '', 'pending')"
                )
            )
            s.execute(
                text(
                    "INSERT INTO seats (id, match_id, players, seat, bot_version_id) VALUES"
                    " (5, 3, 2, 0, 1), (6, 3, 2, 1, 2)"
                )
            )
            assert complete_match(s, 3, make_record(plies=0), [1, 2], sandbox="confined")
        with factory() as s:
            assert s.execute(select(Match.sandbox).order_by(Match.id)).scalars().all() == [
                None,
                None,
                "confined",
            ]
    finally:
        eng.dispose()
