"""PGN, both ways: the results of games played elsewhere (cutechess, fastchess: the White,
Black and Result tags), and our two-player matches written as PGN games.

The Seven Tag Roster is written, then what cutechess writes (SetUp/FEN, TimeControl,
Termination) and the arena's own tags (Variant, Match, and Opening/StartPosition for games from
an opening); moves are SAN for chess (the games' own move texts for other games), each with a
comment of score, depth and time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from bot_arena.arena.match.record import MatchRecord, Termination
from bot_arena.arena.match.text import shown
from bot_arena.arena.ratings.outcomes import GameResult, RatingInputError
from bot_arena.games.base import Game, GameError
from bot_arena.games.quoting import shown as quoted

if TYPE_CHECKING:
    from bot_arena.games.chess import Chess

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


def parse_pgn(text: str | Iterable[str], where: str = "PGN") -> list[GameResult]:
    """The finished games of a PGN text (or its lines, read as they come: each game is turned
    into its result as soon as the next one starts)."""
    out: list[GameResult] = []
    names: dict[str, str] = {}  # one string per player name, however many games it played
    tags: dict[str, str] = {}
    first_line = 0
    number = 0
    in_moves = False
    lines = text.splitlines() if isinstance(text, str) else text
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        match = _TAG.match(line)
        if match:
            if in_moves or not tags:
                if tags:
                    number += 1
                    _finish(tags, number, first_line, where, out, names)
                tags = {}
                first_line = lineno
                in_moves = False
            tags[match.group(1)] = re.sub(r"\\(.)", r"\1", match.group(2))
        elif line.startswith("["):
            raise RatingInputError(f"{where}:{lineno}: malformed tag {quoted(line, 40)}")
        else:
            in_moves = True
    if tags:
        _finish(tags, number + 1, first_line, where, out, names)
    return out


def _finish(
    game: dict[str, str],
    number: int,
    lineno: int,
    where: str,
    out: list[GameResult],
    names: dict[str, str],
) -> None:
    """The result of one game's tags added to ``out`` (none for an unfinished game)."""
    for tag in ("White", "Black", "Result"):
        if tag not in game:
            raise RatingInputError(f"{where}:{lineno}: game {number} has no {tag} tag")
    result = game["Result"].strip()
    if result == "*":
        return
    if result not in RESULT_SCORES:
        raise RatingInputError(f"{where}:{lineno}: game {number}: bad result {quoted(result)}")
    white = names.setdefault(game["White"], game["White"])
    black = names.setdefault(game["Black"], game["Black"])
    out.append(GameResult.two_player(white, black, RESULT_SCORES[result]))


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
    """A tag's value: PGN's escapes for a backslash and a quote, and the control characters a
    bot may have put in its name shown as text (PGN allows none; ``text.shown``)."""
    return shown(text).replace("\\", "\\\\").replace('"', '\\"')


# the arena's terminations as PGN's Termination tag says them (the arena's own word, and why,
# go in the comment after the last move)
PGN_TERMINATION = {
    Termination.NORMAL: "normal",
    Termination.RESIGN: "normal",
    Termination.TIMEOUT: "time forfeit",
    Termination.ILLEGAL_MOVE: "rules infraction",
    Termination.BAD_OUTPUT: "rules infraction",
    Termination.CRASH: "abandoned",
    Termination.STALL: "abandoned",
    Termination.ADJUDICATED: "adjudication",
}
SIDES = ("White", "Black")


def write_game(record: MatchRecord, tags: GameTags, game: Game[Any, Any] | None = None) -> str:
    """One two-player match as a PGN game (tag pairs, a blank line, the movetext), as cutechess
    writes one: the Seven Tag Roster, then ``SetUp``/``FEN`` for a chess game from another
    position, ``TimeControl`` (or one per side when they differ), ``Termination`` in PGN's
    words, the arena's own tags; each move as people read it in its position (``game``: SAN for
    chess; else the record's move text) with a comment of the mover's score and depth when its
    search said them, and the time it took (``{+0.35/12 0.213s}``); after the last move a
    comment saying how the game ended."""
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
    ]
    labels, state = _labels(record, game)
    fen = _start_fen(record, game)
    if fen is not None:
        pairs += [("SetUp", "1"), ("FEN", fen)]
    pairs += _time_control_tags(record.time_control)
    pairs += [
        ("Termination", PGN_TERMINATION.get(record.termination, "normal")),
        ("Variant", record.game),
        ("Match", str(tags.match_id)),
    ]
    if tags.opening:
        pairs += [("Opening", tags.opening), ("StartPosition", record.start_position)]
    black_first = fen is not None and fen.split()[1:2] == ["b"]
    words: list[str] = []
    for ply, (move, label) in enumerate(zip(record.moves, labels, strict=True)):
        number = (ply + (1 if black_first else 0)) // 2 + 1
        if ply == 0 and black_first:
            words.append(f"{number}...")
        elif (ply + (1 if black_first else 0)) % 2 == 0:
            words.append(f"{number}.")
        words.append(label)
        words.append("{" + _move_comment(move.info, move.time_ms) + "}")
    ending = _ending(record, game, state)
    if ending:
        words.append("{" + ending + "}")
    words.append(result)
    head = "\n".join(f'[{k} "{escape(v)}"]' for k, v in pairs)
    return head + "\n\n" + "\n".join(_wrap(words)) + "\n"


