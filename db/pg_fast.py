"""The runner's group commit on PostgreSQL through psycopg 3's cursor (see ``db.writer``).

``CoreWriter`` stores a group of results in five ``executemany`` statements: the server runs
one UPDATE per match and per seat and one INSERT per move, each parsed, planned and answered on
its own. On a busy machine each of those waits for the server's process to be scheduled, so a
group's transaction lasted many times its CPU time and PostgreSQL stored well under SQLite's
games a second. ``PostgresWriter`` writes the same rows (tests/db/test_writer_parity.py) with
one statement per table whatever the group's size: the matches and their seats updated from
arrays (``unnest``), the moves sent by ``COPY``; the claims marked by one UPDATE over an array
of ids; a schedule's matches and seats are sent by COPY too, their ids taken from the
matches' sequence first.

The values are those of the Core statements: JSON as the text ``strict_json.dumps`` makes (the
engine's serializer), cast to ``json`` by the server, which keeps the text; timestamps as
timezone-aware values cast to ``timestamp`` as the Core statements' casts do.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from bot_arena.arena.transport.strict_json import dumps
from bot_arena.db.core_writer import CoreWriter, match_values
from bot_arena.db.pair_totals import change as change_pair_totals

if TYPE_CHECKING:  # db.writer imports this module
    from bot_arena.db.writer import Completion, ScheduledMatch

_MARK_RUNNING = "UPDATE matches SET status = 'running' WHERE id = ANY(%s) AND status = 'pending'"
# the matches still to play, locked in id order (a match being voided is waited for, then read
# again), as ``CoreWriter``'s claim
_CLAIM = (
    "SELECT id, players FROM matches WHERE id = ANY(%s) AND status IN ('pending', 'running')"
    " ORDER BY id FOR UPDATE"
)
_COMPLETE = (
    "UPDATE matches AS m SET time_control = v.tc::json, start_position = v.sp,"
    " final_position = v.fp, termination = v.te, fault_reason = v.fr,"
    " started = v.st::timestamp, finished = v.fi::timestamp, duration_s = v.du,"
    " sandbox = %s, adjudication = v.ad::json, status = 'done'"
    " FROM unnest(%s::int[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],"
    " %s::timestamptz[], %s::timestamptz[], %s::float8[], %s::text[])"
    " AS v(mid, tc, sp, fp, te, fr, st, fi, du, ad)"
    " WHERE m.id = v.mid"
)
_DELETE_MOVES = "DELETE FROM moves WHERE match_id = ANY(%s)"
_SEATS = (
    "UPDATE seats AS s SET bot_version_id = v.vid, utility = v.u, rank = v.r, score = v.sc,"
    " fault = v.f::json"
    " FROM unnest(%s::int[], %s::int[], %s::int[], %s::float8[], %s::int[], %s::float8[],"
    " %s::text[]) AS v(mid, seat, vid, u, r, sc, f)"
    " WHERE s.match_id = v.mid AND s.seat = v.seat"
)
_NEXT_IDS = "SELECT nextval(pg_get_serial_sequence('matches', 'id')) FROM generate_series(1, %s)"
_COPY_MATCHES = (
    "COPY matches (id, tournament_id, round, game, params, time_control, players, seed, opening,"
    " start_position, status) FROM STDIN"
)
_COPY_SEATS = "COPY seats (match_id, players, seat, bot_version_id) FROM STDIN"
_COPY_MOVES = "COPY moves (match_id, ply, seat, move, time_ms, info, forced) FROM STDIN"


def _json(value: Any) -> str | None:
    return None if value is None else dumps(value)


def _float(value: float | None) -> float | None:
    """A float column's value (an int a record may carry becomes the float Core would store)."""
    return None if value is None else float(value)


