"""What the referee needs to know about a position to ask for a move: the player to move, the
legal moves by text and the encoded parts of the request. Computed once per position and kept
for the whole series (a tournament replays the same openings game after game; tic-tac-toe has
5,478 positions in all), per game, in a bounded table.

Safe because states are values: equal states have equal legal moves and texts (games.base).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot_arena.arena.transport.protocol import json_str
from bot_arena.games.base import Game

TABLE_LIMIT = 8192  # positions kept per game (about 1 KiB each); the table restarts when full


@dataclass(frozen=True, slots=True)
class StateFacts:
    seat: int  # the player to move
    moves: Sequence[Any]  # legal moves, the game's order
    legal: dict[str, Any]  # move text -> move, same order
    legal_json: str  # the request's legal list items: '"2","3"'
    position: str  # position text
    position_json: str  # the same as a JSON string literal


def facts_of(game: Game[Any, Any], state: Any) -> StateFacts:
    moves = game.legal_moves(state)
    legal = {game.format_move(m): m for m in moves}
    position = game.format_position(state)
    return StateFacts(
        game.current_player(state),
        moves,
        legal,
        ",".join(map(json_str, legal)),
        position,
        json_str(position),
    )


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
