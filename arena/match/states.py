"""What the referee needs to know about a position to ask for a move: the player to move, the
legal moves by text and the encoded parts of the request. Computed once per position and kept
for the whole series (a tournament replays the same openings game after game; tic-tac-toe has
5,478 positions in all), per game, in a bounded table.

Safe because states are values: equal states have equal legal moves and texts (games.base).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from bot_arena.arena.transport.protocol import json_str
from bot_arena.games.base import Game

TABLE_LIMIT = 8192  # positions kept per game (about 1 KiB each); the table restarts when full


class StateFacts:
    """A position's facts: the player to move and the legal moves by text (every move needs
    them: the answer is judged against them), and its texts for a Python bot's request (the
    position, it and the legal list as JSON), each made on first use and kept with the facts.
    An engine's request is the moves so far and the clocks, so a run of engines never makes
    them (a chess position's FEN costs python-chess about 55 us, at every ply). The texts take
    the game as an argument: a table's facts hold no reference to its game (``table_for``)."""

    __slots__ = ("_legal_json", "_position", "_position_json", "legal", "moves", "seat", "state")

    def __init__(self, seat: int, moves: Sequence[Any], legal: dict[str, Any], state: Any) -> None:
        self.seat = seat  # the player to move
        self.moves = moves  # legal moves, the game's order
        self.legal = legal  # move text -> move, same order
        self.state = state
        self._position: str | None = None
        self._position_json: str | None = None
        self._legal_json: str | None = None

    def position(self, game: Game[Any, Any]) -> str:
        """The position's text (``game.format_position``)."""
        if self._position is None:
            self._position = game.format_position(self.state)
        return self._position

    def position_json(self, game: Game[Any, Any]) -> str:
        """The position's text as a JSON string literal."""
        if self._position_json is None:
            self._position_json = json_str(self.position(game))
        return self._position_json

    def legal_json(self) -> str:
        """The request's legal list items: ``'"2","3"'``."""
        if self._legal_json is None:
            self._legal_json = ",".join(map(json_str, self.legal))
        return self._legal_json


def facts_of(game: Game[Any, Any], state: Any) -> StateFacts:
    moves = game.legal_moves(state)
    legal = {game.format_move(m): m for m in moves}
    return StateFacts(game.current_player(state), moves, legal, state)


class StateTable:
    """``facts(game, state)``: cached StateFacts of non-terminal states of one game (it holds
    no reference to the game: the table lives exactly as long as the game object does)."""

    __slots__ = ("known", "limit")

    def __init__(self, limit: int = TABLE_LIMIT) -> None:
        self.limit = limit
        self.known: dict[Any, StateFacts] = {}

    def facts(self, game: Game[Any, Any], state: Any) -> StateFacts:
        try:
            found = self.known.get(state)
        except TypeError:  # an unhashable state breaks the Game API, but not the referee
            return facts_of(game, state)
        if found is None:
            found = facts_of(game, state)
            if len(self.known) >= self.limit:
                self.known.clear()
            self.known[state] = found
        return found


_TABLES: weakref.WeakKeyDictionary[Game[Any, Any], StateTable] = weakref.WeakKeyDictionary()


def table_for(game: Game[Any, Any]) -> StateTable:
    """The table shared by every match of ``game`` (equal games share one) while it lives."""
    try:
        table = _TABLES.get(game)
        if table is None:
            table = _TABLES[game] = StateTable()
    except TypeError:  # a game object that cannot be weakly referenced: a table of its own
        table = StateTable()
    return table
