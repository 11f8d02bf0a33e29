"""The ladders on the web (issue 31): ``GET /api/ladders``, a ladder's standings as JSON
(from the standings cache: ``api/ladder_views.py``), ``POST /api/ladders/{ladder}/bots`` (an
upload entered in the ladder: ``uploads.receive`` and ``uploads.store`` with the ladder's
entry in the same transaction), ``GET /api/ladders/{ladder}/events`` (the standings as
server-sent events: ``events.py``), and the pages ``/ladders`` and ``/ladders/{ladder}`` (live
standings: ``/static/ladder.js`` follows the events, polling the JSON when they fail; the
upload form, CSRF-checked)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from bot_arena.arena.api import ladder_views
from bot_arena.arena.api.accounts import Account
from bot_arena.arena.api.ladder_views import NoLadder
from bot_arena.arena.server import auth, uploads
from bot_arena.arena.server.auth import Visitor
from bot_arena.arena.server.errors import ApiError
from bot_arena.arena.server.ready import Ready, answer
from bot_arena.arena.server.state import ServerState, state_of

log = logging.getLogger("arena.server")

MAX_PATH_NAME = 200  # characters of a ladder's name read from a path (longer: no ladder)
BLANK = Visitor(None, "")  # the visitor a page shared by everyone not signed in is made for


@dataclasses.dataclass(frozen=True)
class Rules:
    """What an upload to a ladder is validated on: the ladder's game and parameters."""

    tournament_id: int
    name: str
    game: str
    params: tuple[str, ...]


def _name(request: Request) -> str:
    name = request.path_params["ladder"]
    if not isinstance(name, str) or len(name) > MAX_PATH_NAME:
        raise ApiError(404, "no such ladder")
    return name


def _row(session: Session, name: str) -> Any:
    """The ladder ``name``'s row (404: no such ladder)."""
    try:
        return ladder_views.find(session, name)
    except NoLadder as exc:
        raise ApiError(404, str(exc)) from None


def _rules(state: ServerState, name: str) -> Rules:
    """The ladder ``name``'s game and parameters (404: no such ladder). Blocking."""
    from bot_arena.db.models import Tournament

    with state.reads() as session:
        row = _row(session, name)
        tournament = session.get(Tournament, row.tournament_id)
        assert tournament is not None
        params = tuple(f"{k}={v}" for k, v in sorted(dict(tournament.params).items()))
        return Rules(row.tournament_id, row.name, tournament.game, params)


def _standings_ready(state: ServerState) -> Callable[[Session, Any], Ready]:
    """The standings as JSON, made once a change (the cache keeps them): text, bytes, tag;
    each ladder's director followed between reads (``StandingsCache.followers``)."""
    from bot_arena.arena.transport.strict_json import finite

    followers = state.standings.followers

    def make(session: Session, row: Any) -> Ready:
        return Ready.of(json.dumps(finite(ladder_views.standings(session, row, followers))))

    return make


def standings_text(state: ServerState, name: str) -> Ready:
    """The ladder's standings as JSON, ready to send, from the cache (404: no such ladder).
    Blocking."""
    with state.reads() as session:
        ready = state.standings.get(session, _row(session, name), _standings_ready(state))
        assert isinstance(ready, Ready)
        return ready


async def _standings(state: ServerState, name: str) -> Ready:
    """``standings_text``, never waiting on a fresh read when any answer is kept (stale while
    revalidate): the answer whose key was read a moment ago (no thread, no database:
    ``StandingsCache.recent``); else, if another reader is reading afresh, the last answer
    (``claim``); else, if an answer is kept, that one, while one task in the background reads
    afresh for the next readers. Only a ladder's first read, or the first after a change this
    server made (``forget``), waits for the database. (No connection free in the pool's time:
    503, ``InternalErrors``.)"""
    recent = state.standings.recent(name)
    if isinstance(recent, Ready):
        return recent
    last = state.standings.claim(name)
    if isinstance(last, Ready):  # another reader is reading them afresh: the last answer
        return last
    stale = state.standings.last(name)
    if isinstance(stale, Ready):  # answer with it; the next readers get the fresh one
        task = asyncio.create_task(_refresh(state, name))
        state.refreshes.add(task)
        task.add_done_callback(state.refreshes.discard)
        return stale
    try:
        return await run_in_threadpool(standings_text, state, name)
    finally:
        state.standings.release(name)


