"""Opening books: ``--openings FILE``, as cutechess's ``-openings`` and fastchess's ``-openings``.

A book is a file of positions, one a line in the game's own notation (FEN for chess, and EPD:
its first four fields, the operations after them ignored), or, for chess, a PGN file whose every
game's moves are an opening (cut to ``plies`` half-moves when given; a game's own ``FEN`` tag is
its start). Blank lines and ``#`` comments are skipped. Every entry is checked before anything is
stored: a position that does not parse, or where the game is already over, is a one-line
``ScheduleError`` naming the file and the line (or game).

A Polyglot book (``.bin``, chess: cutechess's ``-bookfile``; read by python-chess) holds weighted
moves by position, not openings: its openings are ``POLYGLOT_WALKS`` walks from the standard
start, each move drawn by the book's weights, to ``plies`` half-moves (``POLYGLOT_PLIES`` when
not given) or to a position the book has no move for. The walks are drawn from a seed of their
own, so a book gives the same openings in every run (a new version and its base meet the same
ones); ``--openings-order random`` shuffles them by the tournament's seed as any book.

Each game pair (the N games of a rotation, every bot in every seat once: cutechess ``-repeat``)
plays one opening; pairs take the book's entries in order (``sequential``) or in an order shuffled
from the tournament's seed (``random``, every entry once before any repeats), going round the
book again when the tournament has more pairs than it has entries.
"""

from __future__ import annotations

import io
import itertools
import random
from collections.abc import Sequence
from typing import Any

from bot_arena.arena.tournament.schedule import Opening, Pairing, ScheduleError, derive_seed
from bot_arena.games import files
from bot_arena.games.base import Game, GameError

ORDERS = ("sequential", "random")
MAX_ENTRIES = 1_000_000  # openings a book may hold (the biggest published books hold fewer)
POLYGLOT_WALKS = 1000  # openings drawn from a Polyglot book
POLYGLOT_PLIES = 8  # their length when --openings-plies is not given (cutechess's bookdepth)
POLYGLOT_ENTRY = 16  # bytes of a Polyglot entry: key, move, weight, learn


def read_book(game: Game[Any, Any], path: str, plies: int | None = None) -> list[Opening]:
    """The openings of the book at ``path`` for ``game`` (see the module docstring), read
    within the book's limits: its size (``games.files``) and ``MAX_ENTRIES``."""
    if plies is not None and plies < 1:
        raise ScheduleError(f"--openings-plies must be >= 1, not {plies}")
    if path.lower().endswith(".bin"):
        return _polyglot_openings(game, path, POLYGLOT_PLIES if plies is None else plies)
    try:
        with files.lines(path, files.BOOK) as lines:
            numbered = enumerate(lines, 1)
            ahead: list[tuple[int, str]] = []  # up to the first entry, to tell PGN apart
            for number, line in numbered:
                ahead.append((number, line))
                if _entry(line):
                    break
            first = ahead[-1][1].strip() if ahead else ""
            rest = itertools.chain(ahead, numbered)
            if path.lower().endswith(".pgn") or first.startswith(("[", "1.")):
                if game.name != "chess":
                    raise ScheduleError(
                        f"{path}: PGN openings are chess games, and this is {game.name}"
                    )
                text = "".join(line for _, line in rest)
                book = _pgn_openings(game, path, text, plies)
            else:
                book = []
                for number, line in rest:
                    if _entry(line):
                        _count(book, path)
                        book.append(_position(game, path, number, line.strip()))
    except files.FileRefused as exc:
        raise ScheduleError(str(exc)) from None
    if not book:
        raise ScheduleError(f"--openings {path} holds no opening")
    return book


def _entry(line: str) -> bool:
    """Whether a book's line holds an entry (not blank, not a ``#`` comment)."""
    return bool(line.strip()) and not line.lstrip().startswith("#")


def _count(book: list[Opening], path: str) -> None:
    if len(book) >= MAX_ENTRIES:
        raise ScheduleError(f"--openings {path} holds more than {MAX_ENTRIES} openings (its limit)")


def book_openings(
    pairings: Sequence[Pairing], book: Sequence[Opening], order: str, seed: int
) -> list[Opening]:
    """The opening of each pairing: the next entry of the book for each new game pair."""
    entries = ordered_book(book, order, seed)
    index: dict[tuple[int, int], int] = {}
    out = []
    for p in pairings:
        key = (p.group, p.opening)
        if key not in index:
            index[key] = len(index)
        out.append(entries[index[key] % len(entries)])
    return out


def ordered_book(book: Sequence[Opening], order: str, seed: int) -> list[Opening]:
    """The book's entries in the order game pairs take them (pair ``k`` plays entry ``k``,
    round the list again past its end)."""
    if order not in ORDERS:
        raise ScheduleError(f"--openings-order {order!r}: one of {', '.join(ORDERS)}")
    entries = list(book)
    if order == "random":
        random.Random(derive_seed(seed, "book")).shuffle(entries)
    return entries


