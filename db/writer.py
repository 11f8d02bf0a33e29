"""The tournament's bulk writes behind one interface, its implementation chosen once per
connection.

Three writes run thousands of times per tournament: storing a schedule, marking matches
'running', completing matches with their seats and moves (the runner's group commit). They have
three implementations that write exactly the same rows (tests/db/test_writer_parity.py):

- ``CoreWriter`` (``db.core_writer``): SQLAlchemy Core statements, for any database;
- ``SQLiteWriter`` (``db.sqlite_fast``): the same statements through SQLite's DBAPI cursor,
  because SQLAlchemy's execution layer costs several times what SQLite itself needs per match;
- ``PostgresWriter`` (``db.pg_fast``): a group's results in one statement per table through
  psycopg 3 (arrays and COPY), because a statement per row cost a server round trip each.

``writer_for(connection)`` picks one; every write runs in the caller's transaction on that
connection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from sqlalchemy import Connection, Engine

from bot_arena.arena.match.record import MatchRecord
from bot_arena.db.core_writer import CoreWriter
from bot_arena.db.pg_fast import PostgresWriter
from bot_arena.db.sqlite_fast import SQLiteWriter

ScheduledMatch = tuple[int, int, str, str | None, Sequence[int]]
"""A match of a new schedule: (round, seed, opening, start position, bot version per seat)."""

Completion = tuple[int, MatchRecord, Sequence[int], bool]
"""A match to complete: (match id, record, bot version per seat, replace_partial)."""


class MatchWriter(Protocol):
    """The bulk writes of a tournament, each in the caller's transaction."""

    def insert_schedule(
        self,
        tournament_id: int,
        game: str,
        params: dict[str, Any],
        time_control: dict[str, Any],
        players: int,
        matches: Sequence[ScheduledMatch],
    ) -> list[int]:
        """Store matches of a tournament as pending, with their seats (unplayed): a new
        tournament's whole schedule, or the next round of one whose matches are made as it goes
        (Swiss, knockout, SPRT). The new match ids in schedule order."""
        ...

    def mark_running(self, match_ids: Sequence[int]) -> None:
        """Mark the pending ones of ``match_ids`` 'running' (any other status stays)."""
        ...

    def complete_matches(self, items: Sequence[Completion], *, sandbox: str | None) -> list[bool]:
        """Store each result if its match is still pending or running and has as many seats as
        the record; per item, whether it was stored (a match is stored once per call).
        ``sandbox``: the level the bots of every one of these matches ran under (the pool's
        ``sandbox_level``: confined, partial or off), stored in ``matches.sandbox``; None only
        when it is not known (stored as NULL, read as unconfined).

        The match row gets the result and status 'done', its seats their results; with
        ``replace_partial`` the moves an interrupted earlier attempt left are deleted first, so
        a replayed match is stored exactly once. A done or void match is never touched.
        """
        ...


def writer_for(connection: Connection, *, fast: bool = True) -> MatchWriter:
    """The writer for ``connection``: on SQLite and on PostgreSQL through psycopg 3 the DBAPI
    fast path (unless ``fast`` is False), SQLAlchemy Core everywhere else."""
    if fast and connection.dialect.name == "sqlite":
        return SQLiteWriter(connection)
    if fast and connection.dialect.name == "postgresql" and connection.dialect.driver == "psycopg":
        return PostgresWriter(connection)
    return CoreWriter(connection)


def writer_connection(engine: Engine) -> Connection:
    """A connection for a run's writer thread (``tournament.committer``), which commits a group
    of results after another. On PostgreSQL its commits do not wait for the server to flush its
    log to disk (``synchronous_commit = off``, this connection only): the durability SQLite's
    ``synchronous=NORMAL`` gives (``db.session``). A commit is still atomic and, once made,
    survives the arena's process being killed at any instant; only a crash of the server's
    machine may lose the last commits (under a second's worth), whole, and their matches are
    then pending or running again, played by a resume: each match is still stored once."""
    conn = engine.connect()
    if conn.dialect.name == "postgresql":
        conn.detach()  # closed with it, never handed to another user of the pool with the setting
        conn.exec_driver_sql("SET synchronous_commit = off")
        conn.commit()
    return conn
