"""``arena play``'s match stored in a plain SQLite file with the standard library's ``sqlite3``
alone, without SQLAlchemy or its ORM (issue 28: importing them was about 0.6 s of CPU of a
1.2 s ``arena play --db FILE`` of tic-tac-toe, over half the command).

Only the plain case takes it, the one ``sqlite_read.py`` takes for reads: a URL that is
certainly a file's path, a file that is there, whose schema passes the check every open does
(``sqlite_open.check_sqlite_schema``) and is at the newest revision. Anything else (no file
yet, an older schema to migrate, another database, a URL SQLAlchemy must parse,
``$ARENA_DB_TIMEOUT`` set) gives None and the command opens the database the usual way
(``db.session``), whose messages are then the ones the user sees. Past that point an error is
a ``sqlite3.DatabaseError``, which the caller describes with ``session.describe_error`` as it
describes SQLAlchemy's (the same first line: SQLAlchemy's error carries SQLite's).

The connection is set up as ``session._configure_sqlite`` sets up every writer's (hardened, the
busy timeout, WAL, ``synchronous = NORMAL``, foreign keys, ``BEGIN IMMEDIATE``), and
:meth:`PlainStore.save` writes the rows ``db.store.save_match`` writes, values converted as the
column types convert them (``tests/db/test_sqlite_play.py`` compares every row).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bot_arena.arena.transport.strict_json import dumps
from bot_arena.db.pair_totals import change as change_pair_totals
from bot_arena.db.sqlite_open import (
    BUSY_TIMEOUT_S,
    TIMEOUT_ENV_VAR,
    DatabaseOpenError,
    _harden,
    check_sqlite_schema,
    database_url,
    newest_script,
    while_locked,
)
from bot_arena.db.sqlite_read import plain_file

if TYPE_CHECKING:
    from bot_arena.arena.match.botref import BotRef
    from bot_arena.arena.match.record import MatchRecord

_BOT = "SELECT id FROM bots WHERE name = ?"
_NEW_BOT = "INSERT INTO bots (name, registered, created) VALUES (?, 0, ?) ON CONFLICT DO NOTHING"
_VERSION = "SELECT id FROM bot_versions WHERE bot_id = ? AND sha256 = ?"
_NEW_VERSION = (
    "INSERT INTO bot_versions (bot_id, kind, target, source, files, sha256, created)"
    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
)
_MATCH = (
    "INSERT INTO matches (tournament_id, round, game, params, time_control, players, seed,"
    " opening, status, start_position, final_position, termination, fault_reason, started,"
    " finished, duration_s, sandbox, adjudication)"
    " VALUES (NULL, 0, ?, ?, ?, ?, 0, '', 'done', ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_SEAT = (
    "INSERT INTO seats (match_id, players, seat, bot_version_id, utility, rank, score, fault)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_MOVE = (
    "INSERT INTO moves (match_id, ply, seat, move, time_ms, info, forced)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def timestamp(seconds: float) -> str:
    """Epoch seconds as SQLAlchemy's SQLite DATETIME text of the naive UTC time."""
    return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


def fault_reason(record: MatchRecord) -> str | None:
    """The text of ``matches.fault_reason``: the first seat's fault, or None."""
    for index, seat in enumerate(record.seats):
        if seat.fault is not None:
            return (
                f"seat {index} ({seat.bot}): {seat.fault.termination.value}: {seat.fault.message}"
            )
    return None


def ended_columns(record: MatchRecord, sandbox: str | None) -> tuple[Any, ...]:
    """A finished match's columns as SQLite stores them, in this order: ``start_position``,
    ``final_position``, ``termination``, ``fault_reason``, ``started``, ``finished``,
    ``duration_s`` (never negative), ``sandbox``, ``adjudication`` (JSON text or NULL); the
    one rule for them of ``arena play``'s store and the tournament's bulk writer
    (``sqlite_fast``)."""
    return (
        record.start_position,
        record.final_position,
        record.termination.value,
        fault_reason(record),
        timestamp(record.started),
        timestamp(record.finished),
        max(0.0, record.duration_s),
        sandbox,
        None if record.adjudication is None else dumps(record.adjudication),
    )


