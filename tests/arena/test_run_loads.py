"""What a tournament run on SQLite leaves unloaded (issue 32's start-up against fastchess):
SQLAlchemy's PostgreSQL dialect (with asyncio, about 40 ms) and, without ``--pgn-out``, the
PGN writer. Each is made unimportable in a fresh interpreter, and the run must still pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

UNLOADABLE = ("sqlalchemy.dialects.postgresql", "bot_arena.arena.formats.export")


@pytest.mark.parametrize("module", UNLOADABLE)
def test_a_sqlite_run_does_not_load(tmp_path: Path, module: str) -> None:
    code = (
        f"import sys; sys.modules[{module!r}] = None; from bot_arena.arena.cli.app import main; "
        "sys.argv = ['arena', *sys.argv[1:]]; main()"
    )
    args = ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1"]
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    done = subprocess.run(
        [sys.executable, "-c", code, *args, "--games", "2", "--jobs", "1", "--db", db],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
