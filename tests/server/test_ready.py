"""Answers kept as ready bytes (``server/ready.py``), in process: a kept answer's age, its
``forget``, a read that began before a ``forget`` not kept, and the server's own changes (an
admin's new ladder, a bot suspended) dropping the kept ladder list at once."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the server tests need the bot-arena[server] extra")

from bot_arena.arena.api.sandbox import confinement
from bot_arena.arena.server import admin
from bot_arena.arena.server.ready import Ready, Recent
from bot_arena.arena.server.settings import ServerSettings
from bot_arena.arena.server.state import ServerState
from bot_arena.db.session import make_engine, session_factory


def test_a_kept_answer_lives_its_age_and_a_forget() -> None:
    now = [0.0]
    kept = Recent(max_age=1.0, clock=lambda: now[0])
    assert kept.get() is None
    first = kept.read(lambda: Ready.of('{"a": 1}'))
    assert kept.get() is first
    now[0] = 0.9
    assert kept.get() is first  # within the age
    now[0] = 1.0
    assert kept.get() is None  # past it: the next reader reads
    second = kept.read(lambda: Ready.of('{"a": 2}'))
    assert kept.get() is second and second.etag != first.etag
    kept.forget()
    assert kept.get() is None


def test_a_read_begun_before_a_forget_is_not_kept() -> None:
    kept = Recent(max_age=10.0, clock=lambda: 0.0)

    def read_while_changed() -> Ready:
        kept.forget()  # the change lands while this read is under way
        return Ready.of("[]")

    assert kept.read(read_while_changed).text == "[]"  # answered, not kept
    assert kept.get() is None


def test_the_servers_own_changes_drop_the_kept_ladder_list(tmp_path: Path) -> None:
    from bot_arena.arena.api.ladders import ladder_add, ladder_create

    db = str(tmp_path / "arena.db")
    ladder_create("club", "tictactoe", db=db, seed=5)
    ladder_add("club", ["random", "random:seed=3"], db=db)
    engine, writer = make_engine(db, read_only=True), make_engine(db)
    state = ServerState(
        ServerSettings(db=db, confinement=confinement("off", None)),
        session_factory(engine),
        session_factory(writer),
        ladder_list=Recent(max_age=1e9, clock=lambda: 0.0),  # kept for ever but for a change
    )
    try:
        state.ladder_list.read(lambda: Ready.of("[]"))
        admin.create_ladder(state, "made", "tictactoe", [], None)
        assert state.ladder_list.get() is None
        state.ladder_list.read(lambda: Ready.of("[]"))
        admin.suspend_bot(state, "club", "random", True)
        assert state.ladder_list.get() is None
    finally:
        engine.dispose()
        writer.dispose()
