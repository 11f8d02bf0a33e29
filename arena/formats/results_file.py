"""Results played elsewhere, from a file: PGN or CSV (``arena rate``).

Unfinished games (``*``) are skipped. Anything else is a ``RatingInputError`` with one line that
says where.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from bot_arena.arena.formats.csv_results import parse_csv
from bot_arena.arena.formats.pgn import parse_pgn
from bot_arena.arena.ratings.outcomes import GameResult, RatingInputError
from bot_arena.games import files


def read_results(path: str | Path) -> list[GameResult]:
    """The finished games in a PGN or CSV file (format from the suffix, else the content),
    read line by line within the results file's limit (``games.files``)."""
    p = Path(path)
    try:
        with files.lines(p, files.RESULTS) as lines:
            blank: list[str] = []  # kept, so that the parsers count lines from the top
            first = ""
            for line in lines:
                if line.strip():
                    first = line
                    break
                blank.append(line)
            whole = itertools.chain(blank, [first], lines)
            suffix = p.suffix.lower()
            if suffix == ".pgn" or (suffix != ".csv" and first.lstrip().startswith("[")):
                results = parse_pgn(whole, str(p))
            else:
                results = parse_csv(whole, str(p))
    except files.FileRefused as exc:
        raise RatingInputError(str(exc)) from None
    if not results:
        raise RatingInputError(f"{p}: no finished games")
    return results
