"""The rows of voiding (``arena matches void``): the matches locked while the arena checks them,
a match annulled with its reason, and a fresh pending copy to replay it.

The rules (what may be voided, when a tournament is done) are ``arena.tournament.voiding``'s;
every function here works in the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from bot_arena.db.models import Match, Seat
from bot_arena.db.pair_totals import change as change_pair_totals


def lock_matches(session: Session, match_ids: Sequence[int]) -> dict[int, Match]:
    """The matches of ``match_ids`` that exist, by id, with their seats; on PostgreSQL locked
    until the transaction ends (so the runner's completion of one of them waits, then finds it
    void and leaves it)."""
    return {
        m.id: m
        for m in session.scalars(
            select(Match)
            .where(Match.id.in_(match_ids))
            .options(selectinload(Match.seats))
            .with_for_update(of=Match)
        )
    }


def void_match(session: Session, match: Match, reason: str, when: datetime) -> None:
    """Annul ``match``: status 'void' with the reason and the time; its seats and moves stay.
    A done match's count leaves the pair totals first, while it is still done."""
    if match.status == "done":
        session.flush()
        change_pair_totals(session.connection().exec_driver_sql, [match.id], -1)
    match.status = "void"
    match.void_reason = reason
    match.voided = when
    session.flush()


def schedule_copy(session: Session, match: Match) -> int:
    """A fresh pending copy of ``match`` (same tournament, round, seed, opening, start position,
    seats and bot versions); its id."""
    copy = Match(
        tournament_id=match.tournament_id,
        round=match.round,
        game=match.game,
        params=dict(match.params),
        time_control=dict(match.time_control),
        players=match.players,
        seed=match.seed,
        opening=match.opening,
        start_position=match.start_position,
        status="pending",
    )
    session.add(copy)
    session.flush()
    session.add_all(
        Seat(
            match_id=copy.id,
            players=copy.players,
            seat=s.seat,
            bot_version_id=s.bot_version_id,
        )
        for s in match.seats
    )
    return copy.id
