"""Pieces every search bot shares: depth defaults, preconditions, principal variations.

Principal variations are kept as *cons lines*: ``(move, rest)`` pairs ending in ``None``. A node
that finds a new best move stores ``(move, child_line)`` for its ply, which costs one small tuple
per improvement and nothing per node otherwise; ``line_to_list`` turns the root's line into the
list of moves that ``SearchInfo.pv`` holds.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Literal

from bot_arena.bots.base import BotError, TimeBudget
from bot_arena.games.base import Game, GameKind, Utility

INF = float("inf")

#: Stands for "no depth limit" in the search loops: depth arithmetic stays plain ``int``.
UNLIMITED = 1 << 30

#: Deepest ply the searches keep lines for (Python's recursion limit comes first anyway).
MAX_PLY = 2048

#: A principal variation as nested pairs, ``(m1, (m2, (m3, None)))``; ``None`` is the empty line.
Line = tuple[Hashable, Any] | None


@dataclass(slots=True)
class ScalarResult:
    """What a scalar (player-0 or root-player valued) search found."""

    value: float
    pv: list[Hashable] = field(default_factory=list)
    nodes: int = 0
    leaves: int = 0
    cutoffs: int = 0


class SearchAborted(Exception):
    """Every search raises this one type to stop before it is done (and catches it where it can
    still answer).

    ``reason`` is ``"time"`` (the deadline passed) or ``"nodes"`` (the node limit was reached).
    A search that knows more on the way out says so: ``move`` is the best move proven so far
    (``None`` if none), ``lo``/``hi`` bound the value as far as proven (the Connect Four solver's
    narrowing window). Iterative deepening throws the interrupted iteration away.
    """

    def __init__(
        self,
        reason: Literal["time", "nodes"] = "time",
        message: str = "",
        *,
        lo: int = 0,
        hi: int = 0,
        move: Hashable | None = None,
    ) -> None:
        super().__init__(message or f"search aborted ({reason})")
        self.reason = reason
        self.lo = lo
        self.hi = hi
        self.move = move


def resolve_depth(game: Game[Any, Any], depth: int | None) -> int:
    """The depth to search: the bot's option, else the game's default; ``UNLIMITED`` for none."""
    if depth is None:
        depth = game.default_depth
    if depth is None:
        return UNLIMITED
    if depth < 1:
        raise BotError(f"depth must be >= 1, not {depth}")
    return depth


def shown_depth(depth: int) -> int | None:
    """``None`` for an unlimited depth (for messages and options)."""
    return None if depth >= UNLIMITED else depth


def require_two_player_zero_sum(game: Game[Any, Any], bot: str) -> None:
    """Refuse games that plain (two-valued) minimax cannot model."""
    if game.num_players != 2 or game.kind is not GameKind.ZERO_SUM:
        raise BotError(
            f"{bot} plays two-player zero-sum games only; {game.name} is "
            f"{game.num_players}-player {game.kind.value} (try maxn, paranoid or mcts)"
        )


def line_to_list(line: Line) -> list[Hashable]:
    out: list[Hashable] = []
    while line is not None:
        out.append(line[0])
        line = line[1]
    return out


def pv_end_vector(game: Game[Any, Any], state: Any, pv: list[Hashable]) -> Utility:
    """The static value of the position at the end of ``pv`` (utility or heuristic).

    Along a principal variation every node has the root's exact value, so this is the full value
    vector behind a scalar search result (paranoid, two-player minimax).
    """
    for move in pv:
        state = game.apply(state, move)
    return game.evaluate(state)


def zero_sum_vector(value: float, player: int = 0) -> tuple[float, float]:
    """The two-player zero-sum vector in which ``player`` gets ``value``."""
    return (value, 0.0 - value) if player == 0 else (0.0 - value, value)


def time_limit(option: float | None, budget: TimeBudget) -> float | None:
    """Seconds to think: the bot's own ``time`` option capped by the arena's allocation."""
    alloc = budget.allocation()
    if option is None:
        return alloc
    if alloc is None:
        return option
    return min(option, alloc)


#: The share of a move's time the time-managed bots (``iterative``, ``mcts``) leave unused before
#: the arena's deadline: what the arena measures beyond their search (the request and the answer
#: through the pipes, the answer built, the scheduler on a loaded machine) grows with the time
#: given, so the reserve does too (0.02 s of a 0.1 s move, 0.2 s of a 1 s one).
RESERVE_SHARE = 0.2


def think_time(option: float | None, budget: TimeBudget) -> float | None:
    """Seconds a time-managed bot may search from now: ``time_limit`` (its own ``time``
    option, the arena's allocation), and never past the arena's deadline less a reserve of
    ``RESERVE_SHARE`` of the time the move was given (the fixed move time, else the clock's
    remaining time, else the time left now). None: no limit at all."""
    seconds = time_limit(option, budget)
    left = budget.time_left()
    if left is None:
        return seconds
    given = budget.move_time if budget.move_time is not None else budget.remaining
    reserve = RESERVE_SHARE * (left if given is None else min(given, max(left, 0.0)))
    room = max(0.0, left - reserve)
    return room if seconds is None else min(seconds, room)


def deadline_after(seconds: float | None) -> float:
    """A ``time.perf_counter()`` instant ``seconds`` from now (infinity for no limit)."""
    return INF if seconds is None else time.perf_counter() + seconds
