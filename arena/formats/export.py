"""``arena export``'s formats, written as the matches come: a JSON array, JSON Lines, CSV, PGN.

Each writer takes the stream of ``db.exported`` and yields the output's text a chunk at a time
(one chunk per ``CHUNK`` matches), so what is held is one chunk of text whatever the number of
matches, and the text is byte for byte what the export wrote when it built the whole output
first: JSON ``[a, b]`` (``json.dumps``'s separators) then a newline; CSV's header then a row a
match; PGN's games separated by a blank line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

from bot_arena import games
from bot_arena.arena.formats.csv_results import EXPORT_COLUMNS, export_row
from bot_arena.arena.formats.csv_stored import csv_cells
from bot_arena.arena.formats.json_rows import Canonical, match_json
from bot_arena.arena.formats.pgn import GameTags, write_game
from bot_arena.arena.match.text import csv_text
from bot_arena.arena.transport.strict_json import dumps, finite
from bot_arena.db.exported import (
    ExportedMatch,
    ExportFilter,
    exported_matches,
    exported_records,
    stored_chunks,
)
from bot_arena.db.tournaments import get_tournament
from bot_arena.games.quoting import shown as quoted

if TYPE_CHECKING:
    from bot_arena.arena.match.record import MatchRecord

FORMATS = ("json", "jsonl", "csv", "pgn")
#: Matches whose text is joined before it is handed on (one write instead of hundreds).
CHUNK = 200


@dataclass
class ExportNotes:
    """What a writer left out, for the lines said on stderr once the output is written."""

    skipped_multiplayer: int = 0
    events: dict[int | None, str] = field(default_factory=lambda: {None: "arena"})


def strict_text(value: Any) -> str:
    """A record as strict JSON text: a NaN or an infinity an older Bot Arena stored in a move's
    info is shown as null (a strict parser refuses the bare tokens). Only a record that holds
    one pays for the copy that replaces it."""
    try:
        return dumps(value)
    except ValueError:
        return dumps(finite(value))


def match_object(match_id: int, tournament_id: int | None, record: MatchRecord) -> dict[str, Any]:
    """One match as the JSON export writes it (also ``GET /api/matches/{id}``)."""
    return {"match": match_id, "tournament": tournament_id, **record.to_dict()}


def _record_dict(m: ExportedMatch) -> dict[str, Any]:
    return match_object(m.id, m.tournament_id, m.record)


def _chunked(pieces: Iterable[str]) -> Iterator[str]:
    batch: list[str] = []
    for piece in pieces:
        batch.append(piece)
        if len(batch) >= CHUNK:
            yield "".join(batch)
            batch.clear()
    if batch:
        yield "".join(batch)


def json_objects(session: Session, where: ExportFilter) -> Iterator[list[str]]:
    """The JSON object of each match ``where`` selects, a chunk of them at a time: built from
    the stored values (``json_rows``), or, for a chunk holding a value that writer does not
    take, from the records (which leave out and say a malformed match, as every listing)."""
    canonical = Canonical()
    for chunk in stored_chunks(session, where):
        texts = [
            match_json(row, chunk.seats[row[0]], chunk.moves[row[0]], canonical)
            for row in chunk.matches
        ]
        if None in texts:
            texts = [strict_text(_record_dict(m)) for m in exported_records(session, chunk.ids)]
        yield [text for text in texts if text is not None]


def json_array(objects: Iterable[list[str]]) -> Iterator[str]:
    """``[record, record]\\n``: the records as one JSON array."""
    yield "["
    separator = ""
    for texts in objects:
        if texts:
            yield separator + ", ".join(texts)
            separator = ", "
    yield "]\n"


def json_lines(objects: Iterable[list[str]]) -> Iterator[str]:
    """One record a line (JSON Lines): the same objects as ``json_array``'s."""
    for texts in objects:
        if texts:
            yield "\n".join(texts) + "\n"


def csv_rows(matches: Iterable[ExportedMatch]) -> Iterator[str]:
    """The EXPORT_COLUMNS header, then one row a match (``CHUNK`` rows a piece)."""
    yield csv_text(EXPORT_COLUMNS, ())
    batch: list[list[object]] = []
    for m in matches:
        batch.append(
            export_row(m.id, m.tournament_id, m.round, m.record, m.fault_reason, m.started)
        )
        if len(batch) >= CHUNK:
            yield _without_header(batch)
            batch.clear()
    if batch:
        yield _without_header(batch)


