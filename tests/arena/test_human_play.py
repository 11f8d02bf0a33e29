"""``arena play`` with a human seat, through the command line with typed input: each position is
shown once, the time left once per move, and ``resign`` or ``quit`` ends the game as the human's
loss, stored as a resignation (a loss, not a fault of a program)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from arena_helpers import FIXTURES
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app

runner = CliRunner()
FIRST_LEGAL = str(FIXTURES / "first_legal.py")
# against first_legal (o takes the lowest free cell) x plays 5, 9, 3, 7 and wins on 3-5-7; "zz"
# is not a move and is asked again
WINNING = "5\n9\nzz\n3\n7\n"


def play(typed: str, *options: str) -> tuple[str, str]:
    """Play tictactoe, the human first against first_legal; (stdout, everything shown)."""
    args = ["play", "tictactoe", "--bot", "human", "--bot", FIRST_LEGAL, *options]
    result = runner.invoke(app, args, input=typed)
    assert result.exit_code == 0, result.output
    return result.stdout, result.output


@pytest.mark.parametrize(
    ("time_options", "shown"),
    [
        ((), None),  # a human has no limit unless one is given: no time shown
        (("--move-time", "30"), "30.0s left"),
        (("--clock", "100"), "100.0s left"),
    ],
)
def test_every_position_shows_once_with_the_time_left(
    time_options: tuple[str, ...], shown: str | None
) -> None:
    stdout, output = play(WINNING, *time_options, "--no-save")
    assert "result: seat 0 (human) wins; termination normal" in stdout
    plays = output.count(" plays ")
    assert plays == 7
    # the start and the position after each move, each once: the board's row "7 8 9" is in
    # every rendering (the human's seat shows the positions it is asked about, the command the
    # others)
    assert output.count("    7 8 9") == 1 + plays
    assert output.count("your move") == 4  # once per move: not again after "zz"
    assert "move 'zz' is not a cell" in output
    if shown is None:
        assert "left" not in output
    else:
        assert output.count(shown) == 4


@pytest.mark.parametrize(
    ("typed", "message"),
    [("resign", "resigned"), ("quit", "quit the game"), (" Resign ", "resigned")],
)
def test_resign_or_quit_loses_and_is_stored(tmp_path: Path, typed: str, message: str) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    stdout, output = play(f"5\n{typed}\n", "--db", db)
    assert "or resign, quit" in output
    assert "result: seat 1 (first_legal) wins; termination resign" in stdout
    assert f"  gave up: seat 0 (human) resign: {message}\n" in stdout
    assert "saved as match 1" in stdout
    stored = runner.invoke(app, ["replay", "1", "--json", "--db", db])
    assert stored.exit_code == 0, stored.output
    record = json.loads(stored.stdout)
    assert [m["move"] for m in record["moves"]] == ["5", "1"]
    command = typed.strip().lower()
    assert record["seats"][0]["fault"] == {
        "termination": "resign",
        "message": message,
        "reason": command,
        "ply": 2,
    }
    assert record["seats"][1]["rank"] == 1 and record["seats"][1]["fault"] is None
    board = runner.invoke(app, ["leaderboard", "--json", "--db", db])
    human = next(row for row in json.loads(board.stdout) if row["bot"] == "human")
    assert (human["losses"], human["crashes"], human["timeouts"], human["illegal"]) == (1, 0, 0, 0)


def test_a_human_that_resigns_among_three_leaves_every_position_shown_once() -> None:
    """With three players the game goes on after a fault, the stand-in playing the human's
    moves: the positions the human is no longer asked about are shown by the command."""
    args = ["play", "nim", "--bot", "human", "--bot", "random", "--bot", "random", "--no-save"]
    result = runner.invoke(app, [*args, "--seed", "3"], input="resign\n")
    assert result.exit_code == 0, result.output
    output = result.output
    assert output.count("your move") == 1
    assert "(stand-in)" in output  # the game went on past the human's turn
    assert output.count("pile 1:") == 1 + output.count(" plays ")
    assert "gave up: seat 0 (human) resign: resigned" in result.stdout
