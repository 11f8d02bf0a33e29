"""A read command's quick way into PostgreSQL: psycopg 3 alone, without SQLAlchemy or its ORM
(issue 29: ``arena matches --limit 50`` took 0.8 s of CPU on PostgreSQL, most of it loading
SQLAlchemy and its ORM; ``sqlite_read.py`` is the same idea for a SQLite file).

Only the plain case takes it: a ``postgresql+psycopg://`` URL (the driver the arena installs)
that libpq reads as it is (``postgresql://`` and the same rest: user, password, host, port,
database and libpq's own parameters, percent escapes decoded as SQLAlchemy decodes them), a
server that answers, and a schema at the newest revision. Anything else (another driver, a
parameter libpq does not know, no server, an older or newer schema) gives None, and the caller
opens the database the usual way, whose messages are then the ones the user sees. The reads
run in one read-only transaction at REPEATABLE READ: one snapshot of a database being written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bot_arena.db.rated_sql import RatedReads
from bot_arena.db.sqlite_open import DatabaseOpenError, database_url, newest_script

if TYPE_CHECKING:
    import psycopg

PREFIX = "postgresql+psycopg://"
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")  # a ``:name`` parameter, not ``::type``


def libpq_uri(url: str | None) -> str | None:
    """The libpq URI of the ``postgresql+psycopg://`` URL ``url`` names, else None."""
    try:
        full = database_url(url)
    except DatabaseOpenError:  # the usual open says why
        return None
    if not full.startswith(PREFIX) or not full.isprintable():
        return None
    return "postgresql://" + full[len(PREFIX) :]


def pyformat(sql: str) -> str:
    """``:name`` parameters (what ``rated_sql`` and ``match_list`` write, as SQLAlchemy and
    ``sqlite3`` take them) as psycopg's ``%(name)s``; a literal ``%`` doubled."""
    return _NAMED.sub(r"%(\1)s", sql.replace("%", "%%"))


def open_reads(url: str | None) -> tuple[psycopg.Connection[Any], RatedReads] | None:
    """A read-only connection to the PostgreSQL database ``url`` names, at the newest
    revision, and the leaderboard's reads over it; None when the database is not that plain
    case (see the module docstring)."""
    uri = libpq_uri(url)
    if uri is None:
        return None
    try:
        import psycopg
    except ImportError:
        return None  # the usual open says which extra to install
    try:
        conn = psycopg.connect(uri)
    except (psycopg.Error, ValueError):
        return None  # the usual open says why
    try:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        found = conn.execute("SELECT version_num FROM alembic_version").fetchall()
        if found != [(newest_script(),)]:
            conn.close()
            return None
    except psycopg.Error:
        conn.close()
        return None

    def rows(sql: str, params: Mapping[str, Any]) -> Iterable[Sequence[Any]]:
        return conn.execute(pyformat(sql), dict(params)).fetchall()

    return conn, RatedReads(rows, json_text=False, dialect="postgresql")
