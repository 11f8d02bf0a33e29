"""An xboard engine without ``setboard`` (fairymax: ``setboard=0``) plays from a book, from
``--opening-plies`` or from a start that is the standard position and moves (issue 32, item 1):
after ``new``/``force`` it is told the moves from the standard start, as cutechess does; a start
from another FEN (``--position FEN``, an EPD book's lines) is refused for it with one line before
anything runs: the engine is started once to read its features, as validation starts a bot."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.arena.match.uci import START_FEN
from tests import needs

pytestmark = pytest.mark.slow
FAIRYMAX = shutil.which("fairymax", path=os.environ.get("PATH", "") + os.pathsep + "/usr/games")
needs_fairymax = needs.skip_unless(
    FAIRYMAX is not None, needs.ENGINES, "fairymax is not installed (apt-get install fairymax)"
)
RULES = ["--depth", "2", "--move-time", "5", "--max-moves", "4", "--no-save", "--json"]


def play(position: str) -> dict[str, object]:
    args = ["play", "chess", "--bot", f"xboard:{FAIRYMAX}", "--bot", "random"]
    result = CliRunner().invoke(app, [*args, "--position", position, *RULES])
    assert result.exit_code == 0, result.output
    record: dict[str, object] = json.loads(result.stdout)
    return record


@needs_fairymax
def test_moves_from_the_standard_start_need_no_setboard() -> None:
    record = play(f"{START_FEN} moves g1f3 g8f6")
    seats = record["seats"]
    assert isinstance(seats, list) and [s["fault"] for s in seats] == [None, None]
    assert record["termination"] == "adjudicated"  # --max-moves 4: played to the end
    assert record["start_position"] == f"{START_FEN} moves g1f3 g8f6"


REFUSED = "the xboard engine has no setboard (it sent setboard=0), so it cannot start from"


@needs_fairymax
def test_another_fen_is_refused_before_the_game() -> None:
    args = ["play", "chess", "--bot", f"xboard:{FAIRYMAX}", "--bot", "random"]
    position = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"
    result = CliRunner().invoke(app, [*args, "--position", position, *RULES])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""  # no game: no record
    assert result.stderr.count("\n") == 1 and REFUSED in result.stderr
    assert f"'{position}'" in result.stderr


@needs_fairymax
@pytest.mark.parametrize("command", ["tournament run", "sprt"])
def test_a_fen_book_is_refused_before_anything_is_stored(tmp_path: Path, command: str) -> None:
    """An EPD book whose lines carry no moves: one line, exit 2, no database made; the same
    book with an engine that offers setboard (stockfish speaks UCI) would play."""
    book = tmp_path / "book.epd"
    book.write_text("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - bm Bb5;\n")
    db = tmp_path / "arena.db"
    args = [*command.split(), "chess", "--bot", f"xboard:{FAIRYMAX} name=fm", "--bot", "random"]
    rules = ["--depth", "2", "--move-time", "5", "--max-moves", "3", "--jobs", "1"]
    result = CliRunner().invoke(
        app, [*args, *rules, "--openings", str(book), "--db", f"sqlite:///{db}"]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: fm: {REFUSED} 'r1bqkbnr/pppp1ppp/2n5/4p3/")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert not db.exists()


@needs_fairymax
def test_book_openings_reach_it_as_moves(tmp_path: Path) -> None:
    """A tournament's openings (a PGN book here; an SPRT's random plies below, in job
    processes) are told to fairymax as moves from the start: no game is a stall."""
    book = tmp_path / "book.pgn"
    book.write_text('[Event "a"]\n\n1. e4 e5 2. Nf3 *\n\n[Event "b"]\n\n1. d4 d5 *\n')
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    engine = f"xboard:{FAIRYMAX} name=fm"
    runner = CliRunner()
    args = ["tournament", "run", "chess", "--bot", engine, "--bot", "random", "--games", "2"]
    rules = ["--depth", "2", "--move-time", "5", "--max-moves", "3", "--db", db]
    played = runner.invoke(app, [*args, "--openings", str(book), "--jobs", "1", *rules])
    assert played.exit_code == 0, played.output
    sprt = ["sprt", "chess", "--bot", engine, "--bot", "random", "--max-games", "4"]
    tested = runner.invoke(app, [*sprt, "--opening-plies", "3", "--jobs", "2", *rules])
    assert tested.exit_code == 0, tested.output
    exported = runner.invoke(app, ["export", "--format", "jsonl", "--db", db])
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    assert len(records) == 6  # two games of the tournament, four of the SPRT
    for record in records:
        assert [s["fault"] for s in record["seats"]] == [None, None], record["seats"]
        # each game began past its opening: a position after a pawn move, or the standard
        # start and the opening's moves (three random plies may all be piece moves)
        fen, _, moves = record["start_position"].partition(" moves ")
        assert fen != START_FEN or len(moves.split()) >= 3, record["start_position"]


def test_an_engine_with_setboard_plays_the_fen_book(tmp_path: Path) -> None:
    """The probe refuses only an engine without setboard: a fake xboard engine that offers it
    (tests/arena/fixtures/fake_xboard.py) plays the same FEN book, each game from its line."""
    import sys

    fixtures = Path(__file__).parent / "fixtures"
    fake = f"xboard:{sys.executable} {fixtures / 'fake_xboard.py'} {tmp_path / 'engine.log'}"
    book = tmp_path / "book.epd"
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - -"
    book.write_text(f"{fen} bm e4;\n")
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    args = ["tournament", "run", "chess", "--bot", f"{fake} name=fake"]
    args += ["--bot", str(fixtures / "first_legal.py"), "--games", "2", "--jobs", "1"]
    rules = ["--move-time", "5", "--max-moves", "3", "--sandbox", "off", "--db", db]
    played = CliRunner().invoke(app, [*args, *rules, "--openings", str(book)])
    assert played.exit_code == 0, played.output
    exported = CliRunner().invoke(app, ["export", "--format", "jsonl", "--db", db])
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    assert len(records) == 2
    for record in records:
        assert [s["fault"] for s in record["seats"]] == [None, None], record["seats"]
        assert record["start_position"].startswith(fen)
