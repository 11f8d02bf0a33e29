"""The JSON reads under ``/api``: a bot, a match, a tournament's standings, the server's
health. Anyone may read them; a bot's source comes only with its owner's (or an admin's)
token."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bot_arena.arena.api import views
from bot_arena.arena.api.accounts import Account
from bot_arena.arena.api.errors import ArenaError
from bot_arena.arena.server.auth import api_user
from bot_arena.arena.server.errors import ApiError
from bot_arena.arena.server.state import state_of

MAX_ID = 2**62  # larger ids are no row of ours (and would overflow the database's integers)


def path_id(request: Request, key: str = "id") -> int:
    value = request.path_params[key]
    if not isinstance(value, int) or not 0 < value < MAX_ID:
        raise ApiError(404, "not found")
    return value


async def health(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


async def get_bot(request: Request) -> JSONResponse:
    state = state_of(request)
    bot_id = path_id(request)
    viewer: Account | None = None
    if "authorization" in request.headers:
        viewer = await api_user(request)

    def read() -> dict[str, object] | None:
        with state.reads() as session:
            return views.bot_view(session, bot_id, viewer)

    found = await run_in_threadpool(read)
    if found is None:
        raise ApiError(404, f"no bot {bot_id}")
    return JSONResponse(found)


async def get_match(request: Request) -> Response:
    from bot_arena.arena.formats.export import strict_text

    state = state_of(request)
    match_id = path_id(request)

    def read() -> str | None:
        with state.reads() as session:
            found = views.match_view(session, match_id)
        return None if found is None else strict_text(found)

    text = await run_in_threadpool(read)
    if text is None:
        raise ApiError(404, f"no played match {match_id}")
    return Response(text, media_type="application/json")


async def get_standings(request: Request) -> Response:
    state = state_of(request)
    tournament_id = path_id(request)

    def read() -> str:
        with state.reads() as session:
            return views.standings_json(session, tournament_id)

    try:
        text = await run_in_threadpool(read)
    except ArenaError as exc:
        raise ApiError(404, str(exc)) from None
    return Response(text, media_type="application/json")


async def get_me(request: Request) -> JSONResponse:
    """The token's user and the bots it owns."""
    state = state_of(request)
    user = await api_user(request)

    def read() -> list[dict[str, object]]:
        with state.reads() as session:
            return [dict(b) for b in views.my_bots(session, user)]

    return JSONResponse({"user": user.to_dict(), "bots": await run_in_threadpool(read)})
