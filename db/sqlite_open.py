"""Opening a SQLite file of someone else's safely, with the standard library alone: the
read-only hardened connection, the check that its schema is exactly ours
(``check_sqlite_schema``, over ``schema.py``), and the newest migration's revision read from
the scripts' names. ``session.py`` (SQLAlchemy) opens every database through these, and a
read command's plain-SQL path (``sqlite_read.py``) does too without loading SQLAlchemy.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from bot_arena.db.schema import Schema, first_difference, schema_of

T = TypeVar("T")

DEFAULT_URL = "sqlite:///arena.db"
ENV_VAR = "ARENA_DB"
BUSY_TIMEOUT_S = 60.0  # how long a write waits for another process's (SQLite)
TIMEOUT_ENV_VAR = "ARENA_DB_TIMEOUT"  # seconds, instead of BUSY_TIMEOUT_S
VERSIONS = Path(__file__).with_name("migrations") / "versions"  # the migration scripts
_SCRIPT_NAME = re.compile(r"(\d{4})_\w+\.py")  # 0009_dynamic_formats.py: revision 0009
SCHEMA_CHECK_S = 10.0  # the most time SQLite may spend on the schema check (a hostile file)
SHOWN_URL = 200  # characters of a URL quoted in a message


class DatabaseOpenError(Exception):
    """The database cannot be opened or brought up to date (one-line message for the user)."""


def database_url(url: str | None = None) -> str:
    """``url`` if given, else ``$ARENA_DB``, else ``sqlite:///arena.db``. A plain file path
    (no ``scheme://``) is a SQLite database at that path: ``--db results.db``. A NUL character
    raises DatabaseOpenError."""
    chosen = url or os.environ.get(ENV_VAR) or DEFAULT_URL
    if "\x00" in chosen:  # no file's name and no driver takes one (the Python API can pass it)
        raise DatabaseOpenError(
            f"database {chosen[:SHOWN_URL]!r}: a database's name holds no NUL character"
        )
    if "://" not in chosen:
        return f"sqlite:///{os.path.abspath(os.path.expanduser(chosen))}"
    return chosen


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


def short(text: str, limit: int = SHOWN_URL) -> str:
    """At most ``limit`` characters of ``text`` (a URL, a path), printable, for a message."""
    cut = "".join(c if c.isprintable() else "?" for c in text[:limit])
    return cut + ("…" if len(text) > limit else "")


def is_locked(err: BaseException) -> bool:
    """Whether ``err`` is SQLite's "the database is locked" (from sqlite3 or through SQLAlchemy,
    whose error carries SQLite's text)."""
    return "database is locked" in str(err) or "database table is locked" in str(err)


def while_locked(
    step: Callable[[], T],
    timeout: float,
    errors: tuple[type[BaseException], ...] = (sqlite3.OperationalError,),
) -> T:
    """Run ``step``, again with a growing pause while SQLite says the database is locked (one
    of ``errors`` that :func:`is_locked`; a new file switched to WAL by another process is
    answered at once, without the busy handler), for at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        try:
            return step()
        except errors as err:
            if not is_locked(err) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.25)


def _harden(dbapi_conn: Any) -> None:
    """What every SQLite connection of ours keeps: functions named in the file's schema do not
    run (``trusted_schema``), and damaged pages are caught before they are used."""
    dbapi_conn.execute("PRAGMA trusted_schema = OFF")
    dbapi_conn.execute("PRAGMA cell_size_check = ON")


def _read_only(path: Path, timeout: float) -> sqlite3.Connection:
    """A read-only connection to the SQLite file at ``path`` (``mode=ro``: no write, no WAL
    checkpoint), hardened.

    A file in WAL mode is read through its ``-shm`` index, which SQLite creates beside it: in a
    folder nobody here can write (a read-only file system, a read-only copy) that fails, so
    there the file is opened ``immutable`` (no locks, no index: SQLite reads the file as it is,
    which nobody can change while its folder is read-only) unless a ``-wal`` log with commits
    not yet in the file is there, which ``immutable`` would skip (``unreadable_log``)."""
    conn = _connect_read_only(path, timeout, immutable=False)
    if not folder_read_only(path):
        return conn
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    unreadable_log(path)
    return _connect_read_only(path, timeout, immutable=True)


def folder_read_only(path: Path) -> bool:
    """Whether this process may not create files beside ``path`` (its folder is read-only for
    this user, or on a read-only file system: ``access(2)`` says EROFS even to root)."""
    return not os.access(path.parent, os.W_OK)


def unreadable_log(path: Path) -> None:
    """Refuse (DatabaseOpenError) a file in a read-only folder whose ``-wal`` log holds data:
    its last commits are in the log, which only a writer can merge into the file."""
    log = path.with_name(path.name + "-wal")
    try:
        size = log.stat().st_size
    except OSError:
        return
    if size:
        raise DatabaseOpenError(
            f"database {short(str(path))} is in a read-only folder and its last commits are "
            f"still in {short(log.name)}, which only a writer can merge: open it once where it "
            "is writable (any arena command), then copy it"
        )


def _connect_read_only(path: Path, timeout: float, *, immutable: bool) -> sqlite3.Connection:
    mode = "mode=ro&immutable=1" if immutable else "mode=ro"
    conn = sqlite3.connect(
        f"file:{quote(str(path))}?{mode}", uri=True, timeout=timeout, check_same_thread=False
    )
    try:
        _harden(conn)
    except BaseException:
        conn.close()
        raise
    return conn


SCHEMA_FILE = "schema.json"  # in db/migrations: each revision's schema, as built_schema makes it


@cache
def expected_schema(revision: str | None) -> Schema:
    """The schema of ``revision`` (SCHEMA_FILE, else built: a revision newer than the file)."""
    if revision is None:
        return Counter()
    text = resources.files("bot_arena.db.migrations").joinpath(SCHEMA_FILE).read_text()
    stored = json.loads(text).get(revision)
    if stored is None:
        from bot_arena.db.session import built_schema

        return built_schema(revision)
    return Counter({tuple(row[:-1]): int(row[-1]) for row in stored})


def check_sqlite_schema(path: Path, timeout: float, shown: str) -> None:
    """Refuse (DatabaseOpenError) the SQLite file at ``path`` unless its schema is exactly Bot
    Arena's for its revision (``db/schema.py``). Runs no SQL of the file's: it reads
    ``sqlite_master`` on a read-only connection, and the revision only once the
    ``alembic_version`` table is found to be ours and the file holds no trigger or view; a
    progress handler stops SQLite after SCHEMA_CHECK_S whatever it is doing."""
    conn = _read_only(path, timeout)
    deadline = time.monotonic() + SCHEMA_CHECK_S
    conn.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
    try:
        rows = [
            tuple(r) for r in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")
        ]
        actual = schema_of(rows)
        code = Counter({k: n for k, n in actual.items() if k[0] in ("trigger", "view")})
        revision: str | None = None
        if not code and any(r[2] == "alembic_version" for r in rows):
            version_table = Counter(
                {
                    k: n
                    for k, n in expected_schema(newest_script()).items()
                    if k[2] == "alembic_version"
                }
            )
            mine = Counter({k: n for k, n in actual.items() if k[2] == "alembic_version"})
            if (difference := first_difference(mine, version_table)) is not None:
                raise DatabaseOpenError(f"database {shown} is not an arena database: {difference}")
            found = [v for (v,) in conn.execute("SELECT version_num FROM alembic_version LIMIT 2")]
            revision = str(found[0]) if len(found) == 1 else None
            if revision is None or not _known(revision):
                raise DatabaseOpenError(
                    f"database {shown} has a schema this version does not know "
                    f"(revision {short(repr(found))})"
                )
        difference = first_difference(
            code or actual, Counter() if code else expected_schema(revision)
        )
        if difference is not None:
            raise DatabaseOpenError(
                f"database {shown} is not an arena database: {difference}; nothing in it was run"
            )
    except sqlite3.OperationalError as err:
        if "interrupted" not in str(err):
            raise
        raise DatabaseOpenError(
            f"database {shown}: its schema took more than {SCHEMA_CHECK_S:g} s to read; "
            "it is not an arena database"
        ) from None
    finally:
        conn.close()


def _known(revision: str) -> bool:
    if revision == newest_script():  # the usual case, told without loading Alembic
        return True
    from alembic.util import CommandError

    from bot_arena.db.session import _scripts

    try:
        return _scripts().get_revision(revision) is not None
    except CommandError:
        return False


def newest_script() -> str | None:
    """The revision of the newest migration script, read from the scripts' file names alone
    (``0009_dynamic_formats.py`` is revision ``0009``; tests/db/test_fast_open.py checks that
    every script is named so and that this is Alembic's head)."""
    numbers = [m[1] for name in os.listdir(VERSIONS) if (m := _SCRIPT_NAME.fullmatch(name))]
    return max(numbers, default=None)