class PostgresWriter(CoreWriter):
    """``db.writer.MatchWriter`` on psycopg 3's connection under ``connection``."""

    def __init__(self, connection: Connection) -> None:
        if connection.dialect.name != "postgresql" or connection.dialect.driver != "psycopg":
            raise ValueError(
                f"PostgresWriter on a {connection.dialect.name}+{connection.dialect.driver}"
                " connection"
            )
        super().__init__(connection)

    @contextmanager
    def _copy(self, statement: str) -> Iterator[Any]:
        """psycopg's COPY of ``statement`` on the connection's DBAPI connection (looked up per
        write: SQLAlchemy replaces it after an invalidation); its errors raised as SQLAlchemy's,
        as every other statement's (the CLI shows those as one line)."""
        import psycopg

        raw: Any = self.connection.connection.dbapi_connection
        try:
            with raw.cursor() as cursor, cursor.copy(statement) as copy:
                yield copy
        except psycopg.Error as err:
            raise DBAPIError.instance(statement, None, err, psycopg.Error) from None

    def insert_schedule(
        self,
        tournament_id: int,
        game: str,
        params: dict[str, Any],
        time_control: dict[str, Any],
        players: int,
        matches: Sequence[ScheduledMatch],
    ) -> list[int]:
        """The ids taken from the matches' sequence first (in order, as the rows' defaults
        would take them), then the matches and their seats sent by COPY."""
        if not matches:
            return []
        conn = self.connection
        ids = sorted(row[0] for row in conn.exec_driver_sql(_NEXT_IDS, (len(matches),)))
        params_text, tc_text = dumps(params), dumps(time_control)
        with self._copy(_COPY_MATCHES) as copy:
            for match_id, (rnd, seed, opening, start, _) in zip(ids, matches, strict=True):
                copy.write_row(
                    (match_id, tournament_id, rnd, game, params_text, tc_text, players, seed,
                     opening, start, "pending")
                )  # fmt: skip
        with self._copy(_COPY_SEATS) as copy:
            for match_id, match in zip(ids, matches, strict=True):
                for seat, version in enumerate(match[4]):
                    copy.write_row((match_id, players, seat, version))
        return ids

    def mark_running(self, match_ids: Sequence[int]) -> None:
        if match_ids:
            self.connection.exec_driver_sql(_MARK_RUNNING, (list(match_ids),))

    def complete_matches(self, items: Sequence[Completion], *, sandbox: str | None) -> list[bool]:
        """The matches still open locked and read, then one statement per table for all of
        them (see the module); a match voided while its result was on the way is not stored."""
        if not items:
            return []
        conn = self.connection
        claimed = conn.exec_driver_sql(_CLAIM, (sorted({item[0] for item in items}),))
        open_players: dict[int, int] = {row[0]: row[1] for row in claimed}
        stored: list[bool] = []
        chosen: list[Completion] = []
        for item in items:
            ok = open_players.pop(item[0], None) == len(item[1].seats)  # pop: once per call
            stored.append(ok)
            if ok:
                chosen.append(item)
        if not chosen:
            return stored
        rows = [(match_id, match_values(record, sandbox)) for match_id, record, _, _ in chosen]
        columns: list[list[Any]] = [
            [match_id for match_id, _ in rows],
            [_json(v["time_control"]) for _, v in rows],
            [v["start_position"] for _, v in rows],
            [v["final_position"] for _, v in rows],
            [v["termination"] for _, v in rows],
            [v["fault_reason"] for _, v in rows],
            [v["started"] for _, v in rows],
            [v["finished"] for _, v in rows],
            [_float(v["duration_s"]) for _, v in rows],
            [_json(v["adjudication"]) for _, v in rows],
        ]
        done = conn.exec_driver_sql(_COMPLETE, (sandbox, *columns))
        if done.rowcount != len(chosen):  # they are locked (``_CLAIM``)
            raise RuntimeError("matches changed under the writer's lock")
        replaced = [match_id for match_id, _, _, replace in chosen if replace]
        if replaced:
            conn.exec_driver_sql(_DELETE_MOVES, (replaced,))
        seats: list[list[Any]] = [[], [], [], [], [], [], []]
        for match_id, record, versions, _ in chosen:
            for i, (r, vid) in enumerate(zip(record.seats, versions, strict=True)):
                seats[0].append(match_id)
                seats[1].append(i)
                seats[2].append(vid)
                seats[3].append(_float(r.utility))
                seats[4].append(r.rank)
                seats[5].append(_float(r.score))
                seats[6].append(_json(r.fault.to_dict() if r.fault is not None else None))
        conn.exec_driver_sql(_SEATS, tuple(seats))
        moves = [
            (match_id, ply, m.seat, m.move, float(max(0.0, m.time_ms)), _json(m.info), m.forced)
            for match_id, record, _, _ in chosen
            for ply, m in enumerate(record.moves)
        ]
        if moves:
            with self._copy(_COPY_MOVES) as copy:
                for move in moves:
                    copy.write_row(move)
        change_pair_totals(conn.exec_driver_sql, [item[0] for item in chosen], 1)
        return stored
