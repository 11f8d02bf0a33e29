"""The reads of ``arena export``: done matches with their records, a chunk at a time.

An export can hold every match of a database, so nothing here holds more than one chunk: the
matches come by keyset (``id`` above the last one seen, in id order, ``LIMIT chunk``) with the
filters in the same SQL, then the chunk's seats (with their bots) and moves in one query each,
read as plain rows (no ORM objects, which cost most of the time a match took before). Memory
is one chunk's whatever the database's size.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from operator import itemgetter
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from bot_arena.arena.match.record import MatchRecord, RecordError
from bot_arena.db.models import Bot, BotVersion, Match, Move, Seat
from bot_arena.db.store import MoveValues, SeatValues, load_matches_chunked, record_from
from bot_arena.db.stored import StoredDataError, warn_skipped

#: Matches read at a time: large enough that the three queries a chunk costs are a small part
#: of its time, small enough that a chunk of long games stays a few megabytes.
EXPORT_CHUNK = 500


@dataclass(frozen=True, slots=True)
class ExportFilter:
    """Which done matches an export holds: of one tournament, of one game (its name),
    started at or after ``since`` and before ``until`` (aware datetimes; None: no bound)."""

    tournament: int | None = None
    since: datetime | None = None
    until: datetime | None = None
    game: str | None = None


@dataclass(frozen=True, slots=True)
class ExportedMatch:
    """A done match as an export writes it: its record and the columns beside it."""

    id: int
    tournament_id: int | None
    round: int
    fault_reason: str | None
    started: datetime | None
    opening: str
    record: MatchRecord


_MATCH_COLUMNS = (
    Match.id,
    Match.tournament_id,
    Match.round,
    Match.fault_reason,
    Match.opening,
    Match.game,
    Match.params,
    Match.start_position,
    Match.final_position,
    Match.termination,
    Match.started,
    Match.finished,
    Match.time_control,
    Match.adjudication,
)


def _selected(query: Select[Any], where: ExportFilter) -> Select[Any]:
    """``query`` (of matches, or joined to them) kept to the done matches ``where`` selects."""
    query = query.where(Match.status == "done")
    if where.tournament is not None:
        query = query.where(Match.tournament_id == where.tournament)
    if where.game is not None:
        query = query.where(Match.game == where.game)
    if where.since is not None:
        query = query.where(Match.started >= where.since)
    if where.until is not None:
        query = query.where(Match.started < where.until)
    return query


def _matches(where: ExportFilter, after: int, chunk: int) -> Select[Any]:
    query = _selected(select(*_MATCH_COLUMNS).where(Match.id > after), where)
    return query.order_by(Match.id).limit(chunk)


#: Games named at most in ``exported_games``' answer (a database holds a handful).
MAX_GAMES = 50


def exported_games(session: Session, where: ExportFilter, players: int | None = None) -> list[str]:
    """The games (their names, sorted) of the done matches ``where`` selects (of ``players``
    seats; None: any): at most ``MAX_GAMES`` of them."""
    query = _selected(select(Match.game).distinct(), where).order_by(Match.game)
    if players is not None:
        query = query.where(Match.players == players)
    return list(session.scalars(query.limit(MAX_GAMES)))


def stored_games(session: Session) -> list[str]:
    """The games (names, sorted) of every match stored, whatever its status (at most
    ``MAX_GAMES``)."""
    query = select(Match.game).distinct().order_by(Match.game).limit(MAX_GAMES)
    return list(session.scalars(query))


def exported_matches(
    session: Session, where: ExportFilter, chunk: int = EXPORT_CHUNK
) -> Iterator[ExportedMatch]:
    """The done matches ``where`` selects, in id order, read ``chunk`` at a time. A chunk with
    a malformed stored value is read again match by match through the ORM, which leaves out
    (and says, ``warn_skipped``) the bad ones, as every listing does."""
    after = 0
    while True:
        ids = list(session.scalars(_matches(where, after, chunk).with_only_columns(Match.id)))
        if not ids:
            return
        yield from exported_records(session, ids)
        after = ids[-1]


def exported_records(session: Session, ids: list[int]) -> list[ExportedMatch]:
    """The done matches of ``ids`` (a chunk, in id order) with their records; a malformed one
    left out and said (``warn_skipped``)."""
    query = select(*_MATCH_COLUMNS).where(Match.id.in_(ids)).order_by(Match.id)
    try:
        done = list(_chunk(session, session.connection().execute(query).all(), ids))
    except StoredDataError:
        session.rollback()
        done = [
            ExportedMatch(m.id, m.tournament_id, m.round, m.fault_reason, m.started, m.opening, r)
            for m, r in load_matches_chunked(session, ids, len(ids))
        ]
    session.expunge_all()
    return done


#: A match as ``stored_chunks`` reads it: the columns of ``_MATCH_COLUMNS``, in that order.
StoredMatchRow = Sequence[Any]
#: A seat as stored: match id, bot name, version (SHA-256), utility, rank, score, fault.
StoredSeatRow = Sequence[Any]
#: A move as stored: match id, seat, move, time_ms, info, forced.
StoredMoveRow = Sequence[Any]
_first = itemgetter(0)
_NONE: list[Any] = []  # a match without seats or moves (shared: never changed)


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A chunk of done matches as the driver gives them, decoded by nothing: JSON columns as
    their stored text (SQLite) or as the driver parsed them (PostgreSQL), timestamps as text
    (SQLite) or naive datetimes, ``forced`` as 0/1 or a bool. For writers that build their
    output straight from the stored values, checking each (``exported_records`` reads the
    same chunk as records for what they do not take)."""

    ids: list[int]
    matches: Sequence[StoredMatchRow]
    seats: dict[int, list[StoredSeatRow]]  # by match id, in seat order
    moves: dict[int, list[StoredMoveRow]]  # by match id, in ply order


