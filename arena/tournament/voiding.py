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

from sqlalchemy.orm import Session

from bot_arena.arena.tournament.create import active_runner
from bot_arena.db import tournaments as stored
from bot_arena.db.models import Tournament
from bot_arena.db.voiding import lock_matches, schedule_copy, void_match


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
    found = lock_matches(session, ids)  # PostgreSQL: the runner's completion waits for us
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
            tournament = stored.get_tournament(session, tid, for_update=True)
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
        void_match(session, match, reason, when)
        copy_id = schedule_copy(session, match) if replay else None
        out.append(Voided(mid, match.tournament_id, previous, copy_id))
    for tid, tournament in tournaments.items():
        if replay:
            stored.reopen(session, tournament)
        elif (
            tournament.status == "running"
            and runners[tid] is None
            and not stored.left_to_play(session, tid)
        ):
            stored.mark_done(session, tournament, when)
    return out