class PlainStore:
    """A writable connection to a plain SQLite file of ours at the newest revision."""

    def __init__(self, conn: sqlite3.Connection, url: str) -> None:
        self.conn = conn
        self.url = url

    def save(self, record: MatchRecord, refs: Sequence[BotRef], *, sandbox: str | None) -> int:
        """Store a finished match (no tournament's) in one transaction, as
        ``db.store.save_match`` does, and return its id."""
        if len(refs) != len(record.seats):
            raise ValueError(f"{len(refs)} bots for {len(record.seats)} seats")
        cursor = self.conn.cursor()
        cursor.execute("BEGIN IMMEDIATE")
        try:
            versions = [self._version(cursor, ref) for ref in refs]
            cursor.execute(
                _MATCH,
                (
                    record.game,
                    dumps(record.params),
                    dumps(record.time_control),
                    len(record.seats),
                    *ended_columns(record, sandbox),
                ),
            )
            match_id = cursor.lastrowid
            assert match_id is not None
            players = len(record.seats)
            cursor.executemany(
                _SEAT,
                [
                    (
                        match_id,
                        players,
                        i,
                        vid,
                        r.utility,
                        r.rank,
                        r.score,
                        None if r.fault is None else dumps(r.fault.to_dict()),
                    )
                    for i, (r, vid) in enumerate(zip(record.seats, versions, strict=True))
                ],
            )
            cursor.executemany(
                _MOVE,
                [
                    (
                        match_id,
                        ply,
                        m.seat,
                        m.move,
                        max(0.0, m.time_ms),
                        None if m.info is None else dumps(m.info),
                        m.forced,
                    )
                    for ply, m in enumerate(record.moves)
                ],
            )
            change_pair_totals(cursor.execute, [match_id], 1)
            cursor.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        finally:
            cursor.close()
        return match_id

    @staticmethod
    def _version(cursor: sqlite3.Cursor, ref: BotRef) -> int:
        """The id of ``ref``'s version of the bot named ``ref.name``, both made if absent (as
        ``db.store.version_for``: an insert that skips a conflict, then a read)."""
        now = timestamp(time.time())
        found = cursor.execute(_BOT, (ref.name,)).fetchone()
        if found is None:
            cursor.execute(_NEW_BOT, (ref.name, now))
            found = cursor.execute(_BOT, (ref.name,)).fetchone()
        bot_id = int(found[0])
        version = cursor.execute(_VERSION, (bot_id, ref.sha256)).fetchone()
        if version is None:
            files = dumps([list(f) for f in ref.files]) if ref.files else None
            cursor.execute(
                _NEW_VERSION,
                (bot_id, ref.kind, ref.target, ref.source, files, ref.sha256, now),
            )
            version = cursor.execute(_VERSION, (bot_id, ref.sha256)).fetchone()
        return int(version[0])

    def close(self) -> None:
        self.conn.close()


def open_plain_store(url: str | None) -> PlainStore | None:
    """A :class:`PlainStore` on the plain SQLite file ``url`` names, checked writable (its write
    lock taken and given back, as ``session.check_writable``); None when the database is not
    that plain case (see the module docstring). Raises ``sqlite3.DatabaseError`` when the file
    is ours but cannot be written (read-only, locked past the busy timeout)."""
    path = plain_file(url)
    if path is None or os.environ.get(TIMEOUT_ENV_VAR, "").strip():
        return None
    timeout = BUSY_TIMEOUT_S
    try:
        if not path.is_file():
            return None
        check_sqlite_schema(path, timeout, database_url(url))
        conn = sqlite3.connect(path, timeout=timeout, isolation_level=None)
    except (OSError, DatabaseOpenError, sqlite3.DatabaseError):
        return None  # the usual open says why
    try:
        _harden(conn)
        found = conn.execute("SELECT version_num FROM alembic_version").fetchall()
    except sqlite3.DatabaseError:  # an empty file: the usual open makes the tables
        conn.close()
        return None
    if found != [(newest_script(),)]:
        conn.close()
        return None  # the usual open migrates it
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        while_locked(lambda: conn.execute("PRAGMA journal_mode = WAL"), timeout)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except BaseException:
        conn.close()
        raise
    return PlainStore(conn, database_url(url))
