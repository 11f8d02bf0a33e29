"""Opening the results database: URL choice, SQLite settings, migrations to the latest schema.

Any SQLAlchemy URL works; SQLite (the default, ``arena.db`` in the current directory) is tuned so
that several arena processes and readers share one file safely:

- WAL journal: readers never block the writer and the writer never blocks readers;
- ``BEGIN IMMEDIATE`` for every transaction: a transaction takes the write lock up front, so two
  writers queue on the busy timeout instead of failing with "database is locked" when a read
  transaction tries to become a write transaction;
- foreign keys on (SQLite leaves them off by default), ``synchronous=NORMAL`` (durable across a
  crash of the process; a power cut may lose the last commits but never consistency).

The schema is created and upgraded by the Alembic scripts shipped in ``db/migrations`` whenever an
engine is made for writing, so a database written by an older version opens and is brought up to
date; an engine made ``read_only`` opens the file with SQLite's ``mode=ro`` (it cannot write,
not even a WAL checkpoint) and refuses a schema that is not the latest (``arena db upgrade``).

A SQLite file may come from someone else: before any connection of ours uses it, its schema is
checked to be exactly the one our migrations build for its revision (``db/schema.py``; a
trigger, a view, a foreign DEFAULT or CHECK is refused by name), on a read-only connection with
``trusted_schema=OFF`` and a bound on the work SQLite may do. Every connection keeps
``trusted_schema=OFF`` (no function of the file's schema runs) and ``cell_size_check=ON``.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event, exc, make_url
from sqlalchemy.orm import Session, sessionmaker

from bot_arena.arena.transport.strict_json import dumps
from bot_arena.db.fresh import create_newest
from bot_arena.db.schema import Schema, schema_of
from bot_arena.db.sqlite_open import BUSY_TIMEOUT_S as BUSY_TIMEOUT_S
from bot_arena.db.sqlite_open import DEFAULT_URL as DEFAULT_URL
from bot_arena.db.sqlite_open import ENV_VAR as ENV_VAR
from bot_arena.db.sqlite_open import SCHEMA_FILE as SCHEMA_FILE
from bot_arena.db.sqlite_open import TIMEOUT_ENV_VAR as TIMEOUT_ENV_VAR
from bot_arena.db.sqlite_open import VERSIONS as VERSIONS
from bot_arena.db.sqlite_open import DatabaseOpenError as DatabaseOpenError
from bot_arena.db.sqlite_open import _harden, _read_only, folder_read_only, is_locked, while_locked
from bot_arena.db.sqlite_open import busy_timeout_s as busy_timeout_s
from bot_arena.db.sqlite_open import check_sqlite_schema as check_sqlite_schema
from bot_arena.db.sqlite_open import database_url as database_url
from bot_arena.db.sqlite_open import expected_schema as expected_schema
from bot_arena.db.sqlite_open import newest_script as newest_script
from bot_arena.db.sqlite_open import short as short

if TYPE_CHECKING:  # Alembic loads only when a schema is to be read or changed (see at_head)
    from alembic.config import Config
    from alembic.script import ScriptDirectory

# the errors that say SQLite is locked: its own, and through SQLAlchemy
_LOCKED = (sqlite3.OperationalError, exc.OperationalError)
_PG_MIGRATION_LOCK = 0x4172656E61  # advisory lock key: one migrator at a time on PostgreSQL


# the package that brings a database's driver, by URL scheme (a pip extra of ours where we
# have one)
_DRIVERS = {"postgresql": "bot-arena[postgres]", "postgres": "bot-arena[postgres]"}


def display_url(url: str) -> str:
    """The URL with any password hidden, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except exc.ArgumentError:
        return url


def sqlite_path(url: str) -> Path | None:
    """The file of a file-backed SQLite URL, else None (in-memory or another database)."""
    try:
        parsed = make_url(url)
    except exc.ArgumentError:
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def exists(url: str) -> bool:
    """False only for a SQLite file that is not there yet (so read-only uses need not create it)."""
    path = sqlite_path(url)
    try:
        return path is None or path.exists()
    except OSError:  # not ours to look at: opening it says why, in one line
        return True


