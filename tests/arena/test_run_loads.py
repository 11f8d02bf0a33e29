"""What a tournament run on SQLite leaves unloaded (issue 32's start-up against fastchess):
SQLAlchemy's PostgreSQL dialect (with asyncio, about 40 ms: migration 0015's partial index
must not load it), without ``--pgn-out`` the PGN writer, without ``--config`` the TOML
reader, and with ``--json`` the table drawer (tabulate: JSON draws no table). The run goes
to its end in a fresh interpreter, which then says which of the modules are in
``sys.modules``. (Making the module unimportable instead proves nothing for the dialect:
SQLAlchemy only warns when a dialect named by an option cannot be imported.)

One run for each command line, not one for each module: the three modules of the plain run are
read from the same fresh interpreter (each run is a new interpreter and a tournament: about
0.8 s of CPU)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

UNLOADABLE = [
    ("sqlalchemy.dialects.postgresql", ()),
    ("bot_arena.arena.formats.export", ()),
    ("tomllib", ()),
    ("tabulate", ("--json",)),
]
#: each command line's extra arguments, with every module it must leave unloaded
RUNS: dict[tuple[str, ...], list[str]] = {}
for _module, _extra in UNLOADABLE:
    RUNS.setdefault(_extra, []).append(_module)


def loaded_after_run(folder: Path, extra: tuple[str, ...]) -> dict[str, bool]:
    """Run a tournament to its end in a fresh interpreter with ``extra``; whether each module
    of ``RUNS[extra]`` was in ``sys.modules`` at its end."""
    seen = folder / "loaded.json"
    modules = RUNS[extra]
    code = (
        "import json, sys; from bot_arena.arena.cli.app import main; "
        "sys.argv = ['arena', *sys.argv[1:]]\n"
        "try:\n    main()\n"
        f"finally:\n    open({str(seen)!r}, 'w').write("
        f"json.dumps({{m: m in sys.modules for m in {modules!r}}}))"
    )
    args = ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1", *extra]
    db = f"sqlite:///{folder / 'arena.db'}"
    done = subprocess.run(
        [sys.executable, "-c", code, *args, "--games", "2", "--jobs", "1", "--db", db],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    loaded: dict[str, bool] = json.loads(seen.read_text())
    assert sorted(loaded) == sorted(modules)
    return loaded


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[tuple[str, ...]], dict[str, bool]]:
    """Each command line run once, at its first test, for all the tests of its modules."""
    done: dict[tuple[str, ...], dict[str, bool]] = {}

    def loaded(extra: tuple[str, ...]) -> dict[str, bool]:
        if extra not in done:
            done[extra] = loaded_after_run(tmp_path_factory.mktemp("run"), extra)
        return done[extra]

    return loaded


@pytest.mark.parametrize(("module", "extra"), [pytest.param(*u, id=u[0]) for u in UNLOADABLE])
def test_a_sqlite_run_does_not_load(
    runs: Callable[[tuple[str, ...]], dict[str, bool]], module: str, extra: tuple[str, ...]
) -> None:
    assert runs(extra)[module] is False
