"""Find the bot in what the user gave and adapt it to one shape: ``Player``.

Accepted: a built-in spec (``bots.make``); a module (a ``.py`` file or ``pkg.mod``) with an
attribute named after ``:`` or else a module-level ``choose_move(game, state, budget)`` function
or exactly one class defined in it that is a ``Bot`` subclass or has a ``choose_move`` method.
A bot may return a move, a move text, a ``Decision``, or ``(move, info)``.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from bot_arena.bots.base import Decision, SearchInfo, TimeBudget
from bot_arena.games.base import Game
from bot_arena.games.quoting import shown


class LoadError(Exception):
    """The module loaded but holds no usable bot (a missing or ambiguous entry point)."""


class UnwritableMove(ValueError):
    """A bot returned a value its game writes as a text that does not read back as a move
    (``99`` in tic-tac-toe becomes ``'100'``): the fault must quote the value the bot returned,
    not a text it never sent (the host reports it as an ``answer`` error, a bad output)."""


ChooseFn = Callable[[Game[Any, Any], Any, TimeBudget], Any]


@dataclass
class Player:
    """One game's bot object: ``choose`` picks, ``new_game`` is the optional per-game hook."""

    name: str
    choose: ChooseFn
    new_game: Callable[[Game[Any, Any], int], None] | None = None


Factory = Callable[[int], Player]  # seed -> a fresh player for one game


def load_file(path: str, attr: str | None, extra_path: str | None) -> tuple[ModuleType, str | None]:
    file = Path(path)
    if extra_path:
        sys.path.insert(0, extra_path)
    module_name = f"arena_bot_{file.stem}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise LoadError(f"cannot load {path!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module, attr


def load_import(target: str, folder: str | None = None) -> tuple[ModuleType, str | None]:
    """``pkg.mod:attr`` from the installed packages or, after them, from ``folder``."""
    if folder and folder not in sys.path:
        sys.path.append(folder)
    module_name, _, attr = target.partition(":")
    return importlib.import_module(module_name), attr or None


def _accepts_seed(cls: type) -> bool:
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return False
    return "seed" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _from_object(obj: Any, label: str) -> Factory:
    cls: Any = obj
    if inspect.isclass(obj):
        if not callable(getattr(obj, "choose_move", None)):
            raise LoadError(f"{label} has no choose_move method")
        if inspect.isabstract(obj):
            raise LoadError(f"{label} is abstract (choose_move not implemented)")
        seeded = _accepts_seed(obj)

        def make_instance(seed: int) -> Player:
            bot = cls(seed=seed) if seeded else cls()
            return Player(label, bot.choose_move, getattr(bot, "new_game", None))

        return make_instance
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return lambda seed: Player(label, obj)
    if callable(getattr(obj, "choose_move", None)):
        return lambda seed: Player(label, obj.choose_move, getattr(obj, "new_game", None))
    raise LoadError(f"{label} is neither a bot class, a bot object nor a choose_move function")


def find_bot(module: ModuleType, attr: str | None) -> Factory:
    """The entry point of a loaded module (LoadError when missing or ambiguous)."""
    if attr is not None:
        if not hasattr(module, attr):
            raise LoadError(f"module defines no {attr!r}")
        return _from_object(getattr(module, attr), attr)
    fn = getattr(module, "choose_move", None)
    if inspect.isfunction(fn):
        return _from_object(fn, "choose_move")
    classes = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and obj.__module__ == module.__name__
        and callable(getattr(obj, "choose_move", None))
        and not inspect.isabstract(obj)
    ]
    if not classes:
        raise LoadError(
            "no bot found: define a choose_move(game, state, budget) function "
            "or a class with a choose_move method"
        )
    if len(classes) > 1:
        names = ", ".join(sorted(c.__name__ for c in classes))
        raise LoadError(f"several bot classes ({names}): name one as FILE.py:CLASS")
    return _from_object(classes[0], classes[0].__name__)


def builtin_factory(spec: str) -> Factory:
    """Built-in bots by spec; the class and options are resolved once (``bots.make`` looks the
    registry's entry points up on every call, which would cost milliseconds per game)."""
    from bot_arena import bots  # imported here: only built-in workers need the registry's bots
    from bot_arena.bots.registry import seeded
    from bot_arena.games.params import bind

    bots.make(spec)  # fail at load time on a bad spec, with the registry's message
    name, options = bots.split_spec(spec)
    cls = bots.bot_class(name)
    kwargs: dict[str, Any] = bind(f"bot {name}", cls, options, skip=("spec",))

    def make_builtin(seed: int) -> Player:
        bot = cls(spec=spec.strip(), **seeded(kwargs, cls, seed))
        return Player(spec, bot.choose_move, bot.new_game)

    return make_builtin


def _is_info_pair(result: Any) -> bool:
    return (
        isinstance(result, tuple)
        and len(result) == 2
        and (result[1] is None or isinstance(result[1], dict | SearchInfo))
    )


def answer(game: Game[Any, Any], state: Any, result: Any) -> tuple[str, dict[str, Any] | None]:
    """A bot's return value as (move text, info object)."""
    info: Any = None
    if isinstance(result, Decision):
        move, info = result.move, result.info
    elif _is_info_pair(result):
        move, info = result
    else:
        move = result
    if isinstance(info, SearchInfo):
        info = info.to_dict(game)
    if isinstance(move, str):
        text = move  # a move text, checked by the referee like any other
    else:
        try:
            text = game.format_move(move)
        except Exception:
            return str(move), info  # the value itself, which the referee quotes
        try:
            game.parse_move(text)
        except Exception:
            kind = type(move).__name__
            raise UnwritableMove(
                f"unparseable move {shown(move)}: {game.name} writes this {kind} as"
                f" {shown(text)}, which is not a move"
            ) from None
    return text, info
