"""A bot that returns a move value its game writes as no move: the fault quotes the value the
bot returned, never the text the game made of it (issue 32, item 6)."""

from __future__ import annotations

import json

from arena_helpers import FIXTURES
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app

runner = CliRunner()


def test_fault_quotes_the_value_the_bot_returned() -> None:
    args = ["play", "tictactoe", "--bot", str(FIXTURES / "returns_99.py"), "--bot", "random"]
    result = runner.invoke(app, [*args, "--move-time", "5", "--no-save", "--json"])
    assert result.exit_code == 0, result.output
    seat = json.loads(result.stdout)["seats"][0]
    assert seat["fault"]["termination"] == "bad_output"
    message = seat["fault"]["message"]
    assert message.startswith("unparseable move 99:"), message
    assert "'100'" not in message.split(":")[0]  # the text the bot never sent is not the move
    shown = runner.invoke(app, [*args, "--move-time", "5", "--no-save"])
    assert "unparseable move 99: tictactoe writes this int as '100'" in shown.stdout
