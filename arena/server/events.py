"""Live standings by server-sent events: ``GET /api/ladders/{ladder}/events``.

Each ladder someone watches has one *feed*: a task that reads the ladder's standings every
``poll`` seconds (through the standings cache: ``ladders.py``'s read) and, when the text
changed, wakes every stream of that ladder, which sends it as an ``event: standings``. So a
ladder costs one read a poll however many watch it, and a stream costs no request at all. A
stream with nothing to send for ``heartbeat`` seconds sends a comment line, which keeps
proxies from closing it. The feed ends with the last stream of its ladder.

Bounded: at most ``max_streams`` streams open on the server (503 beyond) and
``per_client`` from one client address (429 beyond). A stream ends when its client goes away
(its ``http.disconnect``, watched while it waits), when the server stops (``stop``, called on
the server's exit signal) or when the ladder is gone; its slot is freed in every case."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from starlette.types import Receive, Send

from bot_arena.arena.server.errors import ApiError

log = logging.getLogger("arena.server")

Read = Callable[[str], Awaitable[str]]  # a ladder's standings as JSON text (ApiError 404: none)

RETRY_MS = 2000  # how long an EventSource waits before it reconnects (the page's poll)
HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"x-accel-buffering", b"no"),  # nginx: pass each event on at once
]


def event(text: str) -> bytes:
    """One ``standings`` event holding ``text`` (JSON: one line, no newline in it)."""
    return b"event: standings\ndata: " + text.replace("\n", " ").encode() + b"\n\n"


@dataclass(eq=False)
class _Feed:
    name: str
    read: Read
    version: int = 0  # counts the changes: a stream sends when its own count is behind
    text: str = ""
    gone: bool = False  # the ladder is no more: every stream ends
    wakes: set[asyncio.Event] = field(default_factory=set)
    task: asyncio.Task[None] | None = None

    def publish(self, text: str) -> None:
        if text != self.text:
            self.text, self.version = text, self.version + 1
            for wake in self.wakes:
                wake.set()


class Feeds:
    """The server's streams and their ladders' feeds (used on the event loop only)."""

    def __init__(self, *, max_streams: int, per_client: int, poll: float, heartbeat: float) -> None:
        self.max_streams, self.per_client = max_streams, per_client
        self.poll, self.heartbeat = poll, heartbeat
        self._feeds: dict[str, _Feed] = {}
        self._clients: Counter[str] = Counter()
        self.open = 0  # streams open now
        self.reads = 0  # standings read by the feeds (tests and the bench)
        self._stopping = asyncio.Event()

    def admit(self, client: str) -> None:
        """Take a slot for a stream from ``client`` (ApiError 503 or 429 when full)."""
        if self._stopping.is_set():
            raise ApiError(503, "the server is stopping")
        if self.open >= self.max_streams:
            raise ApiError(503, f"the server has {self.max_streams} streams open: try again")
        if self._clients[client] >= self.per_client:
            raise ApiError(429, f"at most {self.per_client} streams from one address")
        self.open += 1
        self._clients[client] += 1

    def _release(self, client: str) -> None:
        self.open -= 1
        self._clients[client] -= 1
        if self._clients[client] <= 0:
            del self._clients[client]

    def stop(self) -> None:
        """End every stream (the server is stopping): no new one is admitted."""
        self._stopping.set()

    def feeds(self) -> int:
        """Feeds running now (one per ladder watched)."""
        return len(self._feeds)

    def _join(self, name: str, read: Read, first: str, wake: asyncio.Event) -> _Feed:
        feed = self._feeds.get(name)
        if feed is None:
            feed = self._feeds[name] = _Feed(name, read)
            feed.publish(first)
            feed.task = asyncio.create_task(self._run(feed), name=f"feed {name}")
        feed.wakes.add(wake)
        return feed

    def _leave(self, feed: _Feed, wake: asyncio.Event) -> None:
        feed.wakes.discard(wake)
        if not feed.wakes and self._feeds.get(feed.name) is feed:
            del self._feeds[feed.name]
            if feed.task is not None:
                feed.task.cancel()

    async def _run(self, feed: _Feed) -> None:
        while feed.wakes and not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.poll)
            if self._stopping.is_set():
                break
            try:
                self.reads += 1
                feed.publish(await feed.read(feed.name))
            except ApiError as exc:
                if exc.status == 404:  # the ladder is gone: its streams end
                    feed.gone = True
                    break
            except Exception:  # the next poll tries again; the streams stay open
                log.exception("reading the standings of %r for its stream", feed.name)
        for wake in feed.wakes:
            wake.set()

    async def stream(
        self, name: str, client: str, read: Read, first: str, receive: Receive, send: Send
    ) -> None:
        """Send the ladder's standings (``first``, then each change) until the client goes,
        the server stops or the ladder is gone. The slot (``admit``) is released here."""
        wake = asyncio.Event()
        feed = self._join(name, read, first, wake)
        left = asyncio.create_task(_disconnected(receive))
        stopping = asyncio.create_task(self._stopping.wait())
        try:
            await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
            await _body(send, f"retry: {RETRY_MS}\n\n".encode())
            seen = 0
            while not (feed.gone or left.done() or stopping.done()):
                wake.clear()
                if seen != feed.version:
                    seen = feed.version
                    await _body(send, event(feed.text))
                    continue
                woke = asyncio.create_task(wake.wait())
                try:
                    done, _ = await asyncio.wait(
                        {woke, left, stopping},
                        timeout=self.heartbeat,
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                finally:
                    woke.cancel()
                if not done:
                    await _body(send, b": keep-alive\n\n")
            if not left.done():
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the client went away while we wrote
            pass
        finally:
            left.cancel()
            stopping.cancel()
            self._leave(feed, wake)
            self._release(client)


async def _body(send: Send, data: bytes) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": True})


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
