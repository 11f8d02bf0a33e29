"""Bots given from Python: a spec string, a file, or a function ``choose_move(game, state,
budget)`` / a bot class written in the calling program. A function or class is written out as
a bot file (its source, the modules and names it uses) so that it runs like any file bot: in a
confined process of its own, with the same limits and faults. Only what its source says can
travel: a closure over local variables, or a global that is neither a module, an importable
function or class, a function or class of the same program, nor a literal, is refused."""

from __future__ import annotations

import inspect
import os
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bot_arena.arena.api.errors import ArenaError

BotLike = str | os.PathLike[str] | types.FunctionType | type
_LITERALS = (int, float, str, bool, bytes, type(None))


def spec_of(bot: object, folder: Path) -> str:
    """The ``--bot`` spec for ``bot``: a string as given, a path as text, a function or class
    written to a file of its own under ``folder`` (named after it)."""
    if isinstance(bot, str):
        return bot
    if isinstance(bot, os.PathLike):
        return str(os.fspath(bot))
    if isinstance(bot, types.FunctionType) or inspect.isclass(bot):
        name = bot.__name__
        if not name.isidentifier():  # a lambda's source is the line it sits in
            raise ArenaError(f"a bot written in Python needs a name: define {name} with def")
        own = folder / f"bot{len(list(folder.iterdir()))}"
        own.mkdir()
        path = own / f"{name}.py"
        path.write_text(source_of(bot), encoding="utf-8")
        return f"{path}:{name}"
    raise ArenaError(
        f"a bot is a spec string, a file path, a function or a class, not {type(bot).__name__}"
    )


def source_of(obj: types.FunctionType | type) -> str:
    """A module that defines ``obj`` as the calling program does (see the module docstring)."""
    lines: list[str] = []
    bodies: list[str] = []
    _collect(obj, lines, bodies, set())
    head = ["from __future__ import annotations", *dict.fromkeys(lines)]
    return "\n".join(head) + "\n\n\n" + "\n\n\n".join(bodies) + "\n"


def _collect(
    obj: types.FunctionType | type, lines: list[str], bodies: list[str], seen: set[str]
) -> None:
    label = getattr(obj, "__qualname__", repr(obj))
    seen.add(obj.__name__)
    if isinstance(obj, types.FunctionType) and obj.__closure__:
        names = ", ".join(obj.__code__.co_freevars)
        raise ArenaError(
            f"bot {label} uses local variables of the function that made it ({names}): "
            "define it at module level"
        )
    try:
        source = textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError) as exc:
        raise ArenaError(f"bot {label}: its source cannot be read ({exc})") from None
    module = sys.modules.get(obj.__module__)
    scope: dict[str, Any] = (
        obj.__globals__ if isinstance(obj, types.FunctionType) else vars(module) if module else {}
    )
    for name in sorted(_names_used(obj)):
        if name in seen or name not in scope:
            continue  # a builtin, an attribute's name, or defined already
        value = scope[name]
        if isinstance(value, types.ModuleType):
            alias = "" if value.__name__ == name else f" as {name}"
            lines.append(f"import {value.__name__}{alias}")
        elif isinstance(value, types.FunctionType | type) and value.__module__ == obj.__module__:
            _collect(value, lines, bodies, seen)
        elif isinstance(value, types.FunctionType | type) and value.__module__ != "__main__":
            lines.append(f"from {value.__module__} import {value.__qualname__} as {name}")
        elif isinstance(value, _LITERALS):
            lines.append(f"{name} = {value!r}")
        else:
            raise ArenaError(
                f"bot {label} uses {name!r} ({type(value).__name__}), which cannot be carried "
                "to its process: make it a literal, a module or a module-level function"
            )
        seen.add(name)
    bodies.append(source)


def _names_used(obj: types.FunctionType | type) -> set[str]:
    """The global names the code of ``obj`` (its methods, nested functions) reads, and for a
    class its bases."""
    codes: list[types.CodeType] = []
    names: set[str] = set()
    if isinstance(obj, types.FunctionType):
        codes.append(obj.__code__)
    else:
        for base in obj.__bases__:
            names.add(base.__name__)
        for member in vars(obj).values():
            func = getattr(member, "__func__", member)  # static and class methods
            if isinstance(func, types.FunctionType):
                codes.append(func.__code__)
    for code in _walk(codes):
        names.update(code.co_names)
    return names


def _walk(codes: list[types.CodeType]) -> Iterator[types.CodeType]:
    while codes:
        code = codes.pop()
        yield code
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
