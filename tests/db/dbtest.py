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
import re
import shutil
import sqlite3
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from graphlib import TopologicalSorter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import URL, Engine, create_engine, exc, make_url, pool

if TYPE_CHECKING:
    import psycopg

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
    own = create_engine(url.set(database=name), isolation_level="AUTOCOMMIT")
    try:
        # the catalog rows every earlier run's dropped schemas left behind, cleared (a server
        # whose autovacuum is off keeps them: a worker's database grew to 100 MB, 195,000 dead
        # pg_attribute rows, over ten runs, and each run's schemas were made and read slower
        # for it, the suite's busy CPU 486 -> 554 s over three runs); a few tenths of a second
        with own.connect() as conn:
            conn.exec_driver_sql("VACUUM")
    finally:
        own.dispose()
    return url.set(database=name).render_as_string(hide_password=False)


@contextmanager
def database(kind: str, tmp_path: Path, *, ready: bool = False) -> Iterator[str]:
    """The URL of an empty database of ``kind``, removed afterwards (PostgreSQL: a schema).

    ``ready``: on PostgreSQL, the schema is made at the newest revision, holding no row but
    Alembic's version, in one statement of the DDL this process captured from a migrated
    schema (:func:`newest_ddl`), for a test whose subject is not the making of it (migrating
    a new schema cost the server about 0.1 s of CPU and its client as much again, and each
    ``arena`` command that did it loaded Alembic and every script). SQLite is left empty
    either way: a new file is made at the newest revision in one step by the code under test
    (``db/fresh.py``)."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'arena.db'}"
        return
    base = os.environ[PG_ENV]
    schema = f"t_{uuid.uuid4().hex[:16]}"
    made = newest_ddl(base) if ready else None
    try:
        if made is None:
            _kept_admin(base).execute(f"CREATE SCHEMA {schema}")
        else:  # one statement: the schema, its tables and its version row
            _kept_admin(base).execute(made.replace(_PLACEHOLDER, schema).encode())
        url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
        yield url.render_as_string(hide_password=False)
    finally:
        _kept_admin(base).execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def wants_ready(request: pytest.FixtureRequest) -> bool:
    """Whether a fixture's database is to be ``ready`` for this test: unless the test is
    marked ``new_schema`` (its subject is the making of the database)."""
    return request.node.get_closest_marker("new_schema") is None


def _admin(base: str) -> psycopg.Connection[Any]:
    """A connection in autocommit to the database of ``base``, by the driver alone."""
    import psycopg  # only with a server to test on

    return psycopg.connect(_libpq_params(make_url(base)), autocommit=True)


def _libpq_params(url: URL, *, password: bool = True) -> str:
    """libpq's connection string for the server, user and database of ``url`` (its password
    too unless ``password`` is False)."""
    from psycopg.conninfo import make_conninfo

    params = {
        "host": url.host,
        "port": url.port,
        "user": url.username,
        "password": url.password if password else None,
        "dbname": url.database,
    }
    return make_conninfo(**{key: str(value) for key, value in params.items() if value is not None})


# stands for the schema's name in the captured DDL (a name no DDL of ours holds otherwise)
_PLACEHOLDER = "arena_schema_placeholder_9f1c"


@functools.cache
def newest_ddl(base: str) -> str | None:
    """The DDL of a schema at the newest revision, its name :data:`_PLACEHOLDER`, captured
    once a process from this process's migrated schema (:func:`_pg_examples`) by ``pg_dump
    --schema-only``, with Alembic's version row; None when ``pg_dump`` is not installed or
    cannot dump this server (older than it): :func:`database` then makes an empty schema,
    which the code under test migrates.
    tests/db/test_db.py checks that a schema made from it is the one the migrations make."""
    dump = shutil.which("pg_dump")
    if dump is None:
        return None
    url = _pg_examples(base)
    with contextlib.closing(_admin(base)) as admin:
        [(revision,)] = admin.execute(f"SELECT version_num FROM {schema_of(url)}.alembic_version")
    version = f"INSERT INTO {_PLACEHOLDER}.alembic_version (version_num) VALUES ('{revision}');"
    # a varchar column's ``IN (...)`` as pg_dump writes it parses again into another tree
    # (the casts inside the array), which pg_dump then shows differently: written back as
    # ``IN``, it is the tree the migrations made
    try:
        made = _ANY_VARCHAR.sub(_as_in, schema_dump(dump, url))
    except subprocess.CalledProcessError:
        return None
    return "\n".join([made, version])


# ``(kind)::text = ANY ((ARRAY['a'::character varying, ...])::text[])``: ``kind IN ('a', ...)``
_ANY_VARCHAR = re.compile(
    r"\((\w+)\)::text = ANY \(\(ARRAY\[((?:'[^']*'::character varying(?:, )?)+)\]\)::text\[\]\)"
)


def _as_in(found: re.Match[str]) -> str:
    values = ", ".join(re.findall(r"'[^']*'", found[2]))
    return f"({found[1]} IN ({values}))"


def schema_of(url: str) -> str:
    """The schema of a URL of :func:`database` or :func:`_pg_examples`."""
    return str(make_url(url).query["options"]).removeprefix("-csearch_path=")


def schema_dump(dump: str, url: str) -> str:
    """``pg_dump --schema-only`` (the program ``dump``) of the schema of ``url``, its name
    written :data:`_PLACEHOLDER`: the DDL that makes it again, without rows."""
    parsed = make_url(url)
    schema = schema_of(url)
    if not schema.replace("_", "").isalnum():
        raise ValueError(f"unexpected schema name {schema!r}")
    env = dict(os.environ)
    if parsed.password is not None:
        env["PGPASSWORD"] = str(parsed.password)
    found = subprocess.run(
        [
            *(dump, "--schema-only", "--no-owner", "--no-privileges", "--no-comments"),
            *("--schema", schema, "--dbname", _libpq_params(parsed, password=False)),
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    kept = []
    for line in found.splitlines():
        # psql's meta-commands (``\restrict``) and the session's settings are not DDL; every
        # name in the DDL is written with its schema
        if line.startswith(("\\", "SET ", "SELECT pg_catalog.set_config(")):
            continue
        kept.append(line.replace(schema, _PLACEHOLDER))
    return "\n".join(kept)


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
    use (:func:`_emptying`: no row, and the ids start again at 1, as in a new schema).
    Migrating a new PostgreSQL schema took about 0.1 s of CPU (client and server) and 0.3 s of
    wall; emptying one a few milliseconds. The example must leave the schema itself as it
    found it (tests that migrate or alter take :func:`database`)."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="arena-example-") as folder:
            yield from_template(f"sqlite:///{Path(folder) / 'arena.db'}")
        return
    base = os.environ[PG_ENV]
    url = _pg_examples(base)
    admin = _kept_admin(base)
    with admin.transaction():  # rolled back if it fails: the connection stays usable
        admin.execute(_emptying(base).encode())  # one round trip
    yield url


_kept_admins: dict[str, psycopg.Connection[Any]] = {}


def _kept_admin(base: str) -> psycopg.Connection[Any]:
    """The connection (autocommit) that makes and drops :func:`database`'s schemas and empties
    :func:`_pg_examples`', kept a process (idle between tests, holding no lock): a connection
    is a server process started, some milliseconds of its CPU."""
    admin = _kept_admins.get(base)
    if admin is None or admin.closed or admin.broken:
        admin = _kept_admins[base] = _admin(base)
    return admin


@functools.cache
def _emptying(base: str) -> str:
    """What empties :func:`_pg_examples`' schema and sets its sequences back to 1: each
    table's ``DELETE``, those that refer to a table before it, without the new files and the
    waits for the disk of a ``TRUNCATE`` of every table (about 25 ms of the server's CPU and a
    quarter of a second of wall on a loaded machine, each example), and each sequence's
    ``setval``. A test that left a transaction open is an error, not a hang."""
    schema = schema_of(_pg_examples(base))
    with contextlib.closing(_admin(base)) as admin:
        tables = [
            str(name)
            for (name,) in admin.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s "
                "AND tablename <> 'alembic_version'",
                (schema,),
            )
        ]
        graph: dict[str, set[str]] = {name: set() for name in tables}
        for child, parent in admin.execute(
            "SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint "
            "WHERE contype = 'f' AND connamespace = %s::regnamespace",
            (schema,),
        ):
            child, parent = str(child).rpartition(".")[2], str(parent).rpartition(".")[2]
            if child != parent:
                graph[parent].add(child)  # the rows that refer to it go first
        sequences = [
            str(name)
            for (name,) in admin.execute(
                "SELECT sequencename FROM pg_sequences WHERE schemaname = %s", (schema,)
            )
        ]
    steps = ["SET LOCAL lock_timeout = '30s'"]
    steps += [f'DELETE FROM {schema}."{name}"' for name in TopologicalSorter(graph).static_order()]
    steps += [f"SELECT setval('{schema}.\"{name}\"', 1, false)" for name in sorted(sequences)]
    return "; ".join(steps)


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
    """The test database, read from outside the runner (which may be writing).

    ``keep``: on a server, one connection is kept between queries (each query its own
    transaction, so it sees what was committed before it) until ``engine.dispose()``: tests
    that poll the database while a run writes it opened a connection, a server process, for
    each query, fifty a second."""

    def __init__(self, url: str, *, keep: bool = False) -> None:
        self.url = url
        parsed = make_url(url)
        self.sqlite = Path(parsed.database or "") if parsed.get_backend_name() == "sqlite" else None
        if self.sqlite is not None:
            self.engine = None
        elif keep:
            self.engine = create_engine(url, pool_size=1, max_overflow=4)
        else:
            self.engine = create_engine(url, poolclass=pool.NullPool)

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
