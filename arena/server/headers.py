"""Headers on every answer: a Content Security Policy that runs only the server's own scripts
(nothing inline, so markup a bot wrote can never run), no framing, no MIME sniffing, no
referrer sent elsewhere, and ``Cache-Control: no-store`` unless the route chose its own (the
public answers kept as ready bytes: ``ready.py``)."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
)
NAMES = frozenset(name for name, _ in HEADERS)
CACHE_CONTROL = b"cache-control"
NO_STORE = (CACHE_CONTROL, b"no-store")  # unless the route set its own


class SecurityHeaders:
    """ASGI middleware adding ``HEADERS`` to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in NAMES]
                if not any(k.lower() == CACHE_CONTROL for k, _ in kept):
                    kept.append(NO_STORE)
                message["headers"] = kept + list(HEADERS)
            await send(message)

        await self.app(scope, receive, with_headers)
