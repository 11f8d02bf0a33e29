"""A ladder's page for visitors who are not signed in, kept rendered while its standings'
bytes hold (``ServerState.ladder_pages``, ``ready.Derived``), in process through the ASGI app:
the same bytes for every such visitor and no visitor's CSRF token in them; rendered again once
a stored game changes the standings; a signed-in visitor's page still made for them."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the server tests need the bot-arena[server] extra")

import httpx

from bot_arena.arena.api.ladder_views import StandingsCache
from bot_arena.arena.api.sandbox import confinement
from bot_arena.arena.server.app import create_app
from bot_arena.arena.server.auth import CSRF_COOKIE, SESSION_COOKIE
from bot_arena.arena.server.settings import ServerSettings
from bot_arena.arena.server.state import ServerState
from bot_arena.db.session import make_engine, session_factory
from tests import asyncrun

DEADLINE_S = 30.0
GAMES = re.compile(r'<span id="games">(\d+)</span>')


def _games(page: str) -> int:
    found = GAMES.search(page)
    assert found is not None, page[:400]
    return int(found.group(1))


def test_the_page_is_rendered_once_a_change_and_holds_no_visitors_token(tmp_path: Path) -> None:
    from bot_arena.arena.api import accounts
    from bot_arena.arena.api.ladders import ladder_add, ladder_create, ladder_run

    db = str(tmp_path / "arena.db")
    ladder_create("club", "tictactoe", db=db, seed=5)
    ladder_add("club", ["random", "random:seed=3"], db=db)
    ladder_run("club", jobs=1, until_games=1, db=db)
    engine, writer = make_engine(db, read_only=True), make_engine(db)
    writes = session_factory(writer)
    with writes.begin() as session:
        user, _ = accounts.add_user(session, "alice")
        cookie, csrf = accounts.open_session(session, user)
    app = create_app(
        ServerSettings(db=db, confinement=confinement("off", None)),
        session_factory(engine),
        writes,
    )
    state = app.state.arena
    assert isinstance(state, ServerState)
    state.standings = StandingsCache(max_age=0.0)  # every read past the age: no clock involved

    def client(**cookies: str) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app)
        return httpx.AsyncClient(transport=transport, base_url="http://test", cookies=cookies)

    async def page(**cookies: str) -> httpx.Response:
        async with client(**cookies) as http:
            answer = await http.get("/ladders/club")
        assert answer.status_code == 200, answer.text[:200]
        return answer

    async def body() -> None:
        first = await page()
        second = await page()
        assert state.ladder_pages.made == 1  # the second visitor was handed the same bytes
        assert first.content == second.content
        before = _games(first.text)
        tokens = {first.cookies[CSRF_COOKIE], second.cookies[CSRF_COOKIE]}
        assert len(tokens) == 2  # each visitor still has a token of their own, in a cookie
        assert not any(token in first.text for token in tokens)

        mine = await page(**{SESSION_COOKIE: cookie})  # signed in: made for alice
        assert "alice" in mine.text and csrf in mine.text and csrf not in first.text
        assert state.ladder_pages.made == 1

        await asyncio.to_thread(ladder_run, "club", jobs=1, until_games=before + 1, db=db)
        await page()  # the last standings at once; one read refreshes them behind it
        await asyncio.wait_for(asyncio.gather(*state.refreshes), DEADLINE_S)
        fresh = await page()
        assert _games(fresh.text) > before and state.ladder_pages.made == 2
        assert (await page()).content == fresh.content and state.ladder_pages.made == 2

    try:
        asyncrun.run(body())
    finally:
        engine.dispose()
        writer.dispose()
