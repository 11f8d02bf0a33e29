"""PGN, both ways: the results of games played elsewhere (cutechess, fastchess: the White,
Black and Result tags), and our two-player matches written as PGN games.

The Seven Tag Roster is written, with the arena's own tags (Termination, Variant, Match, and
Opening/StartPosition for games from an opening); moves are the games' own move texts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from bot_arena.arena.match.record import MatchRecord
from bot_arena.arena.ratings.results import GameResult, RatingInputError

_TAG = re.compile(r'^\[\s*([A-Za-z0-9_]+)\s+"((?:[^"\\]|\\.)*)"\s*\]\s*$')
RESULT_SCORES = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5, "½-½": 0.5}  # White's score
LINE_WIDTH = 79  # movetext lines stay under 80 characters, as PGN export format asks


def result_of_ranks(rank0: int, rank1: int) -> str:
    """PGN's result from the two seats' ranks (seat 0 is White)."""
    if rank0 < rank1:
        return "1-0"
    if rank1 < rank0:
        return "0-1"
    return "1/2-1/2"


# --- reading ---------------------------------------------------------------------------------


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
        if result not in RESULT_SCORES:
            raise RatingInputError(f"{where}:{lineno}: game {number}: bad result {result!r}")
        out.append(GameResult.two_player(game["White"], game["Black"], RESULT_SCORES[result]))
    return out


# --- writing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class GameTags:
    """What a PGN game says besides the record: where and when it was played."""

    event: str
    round: int
    match_id: int
    started: datetime | None = None
    opening: str | None = None  # the opening's name, when the game started from one


def escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def write_game(record: MatchRecord, tags: GameTags) -> str:
    """One two-player match as a PGN game (tag pairs, a blank line, the movetext)."""
    white, black = record.seats[0], record.seats[1]
    result = result_of_ranks(white.rank, black.rank)
    date = tags.started.strftime("%Y.%m.%d") if tags.started else "????.??.??"
    pairs = [
        ("Event", tags.event),
        ("Site", "Bot Arena"),
        ("Date", date),
        ("Round", str(tags.round)),
        ("White", white.bot),
        ("Black", black.bot),
        ("Result", result),
        ("Termination", record.termination.value),
        ("Variant", record.game),
        ("Match", str(tags.match_id)),
    ]
    if tags.opening:
        pairs += [("Opening", tags.opening), ("StartPosition", record.start_position)]
    words: list[str] = []
    for ply, move in enumerate(record.moves):
        if ply % 2 == 0:
            words.append(f"{ply // 2 + 1}.")
        words.append(move.move)
    words.append(result)
    head = "\n".join(f'[{k} "{escape(v)}"]' for k, v in pairs)
    return head + "\n\n" + "\n".join(_wrap(words)) + "\n"


def _wrap(words: Sequence[str]) -> list[str]:
    lines, line = [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > LINE_WIDTH:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return lines