def _labels(record: MatchRecord, game: Game[Any, Any] | None) -> tuple[list[str], Any]:
    """Each move's label in its position and the final state (the record's texts and None
    without the game, or when a move does not replay)."""
    texts = [m.move for m in record.moves]
    if game is None:
        return texts, None
    try:
        state = game.parse_position(record.start_position) if record.start_position else None
        state = game.initial_state() if state is None else state
        labels = []
        for text in texts:
            move = game.move_from_text(state, text)
            labels.append(game.move_label(state, move))
            state = game.apply(state, move)
    except GameError:
        return texts, None
    return labels, state


def _start_fen(record: MatchRecord, game: Game[Any, Any] | None) -> str | None:
    """The FEN of a chess game's start when it is not the standard one (PGN's SetUp/FEN)."""
    game = _chess(game)
    if game is None or not record.start_position:
        return None
    try:
        fen = game.fen(game.parse_position(record.start_position))
    except GameError:
        return None
    return None if fen == game.fen(game.initial_state()) else fen


def _time_control_tags(time_control: dict[str, Any]) -> list[tuple[str, str]]:
    seats = time_control.get("seats") or []
    if len(seats) != 2:
        return []
    texts = [_pgn_time_control(seat) for seat in seats]
    if texts[0] == texts[1]:
        return [("TimeControl", texts[0])]
    return [(f"{side}TimeControl", text) for side, text in zip(SIDES, texts, strict=True)]


def _pgn_time_control(seat: dict[str, Any]) -> str:
    """PGN's TimeControl: ``BASE+INC`` for a clock, ``1/S`` for S seconds a move (a period of
    one move), ``-`` for none (seconds, as PGN counts them)."""
    base, move_time = seat.get("base"), seat.get("move_time")
    if base is not None:
        return f"{base:g}+{float(seat.get('increment') or 0):g}"
    if move_time is not None:
        return f"1/{move_time:g}"
    return "-"


def _move_comment(info: dict[str, Any] | None, time_ms: float) -> str:
    """``+0.35/12 0.213s`` (score in pawns from the mover's view, search depth, time),
    ``+M3/20 ...`` for a mate, or only what is known."""
    parts = []
    score = (info or {}).get("score")
    depth = (info or {}).get("depth")
    text = ""
    if isinstance(score, dict) and isinstance(score.get("cp"), int):
        text = f"{score['cp'] / 100:+.2f}"
    elif isinstance(score, dict) and isinstance(score.get("mate"), int):
        text = f"{'+' if score['mate'] > 0 else '-'}M{abs(score['mate'])}"
    if isinstance(depth, int) and depth > 0:
        text = f"{text}/{depth}" if text else f"/{depth}"
    if text:
        parts.append(text)
    parts.append(f"{time_ms / 1000:.3f}s")
    return " ".join(parts)


def _ending(record: MatchRecord, game: Game[Any, Any] | None, state: Any) -> str:
    """How the game ended, in the words of the comment after the last move."""
    verdict = record.adjudication
    if verdict is not None:
        winner = verdict.get("winner")
        who = "Draw" if winner not in (0, 1) else f"{SIDES[winner]} wins"
        return f"{who} by adjudication: {verdict.get('rule')}"
    for side, seat in zip(SIDES, record.seats, strict=True):
        if seat.fault is not None:
            message = shown(seat.fault.message).replace("{", "(").replace("}", ")")
            return f"{side} {seat.fault.termination.value}: {message}"[:120]
    chess = _chess(game)
    if chess is not None and state is not None:
        return chess.outcome_reason(state) or ""
    return ""


def _chess(game: Game[Any, Any] | None) -> Chess | None:
    """``game`` when it is chess (python-chess loads only for a chess game's export)."""
    if game is None or game.name != "chess":
        return None
    from bot_arena.games.chess import Chess

    return game if isinstance(game, Chess) else None


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
