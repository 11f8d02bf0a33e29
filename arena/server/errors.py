"""The server's one shape of error: ``{"error": "..."}`` (with any evidence beside it) and the
status code, as JSON under ``/api``, as a short escaped page elsewhere."""

from __future__ import annotations

import logging
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot_arena.arena.match.text import shown

log = logging.getLogger("arena.server")


class ApiError(Exception):
    """A request refused: its status code, the one-line reason, and more fields for JSON
    (a fault and its evidence)."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.message, self.extra = status, message, extra


def _answer(request: Request, status: int, message: str, extra: dict[str, Any]) -> Response:
    message = shown(message, lines=True)
    if request.url.path.startswith("/api/") or request.url.path == "/api":
        return JSONResponse({"error": message, **extra}, status_code=status)
    from html import escape

    body = f"<!doctype html><title>{status}</title><h1>{status}</h1><p>{escape(message)}</p>"
    return HTMLResponse(body, status_code=status)


async def api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return _answer(request, exc.status, exc.message, exc.extra)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _answer(request, exc.status_code, str(exc.detail), {})


class InternalErrors:
    """ASGI middleware: a bug or a failure of the machine is logged here and answered with
    one line (never a traceback), inside the middleware that adds the security headers (a
    handler for Exception would answer from Starlette's outermost layer, without them). A
    request no database connection came free for in the pool's time is 503 (the server is
    busy), on every route."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception as exc:
            from sqlalchemy.exc import TimeoutError as PoolTimeout

            request = Request(scope)
            if isinstance(exc, PoolTimeout):  # no connection came free: busy, not a bug
                status, message = 503, "the server is busy: try again"
            else:
                log.exception("internal error on %s %s", request.method, request.url.path)
                status, message = 500, "internal error"
            if started:
                raise  # the answer is under way: the server closes the connection
            await _answer(request, status, message, {})(scope, receive, send)
