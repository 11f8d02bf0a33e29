"""A failure inside the server (a bug, the machine) is one line with the status 500 and the
security headers, never a traceback: checked in-process, with a route that raises."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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


def test_a_failure_is_500_with_one_line_and_the_headers(tmp_path: Path) -> None:
    engine = make_engine(str(tmp_path / "a.db"))
    try:
        factory = session_factory(engine)
        settings = ServerSettings(db=None, confinement=confinement("off", None))
        app = create_app(settings, factory, factory)
        app.router.routes.extend([Route("/api/boom", boom), Route("/boom", boom)])
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)

        async def ask() -> tuple[httpx.Response, httpx.Response]:
            async with httpx.AsyncClient(transport=transport, base_url="http://x") as client:
                return await client.get("/api/boom"), await client.get("/boom")

        # on a thread of its own: a test process that drove the browser (Playwright's sync API,
        # one a process) has an event loop running on the main thread, where asyncio.run refuses
        with ThreadPoolExecutor(1) as thread:
            api, page = thread.submit(asyncio.run, ask()).result()
    finally:
        engine.dispose()
    assert api.status_code == 500 and api.json() == {"error": "internal error"}
    assert page.status_code == 500 and "internal error" in page.text
    for answer in (api, page):
        assert "secret detail" not in answer.text and "Traceback" not in answer.text
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
        assert answer.headers["x-content-type-options"] == "nosniff"
