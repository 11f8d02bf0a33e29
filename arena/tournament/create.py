"""Creating a tournament (its whole schedule stored as pending matches) and what a resume
checks: the stored tournament, whether a live process is playing it, and its field resolved
again from the stored specs. Playing it is ``runner.py``'s job.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session, sessionmaker

from bot_arena.arena.match.adjudication import Adjudication
from bot_arena.arena.match.botref import BotRef, BotSpecError
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.tournament import directors
from bot_arena.arena.tournament.book import book_openings, ordered_book, read_book
from bot_arena.arena.tournament.field import TournamentError as TournamentError
from bot_arena.arena.tournament.field import check_field
from bot_arena.arena.tournament.liveness import active_runner as active_runner
from bot_arena.arena.tournament.liveness import interrupted as interrupted
from bot_arena.arena.tournament.liveness import runner_elsewhere as runner_elsewhere
from bot_arena.arena.tournament.liveness import this_host as this_host
from bot_arena.arena.tournament.schedule import (
    Opening,
    Pairing,
    ScheduleError,
    derive_seed,
    openings,
    random_opening,
    schedule,
)
from bot_arena.db import tournaments as stored
from bot_arena.db.models import Tournament
from bot_arena.games.base import Game

if TYPE_CHECKING:
    from bot_arena.arena.transport.limits import ResourceLimits

# Playing a tournament's matches (resolving bots, storing a schedule, a dynamic format's book)
# loads its modules in the functions that do it: ``tournament show`` and ``arena report`` read
# a tournament through this module without them.


def create(
    factory: sessionmaker[Session],
    game: Game[Any, Any],
    specs: Sequence[str],
    refs: Sequence[BotRef],
    *,
    fmt: str,
    games_per_group: int | None,
    time_control: TimeControl,
    seed: int,
    opening_plies: int,
    name: str | None = None,
    time_controls: Sequence[TimeControl] = (),
    limits: ResourceLimits | None = None,
    book: Sequence[Opening] = (),
    book_order: str = "sequential",
    book_settings: Mapping[str, Any] | None = None,
    adjudication: Adjudication | None = None,
    format_settings: Mapping[str, Any] | None = None,
    also: Callable[[Session, int], None] | None = None,
) -> int:
    """Store a new tournament with every match pending (one transaction); returns its id.
    ``time_controls``: one per entrant when they differ (time odds; ``time_control`` is then
    the first one's); ``limits``: the bots' resource limits, which a resume keeps; ``book``:
    the openings of ``--openings`` (``book``), taken in ``book_order`` (``book_settings``: what
    the tournament stores of them) instead of ``opening_plies`` random plies.

    A Swiss, knockout or SPRT (``directors.DYNAMIC``) stores no match yet: the runner makes
    them as the results come, from ``format_settings`` (stored under the format's name).

    The schedule and the openings are computed before anything is written, so a schedule error
    (ScheduleError) leaves the database untouched. ``also``: what a format stores besides, in
    the same transaction (a ladder's row), given the new tournament's id.
    """
    from bot_arena.arena.tournament.dynamic import book_digest
    from bot_arena.db.store import insert_schedule, versions_for

    check_field(refs)
    dynamic = fmt in directors.DYNAMIC
    pairings: list[Pairing] = []
    opens: list[Opening] = []
    if dynamic:
        directors.check(fmt, len(refs), game.num_players)
        if book:
            ordered_book(book, book_order, seed)  # the order is checked before anything is written
        elif opening_plies:  # the first pair's opening: can openings this long be drawn?
            random_opening(game, derive_seed(seed, "opening", 0), opening_plies)
    else:
        pairings = schedule(fmt, len(refs), game.num_players, games_per_group, seed)
        if book:
            opens = book_openings(pairings, book, book_order, seed)
        else:
            opens = openings(game, pairings, seed, opening_plies)
    settings: dict[str, Any] = {
        "bots": list(specs),
        "games": games_per_group if games_per_group is not None else game.num_players,
        "opening_plies": opening_plies,
        "matches": len(pairings),
    }
    if dynamic:
        del settings["matches"]
        settings[fmt] = dict(format_settings or {})
    if len(set(time_controls)) > 1:
        settings["time_controls"] = [tc.to_dict() for tc in time_controls]
    if limits is not None:
        settings["limits"] = limits.to_dict()
    if book_settings is not None:
        settings["openings"] = dict(book_settings)
        if dynamic:  # read again by each run: a resume checks it still holds the same openings
            settings["openings"]["digest"] = book_digest(book)
    if adjudication is not None and adjudication.active:
        settings["adjudication"] = adjudication.to_dict()
    with factory.begin() as session:
        versions = versions_for(session, refs)
        tournament_id = stored.create_tournament(
            session,
            name=name,
            game=game.name,
            params=dict(game.params),
            time_control=time_control.to_dict(),
            fmt=fmt,
            settings=settings,
            seed=seed,
            entries=[(spec, v.id) for spec, v in zip(specs, versions, strict=True)],
        )
        insert_schedule(
            session,
            tournament_id,
            game.name,
            dict(game.params),
            time_control.to_dict(),
            game.num_players,
            [
                (p.round, p.seed, o.text, o.position, [versions[bot].id for bot in p.seats])
                for p, o in zip(pairings, opens, strict=True)
            ],
        )
        if also is not None:
            also(session, tournament_id)
        return tournament_id


def tournament_book(game: Game[Any, Any], tournament: Tournament) -> list[Opening]:
    """The opening book of a Swiss, knockout or SPRT, read again from its file, in the order
    its game pairs take it; TournamentError if the file no longer holds the same openings.
    Empty for a tournament without a book (and for the formats stored whole)."""
    from bot_arena.arena.tournament.dynamic import book_digest

    book = tournament.settings.get("openings")
    if tournament.format not in directors.DYNAMIC or not isinstance(book, dict):
        return []
    path = str(book.get("file"))
    try:
        entries = read_book(game, path, book.get("plies"))
    except ScheduleError as exc:
        raise TournamentError(f"tournament {tournament.id}: {exc}") from None
    if book_digest(entries) != book.get("digest"):
        raise TournamentError(
            f"tournament {tournament.id}: the opening book {path} changed since it started; "
            "restore it to play on"
        )
    return ordered_book(entries, str(book.get("order", "sequential")), tournament.seed)


def load_tournament(session: Session, tournament_id: int) -> Tournament:
    """The tournament with its field; TournamentError if there is none."""
    found = stored.load_tournament(session, tournament_id)
    if found is None:
        raise TournamentError(f"no tournament {tournament_id}")
    return found


def played_by(tournament_id: int, pid: int) -> str:
    """The refusal of a run while live process ``pid`` of this machine plays the tournament."""
    return (
        f"tournament {tournament_id} is being played by process {pid}; "
        "stop it first (--force if that process is not playing it)"
    )


def claim_runner(session: Session, tournament_id: int) -> int | None:
    """Record this process as the one playing the tournament, unless another live one is:
    the pid of that one (nothing written), else None (claimed). Atomic, in the caller's write
    transaction: the tournament's row is locked first (``FOR UPDATE`` on PostgreSQL; SQLite's
    write transactions begin ``IMMEDIATE``, holding the database's lock), so of two processes
    claiming at the same instant the second reads the first's entry once it has committed."""
    stored.get_tournament(session, tournament_id, for_update=True)
    tournament = load_tournament(session, tournament_id)
    running = active_runner(tournament)
    if running is not None:
        return running
    stored.record_runner(session, tournament, this_host(), os.getpid())
    return None


def resolve_field(
    session: Session,
    tournament: Tournament,
    lookup: Callable[[str], BotRef | None],
    left_out: list[tuple[int, str]] | None = None,
) -> tuple[list[BotRef], list[str]]:
    """The field resolved again from the stored specs, and a line for each bot whose version
    (SHA-256) differs from the one the tournament started with. ``left_out``: a registered
    bot whose stored version can no longer be loaded is noted there (its field position and
    why) and stands in the field as it was stored, never to be started, rather than stopping
    the resume."""
    from bot_arena.arena.match.botref import UnloadableBot
    from bot_arena.arena.match.botspec import distinct_names, resolve

    refs: list[BotRef] = []
    changed: list[str] = []
    for entry in tournament.entries:
        stored_version = entry.version
        try:
            ref = resolve(entry.spec, lookup)
        except UnloadableBot as exc:
            if left_out is None:
                raise TournamentError(
                    f"bot {entry.spec!r} of tournament {tournament.id}: {exc}"
                ) from None
            left_out.append((len(refs), str(exc)))
            v = stored_version
            ref = BotRef(entry.spec, v.kind, v.target, v.source, v.sha256)
        except BotSpecError as exc:
            raise TournamentError(
                f"bot {entry.spec!r} of tournament {tournament.id}: {exc}"
            ) from None
        if ref.sha256 != stored_version.sha256:
            changed.append(
                f"{ref.name} changed since tournament {tournament.id} started "
                f"({stored_version.sha256[:12]} -> {ref.sha256[:12]})"
            )
        refs.append(ref)
    return distinct_names([e.spec for e in tournament.entries], refs), changed
