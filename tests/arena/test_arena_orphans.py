"""The arena's own process dying must not leave bots behind, and files in the user's folder
must not replace the arena's packages inside a worker."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from arena_helpers import alive, thinking_bot, wait_until

from bot_arena.arena.transport.process import descendants

# -P: run the CLI as the installed `arena` script runs, without the test folder on the path.
ARENA = [sys.executable, "-P", "-m", "bot_arena.arena.cli.app"]


def test_bots_die_with_a_killed_referee(tmp_path: Path) -> None:
    bot, marker = thinking_bot(tmp_path)
    referee = subprocess.Popen(
        [
            *ARENA,
            "play",
            "tictactoe",
            "--bot",
            str(bot),
            "--bot",
            "random",
            "--move-time",
            "300",
            "--no-save",
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # The bot is inside choose_move (it wrote its pid): it will not read its pipe again.
        assert wait_until(lambda: marker.exists() and marker.read_text(), 60), "bot never asked"
        stuck = int(marker.read_text())
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
