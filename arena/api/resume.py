"""The checks of resuming a stored tournament (``arena tournament resume``), made before a
match is played: each raises ArenaError with the line the CLI prints."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot_arena.arena.api.errors import ArenaError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from bot_arena.arena.match.botref import BotRef
    from bot_arena.arena.tournament.schedule import Opening
    from bot_arena.arena.transport.limits import ResourceLimits
    from bot_arena.games.base import Game

MADE = ("swiss", "knockout", "sprt")  # formats whose matches a director makes as they go
LEFT_OUT = "left out of the resumed tournament, none of its remaining games played"


@dataclass(frozen=True)
class Resumable:
    """A tournament that may be resumed: its field (``refs``, by field position), a line for
    each bot whose version changed (played on with ``force``), the field positions of bots
    that can no longer be loaded and a line for each (``left_out``: their matches stay
    pending), and how many matches are still to play."""

    refs: list[BotRef]
    changed: list[str]
    skip: list[int]
    left_out: list[str]
    to_play: int
    game: Game[Any, Any]  # what it plays (``--pgn-out`` checks it)
    # the starts of the matches left to play and of those a director may add (its book):
    # what a forced resume probes xboard engines against (``checks.check_setboard``)
    starts: list[Opening]
    limits: ResourceLimits  # the bots' resource limits the tournament was created with


def check_jobs(jobs: int | None) -> None:
    """``--jobs``: at least one when given."""
    if jobs is not None and jobs < 1:
        raise ArenaError(f"--jobs must be >= 1, not {jobs}")


def check_resume(
    session: Session,
    tournament_id: int,
    lookup: Callable[[str], BotRef | None],
    *,
    force: bool = False,
) -> Resumable:
    """Refuse a tournament that is not there, already finished, being played by another live
    process of this machine or by a runner on another machine whose heartbeat is fresh (unless
    ``force``), or whose bots changed since it started (unless ``force``). A
    registered bot whose stored version can no longer be loaded is left out (its remaining
    matches stay pending), as a new tournament leaves it out; in a format made as it goes
    (Swiss, knockout, SPRT), whose next matches depend on every result, it stops the resume."""
    from bot_arena import games
    from bot_arena.arena.tournament.create import (
        TournamentError,
        active_runner,
        load_tournament,
        played_by,
        resolve_field,
        runner_elsewhere,
        tournament_book,
    )
    from bot_arena.arena.tournament.schedule import Opening
    from bot_arena.arena.transport.limits import ResourceLimits
    from bot_arena.db import queries

    try:
        tournament = load_tournament(session, tournament_id)
        if tournament.format == "ladder":
            raise ArenaError(
                f"tournament {tournament_id} is a ladder: play it on with `arena ladder run`"
            )
        if tournament.status == "done":
            raise ArenaError(f"tournament {tournament_id} is already finished")
        running = active_runner(tournament)
        if running is not None and not force:
            raise ArenaError(played_by(tournament_id, running))
        elsewhere = runner_elsewhere(tournament)
        if elsewhere is not None and not force:
            host, age = elsewhere
            raise ArenaError(
                f"tournament {tournament_id} is being played on host {host[:100]!r} (its "
                f"heartbeat is {age:.0f} s old); stop it there first (--force if that runner "
                "is gone)"
            )
        left_out: list[tuple[int, str]] | None = None if tournament.format in MADE else []
        refs, changed = resolve_field(session, tournament, lookup, left_out)
    except TournamentError as exc:
        raise ArenaError(str(exc)) from None
    if changed and not force:
        raise ArenaError(f"{changed[0]}; resume with --force to play on with the new version")
    counts = queries.status_counts(session, tournament_id)
    try:
        game = games.get(tournament.game, **tournament.params)
        book = tournament_book(game, tournament) if force else []
    except games.GameError as exc:
        raise ArenaError(str(exc)) from None
    except TournamentError as exc:
        raise ArenaError(str(exc)) from None
    starts = [
        Opening(tuple(moves.split()), position)
        for moves, position in queries.open_starts(session, tournament_id)
    ]
    stored_limits = tournament.settings.get("limits")
    limits = ResourceLimits.from_dict(stored_limits) if stored_limits else ResourceLimits()
    return Resumable(
        refs,
        changed,
        [position for position, _ in left_out or []],
        [f"{why}: {LEFT_OUT}" for _, why in left_out or []],
        counts["pending"] + counts["running"],
        game,
        [*starts, *book],
        limits,
    )
