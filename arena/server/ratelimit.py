"""Limits on what costs the server: uploads per user (each starts validation games in the
sandbox, so a user or a stolen token cannot keep the machine busy) and sign-in attempts per
name (each checks a password hash: no guessing at speed, no hashing without end).

The attempts are counted in the database (``db/ratelimit.py``, table ``rate_events``), not in
memory: a restart of the server, or a kill -9, resets no count, and servers that share a
database share the counts. Each check is one short write transaction."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from bot_arena.arena.server.errors import ApiError


def _now() -> datetime:
    from bot_arena.db.models import utcnow

    return utcnow()


class RateLimiter:
    """At most ``limit`` attempts a key in any ``window`` seconds (a sliding window of the
    attempts' stored times), for the limit called ``kind``. ``allow`` blocks on the database:
    call it from a worker thread."""

    def __init__(
        self,
        kind: str,
        limit: int,
        writes: sessionmaker[Session],
        window: float = 3600.0,
        clock: Callable[[], datetime] = _now,
    ) -> None:
        self._kind, self._limit, self._writes = kind, limit, writes
        self._window, self._clock = timedelta(seconds=window), clock

    def allow(self, key: object) -> bool:
        """Count an attempt of ``key`` and say whether it is within the limit (an attempt
        refused is not counted). A database that stays busy is a 503: nothing counted."""
        from bot_arena.db import ratelimit
        from bot_arena.db.session import is_busy

        now = self._clock()
        try:
            with self._writes.begin() as session:
                return ratelimit.take(
                    session, self._kind, str(key), self._limit, now - self._window, now
                )
        except SQLAlchemyError as exc:
            if is_busy(exc):
                raise ApiError(503, "the database is busy: try again") from None
            raise
