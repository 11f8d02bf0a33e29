"""The quick schema check of ``make_engine`` (``at_head``): one query instead of loading Alembic,
trusted only when it matches exactly, so every other case still goes through Alembic's check."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine

from bot_arena.db.session import (
    VERSIONS,
    alembic_config,
    at_head,
    current_revision,
    downgrade,
    head_revision,
    make_engine,
    newest_script,
)
from tests.db.dbtest import BACKENDS, database


@pytest.fixture(params=BACKENDS)
def migrated(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    with database(request.param, tmp_path, ready=True) as url:
        engine = make_engine(url)
        try:
            yield engine
        finally:
            engine.dispose()


def test_the_newest_script_by_its_name_is_alembics_head() -> None:
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory.from_config(alembic_config())
    for revision in scripts.walk_revisions():
        assert os.path.basename(revision.path).startswith(f"{revision.revision}_")
        assert revision.path.startswith(str(VERSIONS))
    assert newest_script() == head_revision() is not None


def test_a_database_at_the_head_is_seen_so(migrated: Engine) -> None:
    assert at_head(migrated)


def test_a_database_behind_is_not(migrated: Engine) -> None:
    downgrade(migrated, "-1")
    assert current_revision(migrated) != head_revision()
    assert not at_head(migrated)


def test_two_revisions_or_none_are_not_the_head(migrated: Engine) -> None:
    with migrated.begin() as conn:
        conn.exec_driver_sql("INSERT INTO alembic_version VALUES ('0001')")
    assert not at_head(migrated)
    with migrated.begin() as conn:
        conn.exec_driver_sql("DELETE FROM alembic_version")
    assert not at_head(migrated)


def test_a_database_without_alembics_table_is_not(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    try:
        assert not at_head(engine)
    finally:
        engine.dispose()
