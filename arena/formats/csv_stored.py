"""An export's CSV row built straight from a match's stored values (``db.exported.StoredChunk``).

``arena export --format csv`` writes each match as ``csv_results.export_row`` of its record.
Reading a chunk as records (``db.exported.exported_records``: rows decoded into dataclasses)
cost most of that export's time; this gives the same cells from the stored rows. It takes a
match only when ``json_rows.match_json`` takes it: that writer accepts exactly what decodes as
Bot Arena stores it (and is checked byte for byte against the records), so a match taken here is
one whose record would be read, and its cells are the record's values read the way
``store.record_from`` reads them (a rank as ``int(rank or 0)``, a score as
``float(score or 0.0)``, times as UTC instants). Anything else gives None and the caller writes
that chunk from its records, which leave out and say what is malformed, as before.
``tests/arena/test_export_csv_rows.py`` checks the two give the same bytes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot_arena.arena.formats.json_rows import Canonical, match_json
from bot_arena.arena.formats.pgn import result_of_ranks
from bot_arena.db.exported import StoredMatchRow, StoredMoveRow, StoredSeatRow


def _moment(value: Any) -> datetime | None:
    """A stored timestamp (SQLite's naive UTC text, a driver's datetime) as aware UTC: what the
    column type gives the record path. Only called on values ``match_json`` took."""
    if value is None:
        return None
    if type(value) is str:
        value = datetime.fromisoformat(value)
    assert isinstance(value, datetime)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def csv_cells(
    match: StoredMatchRow,
    seats: list[StoredSeatRow],
    moves: list[StoredMoveRow],
    canonical: Canonical,
) -> list[object] | None:
    """The ``EXPORT_COLUMNS`` cells of one match, as ``export_row`` gives them from its record;
    None when ``match_json`` does not take the match (the caller then reads its record)."""
    if match_json(match, seats, moves, canonical) is None:
        return None
    mid, tid, rnd, fault_reason = match[0], match[1], match[2], match[3]
    game, termination, started_at, finished_at = match[5], match[9], match[10], match[11]
    started, finished = _moment(started_at), _moment(finished_at)
    begin = started.timestamp() if started else 0.0
    end = finished.timestamp() if finished else begin
    names = [seat[1] for seat in seats]
    ranks = [int(seat[4] or 0) for seat in seats]
    scores = [float(seat[5] or 0.0) for seat in seats]
    two = len(seats) == 2
    return [
        mid,
        tid if tid is not None else "",
        rnd,
        game,
        names[0] if two else "",
        names[1] if two else "",
        result_of_ranks(ranks[0], ranks[1]) if two else "",
        ";".join(names),
        ";".join(str(r) for r in ranks),
        ";".join(f"{s:g}" for s in scores),
        termination,
        fault_reason or "",
        len(moves),
        f"{end - begin:.6f}",
        started.isoformat() if started else "",
    ]
