"""``arena matches --limit N`` without SQLAlchemy: on a plain SQLite file by the standard
library's ``sqlite3``, on PostgreSQL by psycopg alone.

The list itself is ``queries.find_matches`` (the ORM, read a page at a time from the newest id
down); its own reads of the newest matches take milliseconds even at a million, and most of the
command's time was loading SQLAlchemy and its ORM (issue 29: 1.3 s of CPU, a target of 0.3 s).
So for the plain case (``sqlite_read.open_reads``: a file at the newest revision, read-only;
``pg_read.open_reads``: PostgreSQL by psycopg alone, at the newest revision), the last ``N``
matches are read here with three statements of SQL text, and nothing of SQLAlchemy is loaded.

It takes only what Bot Arena stores: every JSON value of the listed matches (those the ORM
would decode: the match's parameters, time control and adjudication, each seat's fault, each
bot version's files) decoded and of its shape, every void time a timestamp. Anything else gives
None, and the caller lists through the ORM, which leaves out and says what is malformed exactly
as before (``tests/db/test_match_list.py`` checks the two give the same list).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from bot_arena.db.decode import StoredDataError, decode, instant

if TYPE_CHECKING:
    from bot_arena.db.models import Match
    from bot_arena.db.rated_sql import Rows


@dataclass(frozen=True, slots=True)
class ListedMatch:
    """A match as ``arena matches`` lists it."""

    id: int
    tournament_id: int | None
    round: int
    game: str
    bots: list[str]  # in seat order
    status: str
    ranks: list[int | None]
    scores: list[float | None]
    termination: str | None
    plies: int
    duration_s: float | None
    fault_reason: str | None
    void_reason: str | None
    voided: datetime | None  # aware UTC


def listed(match: Match, plies: int) -> ListedMatch:
    """A match the ORM loaded (with its seats, their versions and bots), as listed."""
    return ListedMatch(
        match.id,
        match.tournament_id,
        match.round,
        match.game,
        [s.version.bot.name for s in match.seats],
        match.status,
        [s.rank for s in match.seats],
        [s.score for s in match.seats],
        match.termination,
        plies,
        match.duration_s,
        match.fault_reason,
        match.void_reason,
        match.voided,
    )


_NEWEST = (
    "SELECT m.id, m.tournament_id, m.round, m.game, m.status, m.termination, m.duration_s,"
    " m.fault_reason, m.void_reason, m.voided, m.params, m.time_control, m.adjudication"
    " FROM matches m WHERE {where} ORDER BY m.id DESC LIMIT :limit"
)
_WITH_BOT = (
    "m.id IN (SELECT s.match_id FROM seats s JOIN bot_versions v ON v.id = s.bot_version_id"
    " JOIN bots b ON b.id = v.bot_id WHERE b.name = :bot)"
)
_SEATS = (
    "SELECT s.match_id, b.name, s.rank, s.score, s.fault, v.files FROM seats s"
    " JOIN bot_versions v ON v.id = s.bot_version_id JOIN bots b ON b.id = v.bot_id"
    " WHERE s.match_id IN ({ids}) ORDER BY s.match_id, s.seat"
)
_PLIES = "SELECT match_id, COUNT(*) FROM moves WHERE match_id IN ({ids}) GROUP BY match_id"


class _Refused(Exception):
    """A stored value this reader does not take: the ORM lists the matches instead."""


def _json(value: Any, shape: type, nullable: bool, text: bool) -> None:
    try:
        decode(value, shape, nullable=nullable, text=text)
    except StoredDataError:
        raise _Refused from None


def _instant(value: Any) -> datetime | None:
    """A stored void time as an aware datetime (``decode.instant``)."""
    try:
        return instant(value, "matches.voided")
    except StoredDataError:
        raise _Refused from None


def newest_matches(
    rows_of: Rows,
    json_text: bool,
    tournament_id: int | None,
    bot: str | None,
    status: str | None,
    last: int,
) -> list[ListedMatch] | None:
    """The last ``last`` matches (of a tournament, with a bot, of a status) by id, oldest
    first, as ``find_matches(..., last=last)`` lists them; None when a stored value is not of
    the shape Bot Arena stores (see the module docstring). ``rows_of`` runs a statement
    (``RatedReads.rows``); ``json_text``: its driver gives JSON as text (SQLite)."""
    where: list[str] = ["1 = 1"]
    params: dict[str, Any] = {"limit": last}
    if tournament_id is not None:
        where.append("m.tournament_id = :tournament")
        params["tournament"] = tournament_id
    if status is not None:
        where.append("m.status = :status")
        params["status"] = status
    if bot is not None:
        where.append(_WITH_BOT)
        params["bot"] = bot
    try:
        rows = list(rows_of(_NEWEST.format(where=" AND ".join(where)), params))
        if not rows:
            return []
        ids = ", ".join(str(int(row[0])) for row in rows)  # ids read from the database
        seats: dict[int, list[Any]] = {int(row[0]): [] for row in rows}
        for match_id, *seat in rows_of(_SEATS.format(ids=ids), {}):
            _json(seat[3], dict, True, json_text)
            _json(seat[4], list, True, json_text)
            seats[match_id].append(seat)
        plies = {int(mid): int(n) for mid, n in rows_of(_PLIES.format(ids=ids), {})}
        out = []
        for row in reversed(rows):
            mid, tid, rnd, game, stat, term, duration, fault, reason, voided = row[:10]
            _json(row[10], dict, False, json_text)
            _json(row[11], dict, False, json_text)
            _json(row[12], dict, True, json_text)
            found = seats[mid]
            out.append(
                ListedMatch(
                    mid, tid, rnd, game, [s[0] for s in found], stat, [s[1] for s in found],
                    [s[2] for s in found], term, plies.get(mid, 0), duration, fault, reason,
                    _instant(voided),
                )
            )  # fmt: skip
        return out
    except _Refused:
        return None
