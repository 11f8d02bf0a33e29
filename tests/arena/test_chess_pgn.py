"""Chess through the command line, and PGN that cutechess and Ordo users can feed to their tools:
python-chess reads our export back to the same moves and results (SAN, SetUp/FEN for another
start, TimeControl, Termination, score/depth/time comments), and ``arena rate`` on it gives the
leaderboard's ratings."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app

# each test runs the arena command (tournaments, several processes): seconds a test
pytestmark = pytest.mark.slow

FAKE = Path(__file__).parent / "fixtures" / "fake_uci.py"
ENGINE = f"uci:{sys.executable} {FAKE} good"
runner = CliRunner()


def arena(*args: str) -> Any:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def read_all(text: str) -> list[chess.pgn.Game]:
    stream = io.StringIO(text)
    out = []
    while (game := chess.pgn.read_game(stream)) is not None:
        assert not game.errors, game.errors
        out.append(game)
    return out


def test_exported_pgn_reads_back_with_python_chess_and_rates_the_same(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    arena(
        *("tournament", "run", "chess", "--bot", ENGINE, "--bot", "random", "--games", "2"),
        *("--clock", "30+0.5", "--db", db, "--seed", "4"),
    )
    records = json.loads(arena("export", "--db", db).stdout)
    pgn = arena("export", "--format", "pgn", "--db", db).stdout
    parsed = read_all(pgn)
    assert len(parsed) == len(records) == 2
    for game, record in zip(parsed, records, strict=True):
        headers = game.headers
        white, black = (s["bot"] for s in record["seats"])
        assert (headers["White"], headers["Black"]) == (white, black)
        assert headers["TimeControl"] == "30+0.5" and "FEN" not in headers
        assert headers["Termination"] == "normal"
        assert [m.uci() for m in game.mainline_moves()] == [m["move"] for m in record["moves"]]
        board = game.end().board()
        outcome = board.outcome(claim_draw=True)
        assert outcome is not None  # the game ended on the board: mate or a draw rule
        assert headers["Result"] == outcome.result()
        ranks = [s["rank"] for s in record["seats"]]
        expected = "1-0" if ranks == [1, 2] else "0-1" if ranks == [2, 1] else "1/2-1/2"
        assert headers["Result"] == expected
        engine_seat = 0 if white == ENGINE else 1
        comments = [node.comment for node in game.mainline()]
        for ply, (comment, move) in enumerate(zip(comments, record["moves"], strict=True)):
            seconds = f"{move['time_ms'] / 1000:.3f}s"
            # python-chess joins the comment after the last move (how it ended) to the move's
            if ply % 2 == engine_seat:  # the fake engine says score cp -23 at depth 7
                assert comment.startswith(f"-0.23/7 {seconds}"), comment
            else:
                assert comment.startswith(seconds) and "/" not in comment, comment
        reasons = (
            "checkmate",
            "stalemate",
            "insufficient material",
            "fifty moves",
            "threefold repetition",
        )
        assert comments[-1].endswith(reasons), comments[-1]
        first_san = chess.Board().san(chess.Move.from_uci(record["moves"][0]["move"]))
        assert f"1. {first_san} {{" in pgn  # SAN in the movetext

    pgn_file = tmp_path / "games.pgn"
    pgn_file.write_text(pgn)
    rated = json.loads(arena("rate", str(pgn_file), "--json").stdout)
    board = json.loads(arena("leaderboard", "--db", db, "--json").stdout)
    assert {r["bot"]: round(r["elo"], 6) for r in rated} == {
        r["bot"]: round(r["elo"], 6) for r in board
    }


def test_a_game_from_another_position_has_setup_and_fen(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    fen = "6k1/5ppp/8/8/8/8/5PPP/R5K1 b - - 0 1"  # Black to move: the movetext starts 1...
    played = arena(
        *("play", "chess", "--position", fen, "--bot", "random", "--bot", ENGINE),
        *("--move-time", "2", "--json", "--db", db),
    )
    record = json.loads(played.stdout)
    (game,) = read_all(arena("export", "--format", "pgn", "--db", db).stdout)
    assert game.headers["SetUp"] == "1" and game.headers["FEN"] == fen
    assert game.headers["TimeControl"] == "1/2"
    assert game.board().fen() == fen
    assert [m.uci() for m in game.mainline_moves()] == [m["move"] for m in record["moves"]]
    replay = arena("replay", str(record["match_id"]), "--db", db).stdout
    first = record["moves"][0]["move"]
    san = chess.Board(fen).san(chess.Move.from_uci(first))
    assert f"ply 1: seat 1 ({ENGINE}) plays {san} ({first}) in " in replay
    assert "\n  score -0.23; depth 7; nodes 4242; pv " in replay
