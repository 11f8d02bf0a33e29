"""Small things a newcomer meets first: ``--version``, ``--db`` as a plain path, statuses checked,
read commands that create nothing, help that shows flags as flags."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from tests import inprocess

# each test runs the arena command (tournaments, several processes): seconds a test
pytestmark = pytest.mark.slow


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` in ``cwd``, in this process (``tests/inprocess.py``)."""
    return inprocess.run(*args, cwd=cwd)


def test_version(tmp_path: Path) -> None:
    proc = run("--version", cwd=tmp_path)
    assert (
        proc.returncode == 0 and proc.stdout.strip() == f"arena (bot-arena) {version('bot-arena')}"
    )


def test_db_takes_a_plain_file_path(tmp_path: Path) -> None:
    sub = tmp_path / "results"
    sub.mkdir()
    played = run("play", "tictactoe", "--no-show", "--json", "--db", "results/my.db", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    assert (sub / "my.db").exists() and not (tmp_path / "arena.db").exists()
    listed = run("matches", "--json", "--db", str(sub / "my.db"), cwd=sub.parent)
    assert [m["match"] for m in json.loads(listed.stdout)] == [
        json.loads(played.stdout)["match_id"]
    ]


def test_a_status_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    run("play", "tictactoe", "--no-show", cwd=tmp_path)
    proc = run("matches", "--status", "finished", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: --status 'finished': one of pending, running, done, void"


def test_read_commands_create_no_database(tmp_path: Path) -> None:
    for args in (["bots", "list"], ["bots", "show", "x"], ["matches"], ["leaderboard"]):
        proc = run(*args, cwd=tmp_path)
        assert proc.returncode == 2 and "no database at" in proc.stderr, (args, proc.stderr)
    assert list(tmp_path.iterdir()) == []


def test_help_shows_flags_as_flags(tmp_path: Path) -> None:
    proc = run("play", "--help", cwd=tmp_path)
    options = [line.strip("│ ") for line in proc.stdout.splitlines()]
    lines = [line for line in options if line.startswith(("--json", "--no-save"))]
    assert len(lines) == 2 and all("<bool>" not in line for line in lines), lines
    assert any("<float>" in line for line in options)  # options with values keep their type


def _command_paths() -> list[list[str]]:
    import typer.main

    from bot_arena.arena.cli.app import app

    paths: list[list[str]] = []

    def walk(command: Any, path: list[str]) -> None:
        paths.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return paths


def test_every_help_reads_as_a_command_line() -> None:
    """Each command's help (the root, the groups and every command): arguments by name in the
    usage line (``PATH``, not typer's ``{PATH}``), flags without a value type, plain text."""
    from typer.testing import CliRunner

    from bot_arena.arena.cli.app import app

    paths = _command_paths()
    assert ["bots", "add"] in paths and ["tournament", "run"] in paths and len(paths) > 15
    for path in paths:
        out = CliRunner().invoke(app, [*path, "--help"], prog_name="arena", env={"COLUMNS": "100"})
        assert out.exit_code == 0, (path, out.output)
        usage = out.output.splitlines()[0]
        assert usage.startswith(f"Usage: arena {' '.join(path)}".rstrip()), (path, usage)
        assert "{" not in usage and "<bool>" not in out.output and "╭" not in out.output, (
            path,
            out.output,
        )
    added = CliRunner().invoke(app, ["bots", "add", "--help"], prog_name="arena")
    assert added.output.splitlines()[0] == "Usage: arena bots add [OPTIONS] PATH"


def test_a_postgresql_url_without_its_driver_names_the_extra(tmp_path: Path) -> None:
    script = (
        "import sys; sys.modules['psycopg'] = None\n"  # as if the driver were not installed
        "from bot_arena.arena.cli.app import main\n"
        "sys.argv = ['arena', 'matches', '--db', 'postgresql+psycopg://u@127.0.0.1:1/x']\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line and line.endswith("install it with: pip install 'bot-arena[postgres]'")


def test_help_loads_none_of_the_heavy_machinery() -> None:
    """What keeps ``arena --help`` quick (bench/startup.py measures it): the command line is
    built without the database, the ratings, the bot processes' machinery, the installed
    packages' metadata or rich's renderer; each loads when a command that needs it runs."""
    heavy = (
        "sqlalchemy",
        "numpy",
        "pydantic",
        "rich",
        "tabulate",
        "importlib.metadata",
        "bot_arena.arena.match.pool",
        "bot_arena.arena.tournament.runner",
    )
    code = (
        "import sys, typer.main\n"
        "from bot_arena.arena.cli.app import app\n"
        "typer.main.get_command(app)\n"
        f"print(' '.join(m for m in {heavy!r} if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == []
