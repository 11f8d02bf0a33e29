"""What keeps the read commands quick (bench/startup.py measures it): ``arena leaderboard``,
``tournament list``/``show`` and ``matches``, run as real processes on a stored tournament, load
only what they use. No Alembic when the database is at the newest schema, no bot machinery, no
game rules, and numpy (the fits) only for the commands that rate a field too large for the
pure-Python fit (``ratings/ml_small.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import inprocess

pytestmark = pytest.mark.slow

# The command runs as `arena` would, then the names of the modules it loaded go to a file.
PROBE = """
import json, runpy, sys
out = sys.argv[1]
sys.argv = ["arena", *sys.argv[2:]]
try:
    runpy.run_module("bot_arena.arena.cli.app", run_name="__main__")
except SystemExit as stop:
    code = stop.code
else:
    code = 0
with open(out, "w") as fh:
    json.dump({"code": code, "modules": sorted(sys.modules)}, fh)
"""

NEVER = (
    "alembic",  # migrations: only when the schema is behind
    "chess",
    "bot_arena.games.tictactoe",
    "bot_arena.bots.alphabeta",
    "bot_arena.bots.random_bot",
    "bot_arena.arena.match.pool",
    "bot_arena.arena.match.referee",
    "bot_arena.arena.tournament.runner",
    "bot_arena.arena.transport.process",
    "bot_arena.db.writer",
    # the other commands: cli/app.py builds only the one the command line names (issue 28)
    "bot_arena.arena.cli.bots_cmd",
    "bot_arena.arena.cli.ladder_cmd",
    "bot_arena.arena.cli.play_cmd",
    "bot_arena.arena.cli.solve_cmd",
)
NO_FITS = ("numpy", "bot_arena.arena.ratings.ml", "bot_arena.arena.ratings.online_elo")
# a plain SQLite file is read with the standard library's sqlite3 (db/sqlite_read.py: issue 28)
PLAIN = ("sqlalchemy", "bot_arena.db.models", "bot_arena.db.session")
COMMANDS = {
    # a small field of pair totals is fitted without numpy (ratings/ml_small.py: issue 28)
    "leaderboard": (["leaderboard"], NEVER + NO_FITS + PLAIN),
    "crosstable": (["crosstable"], NEVER + NO_FITS + PLAIN),
    # its rows as SQL text on sqlite3 (db/tournament_list.py)
    "tournament list": (["tournament", "list"], NEVER + NO_FITS + PLAIN),
    "tournament show": (["tournament", "show", "1"], NEVER + NO_FITS),
    "matches": (["matches", "--limit", "50"], NEVER + NO_FITS),
}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding one finished tictactoe tournament (4 matches, each bot scoring
    against the other: a field the pure-Python fit rates), played for real (by the command in
    this process: the processes whose start-up is the subject are the read commands)."""
    folder = tmp_path_factory.mktemp("fast")
    path = folder / "arena.db"
    args = ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1"]
    args += ["--games", "4", "--jobs", "1", "--seed", "1", "--db", str(path)]
    proc = inprocess.run(*args, cwd=folder)
    assert proc.returncode == 0, proc.stderr
    return path


def loaded(args: list[str], db: Path, tmp_path: Path, code: int = 0) -> set[str]:
    out = tmp_path / "modules.json"
    cmd = [sys.executable, "-c", PROBE, str(out), *args, "--db", str(db)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    report = json.loads(out.read_text())
    assert report["code"] == code and (proc.stdout or code), proc.stderr
    if code:
        assert "arena db upgrade" in proc.stderr, proc.stderr
    return set(report["modules"])


@pytest.mark.timeout(400)
@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_read_command_loads_only_what_it_uses(name: str, played: Path, tmp_path: Path) -> None:
    args, forbidden = COMMANDS[name]
    modules = loaded(args, played, tmp_path)
    # the probe saw the command read the database
    assert "sqlalchemy" in modules or "bot_arena.db.sqlite_read" in modules
    assert sorted(m for m in forbidden if m in modules) == []
    if name == "leaderboard":
        assert "bot_arena.arena.ratings.ml_small" in modules  # the fit still runs


@pytest.mark.timeout(400)
def test_a_database_behind_the_schema_is_still_seen(played: Path, tmp_path: Path) -> None:
    """The quick check only skips Alembic when there is nothing to do: a database one revision
    behind is still told to be brought up to date by a read command (which never migrates:
    issue 27), and `arena db upgrade` does it."""
    import shutil

    from sqlalchemy import create_engine

    from bot_arena.db.session import current_revision, downgrade, head_revision

    old = tmp_path / "old.db"
    shutil.copy(played, old)
    engine = create_engine(f"sqlite:///{old}")
    try:
        downgrade(engine, "-1")
        assert current_revision(engine) not in (None, head_revision())
    finally:
        engine.dispose()
    assert "alembic" in loaded(["leaderboard"], old, tmp_path, code=2)
    upgraded = inprocess.run("db", "upgrade", "--db", str(old), cwd=tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    engine = create_engine(f"sqlite:///{old}")
    try:
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()