async def _refresh(state: ServerState, name: str) -> None:
    """Read the ladder's standings afresh into the cache, in the background (the claim
    released when done; a failure is logged and the next reader tries again)."""
    try:
        await run_in_threadpool(standings_text, state, name)
    except ApiError:  # the ladder is gone: its readers are told by their own read
        state.standings.forget(name)
    except Exception:
        log.exception("reading the standings of %r afresh", name)
    finally:
        state.standings.release(name)


async def get_ladders(request: Request) -> Response:
    """The ladders as JSON (304 when the client holds these bytes), read at most once a
    ``--standings-age`` (``ServerState.ladder_list``)."""
    state = state_of(request)

    def read() -> Ready:
        with state.reads() as session:
            return Ready.of(json.dumps({"ladders": ladder_views.ladder_list(session)}))

    ready = state.ladder_list.get()
    if ready is None:
        ready = await run_in_threadpool(state.ladder_list.read, read)
    return answer(request, ready, "application/json")


async def get_standings(request: Request) -> Response:
    """The ladder's standings JSON, or 304 when the client holds these very bytes
    (``If-None-Match``: the page's poller sends the tag it was last given)."""
    state = state_of(request)
    name = _name(request)
    return answer(request, await _standings(state, name), "application/json")


class _Events(Response):
    """The ladder's live standings stream (``events.py``), its slot taken already."""

    def __init__(self, state: ServerState, name: str, client: str, first: str) -> None:
        self.state, self.name, self.client, self.first = state, name, client, first

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def read(name: str) -> str:  # the key read each poll: a change is seen at once
            return (await run_in_threadpool(standings_text, self.state, name)).text

        feeds = self.state.feeds
        await feeds.stream(self.name, self.client, read, self.first, receive, send)


async def get_events(request: Request) -> Response:
    """``GET /api/ladders/{ladder}/events``: the standings as server-sent events, each time
    they change (404: no such ladder; 503/429: too many streams, on the server or from this
    address)."""
    state = state_of(request)
    name = _name(request)
    first = (await _standings(state, name)).text  # 404 before a slot is taken
    client = request.client.host if request.client is not None else ""
    state.feeds.admit(client)
    return _Events(state, name, client, first)


def _enter(rules: Rules) -> uploads.Enter:
    def enter(session: Session, stored: Any, user: Account) -> dict[str, Any]:
        from bot_arena.db.models import BotVersion

        version = session.get(BotVersion, stored.version_id)
        assert version is not None
        return ladder_views.enter(
            session, rules.name, version.bot.name, version.sha256, stored.version_id
        )

    return enter


async def _receive(request: Request, user: Account, rules: Rules) -> uploads.Upload:
    """The upload counted against the user's limit and read, on the ladder's game and
    parameters."""
    state = state_of(request)
    if not await run_in_threadpool(state.limiter.allow, user.id):
        raise ApiError(429, f"at most {state.settings.uploads_per_hour} uploads an hour")
    sent = await uploads.receive(
        request, state.settings.max_upload_bytes, state.settings.max_bot_bytes, game=rules.game
    )
    return dataclasses.replace(sent, params=rules.params)


async def post_bot(request: Request) -> JSONResponse:
    """``POST /api/ladders/{ladder}/bots``: 201 with the bot, its version and its entry."""
    state = state_of(request)
    user = await auth.api_user(request)
    rules = await run_in_threadpool(_rules, state, _name(request))
    upload = await _receive(request, user, rules)
    answer = await run_in_threadpool(uploads.store, state, user, upload, _enter(rules))
    state.changed(rules.name)
    return JSONResponse(answer, status_code=201)


