"""``--pgn-out FILE`` for ``tournament run``, ``tournament resume``, ``sprt`` and ``ladder
run``: the file checked and opened before anything runs, and the runner's hook that appends
each stored group's games (``formats/pgn_out.py`` says how each game is written once)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bot_arena.arena.api.errors import ArenaError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from bot_arena.arena.formats.pgn_out import PgnOut
    from bot_arena.games.base import Game


def check_pgn_out(path: str | None, game: Game[Any, Any]) -> None:
    """``--pgn-out`` for ``game``'s matches: a game without PGN (more than two players) raises
    ArenaError (before anything is stored or started)."""
    from bot_arena.arena.formats.pgn_out import refusal

    why = None if path is None else refusal(game)
    if why is not None:
        raise ArenaError(why)


def open_pgn_out(path: str | None, game: Game[Any, Any]) -> PgnOut | None:
    """The file ``--pgn-out`` names, opened for ``game``'s matches (None: no option); a game
    without PGN or a file that cannot take games (not a regular file, not PGN) raises
    ArenaError."""
    if path is None:
        return None
    from bot_arena.arena.formats.pgn_out import PgnOut, PgnOutError

    check_pgn_out(path, game)
    try:
        return PgnOut(path)
    except PgnOutError as exc:
        raise ArenaError(str(exc)) from None


def pgn_hook(
    factory: sessionmaker[Session], pgn: PgnOut | None, tournament_id: int
) -> Callable[[list[int]], None] | None:
    """The runner's ``stored_hook`` that appends each stored group's games to ``pgn``, after
    the tournament's stored games the file lacks (a run killed between a commit and its
    append) are appended now."""
    if pgn is None:
        return None
    with factory() as session:
        pgn.catch_up(session, tournament_id)

    def stored(ids: list[int]) -> None:
        if ids:
            with factory() as session:
                pgn.append(session, ids)

    return stored
