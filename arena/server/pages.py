"""The HTML pages: home, sign-in (and registration when it is open), "my bots" with the upload
form, a bot's page, a game's page with the report's replay viewer; and the static files they
use. Jinja2 with autoescape on: every name, message and line a bot wrote goes in as text.
Every form carries the visitor's CSRF token and every POST checks it (``auth.check_csrf``)."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from bot_arena.arena.api import accounts, views
from bot_arena.arena.api.errors import ArenaError
from bot_arena.arena.server import auth, uploads
from bot_arena.arena.server.auth import Visitor
from bot_arena.arena.server.errors import ApiError
from bot_arena.arena.server.reads import path_id
from bot_arena.arena.server.state import state_of

MAX_FORM = 16 * 1024  # bytes of a sign-in form
#: the static files, by the name pages ask for: (package, file, media type). Nothing else is
#: served, so no request names a path on disk.
STATIC = {
    "site.css": ("bot_arena.arena.server", "site.css", "text/css"),
    "match.js": ("bot_arena.arena.server", "match.js", "text/javascript"),
    "ladder.js": ("bot_arena.arena.server", "ladder.js", "text/javascript"),
    "replay.js": ("bot_arena.arena.report", "replay.js", "text/javascript"),
    "replay.css": ("bot_arena.arena.report", "replay.css", "text/css"),
}


@cache
def _templates() -> Environment:
    return Environment(
        loader=PackageLoader("bot_arena.arena.server", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@cache
def _static(name: str) -> bytes:
    package, file, _ = STATIC[name]
    return (resources.files(package) / "static" / file).read_bytes()


def page_text(request: Request, seen: Visitor, template: str, **values: Any) -> str:
    """The page ``template`` rendered for the visitor ``seen``."""
    values.setdefault("error", None)
    return (
        _templates()
        .get_template(template)
        .render(
            visitor=seen,
            open_registration=state_of(request).settings.open_registration,
            **values,
        )
    )


def page_response(
    request: Request, seen: Visitor, page: str | bytes, status: int = 200
) -> HTMLResponse:
    """A rendered page as the answer to ``request``, with the visitor's CSRF cookie."""
    response = HTMLResponse(page, status_code=status)
    auth.set_csrf_cookie(request, response, seen)
    return response


def render(
    request: Request, seen: Visitor, template: str, status: int = 200, **values: Any
) -> HTMLResponse:
    return page_response(request, seen, page_text(request, seen, template, **values), status)


async def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC:
        raise ApiError(404, "not found")
    return Response(_static(name), media_type=STATIC[name][2])


async def home(request: Request) -> HTMLResponse:
    state = state_of(request)
    seen = await auth.visitor(request)

    def read() -> dict[str, Any]:
        with state.reads() as session:
            return views.home(session)

    return render(request, seen, "index.html.j2", **await run_in_threadpool(read))


async def _small_form(request: Request) -> Any:
    declared = request.headers.get("content-length", "")
    if not declared.isdigit() or int(declared) > MAX_FORM:
        raise ApiError(413, "this form is too large")
    try:
        return await request.form(max_files=0, max_fields=8, max_part_size=MAX_FORM)
    except Exception:
        raise ApiError(400, "this form could not be read") from None


def _text(form: Any, key: str) -> str:
    value = form.get(key)
    return value if isinstance(value, str) and len(value) <= 1024 else ""


async def signin_page(request: Request) -> HTMLResponse:
    seen = await auth.visitor(request)
    return render(request, seen, "signin.html.j2", heading="Sign in", action="/signin", name="")


def _signed_in(request: Request, state_cookie: str) -> Response:
    response = RedirectResponse("/my", status_code=303)
    auth.set_session_cookie(request, response, state_cookie)
    return response


async def signin(request: Request) -> Response:
    state = state_of(request)
    seen = await auth.visitor(request)
    form = await _small_form(request)
    auth.check_csrf(seen, form.get("csrf"))
    name, password = _text(form, "name"), _text(form, "password")
    if not await run_in_threadpool(state.signins.allow, name[: accounts.MAX_USER_NAME + 1]):
        raise ApiError(429, "too many sign-in attempts for this name: try again later")

    def attempt() -> str | None:
        with state.reads() as session:
            user = accounts.sign_in(session, name, password)
        if user is None:
            return None
        with state.writes.begin() as session:
            return accounts.open_session(session, user)[0]

    cookie = await run_in_threadpool(attempt)
    if cookie is None:
        return render(
            request, seen, "signin.html.j2", status=401, heading="Sign in", action="/signin",
            name=name, error="wrong name or password (or this account is suspended)",
        )  # fmt: skip
    return _signed_in(request, cookie)


async def register_page(request: Request) -> HTMLResponse:
    if not state_of(request).settings.open_registration:
        raise ApiError(404, "registration is closed: ask an admin for an account")
    seen = await auth.visitor(request)
    return render(request, seen, "signin.html.j2", heading="Register", action="/register", name="")