def check_url(url: str | None, *, write: bool) -> None:
    """Refuse (DatabaseOpenError, one line) a SQLite URL that would not do what it says: query
    parameters (SQLite ignores ``mode=ro`` without ``uri=true``, and with it ``mode=memory``
    keeps nothing; read commands open read-only by themselves), and, for a command that
    stores results, a database in memory or without a path, where they would be lost. Other
    databases' parameters are their driver's to check. The Python API (``make_engine``) takes
    any URL: tests use in-memory databases."""
    full = database_url(url)
    try:
        parsed = make_url(full)
    except exc.ArgumentError:
        return  # make_engine says why, in one line
    if parsed.get_backend_name() != "sqlite":
        return
    shown = short(full)  # no password in a SQLite URL
    if parsed.query:
        names = ", ".join(sorted(parsed.query))
        raise DatabaseOpenError(
            f"database {shown}: SQLite URLs take no parameters here ({short(names, 40)}); give the "
            "file's path (read commands open it read-only themselves)"
        )
    if write and parsed.database in (None, "", ":memory:"):
        raise DatabaseOpenError(
            f"database {shown} is in memory: the results would be lost; give a file's path"
        )
    refuse_folder(sqlite_path(full), shown)


def refuse_folder(path: Path | None, shown: str) -> None:
    """A SQLite "file" that is a folder (``--db results/``) is said to be one (DatabaseOpenError),
    with the file to give instead, not reported as a folder that is missing or not writable
    or as a damaged database."""
    try:
        folder = path is not None and path.is_dir()
    except OSError:
        return  # opening it says why
    if folder:
        raise DatabaseOpenError(
            f"database {shown} is a folder, not a database file; name a file in it: "
            f"--db {short(str(Path(str(path)) / 'arena.db'))}"
        )


def built_schema(revision: str | None) -> Schema:
    """The schema our migrations build for ``revision``, in a database in memory (about 0.2 s
    of migrations: ``expected_schema`` reads it from SCHEMA_FILE instead)."""
    if revision is None:
        return Counter()
    engine = create_engine("sqlite://")
    try:
        upgrade(engine, revision)
        with engine.connect() as conn:
            rows = conn.exec_driver_sql("SELECT type, name, tbl_name, sql FROM sqlite_master")
            return schema_of(tuple(row) for row in rows)
    finally:
        engine.dispose()


