"""The tournament's bulk writes on SQLite, through the DBAPI cursor (see ``db.writer``).

Completing a match is the one write that happens thousands of times per tournament; through
SQLAlchemy's execution layer it costs several times what SQLite itself needs (about 0.3 ms), which
would make the database a large share of a fast game. ``SQLiteWriter`` issues the statements of
``db.core_writer.CoreWriter`` with the values converted exactly as the column types would (JSON
text, ``YYYY-MM-DD HH:MM:SS.ffffff`` UTC timestamps, NULL for absent JSON); the parity tests
check that both write identical rows. It runs inside the caller's transaction on the caller's
connection.

The runner stores the results that are ready together (``complete_matches``: one transaction,
one ``executemany`` per table across the matches), so a commit and each statement's overhead are
paid once per group rather than once per game; each match is still all-or-nothing, since the
whole group is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from bot_arena.arena.transport.strict_json import dumps
from bot_arena.db.pair_totals import change as change_pair_totals
from bot_arena.db.sqlite_play import ended_columns

if TYPE_CHECKING:  # db.writer imports this module
    from bot_arena.db.writer import Completion, ScheduledMatch

_SCHEDULE = (
    "INSERT INTO matches (tournament_id, round, game, params, time_control, players, seed,"
    " opening, start_position, status) VALUES "
)
_LAST_ID = "SELECT COALESCE(MAX(id), 0) FROM matches WHERE tournament_id = ?"
_SCHEDULED_IDS = "SELECT id FROM matches WHERE tournament_id = ? AND id > ? ORDER BY id"
_SCHEDULE_SEATS = "INSERT INTO seats (match_id, players, seat, bot_version_id) VALUES "
_MARK_RUNNING = "UPDATE matches SET status = 'running' WHERE id = ? AND status = 'pending'"
_COMPLETE = (
    "UPDATE matches SET time_control = ?, start_position = ?, final_position = ?,"
    " termination = ?, fault_reason = ?, started = ?, finished = ?, duration_s = ?,"
    " sandbox = ?, adjudication = ?, status = 'done'"
    " WHERE id = ? AND status IN ('pending', 'running') AND players = ?"
)
# the same condition as _COMPLETE's, so every match chosen by this read is updated by it
_OPEN = "SELECT id, players FROM matches WHERE status IN ('pending', 'running') AND id IN ({})"
_MAX_VARS = 500  # ids per read (SQLite's older builds allow 999 host parameters)
_DELETE_MOVES = "DELETE FROM moves WHERE match_id = ?"
_SEAT = (
    "UPDATE seats SET bot_version_id = ?, utility = ?, rank = ?, score = ?, fault = ?"
    " WHERE match_id = ? AND seat = ?"
)
_MOVES = "INSERT INTO moves (match_id, ply, seat, move, time_ms, info, forced) VALUES "


def _insert_rows(cursor: Any, insert: str, rows: Sequence[Sequence[Any]]) -> None:
    """``insert`` ("INSERT INTO t (a, b) VALUES ") for every row of ``rows``, as many rows a
    statement as _MAX_VARS host parameters allow: a statement a row (executemany) costs a
    step each, and on the runner's writer thread each step let the loop take the GIL back,
    which made a group's transaction last several times its CPU time."""
    if not rows:
        return
    width = len(rows[0])
    per = max(1, _MAX_VARS // width)
    row = "(" + ", ".join("?" * width) + ")"
    full = len(rows) - len(rows) % per
    if full:
        cursor.executemany(
            insert + ", ".join([row] * per),
            [[v for r in rows[at : at + per] for v in r] for at in range(0, full, per)],
        )
    if full < len(rows):
        rest = rows[full:]
        cursor.execute(insert + ", ".join([row] * len(rest)), [v for r in rest for v in r])


def _tc_text(time_control: dict[str, Any], seen: dict[str, str]) -> str:
    """The JSON text of a time control, dumped once per distinct one (keyed by its repr)."""
    key = repr(time_control)
    text = seen.get(key)
    if text is None:
        text = seen[key] = dumps(time_control)
    return text


def _json(value: dict[str, Any] | None) -> str | None:
    """The text a JSON column stores: ``strict_json.dumps``, the engine's serializer too (no
    NaN or infinity is ever stored)."""
    return None if value is None else dumps(value)


class SQLiteWriter:
    """``db.writer.MatchWriter`` on SQLite's DBAPI connection under ``connection``."""

    def __init__(self, connection: Connection) -> None:
        if connection.dialect.name != "sqlite":
            raise ValueError(f"SQLiteWriter on a {connection.dialect.name} connection")
        self.connection = connection

    def _cursor(self) -> Any:
        # looked up per write: SQLAlchemy replaces the DBAPI connection after an invalidation
        raw: Any = self.connection.connection.dbapi_connection
        return raw.cursor()

    def insert_schedule(
        self,
        tournament_id: int,
        game: str,
        params: dict[str, Any],
        time_control: dict[str, Any],
        players: int,
        matches: Sequence[ScheduledMatch],
    ) -> list[int]:
        """The JSON columns are dumped once for all rows. The write lock is the caller's
        (BEGIN IMMEDIATE), so the tournament's matches with ids above its last one before the
        insert are these rows, in insertion order."""
        if not matches:
            return []
        cursor = self._cursor()
        try:
            tid = tournament_id
            cursor.execute(_LAST_ID, (tid,))
            last = cursor.fetchone()[0]
            params_text, tc_text = dumps(params), dumps(time_control)
            _insert_rows(  # in order: ids ascend with the rows
                cursor,
                _SCHEDULE,
                [
                    (tid, rnd, game, params_text, tc_text, players, seed, opening, start, "pending")
                    for rnd, seed, opening, start, _ in matches
                ],
            )
            cursor.execute(_SCHEDULED_IDS, (tournament_id, last))
            ids = [row[0] for row in cursor.fetchall()]
            if len(ids) != len(matches):
                raise RuntimeError(f"tournament {tournament_id}: matches added beside this insert")
            _insert_rows(
                cursor,
                _SCHEDULE_SEATS,
                [
                    (match_id, players, seat, version)
                    for match_id, match in zip(ids, matches, strict=True)
                    for seat, version in enumerate(match[4])
                ],
            )
            return ids
        finally:
            cursor.close()

    def mark_running(self, match_ids: Sequence[int]) -> None:
        if not match_ids:
            return
        cursor = self._cursor()
        try:
            cursor.executemany(_MARK_RUNNING, [(m,) for m in match_ids])
        finally:
            cursor.close()

    def complete_matches(self, items: Sequence[Completion], *, sandbox: str | None) -> list[bool]:
        """One read finds the matches still open, then one ``executemany`` per table for all
        of them. A match voided while its result was on the way is not stored (and never turned
        back into a done one)."""
        if not items:
            return []
        cursor = self._cursor()
        try:
            ids = [item[0] for item in items]
            open_players: dict[int, int] = {}
            for start in range(0, len(ids), _MAX_VARS):
                chunk = ids[start : start + _MAX_VARS]
                cursor.execute(_OPEN.format(",".join("?" * len(chunk))), chunk)
                open_players.update(cursor.fetchall())
            stored: list[bool] = []
            chosen: list[Completion] = []
            for item in items:
                ok = open_players.pop(item[0], None) == len(item[1].seats)  # pop: once per call
                stored.append(ok)
                if ok:
                    chosen.append(item)
            if not chosen:
                return stored
            tc_texts: dict[str, str] = {}  # a tournament's matches share one time control
            cursor.executemany(
                _COMPLETE,
                [
                    (
                        _tc_text(record.time_control, tc_texts),
                        *ended_columns(record, sandbox),
                        match_id,
                        len(record.seats),
                    )
                    for match_id, record, _, _ in chosen
                ],
            )
            if cursor.rowcount != len(chosen):  # the write lock is ours (BEGIN IMMEDIATE)
                raise RuntimeError("matches changed under the writer's lock")
            partial = [(item[0],) for item in chosen if item[3]]
            if partial:
                cursor.executemany(_DELETE_MOVES, partial)
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
                    for match_id, record, versions, _ in chosen
                    for i, (r, vid) in enumerate(zip(record.seats, versions, strict=True))
                ],
            )
            moves = [
                (
                    match_id,
                    ply,
                    m.seat,
                    m.move,
                    m.time_ms if m.time_ms > 0.0 else 0.0,
                    None if m.info is None else dumps(m.info),
                    m.forced,
                )
                for match_id, record, _, _ in chosen
                for ply, m in enumerate(record.moves)
            ]
            _insert_rows(cursor, _MOVES, moves)
            change_pair_totals(cursor.execute, [item[0] for item in chosen], 1)
            return stored
        finally:
            cursor.close()
