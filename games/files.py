"""Reading a file a user named (a results file, an opening book, a tree, a positions file...):
the one place that opens one, so every such file is bounded the same way.

A file named on the command line may be anything: ``/dev/zero`` (endless), a FIFO (a read
blocks forever), a directory, a 10 GB log. So the file is opened without blocking
(``O_NONBLOCK``: opening a FIFO does not wait for a writer) and checked *after* opening, on
the descriptor (``fstat``: no race between the check and the read): anything but a regular
file is refused at once. Its size is then checked against the limit of its kind, and the read
stops at that limit all the same (a file that grows while it is read). Text is read as lines,
each capped at ``MAX_LINE`` bytes, so a parser that walks lines never holds a giant one.

Each kind's limit is settable by an environment variable in MiB (``ARENA_MAX_RESULTS_MB``...,
docs/security.md); a value that is not a positive number is a one-line error.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO

from bot_arena.games.base import GameError
from bot_arena.games.quoting import shown

MIB = 1 << 20
MAX_LINE = 1 * MIB  # longest line of a text file read line by line (bytes, newline included)


class FileRefused(GameError):
    """A file the arena will not read (missing, not a regular file, too large, not text): the
    message is one line that names the file."""


@dataclass(frozen=True)
class FileKind:
    """What a file is for, and the most it may hold (MiB, unless its variable says else)."""

    what: str  # in messages: "results file", "opening book"
    env: str  # the variable that sets the limit
    default_mb: int

    def limit(self) -> int:
        """The limit in bytes: ``$env`` MiB when set, else the default."""
        raw = os.environ.get(self.env)
        if raw is None or not raw.strip():
            return self.default_mb * MIB
        try:
            mb = float(raw)
        except ValueError:
            mb = float("nan")
        if not 0 < mb < 1 << 30:  # NaN fails too
            raise FileRefused(f"${self.env}: {shown(raw)} is not a size in MiB (like 64)")
        return int(mb * MIB)


RESULTS = FileKind("results file", "ARENA_MAX_RESULTS_MB", 64)
BOOK = FileKind("--openings", "ARENA_MAX_BOOK_MB", 64)
POSITIONS = FileKind("--positions", "ARENA_MAX_POSITIONS_MB", 64)
FIGURE = FileKind("--figure", "ARENA_MAX_FIGURE_MB", 16)
BOT = FileKind("bot file", "ARENA_MAX_BOT_MB", 16)


def _describe(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size_text(limit: int) -> str:
    return f"{limit / MIB:g} MiB" if limit >= MIB else f"{limit} bytes"


def _too_large(what: str, name: str, limit: int) -> FileRefused:
    return FileRefused(f"{what} {shown(name)} is larger than its limit of {_size_text(limit)}")


def _unreadable(what: str, name: str, exc: OSError) -> FileRefused:
    why = (exc.strerror or str(exc)).lower()
    return FileRefused(f"cannot read {what} {shown(name)}: {why}")


@contextmanager
def open_binary(
    path: str | os.PathLike[str], what: str, limit: int
) -> Iterator[io.BufferedReader[io.FileIO]]:
    """The regular file at ``path`` opened for reading (``FileRefused`` for anything else, or
    when it holds more than ``limit`` bytes); reading it past ``limit`` is for the caller to
    stop (``read_bytes`` and ``lines`` do)."""
    name = os.fspath(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        raise _unreadable(what, name, exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _describe(info.st_mode)
            raise FileRefused(f"{what} {shown(name)} is {kind}, not a regular file")
        if info.st_size > limit:
            raise _too_large(what, name, limit)
        os.set_blocking(fd, True)
        handle = io.BufferedReader(io.FileIO(fd, "rb", closefd=True), buffer_size=1 << 16)
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield handle


def read_bytes(path: str | os.PathLike[str], what: str, limit: int) -> bytes:
    """The whole file, at most ``limit`` bytes (``FileRefused`` beyond)."""
    name = os.fspath(path)
    with open_binary(name, what, limit) as fh:
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise _unreadable(what, name, exc) from None
    if len(data) > limit:
        raise _too_large(what, name, limit)
    return data


def read_text(path: str | os.PathLike[str], kind: FileKind, encoding: str = "utf-8") -> str:
    """The whole text of a file of ``kind`` (within its limit, valid ``encoding``)."""
    data = read_bytes(path, kind.what, kind.limit())
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise FileRefused(
            f"{kind.what} {shown(os.fspath(path))} is not {encoding} text (byte {exc.start})"
        ) from None


@contextmanager
def lines(
    path: str | os.PathLike[str], kind: FileKind, encoding: str = "utf-8"
) -> Iterator[Iterator[str]]:
    """The file's lines (newlines kept, as a text file iterates), read as they are used: each
    at most ``MAX_LINE`` bytes, all of them within the kind's limit, each valid ``encoding``
    (``FileRefused`` naming the line otherwise)."""
    name = os.fspath(path)
    limit = kind.limit()
    with open_binary(name, kind.what, limit) as fh:
        yield _lines(fh, name, kind.what, limit, encoding)


def _lines(fh: BinaryIO, name: str, what: str, limit: int, encoding: str) -> Iterator[str]:
    total = 0
    number = 0
    first = True
    while True:
        try:
            raw = fh.readline(MAX_LINE + 1)
        except OSError as exc:
            raise _unreadable(what, name, exc) from None
        if not raw:
            return
        number += 1
        total += len(raw)
        if total > limit:
            raise _too_large(what, name, limit)
        if len(raw) > MAX_LINE:
            raise FileRefused(
                f"{what} {shown(name)}: line {number} is longer than {_size_text(MAX_LINE)}"
            )
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            raise FileRefused(
                f"{what} {shown(name)}: line {number} is not {encoding} text"
            ) from None
        if first:
            text = text.removeprefix("\ufeff")  # a byte-order mark some editors write
            first = False
        yield text
