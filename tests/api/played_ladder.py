"""A SQLite database holding one played ladder, made once a test module and copied for each
test (``sqlite_copy``): the ladder tests' common set-up."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bot_arena.arena.api.ladders import ladder_add, ladder_create, ladder_run

FIRST_LEGAL = Path(__file__).resolve().parents[1] / "arena" / "fixtures" / "first_legal.py"


def played_ladder(folder: Path, bots: Sequence[str], *, games: int, seed: int) -> Path:
    """``folder/arena.db`` with ladder ``club`` (tictactoe, ``bots``) and ``games`` played."""
    db = folder / "arena.db"
    ladder_create("club", "tictactoe", db=str(db), seed=seed)
    ladder_add("club", list(bots), db=str(db))
    ladder_run("club", jobs=1, until_games=games, db=str(db))
    return db
