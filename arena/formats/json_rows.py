"""An export's JSON of a match built straight from its stored values (``db.exported.StoredChunk``).

``arena export --format json/jsonl`` writes each match as ``{"match", "tournament"}`` and its
record's ``MatchRecord.to_dict`` through ``strict_json.dumps``. Built that way (a record of
dataclasses from decoded rows, a dict of it, then the encoder) a match cost about 250 µs; this
writes the same text from the rows' values: strings through the encoder's own escaping, numbers
by ``repr`` as the encoder writes them, and each stored JSON value (a move's info, parameters,
time control) decoded and encoded once per distinct text (``Canonical``).

It takes only the shape Bot Arena stores: a value of another type, a malformed JSON value, a
non-finite number or an unknown termination makes ``match_json`` return None, and the caller
writes that chunk from its records instead (``formats.export``), which says or fixes what is
wrong exactly as before. ``tests/arena/test_export_json_rows.py`` checks that both ways give the
same bytes, on generated matches of every field.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from bot_arena.arena.match.record import Fault, RecordError, Termination
from bot_arena.arena.transport.strict_json import dumps, finite
from bot_arena.db.exported import StoredMatchRow, StoredMoveRow, StoredSeatRow

_text: Any = json.encoder.encode_basestring_ascii  # the C escaping the encoder itself uses
_TERMINATIONS = frozenset(t.value for t in Termination)
_EPOCH = datetime(1970, 1, 1)
_FORCED = ', "forced": true}'
_STAMP = len("2025-01-01 00:00:00.000000")  # how SQLite holds a timestamp (naive UTC)


class Refused(Exception):
    """A stored value this writer does not take: the chunk is written from its records."""


def _encode(value: Any) -> str:
    """A decoded JSON value as ``strict_text`` writes it (a non-finite number as null)."""
    try:
        return dumps(value)
    except ValueError:
        return dumps(finite(value))


class Canonical:
    """Stored JSON values (objects) as the export writes them, each distinct text decoded and
    encoded once: tic-tac-toe's moves share a few infos, a tournament's matches their time
    control. Holds at most ``limit`` texts (then starts again), so memory stays bounded."""

    def __init__(self, limit: int = 20_000) -> None:
        self.limit = limit
        self.seen: dict[str, str] = {}

    def __call__(self, value: Any, nullable: bool) -> str:
        if value is None:
            if nullable:
                return "null"
            raise Refused
        if type(value) is str:  # SQLite: the stored text
            done = self.seen.get(value)
            if done is not None:
                return done
            try:
                decoded = json.loads(value)
            except (ValueError, RecursionError):
                raise Refused from None
            if type(decoded) is not dict and not (decoded is None and nullable):
                raise Refused
            if len(self.seen) >= self.limit:
                self.seen.clear()
            done = self.seen[value] = _encode(decoded)
            return done
        if type(value) is dict:  # PostgreSQL: the driver parsed it
            return _encode(value)
        raise Refused


def _float(value: Any) -> str:
    """``float(value or 0.0)`` as JSON (a stored utility, score or time)."""
    if not value and (value is None or type(value) in (int, float)):
        return "0.0"  # ``value or 0.0``: None, 0 and -0.0 all read as 0.0
    if type(value) is int:
        value = float(value)
    elif type(value) is not float or not math.isfinite(value):
        raise Refused
    return repr(value)


def _instant(value: Any) -> float | None:
    """A stored timestamp (naive UTC: SQLite's text, a driver's datetime) as seconds."""
    if value is None:
        return None
    if type(value) is str:
        if len(value) != _STAMP or value[10] != " ":
            raise Refused
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise Refused from None
    if type(value) is not datetime:
        raise Refused
    if value.tzinfo is None:  # UTC: what ``timestamp()`` of it made aware gives, for less
        return (value - _EPOCH).total_seconds()
    return value.astimezone(UTC).timestamp()


def _string(value: Any, empty: bool = False) -> str:
    if type(value) is str:
        return str(_text(value))
    if empty and value is None:
        return '""'
    raise Refused


def _seat(seat: StoredSeatRow, canonical: Canonical) -> str:
    _, bot, version, utility, rank, score, fault = seat
    if rank is None:
        rank = 0
    elif type(rank) is not int:
        raise Refused
    if fault is None:
        fault_text = "null"
    else:
        decoded = json.loads(canonical(fault, False))  # checked; stored faults are rare
        if not decoded:
            fault_text = "null"  # an empty object is no fault (``record_from``)
        else:
            try:
                fault_text = _encode(Fault.from_dict(decoded).to_dict())
            except RecordError:
                raise Refused from None
    return (
        f'{{"bot": {_string(bot)}, "version": '
        f"{'null' if version is None else _string(version)}, "
        f'"utility": {_float(utility)}, "rank": {rank}, "score": {_float(score)}, '
        f'"fault": {fault_text}}}'
    )


def _moves(moves: list[StoredMoveRow], canonical: Canonical) -> str:
    out = []
    seen = canonical.seen  # the hot path of a long export: its lookups inlined
    for _, seat, move, time_ms, info, forced in moves:
        if (
            type(seat) is not int
            or type(move) is not str
            or type(time_ms) is not float
            or time_ms - time_ms != 0.0  # not finite
        ):
            raise Refused
        if info is None:
            text = "null"
        else:
            text = (type(info) is str and seen.get(info)) or canonical(info, True)
        out.append(
            f'{{"seat": {seat}, "move": {_text(move)}, "time_ms": {time_ms!r}, "info": {text}'
            + (_FORCED if forced else "}")
        )
    return ", ".join(out)


def match_json(
    match: StoredMatchRow,
    seats: list[StoredSeatRow],
    moves: list[StoredMoveRow],
    canonical: Canonical,
) -> str | None:
    """The export's JSON object of one match (``{"match": id, "tournament": id, **record}``),
    byte for byte ``strict_text`` of it; None when a stored value is not of the shape Bot
    Arena stores (the caller then writes the match from its record)."""
    (mid, tid, _round, _reason, _opening, game, params, start, final, termination) = match[:10]
    started_at, finished_at, time_control, adjudication = match[10:]
    try:
        if type(mid) is not int or not (tid is None or type(tid) is int):
            raise Refused
        if termination not in _TERMINATIONS or type(termination) is not str:
            raise Refused
        started = _instant(started_at)
        finished = _instant(finished_at)
        begin = 0.0 if started is None else started
        end = begin if finished is None else finished
        verdict = (
            "" if adjudication is None else f', "adjudication": {canonical(adjudication, False)}'
        )
        return (
            f'{{"match": {mid}, "tournament": {"null" if tid is None else tid}, '
            f'"game": {_string(game)}, "params": {canonical(params, False)}, '
            f'"start_position": {_string(start or None, True)}, '
            f'"final_position": {_string(final or None, True)}, '
            f'"termination": "{termination}", "time_control": {canonical(time_control, False)}, '
            f'"seats": [{", ".join(_seat(s, canonical) for s in seats)}], '
            f'"moves": [{_moves(moves, canonical)}], '
            f'"started": {begin!r}, "finished": {end!r}, '
            f'"duration_s": {round(end - begin, 6)!r}{verdict}}}'
        )
    except Refused:
        return None
