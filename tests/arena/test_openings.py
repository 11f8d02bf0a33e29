"""Opening books (``--openings``): FEN/EPD lines, PGN games (cut with ``--openings-plies``) and
other games' positions; each game pair plays one opening with colours swapped, the book taken in
order or shuffled by the seed; a bad book is one line before anything is stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import chess
import pytest
from typer.testing import CliRunner

from bot_arena import games
from bot_arena.arena.cli.app import app
from bot_arena.arena.tournament.book import book_openings, read_book
from bot_arena.arena.tournament.schedule import ScheduleError, schedule

runner = CliRunner()
FENS = [
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1",
]
PGN = """[Event "a"]
[White "x"]
[Black "y"]
[Result "*"]

1. e4 c5 2. Nf3 d6 3. d4 *

[Event "b"]
[White "x"]
[Black "y"]
[Result "*"]
[SetUp "1"]
[FEN "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"]

1. Kd2 Kd7 2. e4 *
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_fen_and_epd_lines(tmp_path: Path) -> None:
    chess_game = games.get("chess")
    epd = 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - bm e5; id "e4";'
    path = write(tmp_path, "book.epd", f"# a comment\n{FENS[1]}\n\n{epd}\n")
    book = read_book(chess_game, path)
    assert [o.position for o in book] == [FENS[1], FENS[0]]
    assert all(o.moves == () for o in book)


def test_pgn_games_are_openings_cut_to_plies(tmp_path: Path) -> None:
    chess_game = games.get("chess")
    path = write(tmp_path, "book.pgn", PGN)
    whole = read_book(chess_game, path)
    assert [o.moves for o in whole] == [
        ("e2e4", "c7c5", "g1f3", "d7d6", "d2d4"),
        ("e1d2", "e8d7", "e2e4"),
    ]
    board = chess.Board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")
    for move in whole[1].moves:
        board.push_uci(move)
    assert whole[1].position is not None and whole[1].position.startswith(board.fen())
    cut = read_book(chess_game, path, plies=2)
    assert [o.moves for o in cut] == [("e2e4", "c7c5"), ("e1d2", "e8d7")]


@pytest.mark.parametrize(
    ("name", "text", "game", "message"),
    [
        ("bad.epd", "rnbqkbnr/pppppppp w\n", "chess", "bad.epd:1: chess: position"),
        ("mate.fen", "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1\n", "chess", "mate.fen:1: the game is over"),
        ("t.txt", "xx\n", "tictactoe", "t.txt:1: "),
        ("t.pgn", PGN, "tictactoe", "PGN openings are chess games"),
        ("empty.fen", "# nothing\n", "chess", "holds no opening"),
    ],
)
def test_a_bad_book_is_one_line(
    tmp_path: Path, name: str, text: str, game: str, message: str
) -> None:
    with pytest.raises(ScheduleError) as info:
        read_book(games.get(game), write(tmp_path, name, text))
    assert message.replace("the game is over", "the game is already over") in str(info.value)
    assert "\n" not in str(info.value)


def test_pairs_take_the_book_in_order_or_shuffled(tmp_path: Path) -> None:
    chess_game = games.get("chess")
    book = read_book(chess_game, write(tmp_path, "b.fen", "\n".join(FENS)))
    pairings = schedule("round-robin", 4, 2, 4, seed=9)  # 6 pairs x 2 game pairs
    taken = book_openings(pairings, book, "sequential", 9)
    by_pair: dict[tuple[int, int], set[Any]] = {}
    for p, o in zip(pairings, taken, strict=True):
        by_pair.setdefault((p.group, p.opening), set()).add(o.position)
    assert all(len(v) == 1 for v in by_pair.values())  # both colours play the same opening
    firsts = [next(iter(v)) for v in by_pair.values()]
    assert firsts == [FENS[i % 3] for i in range(12)]  # each new pair the next, round again
    shuffled = book_openings(pairings, book, "random", 9)
    assert shuffled == book_openings(pairings, book, "random", 9)
    order = list(dict.fromkeys(o.position for o in shuffled))
    assert sorted(order) == sorted(FENS)  # every entry before any repeats


def arena(*args: str, code: int = 0) -> Any:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result


def test_a_tournament_plays_each_opening_with_colours_swapped(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    book = write(tmp_path, "book.pgn", PGN)
    arena(
        *("tournament", "run", "chess", "--bot", "random", "--bot", "random:seed=2"),
        *("--bot", "random:seed=3", "--openings", book, "--openings-plies", "3"),
        *("--db", db, "--seed", "1", "--move-time", "2"),
    )
    records = json.loads(arena("export", "--db", db).stdout)
    assert len(records) == 6
    chess_game = games.get("chess")
    expected = [o.position for o in read_book(chess_game, book, plies=3)]
    # three pairs in schedule order: book entries 0, 1, 0, each pair's two games alike
    starts = [r["start_position"] for r in records]
    assert sorted(set(starts)) == sorted(expected) and starts.count(expected[0]) == 4
    pairs: dict[str, list[list[str]]] = {}
    for r in records:
        pairs.setdefault(r["start_position"], []).append([s["bot"] for s in r["seats"]])
    for seatings in pairs.values():
        assert all(list(reversed(s)) in seatings for s in seatings)  # colours swapped
    shown = " ".join(arena("tournament", "show", "1", "--db", db).stdout.split())
    assert f"openings {book} (2 openings, sequential, cut to 3 plies)" in shown


def test_book_options_are_checked_before_anything_is_stored(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    base = ["tournament", "run", "chess", "--bot", "random", "--bot", "random:seed=2"]
    missing = arena(*base, "--openings", str(tmp_path / "nope.pgn"), "--db", str(db), code=2)
    assert "cannot read --openings" in missing.output
    both = arena(*base, "--openings", "x", "--opening-plies", "2", "--db", str(db), code=2)
    assert "not both" in both.output
    cut = arena(*base, "--openings-plies", "2", "--db", str(db), code=2)
    assert "give the book" in cut.output
    assert not db.exists()


def test_other_games_take_positions_in_their_own_notation(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    ttt = games.get("tictactoe")
    start = ttt.apply(ttt.initial_state(), ttt.legal_moves(ttt.initial_state())[4])
    position = ttt.format_position(start)
    book = write(tmp_path, "ttt.txt", position + "\n")
    arena(
        *("tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=2"),
        *("--openings", book, "--db", db, "--seed", "1", "--move-time", "2"),
    )
    records = json.loads(arena("export", "--db", db).stdout)
    assert [r["start_position"] for r in records] == [position, position]