async def register(request: Request) -> Response:
    state = state_of(request)
    if not state.settings.open_registration:
        raise ApiError(404, "registration is closed: ask an admin for an account")
    seen = await auth.visitor(request)
    form = await _small_form(request)
    auth.check_csrf(seen, form.get("csrf"))
    name, password = _text(form, "name"), _text(form, "password")

    def create() -> str:
        with state.writes.begin() as session:
            user, _token = accounts.add_user(session, name, password=password)
            return accounts.open_session(session, user)[0]

    try:
        cookie = await run_in_threadpool(create)
    except ArenaError as exc:
        return render(
            request, seen, "signin.html.j2", status=400, heading="Register", action="/register",
            name=name, error=str(exc),
        )  # fmt: skip
    return _signed_in(request, cookie)


async def signout(request: Request) -> Response:
    state = state_of(request)
    seen = await auth.visitor(request)
    form = await _small_form(request)
    auth.check_csrf(seen, form.get("csrf"))
    cookie = request.cookies.get(auth.SESSION_COOKIE, "")

    def end() -> None:
        with state.writes.begin() as session:
            accounts.sign_out(session, cookie)

    if cookie:
        await run_in_threadpool(end)
    response = RedirectResponse("/", status_code=303)
    auth.clear_session_cookie(response)
    return response


def _game_names() -> list[str]:
    from bot_arena import games

    return sorted(games.names())


async def _my_page(
    request: Request, seen: Visitor, status: int = 200, **values: Any
) -> HTMLResponse:
    state = state_of(request)
    assert seen.user is not None
    user = seen.user

    def read() -> list[dict[str, Any]]:
        with state.reads() as session:
            return views.my_bots(session, user)

    values.setdefault("name", "")
    values.setdefault("game", "tictactoe")
    values.setdefault("evidence", [])
    bots = await run_in_threadpool(read)
    return render(
        request, seen, "my.html.j2", status=status, bots=bots, games=_game_names(), **values
    )


async def my_bots(request: Request) -> Response:
    seen = await auth.visitor(request)
    if seen.user is None:
        return RedirectResponse("/signin", status_code=303)
    return await _my_page(request, seen)


async def upload(request: Request) -> Response:
    """The upload form: the same reading and storing as ``POST /api/bots``; a refusal shows
    the form again with the reason (and a failed bot's evidence)."""
    state = state_of(request)
    seen = await auth.visitor(request)
    if seen.user is None:
        raise ApiError(401, "sign in to upload a bot")
    user = seen.user
    if not await run_in_threadpool(state.limiter.allow, user.id):
        raise ApiError(429, f"at most {state.settings.uploads_per_hour} uploads an hour")
    sent = await uploads.receive(
        request, state.settings.max_upload_bytes, state.settings.max_bot_bytes
    )
    auth.check_csrf(seen, sent.csrf)
    try:
        answer = await run_in_threadpool(uploads.store, state, user, sent)
    except ApiError as exc:
        if exc.status not in (400, 403):
            raise
        evidence = exc.extra.get("evidence", [])
        return await _my_page(
            request, seen, exc.status, error=exc.message, name=sent.name, game=sent.game,
            evidence=evidence,
        )  # fmt: skip
    return RedirectResponse(f"/bots/{answer['bot']['id']}", status_code=303)


async def bot_page(request: Request) -> HTMLResponse:
    state = state_of(request)
    bot_id = path_id(request)
    seen = await auth.visitor(request)

    def read() -> dict[str, Any] | None:
        with state.reads() as session:
            return views.bot_view(session, bot_id, seen.user)

    found = await run_in_threadpool(read)
    if found is None:
        raise ApiError(404, f"no bot {bot_id}")
    return render(request, seen, "bot.html.j2", bot=found)


async def match_page(request: Request) -> HTMLResponse:
    state = state_of(request)
    match_id = path_id(request)
    seen = await auth.visitor(request)

    def read() -> dict[str, Any] | None:
        with state.reads() as session:
            return views.game_view(session, match_id)

    found = await run_in_threadpool(read)
    if found is None:
        raise ApiError(404, f"no played game {match_id}")
    return render(request, seen, "match.html.j2", game=found)


def routes() -> list[BaseRoute]:
    return [
        Route("/", home, methods=["GET"]),
        Route("/static/{name}", static, methods=["GET"]),
        Route("/signin", signin_page, methods=["GET"]),
        Route("/signin", signin, methods=["POST"]),
        Route("/register", register_page, methods=["GET"]),
        Route("/register", register, methods=["POST"]),
        Route("/signout", signout, methods=["POST"]),
        Route("/my", my_bots, methods=["GET"]),
        Route("/upload", upload, methods=["POST"]),
        Route("/bots/{id:int}", bot_page, methods=["GET"]),
        Route("/matches/{id:int}", match_page, methods=["GET"]),
    ]
