"""Fixtures shared by the arena's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.db.dbtest import BACKENDS, Db, database, wants_ready
from tests.forked_cli import Server


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


#: what the commands forked by :func:`arena_cli` import before they work, beyond the CLI and
#: SQLAlchemy (tests/forked_cli.py's PRELOAD): a tournament's and a ladder's run and resume,
#: a game played, ``arena serve``'s checks; imported once a process instead of by each command
ARENA_MODULES = (
    "bot_arena.arena.api.new_run",
    "bot_arena.arena.api.runner",
    "bot_arena.arena.api.resume",
    "bot_arena.arena.api.ladders",
    "bot_arena.arena.api.cluster",
    "bot_arena.arena.tournament.runner",
    "bot_arena.arena.tournament.job_handle",
    "bot_arena.arena.tournament.create",
    "bot_arena.arena.tournament.ladder",
    "bot_arena.arena.ratings.query",
    "bot_arena.arena.match.pool",
    "bot_arena.db.store",
    "bot_arena.db.tournaments",
    "bot_arena.db.queries",
    "bot_arena.db.ladders",
    "bot_arena.db.sqlite_play",
)


@pytest.fixture(scope="session")
def _arena_forks() -> Iterator[Server]:
    made = Server(preload=ARENA_MODULES)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def arena_cli(_arena_forks: Server) -> Iterator[Server]:
    """``arena`` commands as processes forked from one server a test process, which started
    Python and imported the CLI and what the commands import once (tests/forked_cli.py): for
    tests whose subject is a command's process (its exit code, output, signals, kill -9, what
    it leaves), not the interpreter's start-up, which cost a fresh one 0.3 to 0.6 s of CPU. A
    command the test left running is killed after it (the server is started again on use)."""
    yield _arena_forks
    if not _arena_forks.idle():
        _arena_forks.close()
