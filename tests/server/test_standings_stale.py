"""Stale while revalidate (``server/ladders.py``'s ``_standings``), in process: once a
ladder's answer is kept, a reader past the cache's age is answered with it at once while one
background read refreshes it, and the next reader gets the fresh one. The fresh read is held
on a gate here: a reader that waited on it would not be answered while the gate is shut."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the server tests need the bot-arena[server] extra")

from bot_arena.arena.api.ladder_views import StandingsCache
from bot_arena.arena.api.sandbox import confinement
from bot_arena.arena.server import ladders
from bot_arena.arena.server.settings import ServerSettings
from bot_arena.arena.server.state import ServerState
from bot_arena.db.session import make_engine, session_factory
from tests import asyncrun

DEADLINE_S = 30.0


def test_a_reader_past_the_age_is_answered_at_once_while_one_read_refreshes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot_arena.arena.api.ladders import ladder_add, ladder_create

    db = str(tmp_path / "arena.db")
    ladder_create("club", "tictactoe", db=db, seed=5)
    ladder_add("club", ["random", "random:seed=3"], db=db)
    engine, writer = make_engine(db, read_only=True), make_engine(db)
    now = [0.0]
    state = ServerState(
        ServerSettings(db=db, confinement=confinement("off", None)),
        session_factory(engine),
        session_factory(writer),
        standings=StandingsCache(max_age=1.0, clock=lambda: now[0]),
    )
    real = ladders.standings_text
    gate = threading.Event()
    gate.set()
    fresh_reads: list[str] = []

    def held(state: ServerState, name: str) -> str:
        assert gate.wait(DEADLINE_S)
        fresh_reads.append(name)
        return real(state, name)

    monkeypatch.setattr(ladders, "standings_text", held)

    async def body() -> None:
        first = await ladders._standings(state, "club")  # nothing kept: this one waits
        assert fresh_reads == ["club"]
        now[0] = 5.0  # past the age
        gate.clear()  # a fresh read would block now
        answers = await asyncio.wait_for(
            asyncio.gather(*(ladders._standings(state, "club") for _ in range(5))), DEADLINE_S
        )
        assert answers == [first] * 5 and not gate.is_set()  # answered, the read still held
        assert len(state.refreshes) == 1  # one background read for them all
        gate.set()
        await asyncio.wait_for(asyncio.gather(*state.refreshes), DEADLINE_S)
        assert fresh_reads == ["club", "club"]
        assert await ladders._standings(state, "club") == first  # fresh, within the age
        assert fresh_reads == ["club", "club"]  # and not read again

    try:
        asyncrun.run(body())
    finally:
        engine.dispose()
        writer.dispose()
