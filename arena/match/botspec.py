"""What a ``--bot SPEC`` names: a built-in spec, a ``.py`` file, ``pkg.mod:attr``, a ``cmd:``
command line, ``human``, or a name registered in the database (through a lookup callable),
read into a BotRef and checked enough to fail early with a one-line message.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

from bot_arena import bots
from bot_arena.arena.match.botref import (
    BUILTIN,
    COMMAND,
    HUMAN,
    MODULE,
    BotRef,
    BotSpecError,
    file_target,
    pinned,
)
from bot_arena.bots.base import BotError

_MODULE_ATTR = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


def from_file(path: str, name: str | None = None) -> BotRef:
    """A bot module from a ``.py`` file (``file.py`` or ``file.py:Attr``), source read now."""
    parsed = file_target(path)
    if parsed is None:
        raise BotSpecError(f"bot file {path!r} is not a .py file")
    file_name, attr = parsed
    file = Path(file_name).expanduser()
    try:
        source = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BotSpecError(
            f"cannot read bot file {str(file)!r}: {exc.__class__.__name__}"
        ) from None
    target = str(file.resolve()) + (f":{attr}" if attr else "")
    return pinned(name or file.stem, MODULE, target, source)


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
    return pinned(spec, MODULE, spec, source)


def resolve(spec: str, lookup: Callable[[str], BotRef | None] | None = None) -> BotRef:
    """The bot a spec names, checked enough to fail early with a clear one-line message."""
    spec = spec.strip()
    if not spec:
        raise BotSpecError("empty bot spec")
    if spec.startswith("cmd:"):
        command = spec[4:].strip()
        if not command:
            raise BotSpecError("cmd: bot without a command line")
        return pinned(f"cmd:{command}", COMMAND, command)
    if spec == HUMAN:
        return pinned(HUMAN, HUMAN, HUMAN)
    if file_target(spec) is not None:
        return from_file(spec)
    if bots.is_builtin(spec):
        try:
            bots.make(spec)
        except BotError as exc:
            raise BotSpecError(str(exc)) from None
        return pinned(spec, BUILTIN, spec)
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
