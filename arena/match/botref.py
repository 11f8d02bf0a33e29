"""What a ``--bot SPEC`` names: a built-in spec, a ``.py`` file, ``pkg.mod:attr``, a ``cmd:``
command line, ``human``, or a name registered in the database (through a lookup callable).

A BotRef is a value: the exact thing that plays, with a SHA-256 that pins the version (of the
module source for modules, of the spec or command text otherwise).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bot_arena import bots
from bot_arena.bots.base import BotError

BUILTIN = "builtin"
MODULE = "module"
COMMAND = "command"
HUMAN = "human"

_MODULE_ATTR = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_FILE_ATTR = re.compile(r"^(?P<path>.+\.py)(?::(?P<attr>[A-Za-z_]\w*))?$")


class BotSpecError(ValueError):
    """A spec that names no bot (one-line message)."""


@dataclass(frozen=True)
class BotRef:
    name: str  # display name: spec, registered name, file stem or "cmd:<command>"
    kind: str  # "builtin" | "module" | "command" | "human"
    target: str  # spec string, path to a .py file (optionally ":attr") / "pkg.mod:attr", command
    source: str | None = None  # module source text (kind "module"), else None
    sha256: str = ""

    @property
    def short_version(self) -> str:
        return self.sha256[:12]


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _ref(name: str, kind: str, target: str, source: str | None = None) -> BotRef:
    return BotRef(name, kind, target, source, sha256_text(source if source is not None else target))


def from_file(path: str, name: str | None = None) -> BotRef:
    """A bot module from a ``.py`` file (``file.py`` or ``file.py:Attr``), source read now."""
    m = _FILE_ATTR.match(path.strip())
    if not m:
        raise BotSpecError(f"bot file {path!r} is not a .py file")
    file = Path(m.group("path")).expanduser()
    try:
        source = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BotSpecError(
            f"cannot read bot file {str(file)!r}: {exc.__class__.__name__}"
        ) from None
    target = str(file.resolve()) + (f":{m.group('attr')}" if m.group("attr") else "")
    return _ref(name or file.stem, MODULE, target, source)


def _from_module(spec: str) -> BotRef:
    module_name = spec.partition(":")[0]
    # Like the worker: installed packages first, then the current folder (at the end of the
    # path, so a stray games.py there cannot replace the arena's own packages).
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    try:
        found = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        found = None
    if found is None or found.origin is None or not found.has_location:
        raise BotSpecError(f"bot module {module_name!r} cannot be found")
    try:
        source = Path(found.origin).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        source = None
    return _ref(spec, MODULE, spec, source)


def resolve(spec: str, lookup: Callable[[str], BotRef | None] | None = None) -> BotRef:
    """The bot a spec names, checked enough to fail early with a clear one-line message."""
    spec = spec.strip()
    if not spec:
        raise BotSpecError("empty bot spec")
    if spec.startswith("cmd:"):
        command = spec[4:].strip()
        if not command:
            raise BotSpecError("cmd: bot without a command line")
        return _ref(f"cmd:{command}", COMMAND, command)
    if spec == HUMAN:
        return _ref(HUMAN, HUMAN, HUMAN)
    if _FILE_ATTR.match(spec):
        return from_file(spec)
    if bots.is_builtin(spec):
        try:
            bots.make(spec)
        except BotError as exc:
            raise BotSpecError(str(exc)) from None
        return _ref(spec, BUILTIN, spec)
    if _MODULE_ATTR.match(spec):
        return _from_module(spec)
    if lookup is not None:
        found = lookup(spec)
        if found is not None:
            return found
    raise BotSpecError(
        f"unknown bot {spec!r}: not a built-in ({', '.join(bots.names())}), a .py file, "
        "pkg.module:attr, cmd:<command> or a registered name"
    )
