"""Fixtures shared by the arena's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.db.dbtest import BACKENDS, Db, database, wants_ready


@pytest.fixture(params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    """The test database on each backend (SQLite; PostgreSQL with $ARENA_TEST_PG_URL), read
    from outside the runner; on PostgreSQL a schema at the newest revision, or an empty one
    for a test marked ``new_schema``."""
    with database(request.param, tmp_path, ready=wants_ready(request)) as url:
        handle = Db(url, keep=True)
        try:
            yield handle
        finally:
            if handle.engine is not None:
                handle.engine.dispose()
