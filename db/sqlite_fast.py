"""The tournament runner's per-match write on SQLite, through the DBAPI cursor.

Completing a match is the one write that happens thousands of times per tournament; through
SQLAlchemy's execution layer it costs several times what SQLite itself needs (about 0.3 ms), which
would make the database a large share of a fast game. This module issues the same four statements
as ``db.store.complete_match`` with the values converted exactly as the column types would (JSON
text, ``YYYY-MM-DD HH:MM:SS.ffffff`` UTC timestamps, NULL for absent JSON); a test checks that both
paths write identical rows. It runs inside the caller's transaction on the same connection.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from arena.record import MatchRecord

_COMPLETE = (
    "UPDATE matches SET time_control = ?, start_position = ?, final_position = ?,"
    " termination = ?, fault_reason = ?, started = ?, finished = ?, duration_s = ?,"
    " status = 'done' WHERE id = ? AND status <> 'done' AND players = ?"
)
_DELETE_MOVES = "DELETE FROM moves WHERE match_id = ?"
_SEAT = (
    "UPDATE seats SET bot_version_id = ?, utility = ?, rank = ?, score = ?, fault = ?"
    " WHERE match_id = ? AND seat = ?"
)
_MOVE = (
    "INSERT INTO moves (match_id, ply, seat, move, time_ms, info, forced)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def timestamp(seconds: float) -> str:
    """Epoch seconds as SQLAlchemy's SQLite DATETIME text of the naive UTC time."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def _json(value: dict[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value)


def complete_match(
    dbapi_conn: Any,
    match_id: int,
    record: MatchRecord,
    version_ids: Sequence[int],
    fault_reason: str | None,
    *,
    replace_partial: bool,
) -> bool:
    cursor = dbapi_conn.cursor()
    try:
        cursor.execute(
            _COMPLETE,
            (
                json.dumps(record.time_control),
                record.start_position,
                record.final_position,
                record.termination.value,
                fault_reason,
                timestamp(record.started),
                timestamp(record.finished),
                max(0.0, record.duration_s),
                match_id,
                len(record.seats),
            ),
        )
        if cursor.rowcount != 1:
            return False
        if replace_partial:
            cursor.execute(_DELETE_MOVES, (match_id,))
        cursor.executemany(
            _SEAT,
            [
                (
                    vid,
                    r.utility,
                    r.rank,
                    r.score,
                    _json(r.fault.to_dict() if r.fault is not None else None),
                    match_id,
                    i,
                )
                for i, (r, vid) in enumerate(zip(record.seats, version_ids, strict=True))
            ],
        )
        if record.moves:
            cursor.executemany(
                _MOVE,
                [
                    (match_id, ply, m.seat, m.move, max(0.0, m.time_ms), _json(m.info), m.forced)
                    for ply, m in enumerate(record.moves)
                ],
            )
        return True
    finally:
        cursor.close()
