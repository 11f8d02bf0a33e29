"""A failure inside the server (a bug, the machine) is one line with the status 500 and the
security headers, never a traceback: checked in-process, with a route that raises."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bot_arena.arena.api.sandbox import confinement
from bot_arena.arena.server.app import create_app
from bot_arena.arena.server.settings import ServerSettings
from bot_arena.db.session import make_engine, session_factory


async def boom(request: Request) -> Response:
    raise RuntimeError("secret detail /etc/arena")


async def no_connection(request: Request) -> Response:
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    raise PoolTimeout("QueuePool limit of size 5 overflow 10 reached")


def asked(tmp_path: Path, route: Any) -> tuple[httpx.Response, httpx.Response]:
    """``/api/x`` and ``/x`` of the site with ``route`` answering both, in process."""
    engine = make_engine(str(tmp_path / "a.db"))
    try:
        factory = session_factory(engine)
        settings = ServerSettings(db=None, confinement=confinement("off", None))
        app = create_app(settings, factory, factory)
        app.router.routes.extend([Route("/api/x", route), Route("/x", route)])
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)

        async def ask() -> tuple[httpx.Response, httpx.Response]:
            async with httpx.AsyncClient(transport=transport, base_url="http://x") as client:
                return await client.get("/api/x"), await client.get("/x")

        # on a thread of its own: a test process that drove the browser (Playwright's sync API,
        # one a process) has an event loop running on the main thread, where asyncio.run refuses
        with ThreadPoolExecutor(1) as thread:
            return thread.submit(asyncio.run, ask()).result()
    finally:
        engine.dispose()


def test_a_failure_is_500_with_one_line_and_the_headers(tmp_path: Path) -> None:
    api, page = asked(tmp_path, boom)
    assert api.status_code == 500 and api.json() == {"error": "internal error"}
    assert page.status_code == 500 and "internal error" in page.text
    for answer in (api, page):
        assert "secret detail" not in answer.text and "Traceback" not in answer.text
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
        assert answer.headers["x-content-type-options"] == "nosniff"


def test_no_database_connection_in_time_is_503_on_every_route(tmp_path: Path) -> None:
    """An overloaded server (the pool gave no connection in its time) is busy, not broken."""
    api, page = asked(tmp_path, no_connection)
    assert api.status_code == 503 and api.json() == {"error": "the server is busy: try again"}
    assert page.status_code == 503 and "busy" in page.text and "QueuePool" not in page.text
    assert "frame-ancestors 'none'" in api.headers["content-security-policy"]
