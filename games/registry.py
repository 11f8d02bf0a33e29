"""Games by name: the built-in ones and third-party games from the ``arena.games`` entry points.

Parameters may come as Python values or as command-line strings (``coins=5``); they are coerced to
the types that the game's ``__init__`` annotates, so a typo is a one-line GameError, not a crash.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from importlib import import_module
from typing import Any

from bot_arena.games import plugins
from bot_arena.games.base import Game, GameError
from bot_arena.games.params import accepted, bind, parse_items
from bot_arena.games.quoting import shown

ENTRY_POINT_GROUP = "arena.games"

# name -> "module:Class", imported on first use so that listing games stays cheap.
_BUILTIN: dict[str, str] = {
    "coins": "bot_arena.games.coins:CoinsGame",
    "tictactoe": "bot_arena.games.tictactoe:TicTacToe",
    "connect4": "bot_arena.games.connect4:ConnectFour",
    "tree": "bot_arena.games.tree:TreeGame",
    "nim": "bot_arena.games.nim:NimGame",
    "rolit": "bot_arena.games.rolit:Rolit",
    "chess": "bot_arena.games.chess:Chess",
}

_classes: dict[str, type[Game[Any, Any]]] = {}


def _load(target: str) -> type[Game[Any, Any]]:
    module_name, _, attr = target.partition(":")
    try:
        cls = getattr(import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise GameError(f"game {target} cannot be loaded: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, Game)):
        raise GameError(f"{target} is not a Game class")
    return cls


# built-in games whose rules library is costly to import (python-chess: about 60 ms): a fork
# server does not import them ahead of its workers, so that every match of another game does
# not pay for them; a worker that plays one imports it (chess engines, exec'd, never do)
NOT_PRELOADED = frozenset({"bot_arena.games.chess"})


def builtin_modules() -> list[str]:
    """The modules of the built-in entries that a fork server imports ahead of its workers."""
    modules = dict.fromkeys(target.partition(":")[0] for target in _BUILTIN.values())
    return [m for m in modules if m not in NOT_PRELOADED]


def _discover() -> dict[str, str]:
    return plugins.all_targets(_BUILTIN, ENTRY_POINT_GROUP)


def names() -> list[str]:
    """Every registered game name, built-in first, then third-party ones in name order."""
    found = _discover()
    third = sorted(n for n in found if n not in _BUILTIN and _importable(n))
    return [*(n for n in _BUILTIN if _importable(n)), *third]


def _importable(name: str) -> bool:
    try:
        game_class(name)
    except (GameError, ImportError):
        return False
    return True


def register(cls: type[Game[Any, Any]]) -> None:
    """Register a game class at run time (tests, notebooks); entry points are the packaged way."""
    _classes[cls.name] = cls


def game_class(name: str) -> type[Game[Any, Any]]:
    if name in _classes:
        return _classes[name]
    target = plugins.find_target(name, _BUILTIN, ENTRY_POINT_GROUP)
    if target is None:
        raise GameError(f"unknown game {shown(name)} (known: {', '.join(sorted(_discover()))})")
    cls = _load(target)
    _classes[name] = cls
    return cls


def parameters(name: str) -> dict[str, inspect.Parameter]:
    """The keyword parameters a game takes, with their defaults and annotations."""
    return accepted(game_class(name))


def get(name: str, **params: Any) -> Game[Any, Any]:
    """A game by registry name with the given parameters (GameError on anything wrong)."""
    cls = game_class(name)
    kwargs = bind(name, cls, params)
    try:
        return cls(**kwargs)
    except GameError:
        raise
    except (TypeError, ValueError) as exc:
        raise GameError(f"{name}: {exc}") from None


def parse_params(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``["k=v", ...]`` from the command line into a dict (GameError on a malformed item)."""
    return parse_items(items)


def available() -> Mapping[str, type[Game[Any, Any]]]:
    return {n: game_class(n) for n in names()}


class GameCache:
    """Games made once per name and parameters, for readers of many stored matches (exports,
    reports); None for a game that cannot be made here (its plugin is gone, a tree file
    moved)."""

    def __init__(self) -> None:
        self._made: dict[str, Game[Any, Any] | None] = {}

    def get(self, name: str, params: dict[str, Any]) -> Game[Any, Any] | None:
        key = json.dumps([name, params], sort_keys=True, default=str)
        if key not in self._made:
            try:
                self._made[key] = get(name, **params)
            except GameError:
                self._made[key] = None
        return self._made[key]
