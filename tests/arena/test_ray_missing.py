"""--executor ray where Ray is not installed: one line saying how to install it, exit 2, and
nothing stored. (The cluster itself: test_ray_cluster.py, -m ray.)"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests import inprocess

# three commands a test, the first in a process importing the CLI: kept out of the quick tier
pytestmark = pytest.mark.slow


def arena_without_ray(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` with ``import ray`` failing, as on a machine without the extra: an entry
    of None in ``sys.modules`` for the command (the check finds Ray by ``find_spec`` and
    ``import``, never by a name bound before), run in this process (tests/inprocess.py): the
    line printed and the exit code are the subject, not the process."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "ray", None)
        return inprocess.run(*args, cwd=cwd)


def test_executor_ray_without_ray_says_how_to_install_it(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    for args in (
        ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1"],
        ["sprt", "tictactoe", "--bot", "random", "--bot", "random:seed=1"],
        ["serve", "--port", "0"],  # refused before the server starts (a server would not end)
    ):
        done = arena_without_ray(*args, "--executor", "ray", "--db", str(db), cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert lines == ["error: --executor ray needs Ray: pip install 'bot-arena[ray]'"]
        if db.exists():
            with sqlite3.connect(db) as conn:
                assert conn.execute("SELECT COUNT(*) FROM tournaments").fetchone() == (0,)


def test_a_ray_address_needs_the_ray_executor(tmp_path: Path) -> None:
    done = arena_without_ray(
        "tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1",
        "--ray-address", "auto", "--db", str(tmp_path / "arena.db"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == "error: --ray-address is for --executor ray"
