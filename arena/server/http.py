"""The HTTP/1.1 side uvicorn runs for ``arena serve``: httptools (the C parser of Node's llhttp,
uvicorn's ``[standard]`` choice) when it is installed, with the request's head bounded; else
h11, uvicorn's pure-Python parser.

Why: under many readers the server's CPU a request is mostly uvicorn's side of the exchange,
and h11 parses in Python. Asked alone in a row (``bench/serve.py``'s one client), a standings
request cost the server 0.26 ms of CPU with h11 and 0.15 ms with httptools and uvloop (the
event loop in C, taken by uvicorn when installed; worth a little on its own, httptools most).
Both are in the ``server`` extra; without them the server runs as before on h11 and asyncio.

The bound: h11 refuses a request whose head is still incomplete past its limit (uvicorn's
16 KiB, beyond what one read brought), and llhttp has none, so a client could send headers
without end and have them kept. ``BoundedHead`` refuses a head still incomplete after
``MAX_HEAD`` bytes as h11 does (400, "Invalid HTTP request received.", the connection
closed): the bytes of one read are counted whole, a body that came in the same read as its
head is not (the head was complete by then).
"""

from __future__ import annotations

import asyncio
import functools

MAX_HEAD = 64 * 1024  # bytes of a request's head read while it is incomplete (more: 400)
INVALID = "Invalid HTTP request received."  # uvicorn's words for a request it cannot read


@functools.cache
def protocol() -> str | type[asyncio.Protocol]:
    """What ``uvicorn.Config(http=...)`` is given: ``BoundedHead`` when httptools imports,
    else ``"h11"``."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # httptools is not installed: h11, bounded by uvicorn
        return "h11"

    class BoundedHead(HttpToolsProtocol):
        """uvicorn's httptools protocol, refusing a head that runs past ``MAX_HEAD``."""

        _in_head = True  # between requests or reading one's head (not its body)
        _head = 0  # bytes read since the head began, while it is incomplete

        def data_received(self, data: bytes) -> None:
            if self._in_head:
                self._head += len(data)
            super().data_received(data)
            if self._in_head and self._head > MAX_HEAD and not self.transport.is_closing():
                self.send_400_response(INVALID)

        def on_headers_complete(self) -> None:
            self._in_head, self._head = False, 0
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._in_head, self._head = True, 0
            super().on_message_complete()

    return BoundedHead
