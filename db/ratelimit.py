"""The SQL of ``arena serve``'s rate limits: the attempts each limit counted, by key, with
their times (table ``rate_events``, 0013). The rule (how many in which window) is the
server's (``arena/server/ratelimit.py``); this module only counts and writes rows."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, func, select, text
from sqlalchemy.orm import Session

from bot_arena.db.models import RateEvent


def take(session: Session, kind: str, key: str, limit: int, since: datetime, now: datetime) -> bool:
    """Count an attempt of ``key`` under limit ``kind`` at ``now`` if fewer than ``limit``
    were counted after ``since``; whether it was. Every key's attempts from ``since`` back
    are deleted on the way (names a stranger tries once each at the sign-in leave no rows
    for ever: the table holds one window at most).

    The caller's transaction holds the write lock (SQLite's ``BEGIN IMMEDIATE``); on
    PostgreSQL a lock on the limit, held to the end of the transaction, makes the checks of
    one limit take turns (two servers cannot both take the last place, and two sweeps never
    wait on each other's rows). Each is one short transaction; these are not hot paths."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": f"rate:{kind}"})
    session.execute(delete(RateEvent).where(RateEvent.kind == kind, RateEvent.at <= since))
    counted = session.scalar(
        select(func.count()).where(RateEvent.kind == kind, RateEvent.key == key)
    )
    if int(counted or 0) >= limit:
        return False
    session.add(RateEvent(kind=kind, key=key, at=now))
    session.flush()
    return True
