"""``arena play`` says why a bot failed under the fault line: the exception with its file and
line, else the end of the bot's stderr; a few lines, its control characters shown as escapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from arena_helpers import FIXTURES
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app

runner = CliRunner()


def fault_block(bot: str, *options: str) -> list[str]:
    """The fault line of seat 0 (``bot``, against random) and the indented lines under it."""
    args = ["play", "tictactoe", "--bot", bot, "--bot", "random", "--no-save", "--no-show"]
    result = runner.invoke(app, [*args, *options])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  fault: seat 0 "))
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith("    "):
            break
        block.append(line)
    return block


@pytest.mark.parametrize(
    ("bot", "evidence"),
    [
        (
            "raise_third.py",  # raises while choosing its third move
            [
                '      File "{path}", line 11, in choose_move',
                '        raise RuntimeError("third move is cursed")',
                "    RuntimeError: third move is cursed",
            ],
        ),
        (
            "syntax_error.py",  # cannot be loaded
            [
                '      File "{path}", line 1',
                "        def choose_move(game, state, budget)",
                "    SyntaxError: expected ':'",
            ],
        ),
    ],
)
def test_a_bot_that_raises_shows_the_file_and_line(bot: str, evidence: list[str]) -> None:
    path = FIXTURES / bot
    block = fault_block(str(path), "--move-time", "5")
    assert block[1:] == [line.format(path=path) for line in evidence]


def test_the_frame_stays_when_the_exception_takes_more_lines(tmp_path: Path) -> None:
    bot = tmp_path / "wordy.py"
    bot.write_text(
        "def choose_move(game, state, budget):\n"
        "    raise ValueError('no move:\\nthe board looks full\\nto me')\n"
    )
    block = fault_block(str(bot), "--move-time", "5")
    assert block[1:] == [  # from the frame on, four lines at most
        f'      File "{bot}", line 2, in choose_move',
        "        raise ValueError('no move:\\nthe board looks full\\nto me')",
        "    ValueError: no move:",
        "    the board looks full",
    ]


def test_a_bot_out_of_time_shows_the_end_of_its_stderr(tmp_path: Path) -> None:
    bot = tmp_path / "chatty.py"
    bot.write_text(
        "import sys, time\n"
        "def choose_move(game, state, budget):\n"
        "    for depth in range(1, 7):\n"
        "        print(f'depth {depth}', file=sys.stderr)\n"
        "    print('thinking \\x1b[2Jhard' + '!' * 1000, file=sys.stderr, flush=True)\n"
        "    while True:\n"
        "        time.sleep(3600)\n"
    )
    block = fault_block(str(bot), "--move-time", "0.5", "--move-time", "5")
    assert block[0].startswith("  fault: seat 0 (chatty) timeout: no answer within 0.5s")
    # the last lines only, cut to size, and the bot's escape sequence cannot reach the terminal
    assert block[1:3] == ["    stderr: depth 5", "    stderr: depth 6"]
    assert block[3].startswith("    stderr: thinking \\x1b[2Jhard!!!")
    assert len(block) == 4 and len(block[3]) < 250 and "\x1b" not in block[3]


def test_a_fault_with_nothing_to_show_stays_one_line() -> None:
    block = fault_block(str(FIXTURES / "exit3.py"), "--move-time", "5")
    assert block == ["  fault: seat 0 (exit3) crash: the bot process exited with code 3"]


def test_bots_check_says_why_a_bot_failed_and_json_says_it_too() -> None:
    path = FIXTURES / "raise_third.py"
    args = ["bots", "check", str(path), "-g", "tictactoe", "--move-time", "5"]
    text = runner.invoke(app, args)
    assert text.exit_code == 1
    lines = text.stderr.splitlines()
    assert lines[0] == (
        "error: raise_third failed validation (tictactoe, seat 0): crash: the bot raised "
        "RuntimeError: third move is cursed"
    )
    assert lines[1:] == [
        f'    File "{path}", line 11, in choose_move',
        '      raise RuntimeError("third move is cursed")',
        "  RuntimeError: third move is cursed",
    ]
    as_json = runner.invoke(app, [*args, "--json"])
    assert as_json.exit_code == 1
    out = json.loads(as_json.stdout)
    assert out["ok"] is False and out["game"] == "tictactoe" and out["failed"]["seat"] == 0
    assert out["failed"]["fault"]["termination"] == "crash"
    assert "third move is cursed" in out["failed"]["fault"]["stderr_tail"]


def test_bots_check_of_a_file_without_a_bot_says_so_first() -> None:
    result = runner.invoke(app, ["bots", "check", str(FIXTURES / "no_bot.py"), "-g", "tictactoe"])
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: no_bot failed validation") and "no bot found" in first