def _render(
    request: Request, seen: Visitor, template: str, status: int = 200, **values: Any
) -> HTMLResponse:
    from bot_arena.arena.server.pages import render

    return render(request, seen, template, status, **values)


async def ladders_page(request: Request) -> HTMLResponse:
    state = state_of(request)
    seen = await auth.visitor(request)

    def read() -> list[dict[str, Any]]:
        with state.reads() as session:
            return ladder_views.ladder_list(session)

    return _render(request, seen, "ladders.html.j2", ladders=await run_in_threadpool(read))


def _ladder_values(view: dict[str, Any], **values: Any) -> dict[str, Any]:
    """What ``ladder.html.j2`` is rendered with, for the standings ``view``."""
    values.setdefault("bot_name", "")
    values.setdefault("evidence", [])
    quoted = quote(view["name"], safe="")
    return dict(
        ladder=view,
        standings_url=f"/api/ladders/{quoted}/standings",
        events_url=f"/api/ladders/{quoted}/events",
        upload_url=f"/ladders/{quoted}/upload",
        **values,
    )


async def _ladder_page(
    request: Request, seen: Visitor, name: str, status: int = 200, **values: Any
) -> HTMLResponse:
    state = state_of(request)
    view = json.loads((await _standings(state, name)).text)
    return _render(request, seen, "ladder.html.j2", status, **_ladder_values(view, **values))


async def ladder_page(request: Request) -> HTMLResponse:
    """A ladder's page. For a visitor who is not signed in it is the same page for all (no
    form, no name; the CSRF token goes in a cookie set per answer), so it is rendered once a
    change of the standings' bytes (``ServerState.ladder_pages``), with a blank visitor: no
    visitor's token can be in the bytes shared."""
    from bot_arena.arena.server.pages import page_response, page_text

    seen = await auth.visitor(request)
    name = _name(request)
    if seen.user is not None:
        return await _ladder_page(request, seen, name)
    state = state_of(request)

    def make(standings: Ready) -> bytes:
        values = _ladder_values(json.loads(standings.text))
        return page_text(request, BLANK, "ladder.html.j2", **values).encode()

    ready = await _standings(state, name)
    return page_response(request, seen, state.ladder_pages.get(name, ready, make))


async def upload_page(request: Request) -> Response:
    """The ladder page's upload form: as ``POST /api/ladders/{ladder}/bots``; a refusal
    shows the page again with the reason (and a failed bot's evidence)."""
    state = state_of(request)
    seen = await auth.visitor(request)
    if seen.user is None:
        raise ApiError(401, "sign in to upload a bot")
    rules = await run_in_threadpool(_rules, state, _name(request))
    sent = await _receive(request, seen.user, rules)
    auth.check_csrf(seen, sent.csrf)
    try:
        await run_in_threadpool(uploads.store, state, seen.user, sent, _enter(rules))
        state.changed(rules.name)
    except ApiError as exc:
        if exc.status not in (400, 403):
            raise
        return await _ladder_page(
            request, seen, rules.name, exc.status, error=exc.message, bot_name=sent.name,
            evidence=exc.extra.get("evidence", []),
        )  # fmt: skip
    return RedirectResponse(f"/ladders/{quote(rules.name, safe='')}", status_code=303)


def api_routes() -> list[BaseRoute]:
    return [
        Route("/api/ladders", get_ladders, methods=["GET"]),
        Route("/api/ladders/{ladder}/standings", get_standings, methods=["GET"]),
        Route("/api/ladders/{ladder}/events", get_events, methods=["GET"]),
        Route("/api/ladders/{ladder}/bots", post_bot, methods=["POST"]),
    ]


def page_routes() -> list[BaseRoute]:
    return [
        Route("/ladders", ladders_page, methods=["GET"]),
        Route("/ladders/{ladder}", ladder_page, methods=["GET"]),
        Route("/ladders/{ladder}/upload", upload_page, methods=["POST"]),
    ]
