"""The tournament formats whose matches are made as the results come (see ``base.py``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.orm import Session

from bot_arena.arena.tournament.directors.base import Director, Played
from bot_arena.arena.tournament.schedule import ScheduleError
from bot_arena.db import tournaments as stored
from bot_arena.db.models import Tournament

DYNAMIC = ("swiss", "knockout", "sprt", "ladder")


def check(fmt: str, field_size: int, players: int) -> None:
    """ScheduleError (one line) when ``fmt`` cannot be played by this field in this game."""
    if players != 2:
        what = "an SPRT" if fmt == "sprt" else f"a {fmt} tournament"
        raise ScheduleError(
            f"{what} is defined for two-player games, and this game has {players} players "
            "(use --format round-robin or gauntlet)"
        )
    if fmt == "ladder":  # its field comes and goes: it waits while fewer than two play
        return
    if fmt == "sprt" and field_size != 2:
        raise ScheduleError(f"an SPRT tests two bots (NEW and BASE), not {field_size}")
    if field_size < 2:
        raise ScheduleError(f"a {fmt} tournament needs at least 2 bots")


def director_for(
    fmt: str, names: Sequence[str], settings: Mapping[str, Any], seed: int
) -> Director | None:
    """The director of a tournament of format ``fmt``; None for a format stored whole."""
    if fmt == "swiss":
        from bot_arena.arena.tournament.directors.swiss import SwissDirector

        return SwissDirector(names, settings, seed)
    if fmt == "knockout":
        from bot_arena.arena.tournament.directors.knockout import KnockoutDirector

        return KnockoutDirector(names, settings, seed)
    if fmt == "sprt":
        from bot_arena.arena.tournament.directors.sprt import SprtDirector

        return SprtDirector(names, settings, seed)
    if fmt == "ladder":
        from bot_arena.arena.tournament.directors.ladder import LadderDirector

        return LadderDirector(names, settings, seed)
    return None


def played(db: Session | Connection, tournament: Tournament) -> list[Played]:
    """The tournament's stored matches (void ones left out) as its director sees them."""
    positions = {e.version.bot.name: e.position for e in tournament.entries}
    return [
        Played(m.match_id, m.round, tuple(positions[b] for b in m.bots), m.scores)
        for m in stored.tournament_matches(db, tournament.id)
    ]


def load_director(session: Session, tournament: Tournament) -> Director | None:
    """The director of a stored tournament, given its matches (None: a format stored whole)."""
    names = [e.version.bot.name for e in tournament.entries]
    director = director_for(tournament.format, names, tournament.settings, tournament.seed)
    if director is not None:
        director.load(played(session, tournament))
    return director
