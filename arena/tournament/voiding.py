"""Voiding matches: annulled games, as in chess tournament software.

A void match keeps its row, seats and moves (the record of what happened, with the reason and
the time it was annulled) but counts nowhere: every result query reads ``status = 'done'`` only,
tournament totals leave void matches out, and the runner never completes a void match (a result
on its way when the match is voided is simply not stored). With ``replay`` a fresh pending copy
of each voided tournament match is scheduled (same round, seed, opening, start position, seats
and bot versions) and its tournament is set running again, so ``arena tournament resume`` plays
exactly the copies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from bot_arena.arena.tournament.runner import active_runner
from bot_arena.db.models import Match, Seat, Tournament


class VoidError(ValueError):
    """Matches that cannot be voided (one-line message); nothing was written."""


@dataclass(frozen=True, slots=True)
class Voided:
    match: int
    tournament: int | None
    previous_status: str
    replay: int | None  # id of the pending copy scheduled to replace it

    def to_dict(self) -> dict[str, Any]:
        return {
            "match": self.match,
            "tournament": self.tournament,
            "previous_status": self.previous_status,
            "replay": self.replay,
        }


def void_matches(
    session: Session,
    match_ids: Sequence[int],
    reason: str,
    *,
    replay: bool = False,
    now: datetime | None = None,
) -> list[Voided]:
    """Void ``match_ids`` (done, pending or running) in the caller's transaction.

    Everything is checked before anything is written; VoidError names the first problem: an
    empty reason, a match that does not exist or is void already, ``replay`` of a match that is
    not part of a tournament, or a running match whose tournament's runner is alive (it may be
    about to store the result). A running match left by a dead runner may be voided.

    A tournament with nothing left to play after the void (no pending or running match, no
    live runner, no replay) is marked done.
    """
    reason = reason.strip()
    if not reason:
        raise VoidError("a reason is required (--reason TEXT)")
    ids = list(dict.fromkeys(match_ids))
    if not ids:
        raise VoidError("no match given")
    found = {
        m.id: m
        for m in session.scalars(
            select(Match)
            .where(Match.id.in_(ids))
            .options(selectinload(Match.seats))
            .with_for_update(of=Match)  # PostgreSQL: the runner's completion waits for us
        )
    }
    tournaments: dict[int, Tournament] = {}
    runners: dict[int, int | None] = {}
    for mid in ids:
        match = found.get(mid)
        if match is None:
            raise VoidError(f"no match {mid}")
        if match.status == "void":
            raise VoidError(f"match {mid} is void already ({match.void_reason})")
        tid = match.tournament_id
        if tid is None:
            if replay:
                raise VoidError(
                    f"match {mid} is not part of a tournament (played with `arena play`): "
                    "there is nothing to resume, so --replay cannot apply to it"
                )
            continue
        if tid not in tournaments:
            tournament = session.get(Tournament, tid, with_for_update=True)
            assert tournament is not None  # a foreign key
            tournaments[tid] = tournament
            runners[tid] = active_runner(tournament)
        if match.status == "running" and runners[tid] is not None:
            raise VoidError(
                f"match {mid} is running in tournament {tid}, played by process {runners[tid]}, "
                "which may be about to store it: stop that process first"
            )
    when = now or datetime.now(UTC)
    out: list[Voided] = []
    for mid in ids:
        match = found[mid]
        previous = match.status
        match.status = "void"
        match.void_reason = reason
        match.voided = when
        copy_id = _schedule_copy(session, match) if replay else None
        out.append(Voided(mid, match.tournament_id, previous, copy_id))
    session.flush()
    for tid, tournament in tournaments.items():
        if replay:
            tournament.status = "running"
            tournament.finished = None
        elif tournament.status == "running" and runners[tid] is None and not _left(session, tid):
            tournament.status = "done"
            tournament.finished = when
    session.flush()
    return out


def _schedule_copy(session: Session, match: Match) -> int:
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


def _left(session: Session, tournament_id: int) -> int:
    """Matches of the tournament still to play (pending or running)."""
    return int(
        session.scalar(
            select(func.count())
            .select_from(Match)
            .where(Match.tournament_id == tournament_id, Match.status.in_(("pending", "running")))
        )
        or 0
    )
