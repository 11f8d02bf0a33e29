"""``name=NAME`` in an engine spec (issue 32, item 3): the engine plays, is stored and is shown
as NAME everywhere instead of its command line; the name is no part of what runs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.arena.match.botref import BotSpecError
from bot_arena.arena.match.botspec import resolve
from tests import needs

runner = CliRunner()
GAMES_PATH = os.environ.get("PATH", "") + os.pathsep + "/usr/games"
STOCKFISH = shutil.which("stockfish", path=GAMES_PATH)
needs_stockfish = needs.skip_unless(
    STOCKFISH is not None, needs.ENGINES, "stockfish is not installed (apt-get install stockfish)"
)


@needs_stockfish
def test_named_engines_are_shown_by_their_names(tmp_path: Path) -> None:
    weak = f'uci:{STOCKFISH} name=sf0 option.Threads=1 "option.Skill Level=0"'
    strong = f'uci:{STOCKFISH} "option.Skill Level=20" name=sf20 option.Threads=1'
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    args = ["tournament", "run", "chess", "--bot", weak, "--bot", strong, "--games", "2"]
    args += ["--nodes", "2000", "--max-moves", "6", "--move-time", "10", "-j", "1", "--db", db]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "sf0" in result.stdout and "Skill" not in result.stdout
    board = runner.invoke(app, ["leaderboard", "--db", db, "--json"])
    assert sorted(row["bot"] for row in json.loads(board.stdout)) == ["sf0", "sf20"]
    matches = runner.invoke(app, ["matches", "--db", db])
    assert "sf0 vs sf20" in matches.stdout and "stockfish" not in matches.stdout


def test_the_name_is_no_part_of_the_command_nor_the_version() -> None:
    plain = resolve(f"cmd:{os.path.realpath('/bin/sh')}")  # a program that is there
    program = plain.target
    named = resolve(f"uci:{program} name=mine option.Hash=16")
    bare = resolve(f"uci:{program} option.Hash=16")
    assert named.name == "mine" and bare.name == f"uci:{program} option.Hash=16"
    assert named.target == bare.target and named.sha256 == bare.sha256
    with pytest.raises(BotSpecError, match="given twice"):
        resolve(f"uci:{program} name=a name=b")
    with pytest.raises(BotSpecError, match="not allowed"):
        resolve(f"uci:{program} 'name=two words'")
