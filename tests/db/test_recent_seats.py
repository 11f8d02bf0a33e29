"""A bot's page's reads (``db/accounts.py``): its recent seats (done or running matches) and
its recent faults (faulted seats of done matches), newest first, bounded: one base query with
each its own filter."""

from __future__ import annotations

import dataclasses

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from bot_arena.arena.match.record import Termination
from bot_arena.db.accounts import recent_faults, recent_seats
from bot_arena.db.models import Bot
from bot_arena.db.store import save_match
from tests.db.test_db import REFS, make_record


def test_recent_seats_and_faults(factory: sessionmaker[Session]) -> None:
    faulted = make_record()  # seat 1, random:seed=3, answered late
    seats = [faulted.seats[0], dataclasses.replace(faulted.seats[1], fault=None)]
    clean = dataclasses.replace(faulted, seats=seats, termination=Termination.NORMAL)
    with factory.begin() as s:
        ids = [save_match(s, r, REFS) for r in (faulted, clean, faulted, clean)]
    with factory() as s:
        bot = {
            name: s.scalar(select(Bot.id).where(Bot.name == name))
            for name in ("random", "random:seed=3")
        }
        late = bot["random:seed=3"]
        assert late is not None and bot["random"] is not None
        assert [r.id for r in recent_seats(s, late, 10)] == ids[::-1]
        assert [r.id for r in recent_seats(s, late, 3)] == ids[:0:-1]  # the newest three
        assert [(r.id, r.seat) for r in recent_faults(s, late, 10)] == [(ids[2], 1), (ids[0], 1)]
        assert [r.id for r in recent_faults(s, late, 1)] == [ids[2]]
        assert [r.fault["termination"] for r in recent_faults(s, late, 10)] == ["timeout"] * 2
        assert [r.id for r in recent_seats(s, bot["random"], 10)] == ids[::-1]
        assert recent_faults(s, bot["random"], 10) == []
