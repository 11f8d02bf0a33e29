"""``arena NAME ...`` builds only the command NAME (cli/app.py: a read command does not pay for
the other commands' modules and signatures), and what it prints is, byte for byte, what the
whole app prints for the same command line: help, errors and exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot_arena.arena.cli.app import COMMANDS, build


def lines(tmp_path: Path) -> list[list[str]]:
    missing = str(tmp_path / "none.db")  # never created: read commands create nothing
    out = [[name, "--help"] for name, _, _ in COMMANDS]
    out += [
        ["leaderboard", "--db", missing],
        ["leaderboard", "--anchor", "bad", "--db", missing],
        ["leaderboard", "--bogus"],
        ["crosstable", "--format", "nope"],
        ["tournament"],
        ["tournament", "show", "x"],
        ["tournament", "list", "--db", missing],
        ["matches", "--limit", "-3", "--db", missing],
        ["ladder", "add", "--help"],
        ["bots", "check", "--help"],
        ["bots", "add-all", "--help"],
        ["games"],
    ]
    return out


@pytest.fixture(scope="module")
def whole() -> object:
    return build()


def test_one_command_prints_what_the_whole_app_prints(tmp_path: Path, whole: object) -> None:
    runner = CliRunner()
    for argv in lines(tmp_path):
        alone = runner.invoke(build(argv[0]), argv, prog_name="arena", env={"COLUMNS": "80"})
        full = runner.invoke(whole, argv, prog_name="arena", env={"COLUMNS": "80"})  # type: ignore[arg-type]
        assert (alone.exit_code, alone.output) == (full.exit_code, full.output), argv
        assert not isinstance(alone.exception, Exception) or isinstance(
            alone.exception, SystemExit
        ), argv
    assert not (tmp_path / "none.db").exists()


def test_only_the_named_command_is_built() -> None:
    import typer.main

    group = typer.main.get_command(build("leaderboard"))
    assert list(group.commands) == ["leaderboard"]  # type: ignore[attr-defined]
    everything = typer.main.get_command(build())
    assert sorted(everything.commands) == sorted(name for name, _, _ in COMMANDS)  # type: ignore[attr-defined]
