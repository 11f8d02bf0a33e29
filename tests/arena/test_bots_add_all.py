"""``arena bots add-all FOLDER`` (issue 32, item 8): a class registered at once, each bot
validated and stored under its own name, a table of who passed and why not; exit 0 only when
every bot passed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from arena_helpers import FIXTURES
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app

runner = CliRunner()


def test_a_class_is_added_with_a_table(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    (folder / "team").mkdir(parents=True)
    shutil.copy(FIXTURES / "first_legal.py", folder / "alice.py")
    shutil.copy(FIXTURES / "first_legal.py", folder / "team" / "main.py")
    shutil.copy(FIXTURES / "returns_99.py", folder / "bob.py")
    shutil.copy(FIXTURES / "first_legal.py", folder / "random.py")  # a built-in's name
    (folder / "_helper.py").write_text("")  # left out: not a bot
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    args = ["bots", "add-all", str(folder), "--game", "tictactoe", "--move-time", "5"]
    result = runner.invoke(app, [*args, "--db", db])
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["alice", "added", "version", "1"]
    assert lines[1].startswith("bob     failed   bad_output: unparseable move 99")
    assert lines[2].startswith("random  refused  bot name 'random' is taken by a built-in bot")
    assert lines[3].split() == ["team", "added", "version", "1"]
    assert lines[4] == "2 of 4 bots added"
    listed = runner.invoke(app, ["bots", "list", "--db", db, "--json"])
    assert sorted(b["name"] for b in json.loads(listed.stdout)) == ["alice", "team"]
    # all pass: exit 0, and a second run finds them unchanged
    for bad in ("bob.py", "random.py"):
        (folder / bad).unlink()
    again = runner.invoke(app, [*args, "--db", db, "--json"])
    assert again.exit_code == 0, again.output
    rows = json.loads(again.stdout)
    assert [(r["name"], r["result"], r["why"]) for r in rows] == [
        ("alice", "added", "version 1 (unchanged)"),
        ("team", "added", "version 1 (unchanged)"),
    ]