def csv_stored(session: Session, where: ExportFilter) -> Iterator[str]:
    """``csv_rows`` of the matches ``where`` selects, a chunk at a time, each row built from
    the stored values (``csv_stored.csv_cells``), or, for a chunk holding a value that writer
    does not take, from the records (which leave out and say a malformed match)."""
    yield csv_text(EXPORT_COLUMNS, ())
    canonical = Canonical()
    for chunk in stored_chunks(session, where):
        rows: list[list[object] | None] = [
            csv_cells(row, chunk.seats[row[0]], chunk.moves[row[0]], canonical)
            for row in chunk.matches
        ]
        if None in rows:
            rows = [
                export_row(m.id, m.tournament_id, m.round, m.record, m.fault_reason, m.started)
                for m in exported_records(session, chunk.ids)
            ]
        taken = [row for row in rows if row is not None]
        if taken:
            yield _without_header(taken)


def _without_header(rows: list[list[object]]) -> str:
    # the one CSV writer (``text.csv_text``) writes a header first: one line, taken off here
    return csv_text(EXPORT_COLUMNS, rows).split("\n", 1)[1]


def pgn_games(
    matches: Iterable[ExportedMatch], notes: ExportNotes, event: Callable[[int], str]
) -> Iterator[str]:
    """The two-player matches as PGN games, a blank line between two; matches of more seats
    are counted in ``notes``. ``event(tournament_id)``: the Event tag of a tournament's games
    (asked once a tournament)."""
    rules = games.GameCache()
    separator = ""
    for m in matches:
        record = m.record
        if len(record.seats) != 2:
            notes.skipped_multiplayer += 1
            continue
        yield separator + pgn_game(m, rules, notes, event)
        separator = "\n"


def pgn_game(
    m: ExportedMatch,
    rules: games.GameCache,
    notes: ExportNotes,
    event: Callable[[int], str],
) -> str:
    """One two-player match as the PGN export writes it (also ``--pgn-out``'s games, appended
    as they are stored: the one writer of both)."""
    tid = m.tournament_id
    if tid not in notes.events:
        assert tid is not None
        notes.events[tid] = event(tid)
    tags = GameTags(notes.events[tid], m.round, m.id, m.started, m.opening)
    return write_game(m.record, tags, rules.get(m.record.game, m.record.params))


def pgn_mix(games_found: list[str]) -> str | None:
    """Why a PGN export of matches of these games cannot be written (None: it can). A PGN file
    is read as one game's: a chess reader (cutechess, Ordo, python-chess) stops at the first
    tic-tac-toe move, and Connect Four's ``4`` means nothing to it. So a mix is refused, naming
    the games and the way out (``--game NAME`` a file each; ``--tournament``: one game), rather
    than written as one file per game, which would make an export a folder and a pipe
    (``export -f pgn > games.pgn``) impossible."""
    if len(games_found) < 2:
        return None
    names = ", ".join(quoted(g) for g in games_found)
    return (
        f"these matches are of {len(games_found)} games ({names}) and a PGN file holds one: "
        "choose one with --game NAME (or --tournament N)"
    )


def tournament_event(session: Session) -> Callable[[int], str]:
    """The Event tag of a tournament's games: its name, else "tournament N"."""

    def event(tournament_id: int) -> str:
        t = get_tournament(session, tournament_id)
        return (t.name or f"tournament {t.id}") if t is not None else "arena"

    return event


def export_text(
    fmt: str,
    session: Session,
    where: ExportFilter,
    notes: ExportNotes,
    event: Callable[[int], str],
) -> Iterator[str]:
    """The whole export in ``fmt`` (one of FORMATS) of the matches ``where`` selects, a chunk
    of matches' text at a time; ``event``: see ``pgn_games``."""
    if fmt == "json":
        return json_array(json_objects(session, where))
    if fmt == "jsonl":
        return json_lines(json_objects(session, where))
    if fmt == "csv":
        return csv_stored(session, where)
    matches = exported_matches(session, where)
    if fmt == "pgn":
        return _chunked(pgn_games(matches, notes, event))
    raise ValueError(f"unknown export format {fmt!r}")
