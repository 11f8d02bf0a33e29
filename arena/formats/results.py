"""Results played elsewhere, from a file: PGN or CSV (``arena rate``).

Unfinished games (``*``) are skipped. Anything else is a ``RatingInputError`` with one line that
says where.
"""

from __future__ import annotations

from pathlib import Path

from bot_arena.arena.formats.csv_results import parse_csv
from bot_arena.arena.formats.pgn import parse_pgn
from bot_arena.arena.ratings.results import GameResult, RatingInputError


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
