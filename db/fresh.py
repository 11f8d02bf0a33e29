"""A new SQLite database made at the newest revision in one step, instead of replaying every
migration (issue 32: about a third of a second of a run's start-up, most of it loading Alembic
and its scripts).

The tables come from the models (``Base.metadata.create_all``) and Alembic's version table is
made as Alembic makes it; before the transaction commits, the file's schema is compared with
the one the migrations build for that revision (``migrations/schema.json``, the same check
every opened file passes). Where they differ (a model changed without its migration, or the
reverse) nothing is kept and the migrations run as before: the result is always the
migrations' schema. tests/db/test_fresh_schema.py checks that the two agree.
"""

from __future__ import annotations

from sqlalchemy import Connection, Engine

from bot_arena.db.schema import first_difference, schema_of
from bot_arena.db.sqlite_open import expected_schema, newest_script

# Alembic's version table as its migrations make it on SQLite (the name of the key included)
VERSION_TABLE = (
    "CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL, "
    "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"
)


class _Differs(Exception):
    """The models' schema is not the migrations': roll the new tables back."""


def create_newest(engine: Engine) -> bool:
    """Make the newest schema in ``engine``'s SQLite database if it holds no object at all;
    True when it did. False (nothing changed) when the database is not empty by the time its
    write lock is taken (another process made it), or when the models' schema differs from the
    migrations' (then :func:`session.upgrade` makes it)."""
    from bot_arena.db.models import Base

    revision = newest_script()
    if engine.dialect.name != "sqlite" or revision is None:
        return False
    try:
        with engine.begin() as conn:  # BEGIN IMMEDIATE: one maker at a time
            if _objects(conn):
                return False
            Base.metadata.create_all(conn)
            conn.exec_driver_sql(VERSION_TABLE)
            conn.exec_driver_sql(
                "INSERT INTO alembic_version (version_num) VALUES (?)", (revision,)
            )
            made = schema_of(_objects(conn))
            if first_difference(made, expected_schema(revision)) is not None:
                raise _Differs
    except _Differs:
        return False
    return True


def _objects(conn: Connection) -> list[tuple[str, str, str, str | None]]:
    rows = conn.exec_driver_sql("SELECT type, name, tbl_name, sql FROM sqlite_master")
    return [(str(t), str(n), str(tb), None if s is None else str(s)) for t, n, tb, s in rows]
