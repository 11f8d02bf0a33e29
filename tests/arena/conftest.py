"""Fixtures shared by the arena's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.db.dbtest import BACKENDS, Db, database, wants_ready
from tests.forked_cli import Server, commands


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


@pytest.fixture
def arena_cli() -> Iterator[Server]:
    """``arena`` commands as processes forked from one server a test process, which started
    Python and imported the CLI and what the commands import once (tests/forked_cli.py's
    ``commands``): for tests whose subject is a command's process (its exit code, output,
    signals, kill -9, what it leaves), not the interpreter's start-up, which cost a fresh one
    0.3 to 0.6 s of CPU. A command the test left running is killed after it (the server stays:
    it was closed and started again, a fresh interpreter's imports each time)."""
    server = commands()
    yield server
    server.end_running()
