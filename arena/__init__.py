"""Bot Arena from Python, the front door: ``play``, ``tournament``, ``sprt`` and ``rate``, and
the ladders' ``ladder_create``, ``ladder_add``, ``ladder_retire``, ``ladder_run`` (bounded by
``until_games``, ``for_seconds`` or ``until_stable``) and ``ladder_show``.

    from bot_arena.arena import tournament
    t = tournament("connect4", ["random", "alphabeta:depth=3"], games=2)

Each name is imported on first use (PEP 562), so importing this package (every ``arena``
command does) costs nothing: the database, the bots' machinery and the ratings load when a
function is called."""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot_arena.arena.api.errors import ArenaError
    from bot_arena.arena.api.ladders import (
        Added,
        LadderView,
        RunEnd,
        Standing,
        ladder_add,
        ladder_create,
        ladder_retire,
        ladder_run,
        ladder_show,
    )
    from bot_arena.arena.api.play import MatchRecord, play
    from bot_arena.arena.api.rating import rate
    from bot_arena.arena.api.tournaments import SprtResult, Tournament, sprt, tournament

__all__ = [
    "Added",
    "ArenaError",
    "LadderView",
    "MatchRecord",
    "RunEnd",
    "SprtResult",
    "Standing",
    "Tournament",
    "ladder_add",
    "ladder_create",
    "ladder_retire",
    "ladder_run",
    "ladder_show",
    "play",
    "rate",
    "sprt",
    "tournament",
]

_HOMES = {
    "Added": "bot_arena.arena.api.ladders",
    "ArenaError": "bot_arena.arena.api.errors",
    "LadderView": "bot_arena.arena.api.ladders",
    "RunEnd": "bot_arena.arena.api.ladders",
    "Standing": "bot_arena.arena.api.ladders",
    "ladder_add": "bot_arena.arena.api.ladders",
    "ladder_create": "bot_arena.arena.api.ladders",
    "ladder_retire": "bot_arena.arena.api.ladders",
    "ladder_run": "bot_arena.arena.api.ladders",
    "ladder_show": "bot_arena.arena.api.ladders",
    "MatchRecord": "bot_arena.arena.api.play",
    "SprtResult": "bot_arena.arena.api.tournaments",
    "Tournament": "bot_arena.arena.api.tournaments",
    "play": "bot_arena.arena.api.play",
    "rate": "bot_arena.arena.api.rating",
    "sprt": "bot_arena.arena.api.tournaments",
    "tournament": "bot_arena.arena.api.tournaments",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # the next lookup is a plain one
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


class _FrontDoor(types.ModuleType):
    """This package's module. The function ``tournament`` shares its name with the subpackage
    ``bot_arena.arena.tournament`` (the formats' machinery), and the import system binds a
    loaded subpackage as an attribute of its parent: once anything imported it (calling
    ``tournament()`` does), ``from bot_arena.arena import tournament`` would give the module.
    A front-door name keeps its function; the subpackage stays importable by its full name."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _HOMES and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _FrontDoor
