"""Who may enter a tournament, checked before anything is stored, and the error a tournament
that cannot be created or resumed raises. Without SQLAlchemy: a new run checks its field
before its database is opened (``api/new_run.py``: its engines start first)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot_arena.arena.match.botref import BotRef


class TournamentError(ValueError):
    """A tournament that cannot be created or resumed (one-line message)."""


def check_field(refs: Sequence[BotRef]) -> None:
    """No human, and no bot twice under one name."""
    names = [r.name for r in refs]
    for ref in refs:
        if ref.kind == "human":
            raise TournamentError("a human cannot play in a tournament (use `arena play`)")
        if names.count(ref.name) > 1:
            raise TournamentError(
                f"bot {ref.name!r} is in the field twice (register distinct names with "
                "`arena bots add` to enter two versions)"
            )