def stored_chunks(
    session: Session, where: ExportFilter, chunk: int = EXPORT_CHUNK
) -> Iterator[StoredChunk]:
    """The done matches ``where`` selects, in id order, ``chunk`` at a time, as stored
    (``StoredChunk``): the reads of ``exported_matches`` (three queries a chunk) without the
    decoding and the objects, which took most of an export's time."""
    after = 0
    while True:
        conn = session.connection()  # anew: a caller's reread of a chunk may roll back
        # the driver's rows (``CursorResult.cursor``): no row objects, no types' decoding
        rows = conn.execute(_matches(where, after, chunk)).cursor.fetchall()
        if not rows:
            return
        ids = [row[0] for row in rows]
        # the chunk's seats and moves by the same filter over its id range, not ``IN (ids)``:
        # a list of 500 numbers cost more to render than the query took
        chunk_of = _selected(select(Match.id), where).where(Match.id > after, Match.id <= ids[-1])
        seat_rows = conn.execute(_seats(chunk_of)).cursor.fetchall()
        move_rows = conn.execute(_moves(chunk_of)).cursor.fetchall()
        seats = dict.fromkeys(ids, _NONE) | {k: list(g) for k, g in groupby(seat_rows, _first)}
        moves = dict.fromkeys(ids, _NONE) | {k: list(g) for k, g in groupby(move_rows, _first)}
        yield StoredChunk(ids, rows, seats, moves)
        after = ids[-1]


def _seats(matches: list[int] | Select[Any]) -> Select[Any]:
    """The seats of ``matches`` (their ids, or a query of them) in match and seat order: match
    id, bot name, SHA-256, utility, rank, score, fault."""
    return (
        select(
            Seat.match_id,
            Bot.name,
            BotVersion.sha256,
            Seat.utility,
            Seat.rank,
            Seat.score,
            Seat.fault,
        )
        .join(BotVersion, Seat.bot_version_id == BotVersion.id)
        .join(Bot, BotVersion.bot_id == Bot.id)
        .where(Seat.match_id.in_(matches))
        .order_by(Seat.match_id, Seat.seat)
    )


def _moves(matches: list[int] | Select[Any]) -> Select[Any]:
    """The moves of ``matches`` in match and ply order: match id, seat, move, time, info,
    forced."""
    return (
        select(Move.match_id, Move.seat, Move.move, Move.time_ms, Move.info, Move.forced)
        .where(Move.match_id.in_(matches))
        .order_by(Move.match_id, Move.ply)
    )


def _chunk(session: Session, rows: Sequence[Any], ids: list[int]) -> Iterator[ExportedMatch]:
    conn = session.connection()  # Core, not the ORM's loading: a third of the time a match took
    seats: dict[int, list[SeatValues]] = {i: [] for i in ids}
    seat_rows = conn.execute(_seats(ids)).all()  # one fetch: a row at a time costs a call each
    for match_id, *seat in seat_rows:
        seats[match_id].append(tuple(seat))
    moves: dict[int, list[MoveValues]] = {i: [] for i in ids}
    move_rows = conn.execute(_moves(ids)).all()
    for match_id, *move in move_rows:
        moves[match_id].append(tuple(move))
    for row in rows:
        try:
            record = record_from(row, seats[row.id], moves[row.id])
        except (RecordError, ValueError, TypeError) as err:  # a row no Bot Arena wrote
            warn_skipped(row.id, err)
            continue
        yield ExportedMatch(
            row.id, row.tournament_id, row.round, row.fault_reason, row.started, row.opening, record
        )
