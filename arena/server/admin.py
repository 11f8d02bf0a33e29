"""What admins do from the web: create ladders, suspend and reinstate users, suspend and
reinstate a bot's entrants in a ladder. Each action is a page form (a signed-in admin's
session, its CSRF token) and a JSON endpoint (an admin's API token) over the same function,
which calls the API (``api/accounts.py``, ``api/ladders.py``); anyone else gets 403.

The JSON endpoints (``POST``, ``Authorization: Bearer TOKEN``):

- ``/api/admin/ladders``: body ``{"name", "game", "params": [...], "move_time": s}``, 201;
- ``/api/admin/users/{name}/suspend`` and ``/unsuspend``;
- ``/api/admin/ladders/{ladder}/bots/{bot}/suspend`` and ``/unsuspend``."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.exc import SQLAlchemyError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import BaseRoute, Route

from bot_arena.arena.api.accounts import Account
from bot_arena.arena.api.errors import ArenaError
from bot_arena.arena.server import auth
from bot_arena.arena.server.auth import Visitor
from bot_arena.arena.server.errors import ApiError
from bot_arena.arena.server.state import ServerState, state_of

MAX_BODY = 16 * 1024  # bytes of a JSON request or a form
MAX_FIELD = 200  # characters of a name, a game, a parameter
MAX_PARAMS = 16
T = TypeVar("T")


def _blocking(step: Callable[[], T]) -> T:
    """Run an action (in a worker thread): a refusal of the API is 400, a database that stays
    busy 503."""
    from bot_arena.db.session import is_busy

    try:
        return step()
    except ArenaError as exc:
        raise ApiError(400, str(exc)) from None
    except SQLAlchemyError as exc:
        if is_busy(exc):
            raise ApiError(503, "the database is busy: nothing was changed, try again") from None
        raise


def _field(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ApiError(400, f"give the {what} (text)")
    if len(value) > MAX_FIELD:
        raise ApiError(400, f"the {what} holds more than {MAX_FIELD} characters")
    return value.strip()


def _move_time(value: object) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = float(value) if len(value) <= 20 else math.nan
        except ValueError:
            value = math.nan
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ApiError(400, "move_time is a number of seconds")
    if not 0 < value <= 3600:  # NaN fails too
        raise ApiError(400, "move_time: give 0 to 3600 seconds")
    return float(value)


def create_ladder(
    state: ServerState, name: str, game: str, params: list[str], move_time: float | None
) -> dict[str, Any]:
    from bot_arena.arena.api.ladders import ladder_create

    tid = _blocking(
        lambda: ladder_create(name, game, params=params, move_time=move_time, db=state.settings.db)
    )
    state.changed(name)
    return {"ladder": {"name": name, "game": game, "tournament": tid}}


def suspend_user(state: ServerState, admin: Account, name: str, suspended: bool) -> dict[str, Any]:
    from bot_arena.arena.api import accounts

    if name == admin.name and suspended:
        raise ApiError(400, "an admin cannot suspend themselves")

    def change() -> Account:
        with state.reads() as session:
            if name not in {u.name for u in accounts.users(session)}:
                raise ApiError(404, f"no user named {name[:40]!r}")
        with state.writes.begin() as session:
            return accounts.set_suspended(session, name, suspended)

    return {"user": _blocking(change).to_dict()}


def suspend_bot(state: ServerState, ladder: str, bot: str, suspended: bool) -> dict[str, Any]:
    from bot_arena.arena.api.ladders import ladder_suspend

    changed = _blocking(lambda: ladder_suspend(ladder, bot, suspended, db=state.settings.db))
    state.changed(ladder)
    status = "suspended" if suspended else "active"
    return {"ladder": ladder, "entrants": [{"name": n, "status": status} for n in changed]}


# the JSON endpoints


async def _api_admin(request: Request) -> Account:
    user = await auth.api_user(request)
    if not user.admin:
        raise ApiError(403, "only an admin may do this")
    return user


async def _json_body(request: Request) -> dict[str, Any]:
    from bot_arena.arena.transport.strict_json import decode

    if not request.headers.get("content-type", "").lower().startswith("application/json"):
        raise ApiError(400, "send a JSON object (Content-Type: application/json)")
    declared = request.headers.get("content-length", "")
    if not declared.isdigit() or int(declared) > MAX_BODY:
        raise ApiError(
            413, f"the body is larger than {MAX_BODY} bytes (or its length is not given)"
        )
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            raise ApiError(413, f"the body is larger than {MAX_BODY} bytes")
    try:
        body = decode(raw.decode("utf-8"))
    except ValueError:
        raise ApiError(400, "the body is not JSON") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the body is not a JSON object")
    return body


def _params(value: object) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_PARAMS:
        raise ApiError(400, f"params is a list of at most {MAX_PARAMS} key=value texts")
    return [_field(p, "parameter") for p in value]


async def api_create_ladder(request: Request) -> JSONResponse:
    state = state_of(request)
    await _api_admin(request)
    body = await _json_body(request)
    name, game = _field(body.get("name"), "ladder's name"), _field(body.get("game"), "game")
    params, move_time = _params(body.get("params")), _move_time(body.get("move_time"))
    answer = await run_in_threadpool(create_ladder, state, name, game, params, move_time)
    return JSONResponse(answer, status_code=201)


def _api_suspend_user(suspended: bool) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> JSONResponse:
        admin = await _api_admin(request)
        name = _field(request.path_params["name"], "user's name")
        answer = await run_in_threadpool(suspend_user, state_of(request), admin, name, suspended)
        return JSONResponse(answer)

    return endpoint


def _api_suspend_bot(suspended: bool) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> JSONResponse:
        await _api_admin(request)
        ladder = _field(request.path_params["ladder"], "ladder's name")
        bot = _field(request.path_params["bot"], "bot's name")
        answer = await run_in_threadpool(suspend_bot, state_of(request), ladder, bot, suspended)
        return JSONResponse(answer)

    return endpoint


# the page and its forms


async def _page_admin(request: Request) -> Visitor:
    seen = await auth.visitor(request)
    if seen.user is None:
        raise ApiError(401, "sign in as an admin")
    if not seen.user.admin:
        raise ApiError(403, "only an admin may do this")
    return seen


async def _page(request: Request, seen: Visitor, status: int = 200, **values: Any) -> HTMLResponse:
    from bot_arena.arena.api import accounts
    from bot_arena.arena.server.pages import _game_names, render

    state = state_of(request)

    def read() -> list[Account]:
        with state.reads() as session:
            return accounts.users(session)

    values.setdefault("notice", None)
    users = await run_in_threadpool(read)
    return render(
        request, seen, "admin.html.j2", status=status, users=users, games=_game_names(), **values
    )


async def admin_page(request: Request) -> HTMLResponse:
    return await _page(request, await _page_admin(request))


async def _form_action(
    request: Request, act: Callable[[Visitor, Any], dict[str, Any]], done: str
) -> HTMLResponse:
    """A form's action: an admin's session, the form read small, its CSRF token, then the
    action; a refusal shows the page again with the reason and its status."""
    from bot_arena.arena.server.pages import _small_form

    seen = await _page_admin(request)
    form = await _small_form(request)
    auth.check_csrf(seen, form.get("csrf"))
    try:
        await run_in_threadpool(act, seen, form)
    except ApiError as exc:
        if exc.status not in (400, 404):
            raise
        return await _page(request, seen, exc.status, error=exc.message)
    return await _page(request, seen, notice=done)


def _action(form: Any) -> bool:
    value = form.get("action")
    if value not in ("suspend", "unsuspend"):
        raise ApiError(400, "action is suspend or unsuspend")
    return bool(value == "suspend")


async def form_create_ladder(request: Request) -> HTMLResponse:
    state = state_of(request)

    def act(seen: Visitor, form: Any) -> dict[str, Any]:
        params = (
            [p for p in (form.get("params") or "").split() if p]
            if isinstance(form.get("params"), str)
            else []
        )
        return create_ladder(
            state, _field(form.get("name"), "ladder's name"), _field(form.get("game"), "game"),
            _params(params), _move_time(form.get("move_time")),
        )  # fmt: skip

    return await _form_action(request, act, "ladder created")


async def form_user(request: Request) -> HTMLResponse:
    state = state_of(request)

    def act(seen: Visitor, form: Any) -> dict[str, Any]:
        assert seen.user is not None
        return suspend_user(
            state, seen.user, _field(form.get("name"), "user's name"), _action(form)
        )

    return await _form_action(request, act, "user changed")


async def form_entrant(request: Request) -> HTMLResponse:
    state = state_of(request)

    def act(seen: Visitor, form: Any) -> dict[str, Any]:
        ladder = _field(form.get("ladder"), "ladder's name")
        return suspend_bot(state, ladder, _field(form.get("bot"), "bot's name"), _action(form))

    return await _form_action(request, act, "ladder entrants changed")


def routes() -> list[BaseRoute]:
    return [
        Route("/api/admin/ladders", api_create_ladder, methods=["POST"]),
        Route("/api/admin/users/{name}/suspend", _api_suspend_user(True), methods=["POST"]),
        Route("/api/admin/users/{name}/unsuspend", _api_suspend_user(False), methods=["POST"]),
        Route(
            "/api/admin/ladders/{ladder}/bots/{bot}/suspend",
            _api_suspend_bot(True),
            methods=["POST"],
        ),
        Route(
            "/api/admin/ladders/{ladder}/bots/{bot}/unsuspend",
            _api_suspend_bot(False),
            methods=["POST"],
        ),
        Route("/admin", admin_page, methods=["GET"]),
        Route("/admin/ladders", form_create_ladder, methods=["POST"]),
        Route("/admin/users", form_user, methods=["POST"]),
        Route("/admin/entrants", form_entrant, methods=["POST"]),
    ]