def schema_file_text() -> str:
    """SCHEMA_FILE's text for the migrations as they are; after adding one::

    python -c "from bot_arena.db.session import schema_file_text as t; print(t(), end='')" \\
        > db/migrations/schema.json
    """
    script = _scripts()
    revisions = sorted(r.revision for r in script.walk_revisions())
    parts = []
    for r in revisions:
        rows = sorted([*key, count] for key, count in built_schema(r).items())
        parts.append(f"{json.dumps(r)}: [\n  " + ",\n  ".join(map(json.dumps, rows)) + "\n]")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def _configure_sqlite(engine: Engine, timeout: float, read_only: bool = False) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see module docstring)
        _harden(dbapi_conn)
        if read_only:
            return  # the file's journal mode is the writer's business
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            # Switching a new file to WAL takes an exclusive lock, and SQLite answers "database
            # is locked" at once, without its busy handler, while another process is doing the
            # same (two arena processes creating one database): wait for it here instead.
            while_locked(lambda: cursor.execute("PRAGMA journal_mode = WAL"), timeout, _LOCKED)
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute("PRAGMA foreign_keys = ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # a read-only connection cannot take the write lock; in WAL mode it reads the last
        # commit without waiting for a writer
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def is_busy(err: BaseException) -> bool:
    """Whether ``err`` says another writer held the database past the busy timeout (SQLite's
    lock; PostgreSQL's lock timeout): try again later, nothing was stored."""
    return is_locked(err) or "lock timeout" in str(err) or "could not obtain lock" in str(err)


def alembic_config() -> Config:
    """Alembic configuration built in code: the scripts are package data of ``db``."""
    from alembic.config import Config

    # the stdout of now: Config's default is the sys.stdout of when alembic was imported, which
    # in a test process may be a command's captured stream, closed since
    cfg = Config(stdout=sys.stdout)
    cfg.set_main_option("script_location", "bot_arena.db:migrations")
    return cfg


@cache
def _scripts() -> ScriptDirectory:
    """The migration scripts, loaded once per process (each load imports every script)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


def head_revision() -> str | None:
    return _scripts().get_current_head()


def at_head(engine: Engine) -> bool:
    """Whether the database's schema is the newest script's, by one query of Alembic's
    version table, without loading Alembic (a third of the start-up of a read command):
    False when the table is missing, holds another revision or several, or cannot be read,
    and the full check of :func:`make_engine` then says why."""
    with engine.connect() as conn:
        try:
            rows = conn.exec_driver_sql("SELECT version_num FROM alembic_version").all()
        except exc.DBAPIError:
            return False
    return [tuple(row) for row in rows] == [(newest_script(),)]


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def _driver_execute(conn: Connection, sql: str) -> None:
    """``sql`` on the driver's connection itself, outside SQLAlchemy's transaction handling."""
    raw: Any = conn.connection.driver_connection
    raw.execute(sql)


def _dangling(conn: Connection) -> set[tuple[Any, ...]]:
    """SQLite's foreign key violations: (table, rowid, parent table, constraint index)."""
    return {tuple(row) for row in conn.exec_driver_sql("PRAGMA foreign_key_check")}


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to ``revision`` in one transaction (one migrator at a time).

    On SQLite, foreign keys are off while the migrations run: a constraint change rebuilds a
    table (Alembic's batch mode: copy, drop the old table, rename the copy), and with foreign
    keys on, dropping ``matches`` would delete, by ``ON DELETE CASCADE``, every seat and move
    that refers to it. SQLite ignores that pragma inside a transaction, so it is set on the
    driver connection before the transaction begins and set back afterwards; before the commit
    ``PRAGMA foreign_key_check`` must find no violation that was not there before.
    """
    from alembic import command

    _migrate(engine, revision, command.upgrade)


def downgrade(engine: Engine, revision: str) -> None:
    """Take the schema back to ``revision``, as :func:`upgrade` takes it forward (for a user
    returning to an older Bot Arena, and for the migrations' own tests)."""
    from alembic import command

    _migrate(engine, revision, command.downgrade)


def _migrate(engine: Engine, revision: str, step: Callable[[Config, str], None]) -> None:
    cfg = alembic_config()
    with engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        if sqlite:
            _driver_execute(conn, "PRAGMA foreign_keys = OFF")
        try:
            with conn.begin():
                if conn.dialect.name == "postgresql":
                    conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_PG_MIGRATION_LOCK})")
                cfg.attributes["connection"] = conn
                dangling = _dangling(conn) if sqlite else set()
                step(cfg, revision)
                if sqlite and (broken := sorted(_dangling(conn) - dangling)):
                    raise DatabaseOpenError(
                        f"the migration to {revision} would break a reference of table "
                        f"{broken[0][0]} (row {broken[0][1]}); nothing was changed"
                    )
        finally:
            if sqlite:
                _driver_execute(conn, "PRAGMA foreign_keys = ON")


def make_engine(url: str | None = None, *, migrate: bool = True, read_only: bool = False) -> Engine:
    """An engine for ``url`` (see :func:`database_url`), schema migrated to the latest revision
    (``migrate=False``: left as it is). A SQLite file's schema is checked first
    (:func:`check_sqlite_schema`): nothing is migrated or read in a file that is not ours.

    ``read_only``: a SQLite file is opened with ``mode=ro`` and never migrated; a schema older
    than the latest is refused with the advice to run ``arena db upgrade``.

    Raises DatabaseOpenError with a one-line reason when the URL is invalid, the file is not a
    database (or not an arena database) or cannot be created, the server does not answer, or
    the schema is from a newer version of Bot Arena.
    """
    url = database_url(url)
    shown = display_url(url)
    timeout = busy_timeout_s()
    path = sqlite_path(url)
    refuse_folder(path, shown)
    try:
        parsed = make_url(url)
        # JSON columns are written as strict JSON: a NaN or an infinity is an error, not a
        # token that browsers and strict parsers refuse when the data is read back
        kwargs: dict[str, Any] = {"json_serializer": dumps}
        if parsed.get_backend_name() == "sqlite":
            kwargs["connect_args"] = {"timeout": timeout}
            if read_only and path is not None:
                kwargs = {"json_serializer": dumps, "creator": lambda: _read_only(path, timeout)}
        engine = create_engine(parsed, **kwargs)
    except (exc.NoSuchModuleError, ImportError) as err:
        driver = _DRIVERS.get(url.partition(":")[0].partition("+")[0])
        if driver is not None:
            raise DatabaseOpenError(
                f"database {shown}: its driver is not installed ({_first_line(err)}); "
                f"install it with: pip install '{driver}'"
            ) from None
        raise DatabaseOpenError(f"invalid database URL {shown!r}: {_first_line(err)}") from None
    except (exc.ArgumentError, ValueError) as err:
        raise DatabaseOpenError(f"invalid database URL {shown!r}: {_first_line(err)}") from None
    if engine.dialect.name == "sqlite":
        _configure_sqlite(engine, timeout, read_only)
    elif engine.dialect.name == "postgresql":
        from bot_arena.db.models import declare_postgresql  # the ORM: not before it is needed

        declare_postgresql()

    new_file = path is not None and not _exists(path)

    def bring_up_to_date() -> None:
        if path is not None and _exists(path):
            check_sqlite_schema(path, timeout, shown)
        if new_file and migrate and not read_only and create_newest(engine):
            return  # made at the newest revision in one step, checked (``db/fresh.py``)
        if at_head(engine):  # one query, without loading Alembic
            with engine.connect():
                pass
        elif read_only:
            if (found := current_revision(engine)) != head_revision():
                raise DatabaseOpenError(
                    f"database {shown} has an older schema (revision {found or 'none'}); "
                    f"bring it up to date with: arena db upgrade --db {short(url)}"
                )
        elif migrate and current_revision(engine) != head_revision():
            upgrade(engine)
        else:
            with engine.connect():
                pass

    try:
        while_locked(bring_up_to_date, timeout, _LOCKED)
    except DatabaseOpenError:
        engine.dispose()
        raise
    except (exc.SQLAlchemyError, sqlite3.DatabaseError) as err:
        engine.dispose()
        raise DatabaseOpenError(describe_error(err, url)) from None
    except Exception as err:
        if not _is_command_error(err):
            raise
        engine.dispose()
        raise DatabaseOpenError(
            f"database {shown} has a schema this version does not know: {_first_line(err)}"
        ) from None
    return engine


def _is_command_error(err: BaseException) -> bool:
    """Whether ``err`` is Alembic's CommandError (an unknown revision), without loading
    Alembic to ask: if it is not loaded, nothing of it raised."""
    util = sys.modules.get("alembic.util")
    return util is not None and isinstance(err, util.CommandError)


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return True  # opening it says why


def describe_error(err: BaseException, url: str | None = None) -> str:
    """One line for the user about a database failure met while a command ran (``url``: the
    database, for the message): what happened to which database and what to do about it."""
    url = database_url(url)
    shown = display_url(url)
    path = sqlite_path(url)
    reason = _first_line(getattr(err, "orig", None) or err)
    low = reason.lower()
    if "not a database" in low:  # not even SQLite's: no advice to run tools on it
        return f"database {shown} is not an arena database ({reason})"
    if "malformed" in low or "disk i/o error" in low:
        fix = f"sqlite3 {path} .recover" if path else "restore it from a backup"
        return f"database {shown} is damaged ({reason}); save what is intact with: {fix}"
    if "readonly" in low or "read-only" in low:
        return f"database {shown} is read-only for this user ({reason})"
    if "locked" in low:
        return (
            f"database {shown} stayed locked by another process for {busy_timeout_s():g} s "
            f"({reason}); try again when it is done, or wait longer with ${TIMEOUT_ENV_VAR}"
        )
    if "disk is full" in low or "no space" in low:
        return f"database {shown}: the disk is full ({reason}); nothing more was stored"
    if "unable to open" in low and path is not None and _exists(path) and folder_read_only(path):
        return (
            f"database {shown} is read-only here: its folder cannot be written (a read-only "
            f"file system or folder; {reason}); commands that only read it work"
        )
    if "unable to open" in low:
        return f"cannot open database {shown} ({reason}): is its folder there and writable?"
    if isinstance(err, exc.OperationalError) and path is None:
        return f"cannot open database {shown}: {reason}"
    return f"database {shown}: {reason}"


def check_writable(engine: Engine) -> None:
    """Raise (a SQLAlchemy error) unless this user may store results in the database: SQLite
    takes its write lock (every transaction here begins with ``BEGIN IMMEDIATE``), PostgreSQL
    is asked for the right to insert into ``matches``. Writes nothing."""
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            allowed = conn.exec_driver_sql(
                "SELECT has_table_privilege('matches', 'INSERT')"
            ).scalar()
            if not allowed:
                raise exc.OperationalError(
                    "check", {}, Exception("read-only: no right to insert into matches")
                )
            return
        with conn.begin() as transaction:
            transaction.rollback()


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def _first_line(err: object) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
