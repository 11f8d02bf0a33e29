"""What a report shows of each played match: its seats, result and every move, as plain rows.

Three queries in all (matches, seats, moves), read in match order, so a report of ten thousand
games does not build ten thousand ORM objects with their relationships. A report of a big
history reads only the games it embeds (``ids``, chosen from ``match_ids`` and ``faulted_ids``,
which read ids alone), in chunks, so its memory follows the games it shows, not the table.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from sqlalchemy import Select, func, select
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


#: Ids per ``IN (...)`` list: far below every backend's limit on bound parameters.
CHUNK = 500


def count_done(session: Session, *, tournament_id: int | None, game: str | None) -> int:
    """How many done matches a tournament and/or game has."""
    return int(session.scalar(done_in(select(func.count(Match.id)), tournament_id, game)) or 0)


def match_ids(session: Session, *, tournament_id: int | None, game: str | None) -> Iterator[int]:
    """The done matches' ids in play order, streamed (ids only, a batch at a time, as plain
    rows: through the ORM a million ids took seconds)."""
    query = done_in(select(Match.id), tournament_id, game).order_by(Match.finished, Match.id)
    connection = session.connection().execution_options(yield_per=10_000)
    yield from connection.execute(query).scalars()


def faulted_ids(
    session: Session, *, tournament_id: int | None, game: str | None, limit: int
) -> tuple[int, list[int]]:
    """How many done matches have a seat with a fault, and the ids of the ``limit`` most
    recent of them."""
    faulted = done_in(
        select(Match.id).where(
            select(Seat.match_id).where(Seat.match_id == Match.id, Seat.fault.is_not(None)).exists()
        ),
        tournament_id,
        game,
    )
    count = int(session.scalar(select(func.count()).select_from(faulted.subquery())) or 0)
    recent = faulted.order_by(Match.finished.desc(), Match.id.desc()).limit(limit)
    return count, list(session.scalars(recent)) if limit > 0 else []


def played_matches(
    session: Session,
    *,
    tournament_id: int | None = None,
    game: str | None = None,
    ids: Sequence[int] | None = None,
) -> list[PlayedMatch]:
    """The done matches of a tournament and/or game with their seats and moves, in play order
    (finish time, then id: the order the ratings read them); with ``ids``, only those, in the
    order given."""
    if ids is None:
        return _played(session, tournament_id, game, None)
    out: dict[int, PlayedMatch] = {}
    for start in range(0, len(ids), CHUNK):
        chunk = sorted(ids[start : start + CHUNK])
        out.update((m.id, m) for m in _played(session, tournament_id, game, chunk))
    return [out[i] for i in ids if i in out]


def _played(
    session: Session, tournament_id: int | None, game: str | None, ids: list[int] | None
) -> list[PlayedMatch]:
    def done(query: Select[Any]) -> Select[Any]:
        query = done_in(query, tournament_id, game)
        return query if ids is None else query.where(Match.id.in_(ids))

    rows = list(
        session.execute(
            done(
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
                )
            ).order_by(Match.finished, Match.id)
        )
    )
    if not rows:
        return []
    seats = list(
        session.execute(
            done(
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
                .join(Bot, Bot.id == BotVersion.bot_id)
            ).order_by(Seat.match_id, Seat.seat)
        )
    )
    moves = list(
        session.execute(
            done(
                select(
                    Move.match_id,
                    Move.seat,
                    Move.move,
                    Move.time_ms,
                    lenient(Move.info).label("info"),
                    Move.forced,
                ).join(Match, Match.id == Move.match_id)
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
