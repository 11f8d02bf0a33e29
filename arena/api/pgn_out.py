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
    if path is None:
        return  # no file: the PGN writer is not even loaded
    from bot_arena.arena.formats.pgn_out import refusal

    why = refusal(game)
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
    factory: sessionmaker[Session],
    pgn: PgnOut | None,
    tournament_id: int,
    warn: Callable[[str], None] = lambda line: None,
) -> Callable[[list[int]], None] | None:
    """The runner's ``stored_hook`` that appends each stored group's games to ``pgn``, after
    the tournament's stored games the file lacks (a run killed between a commit and its
    append) are appended now. A write that fails (the disk full) is said once (``warn``) and
    ends the appends, not the run: its games are stored, and the next run appends them."""
    if pgn is None:
        return None
    failed: list[str] = []

    def append(ids: list[int] | None) -> None:
        if failed:
            return
        try:
            with factory() as session:
                if ids is None:
                    pgn.catch_up(session, tournament_id)
                else:
                    pgn.append(session, ids)
        except OSError as exc:
            failed.append(str(exc))
            warn(
                f"--pgn-out: cannot write ({exc.strerror or exc}): no more games are appended; "
                "they are stored, and the next run of the tournament appends them"
            )

    append(None)

    def stored(ids: list[int]) -> None:
        if ids:
            append(ids)

    return stored
