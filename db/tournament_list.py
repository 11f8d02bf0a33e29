"""``arena tournament list``: every tournament with its progress, newest first, as SQL text
over any connection's rows (``rated_sql.Rows``).

A plain database is read by the standard library's ``sqlite3`` or by psycopg alone
(``sqlite_read.open_reads``, ``pg_read.open_reads``), so the command does not load SQLAlchemy
and its ORM, which were most of its time (0.37 s of CPU on a 1,000-match file, against 0.1 s for
``leaderboard``: ``bench/startup.py``); any other database is opened the usual way and read by
the same statements through its session (``results.reads_of``). One reading for both: the JSON
columns and the timestamps are decoded here, as the ORM's column types decode them
(``decode.decode_as``, ``decode.instant``), a malformed one a StoredDataError naming its column.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from bot_arena.db.decode import decode_as, instant

if TYPE_CHECKING:
    from bot_arena.db.rated_sql import Rows

MATCH_COUNTS = (
    "SELECT tournament_id, status, COUNT(*) FROM matches"
    " WHERE tournament_id IS NOT NULL GROUP BY tournament_id, status"
)
ENTRY_COUNTS = "SELECT tournament_id, COUNT(*) FROM tournament_entries GROUP BY tournament_id"
TOURNAMENTS = (
    "SELECT id, name, game, params, format, settings, seed, status, created, finished,"
    " heartbeat FROM tournaments ORDER BY id DESC"
)


@dataclass(frozen=True, slots=True)
class ListedTournament:
    """A tournament as the list shows it (``row``: its columns, as ``--json`` prints them) and
    what it keeps of its runner (``run_trace.RunTrace``: is anybody playing it?)."""

    row: dict[str, Any]
    settings: dict[str, Any]
    heartbeat: datetime | None

    @property
    def status(self) -> str:
        return str(self.row["status"])


def listed_tournaments(rows: Rows, json_text: bool) -> list[ListedTournament]:
    """Every tournament with its field's size and its matches counted by status (a void match
    is in no total: it is annulled), newest first. ``json_text``: the driver gives JSON columns
    as text (SQLite)."""
    counts: dict[int, dict[str, int]] = {}
    for tid, status, count in rows(MATCH_COUNTS, {}):
        counts.setdefault(int(tid), {})[str(status)] = int(count)
    sizes = {int(tid): int(count) for tid, count in rows(ENTRY_COUNTS, {})}
    out = []
    for tid, name, game, params, fmt, settings, seed, status, created, finished, beat in rows(
        TOURNAMENTS, {}
    ):
        c = counts.get(int(tid), {})
        made = instant(created, "tournaments.created")
        ended = instant(finished, "tournaments.finished")
        row = {
            "id": int(tid),
            "name": name,
            "game": game,
            "params": decode_as("tournaments.params", params, dict, nullable=False, text=json_text),
            "format": fmt,
            "bots": sizes.get(int(tid), 0),
            "done": c.get("done", 0),
            "total": sum(v for k, v in c.items() if k != "void"),
            "void": c.get("void", 0),
            "status": status,
            "seed": int(seed),
            "created": made.isoformat(timespec="seconds") if made else None,
            "finished": ended.isoformat(timespec="seconds") if ended else None,
        }
        kept = decode_as("tournaments.settings", settings, dict, nullable=False, text=json_text)
        trace = instant(beat, "tournaments.heartbeat")
        out.append(ListedTournament(row, kept, trace))
    return out
