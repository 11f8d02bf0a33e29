"""Polyglot ``.bin`` books (issue 32, item 4): ``--openings book.bin`` plays walks drawn by the
book's weights from the standard start, to ``--openings-plies`` (default 8); a file that is not
a book is one line, exit 2. The book is built here, entry by entry, in Polyglot's format."""

from __future__ import annotations

import json
import struct
from collections import Counter
from pathlib import Path

import chess
import chess.polyglot
from typer.testing import CliRunner

from bot_arena import games
from bot_arena.arena.cli.app import app
from bot_arena.arena.tournament.book import POLYGLOT_WALKS, read_book

runner = CliRunner()


def entry(moves: list[str], move: str, weight: int) -> tuple[int, int, int]:
    """The (key, move, weight) of ``move`` after ``moves`` from the start."""
    board = chess.Board()
    for played in moves:
        board.push_uci(played)
    m = chess.Move.from_uci(move)
    raw = chess.square_file(m.to_square) | chess.square_rank(m.to_square) << 3
    raw |= chess.square_file(m.from_square) << 6 | chess.square_rank(m.from_square) << 9
    return chess.polyglot.zobrist_hash(board), raw, weight


def write_book(path: Path) -> Path:
    """1. e4 (weight 3) or 1. d4 (weight 1), answered by ...e5 and ...d5; nothing after."""
    entries = sorted(
        [
            entry([], "e2e4", 3),
            entry([], "d2d4", 1),
            entry(["e2e4"], "e7e5", 1),
            entry(["d2d4"], "d7d5", 1),
        ]
    )
    path.write_bytes(b"".join(struct.pack(">QHHI", k, m, w, 0) for k, m, w in entries))
    return path


def test_walks_follow_the_weights(tmp_path: Path) -> None:
    book = read_book(games.get("chess"), str(write_book(tmp_path / "book.bin")))
    assert len(book) == POLYGLOT_WALKS
    lines = Counter(opening.moves for opening in book)
    assert set(lines) == {("e2e4", "e7e5"), ("d2d4", "d7d5")}  # to where the book ends
    assert 650 <= lines[("e2e4", "e7e5")] <= 850  # three in four
    assert read_book(games.get("chess"), str(tmp_path / "book.bin")) == book  # the same walks
    cut = read_book(games.get("chess"), str(tmp_path / "book.bin"), plies=1)
    assert {opening.moves for opening in cut} == {("e2e4",), ("d2d4",)}


def test_a_tournament_plays_the_book(tmp_path: Path) -> None:
    book = write_book(tmp_path / "book.bin")
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    bots = ["--bot", "random", "--bot", "random:seed=1", "--bot", "random:seed=2"]
    args = ["tournament", "run", "chess", *bots, "--openings", str(book), "--games", "2"]
    args += ["--openings-order", "random", "--max-moves", "3", "--jobs", "1", "--db", db]
    result = runner.invoke(app, [*args, "--seed", "4"])
    assert result.exit_code == 0, result.output
    exported = runner.invoke(app, ["export", "--format", "jsonl", "--db", db])
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    assert len(records) == 6
    after = {
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
        "rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2",
    }
    assert {r["start_position"] for r in records} <= after


def test_a_file_that_is_not_a_book_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"x" * 17)
    args = ["tournament", "run", "chess", "--bot", "random", "--bot", "random:seed=1"]
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    result = runner.invoke(app, [*args, "--openings", str(bad), "--db", db])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: --openings {bad} is not a Polyglot book (17 bytes, not a whole number of"
        " 16-byte entries)\n"
    )
    book = str(write_book(tmp_path / "book.bin"))
    other = runner.invoke(app, [*args[:2], "tictactoe", *args[3:], "--openings", book, "--db", db])
    assert other.exit_code == 2 and "a Polyglot book holds chess moves" in other.stderr
