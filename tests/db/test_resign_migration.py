"""Revision 0005: ``resign`` is a termination of its own (a person giving the game up was stored
as a crash). The schema accepts it, a database from 0004 is upgraded with its rows as they were,
and the downgrade stores resignations as crashes again, in the match and in its seat's fault,
so an old Bot Arena reads a record whose termination is its first fault's."""

from __future__ import annotations

import dataclasses

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import IntegrityError

from bot_arena.arena.match.faults import gave_up
from bot_arena.arena.match.record import Termination
from bot_arena.db.models import Match, Seat
from bot_arena.db.session import (
    current_revision,
    downgrade,
    head_revision,
    make_engine,
    session_factory,
)
from bot_arena.db.store import save_match
from tests.db.test_db import REFS, make_record


def _resigned() -> object:
    record = make_record((1.0, 0.0))
    loser = dataclasses.replace(record.seats[1], fault=gave_up("resigned", "resign"))
    return dataclasses.replace(
        record, seats=[record.seats[0], loser], termination=Termination.RESIGN
    )


@pytest.mark.new_schema  # its subject: the making of the database
def test_resign_is_stored_and_downgraded_to_crash(db_url: str) -> None:
    eng = make_engine(db_url)
    try:
        factory = session_factory(eng)
        with factory.begin() as s:
            mid = save_match(s, _resigned(), REFS)  # type: ignore[arg-type]
        with factory() as s:
            assert s.get(Match, mid).termination == "resign"  # type: ignore[union-attr]
        with pytest.raises(IntegrityError), factory.begin() as s:
            s.execute(text(f"UPDATE matches SET termination = 'resigned' WHERE id = {mid}"))

        downgrade(eng, "0004")
        assert current_revision(eng) == "0004"
        with factory() as s:
            assert s.execute(select(Match.termination)).scalars().all() == ["crash"]
            faults = s.execute(select(Seat.fault).order_by(Seat.seat)).scalars().all()
        assert faults[0] is None
        assert faults[1] == {"termination": "crash", "message": "resigned", "reason": "resign"}
        with pytest.raises(IntegrityError), factory.begin() as s:  # 0004 knows no resign
            s.execute(text(f"UPDATE matches SET termination = 'resign' WHERE id = {mid}"))
    finally:
        eng.dispose()

    again = make_engine(db_url)  # every command migrates on open: back to the head
    try:
        assert current_revision(again) == head_revision()
        with session_factory(again)() as s:
            assert s.execute(select(Match.termination)).scalars().all() == ["crash"]
            assert len(s.execute(select(Seat.id)).all()) == 2  # the rebuild kept the seats
    finally:
        again.dispose()
