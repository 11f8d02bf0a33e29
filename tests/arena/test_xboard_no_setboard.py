"""An xboard engine without ``setboard`` (fairymax: ``setboard=0``) plays a game whose start is
the standard position and moves (issue 32, item 1, in part): after ``new``/``force`` it is told
those moves, as cutechess does; a start from another FEN is still refused for it."""

from __future__ import annotations

import json
import os
import shutil

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


@needs_fairymax
def test_another_fen_is_still_refused_for_it() -> None:
    record = play("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    seats = record["seats"]
    assert isinstance(seats, list) and seats[0]["fault"]["termination"] == "stall"
    assert seats[0]["fault"]["message"] == "the engine cannot set up a position (no setboard)"
