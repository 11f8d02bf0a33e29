"""Bot Arena from Python, the front door: ``play``, ``tournament``, ``sprt`` and ``rate``.

    from bot_arena.arena import tournament
    t = tournament("connect4", ["random", "alphabeta:depth=3"], games=2)

Each name is imported on first use (PEP 562), so importing this package (every ``arena``
command does) costs nothing: the database, the bots' machinery and the ratings load when a
function is called."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot_arena.arena.api.errors import ArenaError
    from bot_arena.arena.api.play import MatchRecord, play
    from bot_arena.arena.api.rating import rate
    from bot_arena.arena.api.tournaments import SprtResult, Tournament, sprt, tournament

__all__ = [
    "ArenaError",
    "MatchRecord",
    "SprtResult",
    "Tournament",
    "play",
    "rate",
    "sprt",
    "tournament",
]

_HOMES = {
    "ArenaError": "bot_arena.arena.api.errors",
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
