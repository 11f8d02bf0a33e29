"""Results played elsewhere: PGN files (White, Black, Result tags) and CSV files.

CSV comes in two shapes, told apart by the header: ``white,black,result`` (results ``1-0``,
``0-1``, ``1/2-1/2``) for two players, ``match,bot,rank`` (one row per seat) for N players.
Unfinished games (``*``) are skipped. Anything else is a ``RatingInputError`` with one line that
says where.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from bot_arena.arena.ratings.results import GameResult, RatingInputError

_TAG = re.compile(r'^\[\s*([A-Za-z0-9_]+)\s+"((?:[^"\\]|\\.)*)"\s*\]\s*$')
_SCORES = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5, "½-½": 0.5}


def read_results(path: str | Path) -> list[GameResult]:
    """The finished games in a PGN or CSV file (format from the suffix, else the content)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise RatingInputError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RatingInputError(f"{p}: cannot read: {exc}") from None
    suffix = p.suffix.lower()
    if suffix == ".pgn" or (suffix != ".csv" and text.lstrip().startswith("[")):
        results = parse_pgn(text, str(p))
    else:
        results = parse_csv(text, str(p))
    if not results:
        raise RatingInputError(f"{p}: no finished games")
    return results


def parse_pgn(text: str, where: str = "PGN") -> list[GameResult]:
    games: list[dict[str, str]] = []
    tags: dict[str, str] = {}
    first_line: list[int] = []
    in_moves = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        match = _TAG.match(line)
        if match:
            if in_moves or not tags:
                if tags:
                    games.append(tags)
                tags = {}
                first_line.append(lineno)
                in_moves = False
            tags[match.group(1)] = re.sub(r"\\(.)", r"\1", match.group(2))
        elif line.startswith("["):
            raise RatingInputError(f"{where}:{lineno}: malformed tag {line[:40]!r}")
        else:
            in_moves = True
    if tags:
        games.append(tags)
    out: list[GameResult] = []
    for number, (game, lineno) in enumerate(zip(games, first_line, strict=True), start=1):
        for tag in ("White", "Black", "Result"):
            if tag not in game:
                raise RatingInputError(f"{where}:{lineno}: game {number} has no {tag} tag")
        result = game["Result"].strip()
        if result == "*":
            continue
        if result not in _SCORES:
            raise RatingInputError(f"{where}:{lineno}: game {number}: bad result {result!r}")
        out.append(GameResult.two_player(game["White"], game["Black"], _SCORES[result]))
    return out


def parse_csv(text: str, where: str = "CSV") -> list[GameResult]:
    reader = csv.reader(io.StringIO(text))
    rows = [(reader.line_num, row) for row in reader if any(cell.strip() for cell in row)]
    if not rows:
        return []
    header = [cell.strip().lower() for cell in rows[0][1]]
    body = rows[1:]
    if {"white", "black", "result"} <= set(header):
        cols = [header.index("white"), header.index("black"), header.index("result")]
        return _two_player_rows(body, cols, where)
    if {"match", "bot", "rank"} <= set(header):
        cols = [header.index("match"), header.index("bot"), header.index("rank")]
        return _ranked_rows(body, cols, where)
    raise RatingInputError(
        f"{where}: a CSV needs the columns white,black,result or match,bot,rank "
        f"(found {','.join(header)})"
    )


Rows = list[tuple[int, list[str]]]


def _cells(line: int, row: list[str], cols: list[int], where: str) -> list[str]:
    if len(row) <= max(cols):
        raise RatingInputError(f"{where}:{line}: expected {max(cols) + 1} columns, got {len(row)}")
    return [row[c].strip() for c in cols]


def _two_player_rows(rows: Rows, cols: list[int], where: str) -> list[GameResult]:
    out: list[GameResult] = []
    for line, row in rows:
        white, black, result = _cells(line, row, cols, where)
        if result == "*":
            continue
        if result not in _SCORES:
            raise RatingInputError(
                f"{where}:{line}: bad result {result!r} (use 1-0, 0-1, 1/2-1/2 or *)"
            )
        if not white or not black:
            raise RatingInputError(f"{where}:{line}: empty player name")
        out.append(GameResult.two_player(white, black, _SCORES[result]))
    return out


def _ranked_rows(rows: Rows, cols: list[int], where: str) -> list[GameResult]:
    matches: dict[str, tuple[list[str], list[int]]] = {}
    for line, row in rows:
        match, bot, rank_text = _cells(line, row, cols, where)
        try:
            rank = int(rank_text)
        except ValueError:
            raise RatingInputError(
                f"{where}:{line}: rank must be a whole number, not {rank_text!r}"
            ) from None
        if rank < 1 or not bot:
            raise RatingInputError(f"{where}:{line}: need a bot and a rank >= 1")
        players, ranks = matches.setdefault(match, ([], []))
        players.append(bot)
        ranks.append(rank)
    out: list[GameResult] = []
    for match, (players, ranks) in matches.items():
        if len(players) < 2:
            raise RatingInputError(f"{where}: match {match!r} has only one row")
        out.append(GameResult(tuple(players), tuple(ranks)))
    return out
