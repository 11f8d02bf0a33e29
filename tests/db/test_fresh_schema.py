"""A new SQLite database is made at the newest revision in one step (``db/fresh.py``): the same
schema, object for object, as the migrations build, and the migrations still run wherever that
step does not apply."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.db import fresh
from bot_arena.db.schema import schema_of
from bot_arena.db.session import built_schema, head_revision, make_engine


def objects(path: Path) -> list[tuple[str, str, str, str | None]]:
    with sqlite3.connect(path) as conn:
        return [
            tuple(r) for r in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")
        ]


def revision(path: Path) -> list[tuple[str]]:
    with sqlite3.connect(path) as conn:
        return [tuple(r) for r in conn.execute("SELECT version_num FROM alembic_version")]


def test_a_new_file_is_made_in_one_step_with_the_migrations_schema(tmp_path: Path) -> None:
    """The models' tables and Alembic's version table, at the head: exactly what replaying
    every migration builds (compared as every opened file is, from the migrations themselves,
    not from schema.json)."""
    path = tmp_path / "new.db"
    engine = make_engine(f"sqlite:///{path}", migrate=False)  # an empty file
    try:
        assert fresh.create_newest(engine)
        assert not fresh.create_newest(engine)  # not empty any more: left alone
    finally:
        engine.dispose()
    head = head_revision()
    assert revision(path) == [(head,)]
    assert schema_of(objects(path)) == built_schema(head)


def test_make_engine_takes_that_step_for_a_new_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[bool] = []
    real = fresh.create_newest

    def spy(engine: object) -> bool:
        made.append(real(engine))  # type: ignore[arg-type]
        return made[-1]

    monkeypatch.setattr("bot_arena.db.session.create_newest", spy)
    path = tmp_path / "arena.db"
    make_engine(f"sqlite:///{path}").dispose()
    assert made == [True]
    make_engine(f"sqlite:///{path}").dispose()  # an existing file: opened as before
    assert made == [True]
    assert revision(path) == [(head_revision(),)]


def test_a_schema_that_differs_is_rolled_back_and_migrated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Models out of step with the migrations: nothing of them is kept, the migrations run."""
    monkeypatch.setattr(fresh, "expected_schema", lambda revision: Counter())
    path = tmp_path / "arena.db"
    engine = make_engine(f"sqlite:///{path}", migrate=False)
    try:
        assert not fresh.create_newest(engine)
    finally:
        engine.dispose()
    assert objects(path) == []  # rolled back whole
    path.unlink()
    make_engine(f"sqlite:///{path}").dispose()  # falls back to the migrations
    assert revision(path) == [(head_revision(),)]
    assert schema_of(objects(path)) == built_schema(head_revision())


def test_a_run_on_a_new_database_through_the_cli(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    args = ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1"]
    played = CliRunner().invoke(app, [*args, "--games", "2", "--jobs", "1", "--db", db])
    assert played.exit_code == 0, played.output
    checked = CliRunner().invoke(app, ["db", "check", "--db", db])
    assert checked.exit_code == 0, checked.output
    assert f"revision {head_revision()} (latest)" in checked.stdout
