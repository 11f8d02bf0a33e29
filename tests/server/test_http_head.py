"""The HTTP side of ``arena serve`` (``server/http.py``): httptools when installed, its request
head bounded as h11's is (a head still incomplete past ``MAX_HEAD`` bytes: 400 and the
connection closed, never kept growing), a long head under the bound and a body that came in
the same read as its head answered as usual; h11 when httptools is absent."""

from __future__ import annotations

import contextlib
import socket
import sys
from urllib.parse import urlsplit

import pytest

from bot_arena.arena.server import http
from tests.server.conftest import Served

READ_S = 60.0  # the most an answer may take (only a failing server takes long)


def connect(served: Served) -> socket.socket:
    address = urlsplit(served.url)
    sock = socket.create_connection((address.hostname, address.port), timeout=READ_S)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    out = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return out
        if not chunk:
            return out
        out += chunk


def test_the_server_runs_httptools_with_its_head_bounded() -> None:
    pytest.importorskip("httptools", reason="in the server extra: pip install httptools")
    chosen = http.protocol()
    assert not isinstance(chosen, str) and chosen.__name__ == "BoundedHead"


def test_without_httptools_the_server_runs_on_h11(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn.protocols.http.httptools_impl", None)
    http.protocol.cache_clear()
    try:
        assert http.protocol() == "h11"
    finally:
        http.protocol.cache_clear()


def test_a_head_without_end_is_400_and_the_connection_closed(served: Served) -> None:
    with connect(served) as sock:
        sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: x\r\nX-Endless: ")
        sent = 0
        try:
            while sent <= 4 * http.MAX_HEAD:  # never ends the header: the server must stop it
                sock.sendall(b"a" * 8192)
                sent += 8192
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed while sending: what was answered is read below
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert answer.endswith(http.INVALID.encode())


def test_a_long_head_under_the_bound_is_answered(served: Served) -> None:
    headers = b"".join(b"X-Long-%d: %s\r\n" % (i, b"v" * 1000) for i in range(40))  # 40 KB
    assert len(headers) < http.MAX_HEAD
    with connect(served) as sock:
        sock.sendall(
            b"GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers + b"\r\n"
        )
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
    assert answer.endswith(b'{"ok":true}')


def test_a_body_sent_with_its_head_is_not_counted_as_head(served: Served) -> None:
    """An upload's first read holds its head and the start of its body, past ``MAX_HEAD``:
    answered by the route (401: no token), not refused as a head too long."""
    body = b"x" * (4 * http.MAX_HEAD)
    head = (
        b"POST /api/ladders/club/bots HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        b"Content-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n" % len(body)
    )
    with connect(served) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(head + body)  # may be answered and closed before the body is read
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 401 "), answer[:200]
    assert b'{"error":' in answer
