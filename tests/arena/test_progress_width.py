"""The tournament's status line on a terminal fits its width: a line that reaches the last
column wraps, and every redraw then leaves a line behind (18 lines for 18 games)."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import termios
from pathlib import Path

import pytest

from bot_arena.arena.tournament.progress import Progress, Standings
from tests.forked_cli import Server

LONG = [f"a_bot_whose_name_goes_on_and_on_and_on_number_{i}" for i in range(3)]
STATUS = re.compile(r"\[\s*\d+/\d+\]")  # the counts every status line starts with (after a bar)


class FakeTerminal(io.StringIO):
    """A stream that says it is a terminal and has no descriptor (its width is $COLUMNS)."""

    def isatty(self) -> bool:
        return True


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0  # a game a second or so: long enough for the rate to be shown
        return self.now


def redrawn(text: str) -> list[str]:
    """What each redraw left on the screen: the text after each "clear the line"."""
    return [part.split("\n")[0] for part in text.split("\r\x1b[K")[1:]]


def play(names: list[str], games: int, stream: io.StringIO) -> None:
    progress = Progress(games, 0, Standings(names), stream=stream, clock=FakeClock())
    for g in range(games):
        a, b = g % len(names), (g + 1) % len(names)
        progress.match_done([(a, 1.0), (b, 0.0)], ["a fault: " + "x" * 120] if g == 5 else [])
    progress.close()


@pytest.mark.parametrize(
    ("columns", "last"),
    [(80, "#" * 20 + " [18/18] 100.0%"), (40, "[18/18] 100.0%  ETA 0:00")],  # no room: no bar
)
def test_every_redrawn_line_fits_the_width(
    monkeypatch: pytest.MonkeyPatch, columns: int, last: str
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    out = FakeTerminal()
    play([*LONG, "b"], 18, out)
    lines = [line for line in redrawn(out.getvalue()) if STATUS.search(line)]
    assert len(lines) == 18  # one redraw per game
    assert all(len(line) <= columns - 1 for line in lines), lines
    assert lines[-1].startswith(last)
    assert f"fault: a fault: {'x' * 120}\n" in out.getvalue()  # a fault line is never cut
    assert out.getvalue().endswith("\n")


def test_the_top_of_the_table_goes_first_then_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    wide = FakeTerminal()
    play(["x", "y", "z"], 3, wide)
    full = redrawn(wide.getvalue())[-1]
    assert full.endswith("top: x 50.0%, y 50.0%, z 50.0%") and full.startswith("#" * 20)
    for columns, ending in [
        (len(full) + 1, "top: x 50.0%, y 50.0%, z 50.0%"),
        (len(full), "top: x 50.0%, y 50.0%"),  # a bot fewer
        (len(full) - 14, "top: x 50.0%"),
        (len(full) - 28, "ETA 0:00"),  # no top at all
    ]:
        monkeypatch.setenv("COLUMNS", str(columns))
        out = FakeTerminal()
        play(["x", "y", "z"], 3, out)
        last = redrawn(out.getvalue())[-1]
        assert last.endswith(ending) and len(last) < columns, (columns, last)
    monkeypatch.setenv("COLUMNS", "8")
    tiny = FakeTerminal()
    play(["x", "y", "z"], 3, tiny)
    assert redrawn(tiny.getvalue())[-1] == "[3/3] 1"  # cut, never longer than the width


def test_plain_lines_keep_the_whole_top(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a terminal: nothing is redrawn, so nothing is cut (a log keeps every name)."""
    monkeypatch.setenv("COLUMNS", "40")
    out = io.StringIO()
    progress = Progress(2, 0, Standings(LONG), stream=out, clock=FakeClock())
    progress.match_done([(0, 1.0), (1, 0.0)])
    assert out.getvalue().endswith(f"top: {LONG[0]} 100.0%, {LONG[1]} 0.0%\n")
    assert "\r" not in out.getvalue()


BOT = """
import random

def choose_move(game, state, budget):
    return random.Random({seed}).choice(list(game.legal_moves(state)))
"""


def set_window(fd: int, columns: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))


@pytest.mark.parametrize(("env_columns", "window"), [("80", 200), (None, 40)])
def test_a_tournament_on_a_terminal_redraws_one_line(
    tmp_path: Path, env_columns: str | None, window: int, arena_cli: Server
) -> None:
    """``arena tournament run`` (a process forked from ``arena_cli``) with its stderr on a
    pseudo-terminal: 18 games, 18 redraws, each within the width: $COLUMNS when set, else the
    terminal's own (stdout goes to a file, so only stderr's terminal knows it)."""
    specs = []
    for i, name in enumerate(LONG):
        path = tmp_path / f"{name}.py"
        path.write_text(BOT.format(seed=i))
        specs += ["--bot", str(path)]
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if env_columns is not None:
        env["COLUMNS"] = env_columns
    columns = int(env_columns or window)
    master, slave = pty.openpty()
    set_window(slave, window)
    args = ["tournament", "run", "tictactoe", *specs, "--games", "6", "--seed", "3", "-j", "2"]
    proc = arena_cli.start(
        [*args, "--db", str(tmp_path / "t.db")],
        cwd=Path.cwd(),
        env=env,
        log=tmp_path / "stdout.txt",
        stderr=Path(os.ttyname(slave)),  # opened by the command: the terminal its stderr is
        session=False,
    )
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the last holder of the terminal closed it
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert proc.wait(timeout=120) == 0, shown
    text = shown.decode().replace("\r\n", "\n")  # the terminal turns each newline into \r\n
    lines = [line for line in redrawn(text) if STATUS.search(line)]
    assert len(lines) == 18, text
    assert all(len(line) <= columns - 1 for line in lines), lines
    # at 40 columns the bar shows only while the rate is not (the run's first seconds)
    assert lines[-1].startswith("[18/18]" if columns == 40 else "#" * 20 + " [18/18]") or (
        columns == 40 and lines[-1].startswith("#" * 20 + " [18/18]") and "/s" not in lines[-1]
    )
    assert "18 matches" in (tmp_path / "stdout.txt").read_text()
