"""A bot's files: the one scan that finds them, for its version (``match/versions.py``) and for
what the sandbox lets it read (``paths.py``).

A bot's folder is a stranger's: it may hold a link to ``/`` or to a secret, a FIFO that blocks
whoever reads it, a device, or millions of files. So the scan

- takes **regular files only**: a FIFO, a device or a socket is never opened (and a file is
  opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked again once open, so one swapped in after
  the walk is not read either);
- follows a **link only when where it leads stays inside the bot's folder**; a link that leads
  out is refused (``ScanError`` naming the link), whether the bot is being added or resolved
  for a match: nothing behind it is ever read, hashed, stored or opened to the bot;
- is **bounded**: at most ``ARENA_BOT_MAX_FILES`` entries (default 10,000: files, folders and
  links together), ``ARENA_BOT_MAX_MB`` megabytes of files (default 100) and
  ``ARENA_BOT_SCAN_SECONDS`` seconds (default 10); a bot beyond a limit is refused with one
  line before anything runs or is stored.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

MAX_FILES_VAR = "ARENA_BOT_MAX_FILES"
MAX_MB_VAR = "ARENA_BOT_MAX_MB"
SECONDS_VAR = "ARENA_BOT_SCAN_SECONDS"
SKIP_DIRS = frozenset({"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache"})
SKIP_EXT = (".pyc", ".pyo")
_CHUNK = 1 << 20


class ScanError(ValueError):
    """A bot whose files cannot be taken as they are (one-line message)."""


@dataclass(frozen=True)
class Limits:
    """How much of a bot the scan takes before it refuses the bot."""

    files: int = 10_000
    bytes: int = 100_000_000
    seconds: float = 10.0

    @classmethod
    def from_env(cls) -> Limits:
        """The limits, each from its environment variable when set (ScanError for a value
        that is not a positive number)."""
        default = cls()
        files = _positive(MAX_FILES_VAR, default.files, int)
        megabytes = _positive(MAX_MB_VAR, default.bytes / 1_000_000, float)
        seconds = _positive(SECONDS_VAR, default.seconds, float)
        return cls(int(files), int(megabytes * 1_000_000), float(seconds))


def limits_env() -> dict[str, str]:
    """The scan's limit variables set in this process's environment: an arena process that
    plays bots (a tournament job) is started with a clean environment, and must scan a bot
    with the limits it was resolved with."""
    return {v: os.environ[v] for v in (MAX_FILES_VAR, MAX_MB_VAR, SECONDS_VAR) if v in os.environ}


def _positive(var: str, default: float, kind: type[int] | type[float]) -> float:
    value = os.environ.get(var)
    if value is None or not value.strip():
        return default
    try:
        number = kind(value.strip())
    except ValueError:
        number = 0
    if not 0 < number < 1e15:
        raise ScanError(f"${var} must be a positive number, not {value[:40]!r}")
    return number


@dataclass
class Scan:
    """One bot's scan: every path it takes must stay inside ``folder`` (a real path)."""

    folder: str
    limits: Limits = field(default_factory=Limits.from_env)
    entries: int = 0
    size: int = 0
    files: dict[str, str] = field(default_factory=dict)  # real path -> the path as found
    _deadline: float = 0.0
    _given: str = ""  # the folder as it was named (absolute)

    def __post_init__(self) -> None:
        self.within(self.folder)
        self._deadline = time.monotonic() + self.limits.seconds

    def within(self, folder: str) -> None:
        """Check the paths taken from now on against ``folder``."""
        self._given = os.path.abspath(folder)
        self.folder = os.path.realpath(folder)

    def _tick(self) -> None:
        self.entries += 1
        if self.entries > self.limits.files:
            raise ScanError(
                f"bot folder {self.folder!r} holds more than {self.limits.files} files "
                f"(${MAX_FILES_VAR})"
            )
        if time.monotonic() > self._deadline:
            raise ScanError(
                f"bot folder {self.folder!r}: reading its files took more than "
                f"{self.limits.seconds:g} s (${SECONDS_VAR})"
            )

    def inside(self, path: str) -> str:
        """The real path of ``path``, which must lead to the folder or beneath it (ScanError
        naming the link that leads out)."""
        given = os.path.abspath(path)
        parent, name = os.path.split(given)
        if parent == self._given and name and not os.path.islink(given):
            real = os.path.join(self.folder, name)  # one lstat, not one per part of the path
        else:
            real = os.path.realpath(given)
        if real != self.folder and not real.startswith(self.folder + os.sep):
            shown = os.path.relpath(os.path.abspath(path), self.folder)
            raise ScanError(
                f"{shown!r} in bot folder {self.folder!r} is a link that leads out of it"
            )
        return real

    def add(self, path: str) -> None:
        """``path``: a file (taken when regular) or a folder (walked), inside the folder."""
        real = self.inside(path)
        try:
            info = os.stat(real)
        except OSError:
            return
        if stat.S_ISDIR(info.st_mode):
            self._walk(real)
        elif stat.S_ISREG(info.st_mode) and real not in self.files:
            self._tick()
            self._file(real, path, info.st_size)

    def _file(self, real: str, path: str, size: int) -> None:
        """Take a regular file (counted by the caller)."""
        if real in self.files:
            return
        self.size += size
        if self.size > self.limits.bytes:
            raise ScanError(
                f"bot folder {self.folder!r} holds more than "
                f"{self.limits.bytes / 1_000_000:g} MB of files (${MAX_MB_VAR})"
            )
        self.files[real] = path

    def _walk(self, top: str) -> None:
        """Every regular file beneath ``top`` (a real folder inside the folder): folders are
        entered when they are not links (a link to a folder inside is walked where it is)."""
        todo = [top]
        while todo:
            folder = todo.pop()
            try:
                with os.scandir(folder) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                self._tick()
                if entry.is_symlink():
                    real = self.inside(entry.path)  # refused when it leads out
                    try:
                        info = os.stat(real)
                    except OSError:
                        continue
                    if stat.S_ISREG(info.st_mode):
                        self._file(real, entry.path, info.st_size)
                elif entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIP_DIRS:
                        todo.append(entry.path)
                elif entry.is_file(follow_symlinks=False) and not entry.name.endswith(SKIP_EXT):
                    info = entry.stat(follow_symlinks=False)
                    self._file(entry.path, entry.path, info.st_size)

    def add_all(self, paths: Iterable[str]) -> list[str]:
        """Add each of ``paths``; the real paths of every file found so far, sorted."""
        for path in paths:
            self.add(path)
        return sorted(self.files)

    def read(self, real: str) -> bytes:
        """The bytes of a file the scan took (b"" when it is gone or no longer a regular
        file: never a FIFO or a device swapped in since)."""
        try:
            fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return b""
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return b""
            chunks = []
            left = self.limits.bytes + 1
            while left > 0:
                chunk = os.read(fd, min(_CHUNK, left))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            if left <= 0:
                raise ScanError(f"bot file {real!r} is larger than {self.limits.bytes} bytes")
            return b"".join(chunks)
        except OSError:
            return b""
        finally:
            os.close(fd)
