"""``--config run.toml`` (issue 32, item 3): a whole run's options from a TOML file, the command
line's options winning over it; a bad file is one line, exit 2, before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from bot_arena.arena.cli.app import app

runner = CliRunner()
CONFIG = """\
bot = ["random", "random:seed=1", "alphabeta:depth=1"]
move-time = [5]
games = 4
max_moves = 3
jobs = 1
seed = 3
"""


def run(tmp_path: Path, *args: str) -> dict[str, object]:
    config = tmp_path / "run.toml"
    config.write_text(CONFIG)
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    result = runner.invoke(app, ["tournament", "run", "tictactoe", "--config", str(config), *args,
                                 "--db", db, "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    summary: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return summary


def test_the_file_sets_the_run(tmp_path: Path) -> None:
    summary = run(tmp_path)
    assert [b["bot"] for b in summary["bots"]] == [  # type: ignore[attr-defined]
        "random",
        "random:seed=1",
        "alphabeta:depth=1",
    ]
    assert summary["progress"] == {"pending": 0, "running": 0, "done": 12, "void": 0}
    assert summary["seed"] == 3


def test_the_command_line_wins(tmp_path: Path) -> None:
    summary = run(tmp_path, "--games", "2", "--bot", "random", "--bot", "minimax")
    assert [b["bot"] for b in summary["bots"]] == ["random", "minimax"]  # type: ignore[attr-defined]
    assert summary["progress"] == {"pending": 0, "running": 0, "done": 2, "void": 0}


def test_a_bad_file_is_one_line(tmp_path: Path) -> None:
    unknown, broken, shape = tmp_path / "a.toml", tmp_path / "b.toml", tmp_path / "c.toml"
    unknown.write_text("nope = 1\n")
    broken.write_text("bot = [\n")
    shape.write_text("max-games = [1, 2]\n")
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    for path, says in [
        (unknown, "unknown setting 'nope' (settings: allow-read, alpha, beta, bot, clock, "),
        (broken, "is not TOML: "),
        (shape, "max-games takes one value, not list"),
    ]:
        result = runner.invoke(app, ["sprt", "tictactoe", "--config", str(path), "--db", db])
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(f"error: --config {str(path)!r}") and says in result.stderr
        assert len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "arena.db").exists()  # refused before anything ran
