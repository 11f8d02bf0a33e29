"""The game API every game speaks, two-player or N-player.

A game object holds the rules and the parameters (board size, number of players, ...); a *state*
is an immutable, hashable value that the game object interprets. Search code keeps states in
transposition tables and shares them between threads of thought, so a state must never change
after it is made, and two equal positions must compare and hash equal.

Players are numbered from 0. Utilities and heuristic evaluations are tuples with one entry per
player, on the same scale, so the same search code serves zero-sum and general-sum games.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Generic, TypeVar

from bot_arena.games.quoting import shown as quoted

S = TypeVar("S", bound=Hashable)
M = TypeVar("M", bound=Hashable)

Utility = tuple[float, ...]


class GameError(ValueError):
    """Bad parameters, an unparseable position or move text: the user's input is wrong."""


class GameKind(StrEnum):
    """How the players' utilities relate; search algorithms check this up front."""

    ZERO_SUM = "zero-sum"  # two players, u0 == -u1 at every terminal
    CONSTANT_SUM = "constant-sum"  # utilities always add up to the same total
    GENERAL_SUM = "general-sum"  # anything else


@dataclass(frozen=True, slots=True)
class UtilityBounds:
    """What every player's utility (and heuristic) is known to lie within.

    ``max_sum`` is the largest possible sum of all players' utilities: with ``min_each >= 0`` it is
    what Korf's shallow pruning for max^n needs.
    """

    min_each: float
    max_each: float
    max_sum: float

    @property
    def nonnegative(self) -> bool:
        return self.min_each >= 0


class Game(ABC, Generic[S, M]):
    """Rules of one game with fixed parameters.

    Subclasses set ``name`` and ``description`` as class attributes and ``num_players``,
    ``kind``, ``bounds`` and ``params`` in ``__init__``. ``params`` holds the canonical
    parameters: ``games.get(game.name, **game.params)`` makes an equal game.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""

    num_players: int
    kind: GameKind
    bounds: UtilityBounds
    params: Mapping[str, Any]
    #: Depth the search bots use when none is given; ``None`` searches to the end of the game.
    default_depth: int | None = None

    # --- rules -------------------------------------------------------------------------------
    @abstractmethod
    def initial_state(self) -> S: ...

    @abstractmethod
    def current_player(self, state: S) -> int:
        """The player to move (meaningless at a terminal state, but still in range)."""

    @abstractmethod
    def legal_moves(self, state: S) -> Sequence[M]:
        """Legal moves in the game's default search order; empty exactly when terminal."""

    @abstractmethod
    def apply(self, state: S, move: M) -> S:
        """The state after ``move``; ``state`` is left as it was. ``move`` must be legal."""

    @abstractmethod
    def is_terminal(self, state: S) -> bool: ...

    @abstractmethod
    def utility(self, state: S) -> Utility:
        """One entry per player at a terminal state."""

    def evaluate(self, state: S) -> Utility:
        """Heuristic value for depth-limited search, on the scale of ``utility``.

        Terminal states evaluate to their utility. The default knows nothing: every player gets
        the mean of the bounds' fair share.
        """
        if self.is_terminal(state):
            return self.utility(state)
        share = 0.0 if self.kind is GameKind.ZERO_SUM else self.bounds.max_sum / self.num_players
        return (share,) * self.num_players

    def state_key(self, state: S) -> Hashable:
        """A compact key identifying the position, for transposition tables."""
        return state

    # --- text I/O ----------------------------------------------------------------------------
    @abstractmethod
    def parse_move(self, text: str) -> M:
        """Move from its text form; raises GameError when the text is not a move of this game.

        Whether the move is legal in some state is checked separately, against legal_moves.
        """

    @abstractmethod
    def format_move(self, move: M) -> str: ...

    def move_label(self, state: S, move: M) -> str:
        """The move as people read it in ``state`` (SAN for chess: ``Nf3``, ``O-O``, ``Qh4#``),
        for replays and PGN export; the default is its text, ``format_move(move)``."""
        return self.format_move(move)

    @abstractmethod
    def parse_position(self, text: str) -> S:
        """State from a ``--position`` string; raises GameError on bad text."""

    @abstractmethod
    def format_position(self, state: S) -> str:
        """Text that parse_position turns back into an equal state."""

    @abstractmethod
    def render(self, state: S) -> str:
        """A multi-line picture of the state for a terminal."""

    # --- helpers built on the rules ----------------------------------------------------------
    def move_from_text(self, state: S, text: str) -> M:
        """Parse ``text`` and check that it is legal in ``state`` (GameError otherwise)."""
        move = self.parse_move(text.strip())
        if move not in self.legal_moves(state):
            where = quoted(self.format_position(state))
            raise GameError(f"illegal move {quoted(text.strip())} in position {where}")
        return move

    def random_playout(self, state: S, rng: random.Random) -> S:
        """Play uniformly random moves from ``state`` to the end; returns the terminal state."""
        while not self.is_terminal(state):
            state = self.apply(state, rng.choice(self.legal_moves(state)))
        return state

    def input_files(self) -> tuple[str, ...]:
        """The files this game reads when it is built from its parameters (absolute paths; a
        tree game's JSON). A bot's process builds the game again, so a confined bot may read
        them (``arena.match.confinement``)."""
        return ()

    def describe(self) -> str:
        """One line: name, parameters, players and kind."""
        shown = ", ".join(f"{k}={v}" for k, v in self.params.items())
        name = f"{self.name}({shown})" if shown else self.name
        return f"{name} {self.num_players} players, {self.kind.value}"

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({shown})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Game)
            and self.name == other.name
            and dict(self.params) == dict(other.params)
        )

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted((k, repr(v)) for k, v in self.params.items()))))


def ranks_from_utilities(utility: Utility) -> tuple[int, ...]:
    """Competition ranks (1 = best; tied players share the better rank: 1, 1, 3)."""
    return tuple(1 + sum(1 for other in utility if other > mine) for mine in utility)


def pair_points(ranks: Sequence[int], a: int, b: int) -> float:
    """Seat ``a``'s points against seat ``b`` of one game: 1 above, 1/2 tied, 0 below.

    The one points rule: a seat's score (:func:`scores_from_ranks`), the crosstables' cells and
    the ratings' pairwise results all count a pair of seats this way.
    """
    if ranks[a] < ranks[b]:
        return 1.0
    return 0.5 if ranks[a] == ranks[b] else 0.0


def scores_from_ranks(ranks: Sequence[int]) -> tuple[float, ...]:
    """Each player's share of the points in [0, 1]: its points against every other seat
    (:func:`pair_points`) over N-1.

    Two players: a win scores 1, a draw 1/2, a loss 0.
    """
    n = len(ranks)
    if n < 2:
        return (1.0,) * n
    seats = range(n)
    return tuple(sum(pair_points(ranks, i, j) for j in seats if j != i) / (n - 1) for i in seats)
