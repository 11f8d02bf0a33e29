"""The server's rate limits counted in the database (``rate_events``, 0013): the sliding
window on SQLite and PostgreSQL, and a 429 that a restart of ``arena serve`` (even a kill -9)
does not lift."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.db.dbtest import BACKENDS, database
from tests.server.conftest import Served, fill, start

pytest.importorskip("starlette", reason="the server tests need the bot-arena[server] extra")


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path, ready=True) as found:
        yield found


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_the_window_slides_and_keys_are_apart(url: str) -> None:
    """Two attempts an hour: the third is refused (and not counted), another key is apart,
    another limit too, and an attempt leaves the window exactly an hour after it was made."""
    from bot_arena.arena.server.ratelimit import RateLimiter
    from bot_arena.db.session import make_engine, session_factory

    engine = make_engine(url)
    try:
        writes = session_factory(engine)
        clock = Clock()
        uploads = RateLimiter("upload", 2, writes, window=3600, clock=clock)
        signins = RateLimiter("signin", 2, writes, window=3600, clock=clock)
        assert uploads.allow(7)
        clock.now += timedelta(minutes=30)
        assert uploads.allow(7)
        assert not uploads.allow(7)
        assert uploads.allow(8) and signins.allow(7)  # another key, another limit
        clock.now += timedelta(minutes=29)
        assert not uploads.allow(7)  # refused attempts were not counted: still the first two
        clock.now += timedelta(minutes=1)  # the first attempt is an hour old: out
        assert uploads.allow(7)
        assert not uploads.allow(7)
        # a second limiter over the same database (another server, or this one restarted)
        again = RateLimiter("upload", 2, session_factory(engine), window=3600, clock=clock)
        assert not again.allow(7)
        clock.now += timedelta(hours=2)  # key 8's attempt is old: swept by key 7's
        assert uploads.allow(7)
        with engine.connect() as conn:
            keys = conn.exec_driver_sql("SELECT key FROM rate_events WHERE kind = 'upload'")
            assert [row[0] for row in keys] == ["7"]
    finally:
        engine.dispose()


def _attempt(served: Served, user: str) -> int:
    """An upload attempt that is not a form: counted, then refused (400) once allowed."""
    with served.client(user) as client:
        return client.post("/api/bots", content=b"not a form").status_code


@pytest.mark.parametrize("stop", ["terminate", "kill -9"])
def test_a_restart_keeps_the_429(tmp_path: Path, stop: str) -> None:
    db = tmp_path / "arena.db"
    tokens = fill(db).tokens
    server = start(tmp_path, db, "--uploads-per-hour", "2")
    server.tokens = tokens
    try:
        assert [_attempt(server, "erin") for _ in range(3)] == [400, 400, 429]
    finally:
        if stop == "kill -9":
            server.process.send_signal(signal.SIGKILL)
            server.process.wait(10)
        server.stop()
    again = start(tmp_path, db, "--uploads-per-hour", "2")
    again.tokens = tokens
    try:
        assert _attempt(again, "erin") == 429
        assert _attempt(again, "alice") == 400  # another user's count is apart
    finally:
        again.stop()
