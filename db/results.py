"""What the ratings read: the seats of done matches with their bot versions, as plain rows
(``arena.ratings`` turns them into its own game results)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot_arena.db.models import Bot, BotVersion, Match, Seat
from bot_arena.db.stored import lenient, malformed_matches


@dataclass(frozen=True, slots=True)
class RatedSeat:
    """A seat of a done match: who played it (bot name and version) and where they finished."""

    match_id: int
    rank: int
    fault: str | None  # the termination of the seat's fault, if it had one
    bot: str
    sha256: str
    sandbox: str | None  # the match's sandbox level (None: not recorded, i.e. unconfined)


def latest_game(session: Session) -> str | None:
    """The game of the most recently finished match (None on an empty database)."""
    return session.scalars(
        select(Match.game)
        .where(Match.status == "done")
        .order_by(Match.finished.desc(), Match.id.desc())
        .limit(1)
    ).first()


def game_played(session: Session, game: str) -> bool:
    """Whether any match of ``game`` is stored (whatever its status)."""
    return session.scalars(select(Match.id).where(Match.game == game).limit(1)).first() is not None


def rated_seats(
    session: Session, *, tournament_id: int | None = None, game: str | None = None
) -> list[RatedSeat]:
    """The ranked seats of the done matches (of a tournament, of a game, or all), in play
    order: by finish time, then match, then seat."""
    query = (
        select(Match.id, Seat.rank, lenient(Seat.fault), Bot.name, BotVersion.sha256, Match.sandbox)
        .join(Seat, Seat.match_id == Match.id)
        .join(BotVersion, BotVersion.id == Seat.bot_version_id)
        .join(Bot, Bot.id == BotVersion.bot_id)
        .where(Match.status == "done", Seat.rank.is_not(None))
        .order_by(Match.finished, Match.id, Seat.seat)
    )
    if tournament_id is not None:
        query = query.where(Match.tournament_id == tournament_id)
    if game is not None:
        query = query.where(Match.game == game)
    rows = list(session.execute(query))
    bad = malformed_matches((match_id, fault) for match_id, _, fault, *_ in rows)
    return [
        RatedSeat(
            match_id,
            int(rank),
            str(fault.get("termination")) if fault else None,
            name,
            sha,
            sandbox,
        )
        for match_id, rank, fault, name, sha, sandbox in rows
        if match_id not in bad
    ]
