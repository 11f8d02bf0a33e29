"""Group commit: ``complete_matches`` stores several results in the caller's transaction, each
exactly as ``complete_match`` would, skipping the ones that cannot be completed; a failing
group leaves every match of it as it was. SQLite (the executemany path) and PostgreSQL."""

from __future__ import annotations

import dataclasses
import sqlite3
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from bot_arena.db.models import Match, Move, Seat
from bot_arena.db.session import session_factory
from bot_arena.db.store import complete_match, complete_matches, load_match, record_of
from tests.db.test_db import _pending_match, make_record


def _scheduled(s: Session, players: int = 2) -> tuple[int, list[int]]:
    match, versions = _pending_match(s, players)
    s.add_all(
        Seat(match_id=match.id, players=players, seat=i, bot_version_id=v)
        for i, v in enumerate(versions)
    )
    s.flush()
    return match.id, versions


def _stored(s: Session, mid: int) -> tuple[str, list[tuple[Any, ...]], dict[str, Any]]:
    match = load_match(s, mid)
    assert match is not None
    moves = [(m.ply, m.seat, m.move, m.time_ms, m.info, m.forced) for m in match.moves]
    record = record_of(match).to_dict() if match.status == "done" else {}
    return match.status, moves, record


def test_a_group_stores_what_single_writes_store_and_skips_the_rest(engine: Engine) -> None:
    factory = session_factory(engine)
    first, second = make_record(plies=5), make_record(scores=(0.0, 1.0), plies=2)
    with factory.begin() as s:
        a, versions = _scheduled(s)
        s.add(Move(match_id=a, ply=9, seat=0, move="stale", time_ms=1.0))  # a crashed attempt
        b, _ = _scheduled(s)
        done, _ = _scheduled(s)
        assert complete_match(s, done, second, versions)
        three, _ = _scheduled(s, players=3)
        twin_a, _ = _scheduled(s)
        twin_b, _ = _scheduled(s)
    with factory.begin() as s:
        conn = s.connection()
        got = complete_matches(
            conn,
            [
                (a, first, versions, True),
                (b, second, versions, False),
                (done, first, versions, True),  # done already: untouched
                (three, first, versions, True),  # a 3-player match, a 2-seat record
                (a, second, versions, True),  # twice in one group: stored once
            ],
        )
        assert got == [True, True, False, False, False]
        assert complete_match(s, twin_a, first, versions)
        assert complete_match(s, twin_b, second, versions)
    with factory() as s:
        assert _stored(s, a)[1:] == _stored(s, twin_a)[1:]
        assert _stored(s, a)[0] == "done" and [m[0] for m in _stored(s, a)[1]] == list(range(5))
        assert _stored(s, b)[1:] == _stored(s, twin_b)[1:]
        assert _stored(s, done)[2]["seats"][0]["score"] == 0.0  # still the first result
        assert _stored(s, three)[0] == "pending"
        assert not s.scalar(select(func.count()).where(Seat.match_id == three, Seat.rank > 0))


def test_a_failing_group_leaves_every_match_of_it_pending(engine: Engine) -> None:
    factory = session_factory(engine)
    good = make_record()
    seats = list(good.seats)
    seats[0] = dataclasses.replace(seats[0], score=1.5)  # breaks the score constraint
    bad = dataclasses.replace(good, seats=seats)
    with factory.begin() as s:
        a, versions = _scheduled(s)
        b, _ = _scheduled(s)
    # the SQLite path runs on the DBAPI connection: its error is not wrapped by SQLAlchemy
    with pytest.raises((IntegrityError, sqlite3.IntegrityError)), factory.begin() as s:
        complete_matches(s.connection(), [(a, good, versions, False), (b, bad, versions, False)])
    with factory() as s:
        statuses = s.scalars(select(Match.status).where(Match.id.in_((a, b)))).all()
        assert statuses == ["pending", "pending"]
        assert not s.scalar(select(func.count()).select_from(Move))
