"""``xboard:`` bots: chess engines that speak xboard/CECP, over the same pipes, clocks and fault
classes as every bot; real fairymax when it is installed (Debian puts it in /usr/games)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot_arena import games
from bot_arena.arena.cli.app import app
from bot_arena.arena.match import xboard
from bot_arena.arena.match.botref import XBOARD
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import BotPool
from bot_arena.arena.match.record import MatchRecord, Termination
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.match.xboard import level_command, parse_thinking
from bot_arena.arena.transport.limits import ResourceLimits
from tests import needs

# real chess engines and engine tournaments: seconds a test
pytestmark = pytest.mark.slow

PATH = os.environ.get("PATH", "") + os.pathsep + "/usr/games"
FAIRYMAX = shutil.which("fairymax", path=PATH)
needs_fairymax = needs.skip_unless(
    FAIRYMAX is not None, needs.ENGINES, "fairymax is not installed (apt-get install fairymax)"
)


def test_thinking_lines_and_time_controls() -> None:
    assert parse_thinking(b" 7     13       60     485785 c7c6 d2d3 d7d5") == {
        "depth": 7,
        "score": {"cp": 13},
        "time_ms": 600,
        "nodes": 485785,
        "pv": ["c7c6", "d2d3", "d7d5"],
    }
    assert parse_thinking(b"# times @ 158959561: real=844") is None
    assert parse_thinking(b"move e2e4") is None
    assert level_command(TimeControl(base=90, increment=0.5)) == "level 0 1:30 0.5\n"
    assert level_command(TimeControl(base=120)) == "level 0 2 0\n"
    assert level_command(TimeControl(move_time=2.5, depth=6)) == "st 2\nsd 6\n"


def play(white: str, black: str, tc: TimeControl, position: str | None = None) -> MatchRecord:
    with BotPool(ResourceLimits(startup_s=5.0)) as pool:
        return pool.play(
            games.get("chess"),
            [resolve(white), resolve(black)],
            time_control=tc,
            start_position=position,
            seed=2,
        )


@needs_fairymax
def test_fairymax_plays_a_whole_game_with_its_thinking() -> None:
    # 3 s a game and 0.1 s a move: fairymax still searches 4-6 plies a move and mates random
    # in about 35 plies (2.6 s of wall at load 9; at 20 s a game it thought 10.8 s for as much)
    record = play(f"xboard:{FAIRYMAX}", "random", TimeControl(base=3, increment=0.1))
    assert resolve(f"xboard:{FAIRYMAX}").kind == XBOARD
    assert record.seats[0].fault is None and record.seats[1].fault is None, record.seats
    assert record.termination is Termination.NORMAL and len(record.moves) > 4
    ours = [m for m in record.moves if m.seat == 0]
    assert all(m.info is not None and m.info["depth"] >= 1 and m.info["pv"] for m in ours)
    assert ours[0].info is not None and ours[0].info["pv"][0] == record.moves[0].move


@needs_fairymax
def test_an_engine_without_setboard_refuses_another_start() -> None:
    fen = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"
    record = play(f"xboard:{FAIRYMAX}", "random", TimeControl(move_time=1.0), fen)
    fault = record.seats[0].fault
    assert fault is not None and fault.termination is Termination.STALL
    assert fault.message == "the engine cannot set up a position (no setboard)"


def test_an_engine_that_exits_or_stays_silent(monkeypatch: pytest.MonkeyPatch) -> None:
    gone = play("xboard:false", "random", TimeControl(move_time=0.5))
    fault = gone.seats[0].fault
    assert fault is not None and fault.termination is Termination.STALL
    assert "no feature done=1" in fault.message and "exited" in fault.message
    # no features at all: protocol 1 after the quiet wait (CECP's two seconds, half a second
    # here: its length is not what is tested), then no move by the deadline
    monkeypatch.setattr(xboard, "PROTOCOL_1_WAIT_S", 0.5)
    silent = play("xboard:sleep 60", "random", TimeControl(move_time=0.3, margin=0.2))
    fault = silent.seats[0].fault
    assert fault is not None and fault.termination is Termination.TIMEOUT, silent.seats


@needs_fairymax
def test_xboard_engines_through_the_command_line(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    runner = CliRunner()
    spec = f"xboard:{FAIRYMAX}"
    # validated at 1.5 s a move: fairymax is told ``st 1`` (whole seconds) with 0.55 s of
    # grace, not ``st 2`` with 0.05 s (the default 2 s): half the thinking, more room on a
    # loaded machine
    add = ["bots", "add", spec, "-n", "fmax", "-g", "chess", "--move-time", "1.5", "--db", db]
    added = runner.invoke(app, add)
    assert added.exit_code == 0, added.output
    refused = runner.invoke(app, ["play", "tictactoe", "--bot", spec, "--bot", "random"])
    assert refused.exit_code == 2
    assert "an xboard engine plays chess, not tictactoe" in refused.output


def test_what_the_engine_is_told(tmp_path: Path) -> None:
    """Each game move reaches the engine once: its own moves it made, the others as usermove;
    the clock as level, time and otim before each go; a position other than the start by
    setboard."""
    import sys

    from bot_arena.arena.transport.sandbox.mode import Mode, SandboxSettings

    log = tmp_path / "engine.log"
    fake = Path(__file__).parent / "fixtures" / "fake_xboard.py"
    first_legal = str(Path(__file__).parent / "fixtures" / "first_legal.py")
    refs = [resolve(f"xboard:{sys.executable} {fake} {log}"), resolve(first_legal)]
    fen = "4k3/8/8/8/8/8/4P3/4K3 b - - 0 1"  # Black (seat 1, first_legal) moves first
    tc = TimeControl(base=60, increment=1.0)
    # unconfined: the engine writes its log where the test reads it
    with BotPool(ResourceLimits(startup_s=5.0), sandbox=SandboxSettings(Mode.OFF)) as pool:
        record = pool.play(games.get("chess"), refs, time_control=tc, start_position=fen)
    assert all(s.fault is None for s in record.seats), record.seats
    lines = log.read_text().splitlines()
    setup = ["new", "force", "post", f"setboard {fen}", "ping 1"]
    assert lines[:8] == ["xboard", "protover 2", "easy", *setup]
    told = [line.split()[1] for line in lines if line.startswith("usermove ")]
    assert told == [m.move for m in record.moves if m.seat == 1]  # each once, none of its own
    first_go = lines.index("go")
    assert lines[8 : first_go - 1] == [
        "force",
        f"usermove {record.moves[0].move}",
        "level 0 1 1",
        "time 6000",
    ]
    otim = lines[first_go - 1].split()
    assert otim[0] == "otim" and 6000 <= int(otim[1]) <= 6100  # 60 s, less its move, plus 1
    ours = [m for m in record.moves if m.seat == 0]
    thinking = {"depth": 3, "score": {"cp": -15}, "time_ms": 120, "nodes": 999}
    assert ours and all(m.info == {**thinking, "pv": [m.move]} for m in ours)


def test_options_are_named_as_the_engine_announced_them(tmp_path: Path) -> None:
    """An option's name is all that precedes its type (``Resign Threshold -spin ...``); one
    the engine did not announce is refused, naming those it did."""
    import sys

    from bot_arena.arena.transport.sandbox.mode import Mode, SandboxSettings

    log = tmp_path / "engine.log"
    fake = Path(__file__).parent / "fixtures" / "fake_xboard.py"
    spec = f"xboard:{sys.executable} {fake} {log}"
    tc = TimeControl(move_time=2.0)
    with BotPool(ResourceLimits(startup_s=5.0), sandbox=SandboxSettings(Mode.OFF)) as pool:
        good = [resolve(spec + ' "option.Resign Threshold=600"'), resolve("random")]
        record = pool.play(games.get("chess"), good, time_control=tc)
        bad = [resolve(spec + " option.Threads=2"), resolve("random")]
        refused = pool.play(games.get("chess"), bad, time_control=tc)
    assert record.seats[0].fault is None
    assert "option Resign Threshold=600" in log.read_text().splitlines()
    fault = refused.seats[0].fault
    assert fault is not None and fault.termination is Termination.STALL
    assert fault.message == "the engine has no option 'Threads' (it offers: Hash, Resign Threshold)"


def test_an_engine_started_ahead_is_greeted_at_once_and_once(tmp_path: Path) -> None:
    """``BotPool.prestart`` sends an xboard engine ``xboard`` and ``protover 2`` as it spawns
    it: they reach the engine before any game (lost, it would wait for the first game's
    start), and the first start does not send them again."""
    import sys
    import time

    from bot_arena.arena.transport.sandbox.mode import Mode, SandboxSettings

    log = tmp_path / "engine.log"
    fake = Path(__file__).parent / "fixtures" / "fake_xboard.py"
    first_legal = str(Path(__file__).parent / "fixtures" / "first_legal.py")
    refs = [resolve(f"xboard:{sys.executable} {fake} {log}"), resolve(first_legal)]
    # unconfined: the engine writes its log where the test reads it
    with BotPool(ResourceLimits(startup_s=30.0), sandbox=SandboxSettings(Mode.OFF)) as pool:
        pool.prestart(refs)
        end = time.monotonic() + 30.0
        while time.monotonic() < end and not (log.exists() and "protover 2" in log.read_text()):
            time.sleep(0.02)
        assert log.exists() and log.read_text().splitlines() == ["xboard", "protover 2"]
        tc = TimeControl(move_time=5.0)
        records = [pool.play(games.get("chess"), refs, time_control=tc) for _ in "ab"]
    assert all(s.fault is None for r in records for s in r.seats), records[0].seats
    lines = log.read_text().splitlines()
    assert lines.count("xboard") == 1 and lines.count("protover 2") == 1, lines
    assert lines[:6] == ["xboard", "protover 2", "easy", "new", "force", "post"]
