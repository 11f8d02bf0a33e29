"""``sqlite_open.while_locked``, the one retry loop for SQLite's "database is locked" (a new file
switched to WAL or migrated by another process is answered at once, without the busy handler):
the plain ``sqlite3`` store of ``arena play`` and every SQLAlchemy open use it."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import exc

from bot_arena.db import session
from bot_arena.db.sqlite_open import is_locked, while_locked


class Flaky:
    """A step that raises ``error`` ``times`` times, then answers 42."""

    def __init__(self, error: BaseException, times: int) -> None:
        self.error, self.left, self.calls = error, times, 0

    def __call__(self) -> int:
        self.calls += 1
        if self.left:
            self.left -= 1
            raise self.error
        return 42


def test_a_locked_database_is_tried_again_until_it_answers() -> None:
    step = Flaky(sqlite3.OperationalError("database is locked"), 3)
    assert while_locked(step, 5.0) == 42
    assert step.calls == 4


def test_sqlalchemys_locked_error_is_tried_again_where_it_is_named() -> None:
    wrapped = exc.OperationalError("PRAGMA", {}, sqlite3.OperationalError("database is locked"))
    step = Flaky(wrapped, 2)
    assert while_locked(step, 5.0, session._LOCKED) == 42
    assert step.calls == 3
    with pytest.raises(exc.OperationalError):  # the plain store does not expect it
        while_locked(Flaky(wrapped, 1), 5.0)


def test_another_error_or_a_lock_past_the_timeout_is_raised() -> None:
    other = Flaky(sqlite3.OperationalError("no such table: matches"), 1)
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        while_locked(other, 5.0)
    assert other.calls == 1
    locked = Flaky(sqlite3.OperationalError("database table is locked"), 10**6)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        while_locked(locked, 0.0)
    assert locked.calls == 1
    assert is_locked(sqlite3.OperationalError("database is locked"))
    assert not is_locked(sqlite3.OperationalError("disk I/O error"))
