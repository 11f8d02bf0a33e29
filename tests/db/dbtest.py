"""Test databases: a fresh SQLite file, or a fresh schema on the PostgreSQL server named by
``$ARENA_TEST_PG_URL`` (skipped when it is not set), so tests never see each other's rows.

A test that wants the schema ready, not its making, gets a SQLite file as a copy of one this
process migrated once (:func:`from_template`): migrating a fresh file took 0.12 s of CPU, a copy
well under a millisecond, and the copy holds what the migrations made (tests/db/test_db.py
checks it). The migrations themselves are still run by the tests that open a fresh or an older
database."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import sqlite3
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, exc, make_url, pool

PG_ENV = "ARENA_TEST_PG_URL"
BACKENDS = [
    "sqlite",
    pytest.param(
        "postgresql",
        marks=pytest.mark.skipif(not os.environ.get(PG_ENV), reason=f"{PG_ENV} is not set"),
    ),
]


def sqlite_copy(source: Path | str, target: Path | str) -> None:
    """Copy the SQLite database ``source`` to ``target`` through SQLite's backup: every page,
    those still in the write-ahead log too (a file copy would miss them)."""
    with (
        contextlib.closing(sqlite3.connect(source)) as made,
        contextlib.closing(sqlite3.connect(target)) as into,
    ):
        made.backup(into)


def worker_url(base: str, worker: str) -> str:
    """The URL of a PostgreSQL database of this test worker's own (``pytest -n``: ``gw0``,
    ``gw1``...), made on the server of ``base`` if missing: workers never share a database, so
    nothing database-wide (the migrations' advisory lock, a table left by a failed drop) is
    seen by another worker."""
    url = make_url(base)
    name = f"{url.database or 'arena'}_{worker}"
    if not name.replace("_", "").isalnum():
        raise ValueError(f"unexpected database name {name!r}")
    admin = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            known = conn.exec_driver_sql("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
            if known.first() is None:
                conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    finally:
        admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False)


@contextmanager
def database(kind: str, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database of ``kind``, removed afterwards (PostgreSQL: a schema)."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'arena.db'}"
        return
    base = os.environ[PG_ENV]
    schema = f"t_{uuid.uuid4().hex[:16]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
        url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        admin.dispose()


@functools.cache
def _template() -> Path:
    """A SQLite file migrated to the newest revision, made once a process (in a folder removed
    when the process exits)."""
    from bot_arena.db.session import make_engine

    folder = tempfile.TemporaryDirectory(prefix="arena-template-")
    path = Path(folder.name) / "template.db"
    make_engine(f"sqlite:///{path}").dispose()
    _template_folders.append(folder)  # kept alive, and so not removed, until exit
    return path


_template_folders: list[tempfile.TemporaryDirectory[str]] = []


def from_template(url: str) -> str:
    """``url`` (of :func:`database`) ready for ``make_engine``: a SQLite file that does not
    exist yet becomes a copy of this process's migrated template, so ``make_engine`` finds its
    schema at the newest revision; any other URL is returned as it is (``make_engine`` migrates
    it)."""
    from bot_arena.db.session import sqlite_path

    path = sqlite_path(url)
    if path is not None and not path.exists():
        shutil.copyfile(_template(), path)
    return url


@contextmanager
def example_database(kind: str) -> Iterator[str]:
    """The URL of a database of ``kind`` at the newest revision holding no row, for one
    hypothesis example: SQLite, a copy of this process's migrated template in a folder removed
    afterwards; PostgreSQL, a schema of this process's migrated once and emptied before each
    use (``TRUNCATE ... RESTART IDENTITY``: no row, and the ids start again at 1, as in a new
    schema). Migrating a new PostgreSQL schema took about 0.1 s of CPU (client and server) and
    0.3 s of wall; emptying one a few milliseconds. The example must leave the schema itself as
    it found it (tests that migrate or alter take :func:`database`)."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="arena-example-") as folder:
            yield from_template(f"sqlite:///{Path(folder) / 'arena.db'}")
        return
    url = _pg_examples(os.environ[PG_ENV])
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.begin() as conn:
            tables = [
                str(name)
                for (name,) in conn.exec_driver_sql(
                    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                    "AND tablename <> 'alembic_version'"
                )
            ]
            if tables:  # a test that left a transaction open is an error, not a hang
                conn.exec_driver_sql("SET LOCAL lock_timeout = '30s'")
                listed = ", ".join(f'"{name}"' for name in tables)
                conn.exec_driver_sql(f"TRUNCATE {listed} RESTART IDENTITY CASCADE")
    finally:
        engine.dispose()
    yield url


@functools.cache
def _pg_examples(base: str) -> str:
    """A schema on ``base``'s server migrated once a process for :func:`example_database`
    (dropped when the process exits)."""
    from bot_arena.db.session import make_engine

    schema = f"x_{uuid.uuid4().hex[:16]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT", poolclass=pool.NullPool)
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    atexit.register(_drop_schema, admin, schema)
    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    shown = url.render_as_string(hide_password=False)
    make_engine(shown).dispose()
    return shown


def _drop_schema(admin: Engine, schema: str) -> None:
    with admin.connect() as conn:
        conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    admin.dispose()


class Db:
    """The test database, read from outside the runner (which may be writing)."""

    def __init__(self, url: str) -> None:
        self.url = url
        parsed = make_url(url)
        self.sqlite = Path(parsed.database or "") if parsed.get_backend_name() == "sqlite" else None
        self.engine = None if self.sqlite else create_engine(url, poolclass=pool.NullPool)

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        if self.sqlite is not None:
            if not self.sqlite.exists():
                return []
            conn = sqlite3.connect(f"file:{self.sqlite}?mode=ro", uri=True, timeout=30)
            try:
                return list(conn.execute(sql))
            except sqlite3.OperationalError as err:  # schema not created yet
                if "no such table" in str(err):
                    return []
                raise
            finally:
                conn.close()
        assert self.engine is not None
        try:
            with self.engine.connect() as pg:
                return [tuple(r) for r in pg.exec_driver_sql(sql)]
        except exc.ProgrammingError as err:  # schema not created yet
            if "does not exist" in str(err):
                return []
            raise
