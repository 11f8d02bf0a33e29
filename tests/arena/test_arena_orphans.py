"""The arena's own process dying must not leave bots behind, and files in the user's folder
must not replace the arena's packages inside a worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from arena_helpers import FIXTURES, alive, wait_until

from bot_arena.arena.transport.process import descendants
from bot_arena.arena.transport.sandbox.mode import ENV_VAR

# -P: run the CLI as the installed `arena` script runs, without the test folder on the path.
ARENA = [sys.executable, "-P", "-m", "bot_arena.arena.cli.app"]


def thinking(root: int) -> int | None:
    """The process under ``root`` whose thread is named ``arena-thinking`` (the fixture bot
    inside ``choose_move``), read from /proc outside any sandbox; None while there is none."""
    for pid in descendants(root):
        try:
            names = {
                (task / "comm").read_bytes().strip() for task in Path(f"/proc/{pid}/task").iterdir()
            }
        except OSError:
            continue
        if b"arena-thinking" in names:
            return pid
    return None


@pytest.mark.parametrize("mode", ["default", "off"])
def test_bots_die_with_a_killed_referee(tmp_path: Path, mode: str) -> None:
    """Confined (keeper, init and bot in their own namespaces) or not, every process the
    referee started dies with it, the bot stuck in ``choose_move`` included."""
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    if mode == "off":
        env[ENV_VAR] = "off"
    referee = subprocess.Popen(
        [
            *ARENA,
            "play",
            "tictactoe",
            "--bot",
            str(FIXTURES / "thinking_named.py"),
            "--bot",
            "random",
            "--move-time",
            "300",
            "--no-save",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # The bot is inside choose_move (it renamed itself): it will not read its pipe again.
        assert wait_until(lambda: thinking(referee.pid), 60), "bot never asked"
        stuck = thinking(referee.pid)
        # the workers and the fork server that started them (the bots are its children)
        workers = descendants(referee.pid)
        assert stuck in workers
        referee.send_signal(signal.SIGKILL)
        referee.wait()
        assert wait_until(lambda: not any(alive(p) for p in workers), 30), (
            f"bot processes {[p for p in workers if alive(p)]} outlived the arena"
        )
    finally:
        if referee.poll() is None:
            referee.kill()


def test_user_files_do_not_shadow_the_arena(tmp_path: Path) -> None:
    for name in ("games.py", "bots.py", "arena.py"):
        (tmp_path / name).write_text("raise SystemExit('shadowed the arena')\n")
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "first.py").write_text(
        "def choose_move(game, state, budget):\n    return game.legal_moves(state)[0]\n"
    )
    done = subprocess.run(
        [
            *ARENA,
            "play",
            "tictactoe",
            "--bot",
            "mypkg.first:choose_move",
            "--bot",
            "random",
            "--move-time",
            "10",
            "--no-save",
            "--seed",
            "3",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "termination normal" in done.stdout
