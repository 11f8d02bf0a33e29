"""The bot API: a bot turns a state and a time budget into a move, and may say how it chose it."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot_arena.games.base import Game


class BotError(ValueError):
    """A bad bot spec or a bot that cannot play this game (refused up front, clearly)."""


@dataclass(frozen=True, slots=True)
class TimeBudget:
    """How long the current move may take, as the arena told the bot.

    ``move_time`` is a fixed per-move limit; ``remaining``/``increment`` a game clock (Fischer).
    ``deadline`` is the ``clock()`` instant by which the answer must be sent, computed in the
    bot's own process when the request arrived. All ``None`` means no limit.

    ``clock`` is the time source, ``time.monotonic`` unless a test injects a fake: bots that
    manage their time read "now" from it, for the deadline and for their own time limit alike.
    """

    move_time: float | None = None
    remaining: float | None = None
    increment: float = 0.0
    deadline: float | None = None
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)

    @classmethod
    def unlimited(cls) -> TimeBudget:
        return cls()

    @classmethod
    def per_move(cls, seconds: float, clock: Callable[[], float] = time.monotonic) -> TimeBudget:
        return cls(move_time=seconds, deadline=clock() + seconds, clock=clock)

    def time_left(self) -> float | None:
        """Seconds until the hard deadline (``None`` without one)."""
        if self.deadline is None:
            return None
        return self.deadline - self.clock()

    def allocation(self, moves_to_go: int = 30, safety: float = 0.1) -> float | None:
        """A sensible time to spend on this move: all of a fixed move time less a safety share,
        or for a game clock the remaining time over ``moves_to_go`` plus most of the increment.
        ``None`` when there is no limit at all."""
        candidates = []
        if self.move_time is not None:
            candidates.append(self.move_time * (1.0 - safety))
        if self.remaining is not None:
            candidates.append(
                min(self.remaining * 0.5, self.remaining / moves_to_go + self.increment * 0.8)
            )
        left = self.time_left()
        if left is not None:
            candidates.append(left * (1.0 - safety))
        if not candidates:
            return None
        return max(0.0, min(candidates))


@dataclass(slots=True)
class SearchInfo:
    """What a search did for one move. ``pv`` holds moves (game values), not text."""

    values: tuple[float, ...] | None = None
    pv: list[Hashable] = field(default_factory=list)
    depth: int = 0
    nodes: int = 0
    leaves: int = 0
    cutoffs: int = 0
    tt_hits: int = 0
    time_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, game: Game[Any, Any]) -> dict[str, Any]:
        """JSON-ready form with moves as text (what the arena stores per move)."""
        out: dict[str, Any] = {
            "values": list(self.values) if self.values is not None else None,
            "pv": [game.format_move(m) for m in self.pv],
            "depth": self.depth,
            "nodes": self.nodes,
            "leaves": self.leaves,
            "cutoffs": self.cutoffs,
            "tt_hits": self.tt_hits,
            "time_s": round(self.time_s, 6),
        }
        out.update(self.extra)
        return out


@dataclass(slots=True)
class Decision:
    """A bot's answer: the move and, optionally, how it was found."""

    move: Hashable
    info: SearchInfo | None = None


class Bot(ABC):
    """A player. One object plays one seat of one game at a time.

    ``spec`` is the spec string that recreates it (``alphabeta:depth=6``).
    """

    name: str = "bot"

    def __init__(self, spec: str | None = None) -> None:
        self.spec = spec or self.name

    def new_game(self, game: Game[Any, Any], seat: int) -> None:  # noqa: B027 - optional hook
        """Called before each game; a bot clears per-game memory here (not its options)."""

    @abstractmethod
    def choose_move(self, game: Game[Any, Any], state: Any, budget: TimeBudget) -> Decision:
        """The move to play in ``state`` (never a terminal state)."""

    def options(self) -> Mapping[str, Any]:
        return {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"
