"""The tournament's bulk writes in SQLAlchemy Core, for any database (see ``db.writer``).

Statements are built once at import: the runner executes them for every match, so no per-call
statement building, and no ORM bookkeeping. Also the conversion of a match record into column
values, which ``db.store.save_match`` shares.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Connection, Table, bindparam, insert, select

from bot_arena.arena.match.record import MatchRecord, MoveRecord
from bot_arena.db.models import Match, Move, Seat
from bot_arena.db.pair_totals import change as change_pair_totals
from bot_arena.db.sqlite_play import fault_reason

if TYPE_CHECKING:  # db.writer imports this module
    from bot_arena.db.writer import Completion, ScheduledMatch


def epoch_to_datetime(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def match_values(record: MatchRecord, sandbox: str | None) -> dict[str, Any]:
    """The result columns of a done match; ``sandbox``: the level its bots ran under (one of
    ``models.SANDBOX_LEVELS``, None when not known)."""
    return {
        "time_control": record.time_control,
        "start_position": record.start_position,
        "final_position": record.final_position,
        "termination": record.termination.value,
        "fault_reason": fault_reason(record),
        "started": epoch_to_datetime(record.started),
        "finished": epoch_to_datetime(record.finished),
        "duration_s": max(0.0, record.duration_s),
        "sandbox": sandbox,
        "adjudication": record.adjudication,
        "status": "done",
    }


_MATCHES = cast(Table, Match.__table__)
_SEATS = cast(Table, Seat.__table__)
_MOVES = cast(Table, Move.__table__)
_MATCH_RESULT_COLUMNS = (
    "time_control",
    "start_position",
    "final_position",
    "termination",
    "fault_reason",
    "started",
    "finished",
    "duration_s",
    "sandbox",
    "adjudication",
    "status",
)
_SCHEDULE = insert(_MATCHES).returning(_MATCHES.c.id, sort_by_parameter_order=True)
_SCHEDULE_SEATS = insert(_SEATS)
_MARK_RUNNING = (
    _MATCHES.update()
    .where(_MATCHES.c.id == bindparam("mid"), _MATCHES.c.status == "pending")
    .values(status="running")
)
# a match ``_CLAIM`` found still to play and locked (so no condition on its status here)
_COMPLETE = (
    _MATCHES.update()
    .where(_MATCHES.c.id == bindparam("mid"))
    .values({c: bindparam(f"p_{c}") for c in _MATCH_RESULT_COLUMNS})
)
_CLAIM = (
    select(_MATCHES.c.id, _MATCHES.c.players)
    .where(
        _MATCHES.c.id.in_(bindparam("ids", expanding=True)),
        _MATCHES.c.status.in_(("pending", "running")),  # never a done or void match
    )
    .with_for_update()
)
_DELETE_MOVES = _MOVES.delete().where(_MOVES.c.match_id == bindparam("mid"))
_SEAT_RESULT = (
    _SEATS.update()
    .where(_SEATS.c.match_id == bindparam("mid"), _SEATS.c.seat == bindparam("s"))
    .values(
        bot_version_id=bindparam("v"),
        utility=bindparam("u"),
        rank=bindparam("r"),
        score=bindparam("sc"),
        fault=bindparam("f"),
    )
)
_INSERT_MOVES = _MOVES.insert()


def move_row(match_id: int, ply: int, m: MoveRecord) -> dict[str, Any]:
    """The ``moves`` row of one move."""
    return {
        "match_id": match_id,
        "ply": ply,
        "seat": m.seat,
        "move": m.move,
        "time_ms": max(0.0, m.time_ms),
        "info": m.info,
        "forced": m.forced,
    }


def insert_moves(conn: Connection, match_id: int, moves: Sequence[MoveRecord]) -> None:
    """The moves of a match, one ``executemany``."""
    if moves:
        conn.execute(_INSERT_MOVES, [move_row(match_id, ply, m) for ply, m in enumerate(moves)])


class CoreWriter:
    """``db.writer.MatchWriter`` in SQLAlchemy Core: one ``executemany`` per table for a
    schedule and for a group of results (its matches locked first, so on PostgreSQL a match
    being voided is waited for and then left alone)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    def insert_schedule(
        self,
        tournament_id: int,
        game: str,
        params: dict[str, Any],
        time_control: dict[str, Any],
        players: int,
        matches: Sequence[ScheduledMatch],
    ) -> list[int]:
        if not matches:
            return []
        match_ids = list(
            self.connection.execute(
                _SCHEDULE,
                [
                    {
                        "tournament_id": tournament_id,
                        "round": rnd,
                        "game": game,
                        "params": params,
                        "time_control": time_control,
                        "players": players,
                        "seed": seed,
                        "opening": opening,
                        "start_position": start,
                        "status": "pending",
                    }
                    for rnd, seed, opening, start, _ in matches
                ],
            ).scalars()
        )
        self.connection.execute(
            _SCHEDULE_SEATS,
            [
                {"match_id": mid, "players": players, "seat": seat, "bot_version_id": version}
                for mid, match in zip(match_ids, matches, strict=True)
                for seat, version in enumerate(match[4])
            ],
        )
        return match_ids

    def mark_running(self, match_ids: Sequence[int]) -> None:
        if match_ids:
            self.connection.execute(_MARK_RUNNING, [{"mid": m} for m in match_ids])

    def complete_matches(self, items: Sequence[Completion], *, sandbox: str | None) -> list[bool]:
        """The whole group in five statements, not three per match: a round trip each on a
        server (PostgreSQL stored about 900 results a second one match after the other). The
        matches still to play are locked first (``FOR UPDATE``: a match being voided is waited
        for, then left alone, as its status is read again), then updated, their seats, the
        moves of the replayed ones deleted and every move inserted, each one ``executemany``."""
        if not items:
            return []
        conn = self.connection
        open_players = dict(
            (row[0], row[1]) for row in conn.execute(_CLAIM, {"ids": sorted({i[0] for i in items})})
        )
        stored: list[bool] = []
        for match_id, record, _, _ in items:
            ok = open_players.get(match_id) == len(record.seats)
            if ok:
                del open_players[match_id]  # a match is stored once per call
            stored.append(ok)
        chosen = [item for item, ok in zip(items, stored, strict=True) if ok]
        if not chosen:
            return stored
        conn.execute(
            _COMPLETE,
            [
                {
                    "mid": match_id,
                    **{f"p_{k}": v for k, v in match_values(record, sandbox).items()},
                }
                for match_id, record, _, _ in chosen
            ],
        )
        replaced = [{"mid": match_id} for match_id, _, _, replace in chosen if replace]
        if replaced:
            conn.execute(_DELETE_MOVES, replaced)
        conn.execute(
            _SEAT_RESULT,
            [
                {
                    "mid": match_id,
                    "s": i,
                    "v": vid,
                    "u": r.utility,
                    "r": r.rank,
                    "sc": r.score,
                    "f": r.fault.to_dict() if r.fault is not None else None,
                }
                for match_id, record, version_ids, _ in chosen
                for i, (r, vid) in enumerate(zip(record.seats, version_ids, strict=True))
            ],
        )
        moves = [
            move_row(match_id, ply, m)
            for match_id, record, _, _ in chosen
            for ply, m in enumerate(record.moves)
        ]
        if moves:
            conn.execute(_INSERT_MOVES, moves)
        change_pair_totals(conn.exec_driver_sql, [item[0] for item in chosen], 1)
        return stored
