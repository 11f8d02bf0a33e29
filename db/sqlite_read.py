"""A read command's quick way into a SQLite file: the standard library's ``sqlite3``, without
SQLAlchemy or its ORM (about half the start-up of ``arena leaderboard``, issue 28).

Only the plain case takes it: a URL that is certainly a file's path (``--db FILE``, or
``sqlite:///PATH`` without parameters or escapes), a file that is there, whose schema passes
the same check every open does (``sqlite_open.check_sqlite_schema``) and is at the newest
revision. Anything else (no file, a foreign or older schema, another database, a URL SQLAlchemy
must parse) gives None, and the caller opens the database the usual way, whose messages are
then the ones the user sees. The connection is read-only (``mode=ro``) and hardened like every
other, and its reads run in one transaction (one snapshot of a database being written).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bot_arena.db.rated_sql import RatedReads
from bot_arena.db.sqlite_open import (
    BUSY_TIMEOUT_S,
    TIMEOUT_ENV_VAR,
    DatabaseOpenError,
    _read_only,
    check_sqlite_schema,
    database_url,
    newest_script,
)

PREFIX = "sqlite:///"


def plain_file(url: str | None) -> Path | None:
    """The SQLite file ``url`` names (``database_url``'s rules: a plain path, $ARENA_DB, the
    default) when reading it needs no URL parser: ``sqlite:///PATH`` with no query, fragment,
    escape or anything but a path (SQLAlchemy's ``sqlite_path`` gives the same path); else
    None."""
    try:
        full = database_url(url)
    except DatabaseOpenError:  # the usual open says why
        return None
    if not full.startswith(PREFIX):
        return None
    rest = full[len(PREFIX) :]
    if not rest or rest == ":memory:" or any(c in rest for c in "?#%@\\") or not rest.isprintable():
        return None
    return Path(rest)


def open_reads(url: str | None) -> tuple[sqlite3.Connection, RatedReads] | None:
    """A read-only connection to the plain SQLite file ``url`` names, its schema checked and
    at the newest revision, and the leaderboard's reads over it (in one transaction); None
    when the database is not that plain case (see the module docstring)."""
    path = plain_file(url)
    if path is None or os.environ.get(TIMEOUT_ENV_VAR, "").strip():
        return None
    try:
        if not path.is_file():
            return None
        check_sqlite_schema(path, BUSY_TIMEOUT_S, database_url(url))
        conn = _read_only(path, BUSY_TIMEOUT_S)
    except (OSError, DatabaseOpenError, sqlite3.DatabaseError):
        return None  # the usual open says why
    try:
        conn.isolation_level = None  # the transaction is ours: one BEGIN for every read
        conn.execute("BEGIN")
        found = conn.execute("SELECT version_num FROM alembic_version").fetchall()
        if found != [(newest_script(),)]:
            conn.close()
            return None
    except sqlite3.DatabaseError:
        conn.close()
        return None

    def rows(sql: str, params: Mapping[str, Any]) -> Iterable[Sequence[Any]]:
        return conn.execute(sql, dict(params))

    return conn, RatedReads(rows, json_text=True, dialect="sqlite")
