"""The expected SQLite schema of each revision (db/migrations/schema.json) is what our
migrations build, and the comparison lets through exactly what varies between two honest
databases of one revision (whitespace, constraint order, a table rebuilt by a downgrade)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bot_arena.db import session, sqlite_open
from bot_arena.db.schema import first_difference, normal, schema_of
from bot_arena.db.session import (
    DatabaseOpenError,
    check_sqlite_schema,
    downgrade,
    make_engine,
    schema_file_text,
    upgrade,
)

SCHEMA_FILE = Path(session.__file__).parent / "migrations" / "schema.json"


def test_the_shipped_schemas_are_the_migrations() -> None:
    assert SCHEMA_FILE.read_text() == schema_file_text(), (
        "db/migrations/schema.json is stale: regenerate it as session.schema_file_text says"
    )


def _rows(path: Path) -> list[tuple[str, str, str, str | None]]:
    with sqlite3.connect(path) as conn:
        return list(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))


@pytest.mark.parametrize("revision", ["0004", "0008"])
def test_a_downgraded_database_is_ours(tmp_path: Path, revision: str) -> None:
    """A downgrade rebuilds tables with their constraints in another order: still ours."""
    fresh = make_engine(f"sqlite:///{tmp_path / 'a.db'}", migrate=False)
    upgrade(fresh, revision)
    fresh.dispose()
    down = make_engine(f"sqlite:///{tmp_path / 'b.db'}")
    downgrade(down, revision)
    down.dispose()
    a, b = schema_of(_rows(tmp_path / "a.db")), schema_of(_rows(tmp_path / "b.db"))
    assert first_difference(b, a) is None
    check_sqlite_schema(tmp_path / "b.db", 5.0, "b.db")  # raises if foreign


def test_normalising_keeps_what_matters() -> None:
    ours = normal(
        "table", "t", "t", 'CREATE TABLE "t" (\n\ta INTEGER NOT NULL, \n\tCHECK (a > 0)\n)'
    )
    assert ours == normal("table", "t", "t", "CREATE TABLE t (CHECK (a > 0), a INTEGER NOT NULL)")
    for other in (
        "CREATE TABLE t (a INTEGER NOT NULL DEFAULT 1, CHECK (a > 0))",
        "CREATE TABLE t (a INTEGER NOT NULL, CHECK (a > 1))",
        "CREATE TABLE t (a INTEGER NOT NULL, CHECK (a > 0)) WITHOUT ROWID",
        "CREATE TABLE t (a INTEGER NOT NULL, b AS (a * 2), CHECK (a > 0))",
    ):
        assert normal("table", "t", "t", other) != ours, other


def test_a_trigger_is_refused_without_reading_the_revision(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    make_engine(f"sqlite:///{path}").dispose()
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TRIGGER t AFTER DELETE ON bots BEGIN SELECT 1; END")
    with pytest.raises(DatabaseOpenError, match="its trigger 't' \\(on 'bots'\\) is not Bot"):
        check_sqlite_schema(path, 5.0, "t.db")


def test_the_check_is_bounded_in_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's work during the check is bounded by a progress handler: with no time left, a
    schema of many objects stops it (one line) rather than being read to the end."""
    path = tmp_path / "many.db"
    with sqlite3.connect(path) as conn:
        # one transaction, no syncs: 3,000 separate commits took over a minute on a busy disk
        tables = "".join(f"CREATE TABLE t{i} (x);" for i in range(3000))
        conn.executescript(f"PRAGMA synchronous=OFF; BEGIN; {tables} COMMIT;")
    monkeypatch.setattr(sqlite_open, "SCHEMA_CHECK_S", -1.0)
    with pytest.raises(DatabaseOpenError, match="its schema took more than -1 s to read"):
        check_sqlite_schema(path, 5.0, "many.db")


@pytest.mark.parametrize("read_only", [False, True])
def test_every_connection_distrusts_the_schema(tmp_path: Path, read_only: bool) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    make_engine(url).dispose()
    engine = make_engine(url, read_only=read_only)
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA trusted_schema").scalar() == 0
            assert conn.exec_driver_sql("PRAGMA cell_size_check").scalar() == 1
    finally:
        engine.dispose()
