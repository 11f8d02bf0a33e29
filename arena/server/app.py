"""The ASGI application of ``arena serve``: its routes, its error shape, its headers.

Starlette on uvicorn: a small ASGI toolkit, well kept (by the authors of uvicorn, under
FastAPI), with routing, multipart forms, cookies and Jinja2 templates and nothing else; no
pydantic models built at start-up (FastAPI's cost, as typer 0.29's was for the CLI). Blocking
work (the database, hashes, validation games) runs in its thread pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from types import FrameType
from typing import Any

from sqlalchemy.orm import Session, sessionmaker
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Route
from starlette.types import Lifespan

from bot_arena.arena.api.ladder_views import StandingsCache
from bot_arena.arena.server import http, ladders, reads, uploads
from bot_arena.arena.server.errors import ApiError, InternalErrors, api_error, http_error
from bot_arena.arena.server.headers import SecurityHeaders
from bot_arena.arena.server.ready import Recent
from bot_arena.arena.server.settings import ServerSettings
from bot_arena.arena.server.state import ServerState


def api_routes() -> list[BaseRoute]:
    return [
        Route("/api/health", reads.health, methods=["GET"]),
        Route("/api/me", reads.get_me, methods=["GET"]),
        Route("/api/bots", uploads.post_bot, methods=["POST"]),
        Route("/api/bots/{id:int}", reads.get_bot, methods=["GET"]),
        Route("/api/matches/{id:int}", reads.get_match, methods=["GET"]),
        Route("/api/tournaments/{id:int}/standings", reads.get_standings, methods=["GET"]),
        *ladders.api_routes(),
    ]


def _playing(settings: ServerSettings, reads: sessionmaker[Session]) -> Lifespan[Starlette]:
    """The server's life, playing its ladders while it serves (``ladder_play.py``); once the
    players' thread is started, the web side's priority is lowered by ``web_nice``."""
    from bot_arena.arena.server.ladder_play import LadderPlayers, lower_priority

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        players = LadderPlayers(
            reads,
            settings.db,
            settings.ladder_jobs,
            settings.ladder_executor,
            settings.ladder_ray_address,
            settings.ladder_sandbox,
        )
        players.start()
        validations = app.state.arena.validations
        validations.start()  # before the priority is lowered: validation games keep it
        if settings.web_nice:
            lower_priority(settings.web_nice)
        try:
            yield
        finally:
            await run_in_threadpool(players.stop)
            validations.stop()

    return lifespan


def create_app(
    settings: ServerSettings, reads: sessionmaker[Session], writes: sessionmaker[Session]
) -> Starlette:
    """The site over the database: ``reads`` opens it read-only, ``writes`` to store."""
    from bot_arena.arena.server import admin, pages

    app = Starlette(
        routes=[*api_routes(), *pages.routes(), *ladders.page_routes(), *admin.routes()],
        middleware=[Middleware(SecurityHeaders), Middleware(InternalErrors)],
        exception_handlers={ApiError: api_error, HTTPException: http_error},
        lifespan=_playing(settings, reads) if settings.play_ladders else None,
    )
    age = settings.standings_age
    app.state.arena = ServerState(
        settings,
        reads,
        writes,
        standings=StandingsCache(max_age=age),
        ladder_list=Recent(max_age=age),
    )
    return app


def serve(app: Starlette, host: str, port: int) -> None:
    """Run ``app`` on uvicorn until a signal stops it. On the signal the live standings streams
    end at once (``Feeds.stop``, on the event loop), so the graceful shutdown does not wait on
    them; then uvicorn lets the other requests finish (5 s at most)."""
    import uvicorn

    state = app.state.arena
    assert isinstance(state, ServerState)

    class Server(uvicorn.Server):
        loop: asyncio.AbstractEventLoop | None = None

        async def serve(self, sockets: Any = None) -> None:
            self.loop = asyncio.get_running_loop()
            await super().serve(sockets)

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if self.loop is not None:
                self.loop.call_soon_threadsafe(state.feeds.stop)
            super().handle_exit(sig, frame)

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=http.protocol(),  # httptools with its head bounded, else h11 (``http.py``)
        loop="auto",  # uvloop when it is installed, else asyncio
        log_level="warning",
        server_header=False,
        proxy_headers=False,
        timeout_graceful_shutdown=5,
    )
    server = Server(config)
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    if not server.started:  # the port was taken, say: uvicorn said why
        sys.exit(3)
