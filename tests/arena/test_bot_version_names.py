"""Earlier versions by name (issue 32, item 7): ``NAME@N`` and ``NAME@SHA-PREFIX`` wherever a
registered bot is named, and ``arena bots source`` gives a stored version's source back."""

from __future__ import annotations

import shutil
from pathlib import Path

from arena_helpers import FIXTURES
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app

runner = CliRunner()


def test_an_old_version_plays_against_the_new_one(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    bot = tmp_path / "mine.py"
    shutil.copy(FIXTURES / "first_legal.py", bot)
    add = ["bots", "add", str(bot), "--name", "mine", "--game", "tictactoe", "--move-time", "5"]
    assert runner.invoke(app, [*add, "--db", db]).exit_code == 0
    first = bot.read_text()
    bot.write_text(first + "\n# version two\n")
    assert runner.invoke(app, [*add, "--db", db]).exit_code == 0
    shown = runner.invoke(app, ["bots", "show", "mine", "--db", db, "--json"])
    sha1 = shown.stdout.split('"sha256": "')[1][:8]
    args = ["play", "tictactoe", "--move-time", "5", "--db", db, "--json"]
    for old in ("mine@1", f"mine@{sha1}"):
        played = runner.invoke(app, [*args, "--bot", "mine", "--bot", old])
        assert played.exit_code == 0, played.output
        assert f'"bot": "{old}"' in played.stdout
    missing = runner.invoke(app, [*args, "--bot", "mine@3", "--bot", "random"])
    assert missing.exit_code == 2 and "unknown bot 'mine@3'" in missing.stderr
    # the stored source of version 1, on stdout and into a folder
    source = runner.invoke(app, ["bots", "source", "mine@1", "--db", db])
    assert source.exit_code == 0 and source.stdout == first
    out = tmp_path / "out"
    written = runner.invoke(app, ["bots", "source", "mine@2", "-o", str(out), "--db", db])
    assert written.exit_code == 0, written.output
    assert (out / "mine.py").read_text() == first + "\n# version two\n"
    again = runner.invoke(app, ["bots", "source", "mine@2", "-o", str(out), "--db", db])
    assert again.exit_code == 2 and "File exists" in again.stderr  # never over a file
