"""``arena replay --step``: a prompt before each move, ``q`` quits, the end of input stops
quietly, Enter goes on to the end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app

runner = CliRunner()
PROMPT = "[Enter] next, q quit: "


@pytest.fixture
def stored(tmp_path: Path) -> tuple[str, int]:
    """A database with one played tictactoe match; (url, its number of moves)."""
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    args = ["play", "tictactoe", "--bot", "random", "--bot", "random", "--seed", "1"]
    played = runner.invoke(app, [*args, "--db", db, "--json", "--move-time", "5"])
    assert played.exit_code == 0, played.output
    record = json.loads(played.stdout)
    assert record["match_id"] == 1
    return db, len(record["moves"])


def step(db: str, typed: str) -> tuple[str, str]:
    result = runner.invoke(app, ["replay", "1", "--step", "--db", db], input=typed)
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


def test_q_quits_after_the_moves_shown(stored: tuple[str, int]) -> None:
    db, _ = stored
    stdout, stderr = step(db, "\n\nq\n\n")
    assert stdout.count("\nply ") == 2
    assert stderr.count(PROMPT) == 3  # the third answer was q
    assert "termination:" not in stdout


def test_enter_goes_to_the_end(stored: tuple[str, int]) -> None:
    db, moves = stored
    stdout, stderr = step(db, "\n" * moves)
    assert stdout.count("\nply ") == moves and stderr.count(PROMPT) == moves
    assert "termination: " in stdout


def test_end_of_input_stops_quietly(stored: tuple[str, int]) -> None:
    db, _ = stored
    stdout, stderr = step(db, "\n")
    assert stdout.count("\nply ") == 1
    assert stderr == PROMPT * 2 + "\n"  # nothing but the prompts; the last line ended
