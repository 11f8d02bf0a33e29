"""What a tournament run on SQLite leaves unloaded (issue 32's start-up against fastchess):
SQLAlchemy's PostgreSQL dialect (with asyncio, about 40 ms: migration 0015's partial index
must not load it), without ``--pgn-out`` the PGN writer, without ``--config`` the TOML
reader, and with ``--json`` the table drawer (tabulate: JSON draws no table). The run goes
to its end in a fresh interpreter, which then says whether the module is in ``sys.modules``.
(Making the module unimportable instead proves nothing for the dialect: SQLAlchemy only warns
when a dialect named by an option cannot be imported.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

UNLOADABLE = [
    ("sqlalchemy.dialects.postgresql", ()),
    ("bot_arena.arena.formats.export", ()),
    ("tomllib", ()),
    ("tabulate", ("--json",)),
]


@pytest.mark.parametrize(("module", "extra"), [pytest.param(*u, id=u[0]) for u in UNLOADABLE])
def test_a_sqlite_run_does_not_load(tmp_path: Path, module: str, extra: tuple[str, ...]) -> None:
    seen = tmp_path / "loaded.txt"
    code = (
        "import sys; from bot_arena.arena.cli.app import main; "
        "sys.argv = ['arena', *sys.argv[1:]]\n"
        "try:\n    main()\n"
        f"finally:\n    open({str(seen)!r}, 'w').write(str({module!r} in sys.modules))"
    )
    args = ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1", *extra]
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
    assert seen.read_text() == "False"
