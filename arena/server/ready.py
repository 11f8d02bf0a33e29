"""Answers kept as ready bytes, with the entity tag that names them, and the one conditional-GET
rule of the server: a request whose ``If-None-Match`` names the answer's tag gets 304 and no
body (as a browser revalidating, or the ladder page's poller, asks), else the bytes.

The tag is a hash of the very bytes (``Ready.of``), never a counter or a time: an answer whose
bytes changed has another tag, so no request is told "not modified" about bytes it was not
sent. ``Cache-Control: no-cache`` lets a client keep the answer, asking each time whether it is
still current (what a poll needs: never a stale table shown without asking)."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

#: what a kept answer may be cached as: by anyone (the standings are public), revalidated
#: before each use
REVALIDATE = "no-cache"
MAX_IF_NONE_MATCH = 2048  # characters of If-None-Match read (longer: as if absent)
MAX_TAGS = 16  # entity tags read from it


@dataclass(frozen=True, slots=True)
class Ready:
    """An answer's text, its bytes (UTF-8) and its strong entity tag."""

    text: str
    body: bytes
    etag: str

    @classmethod
    def of(cls, text: str) -> Ready:
        body = text.encode()
        return cls(text, body, f'"{hashlib.blake2b(body, digest_size=16).hexdigest()}"')


class Recent:
    """One answer kept for ``max_age`` seconds after it was read (the ladder list: a change
    made elsewhere shows within that), dropped at once by ``forget`` (a change this server
    made: its maker sees it). A read begun before a ``forget`` is not kept (it may predate the
    change)."""

    def __init__(self, max_age: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._kept: tuple[float, Ready] | None = None
        self._generation = 0
        self._lock = threading.Lock()
        self._max_age, self._clock = max_age, clock

    def get(self) -> Ready | None:
        kept = self._kept
        if kept is None or self._clock() - kept[0] >= self._max_age:
            return None
        return kept[1]

    def read(self, make: Callable[[], Ready]) -> Ready:
        """``make()``'s answer, kept for the next readers. Blocking (``make`` reads)."""
        with self._lock:
            generation, read_at = self._generation, self._clock()
        ready = make()
        with self._lock:
            if generation == self._generation:
                self._kept = (read_at, ready)
        return ready

    def forget(self) -> None:
        with self._lock:
            self._kept = None
            self._generation += 1


class Derived:
    """Bytes made from a kept answer, kept while that answer is the one handed out: a
    ladder's page for visitors who are not signed in, from its standings (made once a change
    of the standings' bytes, not once a request). By key (the ladder's name); past ``most``
    keys, all are dropped and made again when asked."""

    def __init__(self, most: int) -> None:
        self._kept: dict[str, tuple[str, bytes]] = {}  # by key: (the source's tag, bytes)
        self._lock = threading.Lock()
        self._most = most
        self.made = 0  # how many times ``make`` ran (read by tests)

    def get(self, key: str, source: Ready, make: Callable[[Ready], bytes]) -> bytes:
        """What ``make(source)`` gives, made again only when ``source``'s tag (a hash of its
        bytes) is not the one the kept bytes were made from."""
        kept = self._kept.get(key)
        if kept is not None and kept[0] == source.etag:
            return kept[1]
        made = make(source)
        with self._lock:
            self.made += 1
            if len(self._kept) >= self._most:
                self._kept.clear()
            self._kept[key] = (source.etag, made)
        return made


def not_modified(request: Request, etag: str) -> bool:
    """Whether the request's ``If-None-Match`` names ``etag`` (or ``*``): the weak comparison
    RFC 9110 asks of If-None-Match. A header past ``MAX_IF_NONE_MATCH`` characters, or its
    tags past ``MAX_TAGS``, are not read (the full answer is sent: never wrong, only larger)."""
    given = request.headers.get("if-none-match")
    if given is None or len(given) > MAX_IF_NONE_MATCH:
        return False
    for tag in given.split(",")[:MAX_TAGS]:
        tag = tag.strip()
        if tag == "*" or tag.removeprefix("W/") == etag:
            return True
    return False


def answer(request: Request, ready: Ready, media_type: str) -> Response:
    """``ready`` as the answer to ``request``: 304 without a body when the client holds it
    already, else 200 with its bytes; either way with its tag and ``REVALIDATE``."""
    headers = {"etag": ready.etag, "cache-control": REVALIDATE}
    if not_modified(request, ready.etag):
        return Response(status_code=304, headers=headers)
    return Response(ready.body, media_type=media_type, headers=headers)
