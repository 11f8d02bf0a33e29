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
engine is made, so a database written by an older version opens and is brought up to date.
A database already at the newest script's revision is seen so by one query (``at_head``),
without loading Alembic: about a third of the start-up of a read command.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, exc, make_url
from sqlalchemy.orm import Session, sessionmaker

from bot_arena.arena.transport.strict_json import dumps

if TYPE_CHECKING:  # Alembic loads only when a schema is to be read or changed (see at_head)
    from alembic.config import Config

DEFAULT_URL = "sqlite:///arena.db"
ENV_VAR = "ARENA_DB"
BUSY_TIMEOUT_S = 60.0  # how long a write waits for another process's (SQLite)
TIMEOUT_ENV_VAR = "ARENA_DB_TIMEOUT"  # seconds, instead of BUSY_TIMEOUT_S
T = TypeVar("T")
VERSIONS = Path(__file__).with_name("migrations") / "versions"  # the migration scripts
_SCRIPT_NAME = re.compile(r"(\d{4})_\w+\.py")  # 0009_dynamic_formats.py: revision 0009
_PG_MIGRATION_LOCK = 0x4172656E61  # advisory lock key: one migrator at a time on PostgreSQL


class DatabaseOpenError(Exception):
    """The database cannot be opened or brought up to date (one-line message for the user)."""


# the package that brings a database's driver, by URL scheme (a pip extra of ours where we
# have one)
_DRIVERS = {"postgresql": "bot-arena[postgres]", "postgres": "bot-arena[postgres]"}


def database_url(url: str | None = None) -> str:
    """``url`` if given, else ``$ARENA_DB``, else ``sqlite:///arena.db``. A plain file path
    (no ``scheme://``) is a SQLite database at that path: ``--db results.db``."""
    chosen = url or os.environ.get(ENV_VAR) or DEFAULT_URL
    if "://" not in chosen:
        return f"sqlite:///{os.path.abspath(os.path.expanduser(chosen))}"
    return chosen


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


def _configure_sqlite(engine: Engine, timeout: float) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see module docstring)
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            # Switching a new file to WAL takes an exclusive lock, and SQLite answers "database
            # is locked" at once, without its busy handler, while another process is doing the
            # same (two arena processes creating one database): wait for it here instead.
            _while_locked(lambda: cursor.execute("PRAGMA journal_mode = WAL"), timeout)
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute("PRAGMA foreign_keys = ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def busy_timeout_s() -> float:
    """How long a SQLite write waits while another process holds the database: $ARENA_DB_TIMEOUT
    seconds, else BUSY_TIMEOUT_S. A bad value raises DatabaseOpenError (one line)."""
    raw = os.environ.get(TIMEOUT_ENV_VAR, "").strip()
    if not raw:
        return BUSY_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1e6:  # NaN fails too
        raise DatabaseOpenError(f"${TIMEOUT_ENV_VAR} {raw!r}: give seconds, e.g. 60")
    return value


def _is_locked(err: BaseException) -> bool:
    return "database is locked" in str(err) or "database table is locked" in str(err)


def _while_locked(step: Callable[[], T], timeout: float) -> T:
    """Run ``step``, again with a growing pause while SQLite says the database is locked,
    for at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        try:
            return step()
        except (sqlite3.OperationalError, exc.OperationalError) as err:
            if not _is_locked(err) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.25)


def alembic_config() -> Config:
    """Alembic configuration built in code: the scripts are package data of ``db``."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", "bot_arena.db:migrations")
    return cfg


def head_revision() -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def newest_script() -> str | None:
    """The revision of the newest migration script, read from the scripts' file names alone
    (``0009_dynamic_formats.py`` is revision ``0009``; tests/db/test_fast_open.py checks that
    every script is named so and that this is Alembic's head)."""
    numbers = [m[1] for name in os.listdir(VERSIONS) if (m := _SCRIPT_NAME.fullmatch(name))]
    return max(numbers, default=None)


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


def make_engine(url: str | None = None, *, migrate: bool = True) -> Engine:
    """An engine for ``url`` (see :func:`database_url`), schema migrated to the latest revision.

    Raises DatabaseOpenError with a one-line reason when the URL is invalid, the file is not a
    database or cannot be created, the server does not answer, or the schema is from a newer
    version of Bot Arena.
    """
    url = database_url(url)
    shown = display_url(url)
    timeout = busy_timeout_s()
    try:
        parsed = make_url(url)
        # JSON columns are written as strict JSON: a NaN or an infinity is an error, not a
        # token that browsers and strict parsers refuse when the data is read back
        kwargs: dict[str, Any] = {"json_serializer": dumps}
        if parsed.get_backend_name() == "sqlite":
            kwargs["connect_args"] = {"timeout": timeout}
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
        _configure_sqlite(engine, timeout)

    def bring_up_to_date() -> None:
        if migrate and not at_head(engine):
            _upgrade_if_due(engine, shown)
        elif not migrate:
            with engine.connect():
                pass

    try:
        _while_locked(bring_up_to_date, timeout)
    except DatabaseOpenError:
        engine.dispose()
        raise
    except (exc.SQLAlchemyError, sqlite3.DatabaseError) as err:
        engine.dispose()
        raise DatabaseOpenError(describe_error(err, url)) from None
    return engine


def _upgrade_if_due(engine: Engine, shown: str) -> None:
    """Migrate to the head unless the schema is there (Alembic's own check); a revision this
    version does not know raises DatabaseOpenError."""
    from alembic.util import CommandError

    try:
        if current_revision(engine) != head_revision():
            upgrade(engine)
    except CommandError as err:
        raise DatabaseOpenError(
            f"database {shown} has a schema this version does not know: {_first_line(err)}"
        ) from None


def describe_error(err: BaseException, url: str | None = None) -> str:
    """One line for the user about a database failure met while a command ran (``url``: the
    database, for the message): what happened to which database and what to do about it."""
    url = database_url(url)
    shown = display_url(url)
    path = sqlite_path(url)
    reason = _first_line(getattr(err, "orig", None) or err)
    low = reason.lower()
    if "malformed" in low or "not a database" in low or "disk i/o error" in low:
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