def _position(game: Game[Any, Any], path: str, number: int, line: str) -> Opening:
    from bot_arena.arena.match.xboard import moves_from_start

    where = f"{path}:{number}"
    text = _epd_as_fen(line) if game.name == "chess" else line
    try:
        state = game.parse_position(text)
    except GameError as exc:
        raise ScheduleError(f"{where}: {exc}") from None
    # a line from the standard start and moves (``startpos moves e2e4 e7e5``) is an opening
    # of those moves, as a PGN game's: an engine without setboard is told them
    return _checked(game, state, moves_from_start(game, text), where)


def _epd_as_fen(line: str) -> str:
    """A chess book line as FEN: an EPD line (four fields, then operations such as ``bm e4;``)
    gets the move counters FEN needs (or the ones its ``hmvc``/``fmvn`` operations give)."""
    words = line.split()
    if len(words) >= 6 and words[4].isdigit() and words[5].isdigit():
        return line  # a FEN already
    if len(words) < 4:
        return line  # not EPD either: the game says what is wrong
    import chess

    try:
        board = chess.Board()
        board.set_epd(line)
    except ValueError:
        return line
    return board.fen()


def _pgn_openings(game: Game[Any, Any], path: str, text: str, plies: int | None) -> list[Opening]:
    import chess.pgn

    stream = io.StringIO(text)
    out: list[Opening] = []
    number = 0
    while True:
        parsed = chess.pgn.read_game(stream)
        if parsed is None:
            return out
        number += 1
        where = f"{path}: game {number}"
        if parsed.errors:
            raise ScheduleError(f"{where}: {parsed.errors[0]}")
        fen = parsed.headers.get("FEN")
        try:
            state = game.parse_position(fen) if fen else game.initial_state()
            moves: list[str] = []
            for move in parsed.mainline_moves():
                if plies is not None and len(moves) == plies:
                    break
                text_move = move.uci()
                state = game.apply(state, game.move_from_text(state, text_move))
                moves.append(text_move)
        except GameError as exc:
            raise ScheduleError(f"{where}: {exc}") from None
        if not moves and not fen:
            continue  # a game without moves from the start: no opening at all
        _count(out, path)
        out.append(_checked(game, state, tuple(moves), where, fen))


def _polyglot_openings(game: Game[Any, Any], path: str, plies: int) -> list[Opening]:
    """``POLYGLOT_WALKS`` openings drawn from the Polyglot book at ``path`` by its weights."""
    import chess
    import chess.polyglot

    if game.name != "chess":
        raise ScheduleError(f"{path}: a Polyglot book holds chess moves, and this is {game.name}")
    try:
        size = len(files.read_bytes(path, files.BOOK.what, files.BOOK.limit()))
    except files.FileRefused as exc:
        raise ScheduleError(str(exc)) from None
    if size == 0 or size % POLYGLOT_ENTRY:
        raise ScheduleError(
            f"--openings {path} is not a Polyglot book ({size} bytes, not a whole number of "
            f"{POLYGLOT_ENTRY}-byte entries)"
        )
    rng = random.Random(derive_seed(0, "polyglot"))
    out: list[Opening] = []
    try:
        with chess.polyglot.open_reader(path) as reader:
            for walk in range(POLYGLOT_WALKS):
                board, state = chess.Board(), game.initial_state()
                moves: list[str] = []
                while len(moves) < plies:
                    entries = list(reader.find_all(board))
                    if not entries:
                        break
                    entry = rng.choices(entries, weights=[e.weight for e in entries])[0]
                    text = entry.move.uci()
                    board.push(entry.move)
                    state = game.apply(state, game.move_from_text(state, text))
                    moves.append(text)
                if not moves:
                    raise ScheduleError(f"--openings {path} has no move for the start position")
                out.append(_checked(game, state, tuple(moves), f"{path}: walk {walk + 1}"))
    except ScheduleError:
        raise
    except (OSError, ValueError) as exc:
        raise ScheduleError(
            f"--openings {path}: cannot read it as a Polyglot book: {exc}"
        ) from None
    return out


def _checked(
    game: Game[Any, Any],
    state: Any,
    moves: tuple[str, ...],
    where: str,
    start: str | None = None,
) -> Opening:
    """The opening that leads to ``state``; an opening where the game is over is refused."""
    if game.is_terminal(state):
        raise ScheduleError(f"{where}: the game is already over in this opening")
    position = game.format_position(state)
    initial = game.format_position(game.initial_state())
    return Opening(moves, None if position == initial and start is None else position)
