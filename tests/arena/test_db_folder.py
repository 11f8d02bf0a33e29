"""``--db FOLDER`` is said to be a folder (issue 32, item 12), for commands that read and
commands that store alike, before anything is played."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app

runner = CliRunner()


@pytest.mark.parametrize(
    "command",
    [
        ["leaderboard"],
        ["matches"],
        ["play", "tictactoe", "--bot", "random", "--bot", "random"],
        ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1"],
    ],
)
@pytest.mark.parametrize("form", ["{}", "{}/", "sqlite:///{}"])
def test_a_folder_is_said_to_be_one(tmp_path: Path, command: list[str], form: str) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    result = runner.invoke(app, [*command, "--db", form.format(folder)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        f"error: database sqlite:///{folder} is a folder, not a database file; name a file"
        f" in it: --db {folder / 'arena.db'}"
    )
    assert result.stdout == ""  # nothing played, not even the board shown
    assert list(folder.iterdir()) == []
