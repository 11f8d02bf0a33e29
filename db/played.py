"""What a report shows of each played match: its seats, result and every move, as plain rows.

Three queries in all (matches, seats, moves), read in match order, so a report of ten thousand
games does not build ten thousand ORM objects with their relationships.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot_arena.db.models import Bot, BotVersion, Match, Move, Seat
from bot_arena.db.results import done_in
from bot_arena.db.stored import lenient, malformed_matches


@dataclass(frozen=True, slots=True)
class PlayedSeat:
    seat: int
    bot: str
    sha256: str
    rank: int
    score: float
    utility: float
    fault: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class PlayedMove:
    seat: int
    move: str
    time_ms: float
    info: dict[str, Any] | None
    forced: bool


@dataclass(slots=True)
class PlayedMatch:
    id: int
    round: int
    game: str
    params: dict[str, Any]
    seed: int
    opening: str
    start_position: str | None
    final_position: str | None
    termination: str
    fault_reason: str | None
    adjudication: dict[str, Any] | None
    sandbox: str | None
    finished: str | None  # ISO time
    duration_s: float | None
    seats: list[PlayedSeat] = field(default_factory=list)
    moves: list[PlayedMove] = field(default_factory=list)


def played_matches(
    session: Session, *, tournament_id: int | None = None, game: str | None = None
) -> list[PlayedMatch]:
    """The done matches of a tournament and/or game with their seats and moves, in play order
    (finish time, then id: the order the ratings read them)."""
    rows = list(
        session.execute(
            done_in(
                select(
                    Match.id,
                    Match.round,
                    Match.game,
                    lenient(Match.params).label("params"),
                    Match.seed,
                    Match.opening,
                    Match.start_position,
                    Match.final_position,
                    Match.termination,
                    Match.fault_reason,
                    lenient(Match.adjudication).label("adjudication"),
                    Match.sandbox,
                    Match.finished,
                    Match.duration_s,
                ),
                tournament_id,
                game,
            ).order_by(Match.finished, Match.id)
        )
    )
    if not rows:
        return []
    seats = list(
        session.execute(
            done_in(
                select(
                    Seat.match_id,
                    Seat.seat,
                    Bot.name,
                    BotVersion.sha256,
                    Seat.rank,
                    Seat.score,
                    Seat.utility,
                    lenient(Seat.fault).label("fault"),
                )
                .join(Match, Match.id == Seat.match_id)
                .join(BotVersion, BotVersion.id == Seat.bot_version_id)
                .join(Bot, Bot.id == BotVersion.bot_id),
                tournament_id,
                game,
            ).order_by(Seat.match_id, Seat.seat)
        )
    )
    moves = list(
        session.execute(
            done_in(
                select(
                    Move.match_id,
                    Move.seat,
                    Move.move,
                    Move.time_ms,
                    lenient(Move.info).label("info"),
                    Move.forced,
                ).join(Match, Match.id == Move.match_id),
                tournament_id,
                game,
            ).order_by(Move.match_id, Move.ply)
        )
    )
    bad = malformed_matches(
        chain(
            ((r.id, v) for r in rows for v in (r.params, r.adjudication)),
            ((s.match_id, s.fault) for s in seats),
            ((m.match_id, m.info) for m in moves),
        )
    )
    matches: dict[int, PlayedMatch] = {}
    for r in rows:
        if r.id in bad:
            continue
        matches[r.id] = PlayedMatch(
            r.id,
            r.round,
            r.game,
            dict(r.params or {}),
            int(r.seed),
            r.opening or "",
            r.start_position,
            r.final_position,
            r.termination,
            r.fault_reason,
            r.adjudication,
            r.sandbox,
            r.finished.isoformat(timespec="seconds") if r.finished else None,
            r.duration_s,
        )
    for s in seats:
        if s.match_id in bad:
            continue
        matches[s.match_id].seats.append(
            PlayedSeat(s.seat, s.name, s.sha256, s.rank, s.score, s.utility, s.fault)
        )
    for m in moves:
        if m.match_id in bad:
            continue
        matches[m.match_id].moves.append(
            PlayedMove(m.seat, m.move, m.time_ms, m.info, bool(m.forced))
        )
    return list(matches.values())
