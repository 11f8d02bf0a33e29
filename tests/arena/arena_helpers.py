"""Shared helpers for the arena tests: fixture bots and process-table checks."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.botspec import resolve

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture(name: str) -> BotRef:
    """A fixture bot by file name (``.py`` modules; ``.sh`` and ``_cmd.py`` as ``cmd:`` bots)."""
    path = FIXTURES / name
    if name.endswith(".sh"):
        return resolve(f"cmd:{path}")
    if name.endswith("_cmd.py"):
        return resolve(f"cmd:{sys.executable} {path}")
    return resolve(str(path))


def thinking_bot(folder: Path) -> tuple[Path, Path]:
    """A bot file that, asked for a move, writes its pid to a marker file and never answers;
    returns (bot, marker). A test waits for the marker to know the bot is thinking."""
    marker = folder / "thinking.pid"
    bot = folder / "stuck.py"
    bot.write_text(
        "import os, time\n"
        "def choose_move(game, state, budget):\n"
        f"    open({str(marker)!r}, 'w').write(str(os.getpid()))\n"
        "    while True:\n"
        "        time.sleep(3600)\n"
    )
    return bot, marker


def wait_until(predicate: Callable[[], object], seconds: float) -> bool:
    """Poll ``predicate`` until it holds or ``seconds`` pass (a bound, not a guess)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def dead_pid() -> int:
    """The pid of a process that has ended (and was reaped)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live (non-zombie) process, from the process table."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


def _live_processes() -> Iterator[tuple[int, list[bytes]]]:
    """(pid, the fields of /proc/PID/stat after the command name) of every live process:
    state, ppid, pgrp, session, ..."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if fields[0] != b"Z":
            yield int(entry), fields


def group_members(pgid: int) -> list[int]:
    """Live processes whose process group or session is ``pgid``."""
    return [pid for pid, f in _live_processes() if pgid in (int(f[2]), int(f[3]))]


def assert_no_leftovers(pids: list[int]) -> None:
    assert pids, "the pool started no process"
    for pid in pids:
        assert not alive(pid), f"bot process {pid} is still running"
        assert group_members(pid) == [], f"processes of bot group {pid} are still running"
