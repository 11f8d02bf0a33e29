"""The bot that plays a seat, as a value: ``BotRef`` (what the database stores and a match
record names), with a SHA-256 that pins the version (of what runs: ``versions``; of the spec
text for built-ins) and, for a file bot, the files it is made of.

Reading a ``--bot SPEC`` into a BotRef is ``botspec.resolve``; this module imports nothing of
the arena, the bots or the games, so the database layer can use it cheaply.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

BUILTIN = "builtin"
MODULE = "module"
COMMAND = "command"
UCI = "uci"  # a chess engine speaking UCI (``engines``, ``uci``)
XBOARD = "xboard"  # a chess engine speaking xboard/CECP (``engines``, ``xboard``)
HUMAN = "human"
ENGINES = (UCI, XBOARD)  # chess engines: a command line and options, a protocol of their own
PROGRAMS = (COMMAND, *ENGINES)  # kinds whose bot is a program the arena execs, not Python

_FILE_ATTR = re.compile(r"^(?P<path>.+\.py)(?::(?P<attr>[A-Za-z_]\w*))?$")


class BotSpecError(ValueError):
    """A spec that names no bot (one-line message)."""


class UnloadableBot(BotSpecError):
    """A registered bot whose stored version can no longer be loaded (a file path that leaves
    its folder, stored by an older release; a program gone): one line naming the bot. A
    tournament leaves such a bot out rather than stopping (``arena tournament run``)."""

    def __init__(self, name: str, why: str) -> None:
        super().__init__(f"registered bot {name!r} cannot be loaded: {why}")
        self.bot = name


@dataclass(frozen=True)
class BotRef:
    name: str  # display name: spec, registered name, file stem or "cmd:<command>"
    kind: str  # "builtin" | "module" | "command" | "uci" | "xboard" | "human"
    target: str  # spec string, path to a .py file (optionally ":attr") / "pkg.mod:attr", command
    source: str | None = None  # module source text (kind "module"), else None
    sha256: str = ""
    # the other Python files of a file bot that it imports from its folder, (path relative to
    # the folder, text): stored with the version, so the version runs as it was wherever the
    # files on disk have gone since (``versions``)
    files: tuple[tuple[str, str], ...] = ()

    @property
    def short_version(self) -> str:
        return self.sha256[:12]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "target": self.target,
            "source": self.source,
            "sha256": self.sha256,
            "files": [list(f) for f in self.files],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BotRef:
        """The inverse of ``to_dict`` (ValueError on data that is not a BotRef)."""
        if not isinstance(data, dict):
            raise ValueError("bot is not an object")
        name, kind, target, sha256 = (data.get(k) for k in ("name", "kind", "target", "sha256"))
        source = data.get("source")
        if not (
            isinstance(name, str)
            and isinstance(kind, str)
            and isinstance(target, str)
            and isinstance(sha256, str)
            and (source is None or isinstance(source, str))
        ):
            raise ValueError("bot: a field is missing or not a string")
        return cls(name, kind, target, source, sha256, files_from(data.get("files", [])))


def files_from(data: Any) -> tuple[tuple[str, str], ...]:
    """A bot's stored files from JSON: a list of [relative path, text] (ValueError else, and
    for a path that would leave the bot's folder)."""
    if data is None:
        return ()
    if not isinstance(data, list) or not all(
        isinstance(f, list) and len(f) == 2 and all(isinstance(x, str) for x in f) for f in data
    ):
        raise ValueError("bot: files is not a list of [path, text] pairs")
    for path, _ in data:
        parts = path.replace("\\", "/").split("/")
        if path.startswith("/") or ".." in parts or not path:
            raise ValueError(f"bot: file path {path!r} leaves the bot's folder")
    return tuple((path, text) for path, text in data)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pinned(name: str, kind: str, target: str, source: str | None = None) -> BotRef:
    """A BotRef whose version is the SHA-256 of its source (modules) or else of its target."""
    return BotRef(name, kind, target, source, sha256_text(source if source is not None else target))


def file_target(target: str) -> tuple[str, str | None] | None:
    """``(path, attr)`` of a bot file target ``FILE.py`` or ``FILE.py:Attr`` (attr None when not
    given); None when ``target`` names no ``.py`` file. The one parser of this syntax."""
    m = _FILE_ATTR.match(target.strip())
    return None if m is None else (m.group("path"), m.group("attr"))
