"""CSV, both ways: results played elsewhere (``white,black,result`` for two players,
``match,bot,rank`` with one row per seat for N players, told apart by the header), and one row
per stored match for export.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from datetime import datetime

from bot_arena.arena.formats.pgn import RESULT_SCORES, result_of_ranks
from bot_arena.arena.match.record import MatchRecord
from bot_arena.arena.match.text import csv_value
from bot_arena.arena.ratings.outcomes import GameResult, RatingInputError
from bot_arena.games.quoting import cut, shown

EXPORT_COLUMNS = [
    "match",
    "tournament",
    "round",
    "game",
    "white",
    "black",
    "result",
    "bots",
    "ranks",
    "scores",
    "termination",
    "fault",
    "plies",
    "duration_s",
    "started",
]


def export_row(
    match_id: int,
    tournament_id: int | None,
    round_: int,
    record: MatchRecord,
    fault_reason: str | None,
    started: datetime | None,
) -> list[object]:
    """The EXPORT_COLUMNS of one match (white, black and result only for two players)."""
    seats = record.seats
    two = len(seats) == 2
    return [
        match_id,
        tournament_id if tournament_id is not None else "",
        round_,
        record.game,
        seats[0].bot if two else "",
        seats[1].bot if two else "",
        result_of_ranks(seats[0].rank, seats[1].rank) if two else "",
        ";".join(s.bot for s in seats),
        ";".join(str(s.rank) for s in seats),
        ";".join(f"{s.score:g}" for s in seats),
        record.termination.value,
        fault_reason or "",
        len(record.moves),
        f"{record.duration_s:.6f}",
        started.isoformat() if started else "",
    ]


#: The longest CSV field read (characters): a name, a result, a rank. The csv module's own
#: limit (128 KiB) is set to this on purpose, and a longer field is one line naming its row.
MAX_FIELD = 16 * 1024


def parse_csv(text: str | Iterable[str], where: str = "CSV") -> list[GameResult]:
    """The finished games of a CSV text (or its lines, read as they come)."""
    csv.field_size_limit(MAX_FIELD)
    reader = csv.reader(io.StringIO(text) if isinstance(text, str) else iter(text))
    rows = ((reader.line_num, row) for row in reader if any(cell.strip() for cell in row))
    try:
        first = next(rows, None)
        if first is None:
            return []
        header = [csv_value(cell).strip().lower() for cell in first[1]]
        if {"white", "black", "result"} <= set(header):
            cols = [header.index("white"), header.index("black"), header.index("result")]
            return _two_player_rows(rows, cols, where)
        if {"match", "bot", "rank"} <= set(header):
            cols = [header.index("match"), header.index("bot"), header.index("rank")]
            return _ranked_rows(rows, cols, where)
    except csv.Error as exc:
        raise RatingInputError(f"{where}:{reader.line_num}: not CSV ({cut(exc)})") from None
    raise RatingInputError(
        f"{where}: a CSV needs the columns white,black,result or match,bot,rank "
        f"(found {cut(','.join(header))})"
    )


Rows = Iterable[tuple[int, list[str]]]


def _cells(line: int, row: list[str], cols: list[int], where: str) -> list[str]:
    if len(row) <= max(cols):
        raise RatingInputError(f"{where}:{line}: expected {max(cols) + 1} columns, got {len(row)}")
    return [csv_value(row[c]).strip() for c in cols]


def _two_player_rows(rows: Rows, cols: list[int], where: str) -> list[GameResult]:
    out: list[GameResult] = []
    names: dict[str, str] = {}  # one string per player name, however many games it played
    for line, row in rows:
        white, black, result = _cells(line, row, cols, where)
        if result == "*":
            continue
        if result not in RESULT_SCORES:
            raise RatingInputError(
                f"{where}:{line}: bad result {shown(result)} (use 1-0, 0-1, 1/2-1/2 or *)"
            )
        if not white or not black:
            raise RatingInputError(f"{where}:{line}: empty player name")
        white = names.setdefault(white, white)
        black = names.setdefault(black, black)
        out.append(GameResult.two_player(white, black, RESULT_SCORES[result]))
    return out


def _ranked_rows(rows: Rows, cols: list[int], where: str) -> list[GameResult]:
    matches: dict[str, tuple[list[str], list[int]]] = {}
    names: dict[str, str] = {}
    for line, row in rows:
        match, bot, rank_text = _cells(line, row, cols, where)
        try:
            rank = int(rank_text)
        except ValueError:
            raise RatingInputError(
                f"{where}:{line}: rank must be a whole number, not {shown(rank_text)}"
            ) from None
        if rank < 1 or not bot:
            raise RatingInputError(f"{where}:{line}: need a bot and a rank >= 1")
        players, ranks = matches.setdefault(match, ([], []))
        players.append(names.setdefault(bot, bot))
        ranks.append(rank)
    out: list[GameResult] = []
    for match, (players, ranks) in matches.items():
        if len(players) < 2:
            raise RatingInputError(f"{where}: match {shown(match)} has only one row")
        out.append(GameResult(tuple(players), tuple(ranks)))
    return out
