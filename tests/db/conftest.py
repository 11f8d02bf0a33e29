from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from bot_arena.db.session import make_engine, session_factory
from tests.db.dbtest import BACKENDS, database, example_database, from_template, wants_ready


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database; on PostgreSQL, for a test that takes the ``engine`` (the schema
    ready, not its making), this process's migrated schema emptied (``example_database``),
    else a schema of its own at the newest revision, or, for a test marked ``new_schema``,
    an empty one (``database``)."""
    if request.param == "postgresql" and "engine" in request.fixturenames:
        with example_database(request.param) as url:
            yield url
        return
    with database(request.param, tmp_path, ready=wants_ready(request)) as url:
        yield url


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """An engine on the test database, its schema ready (SQLite: a copy of a migrated file)."""
    eng = make_engine(from_template(db_url))
    yield eng
    eng.dispose()


@pytest.fixture
def factory(engine: Engine) -> sessionmaker[Session]:
    return session_factory(engine)
