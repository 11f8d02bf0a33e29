"""A tournament left ``running`` by a runner that is gone (issue 32, item 9): ``tournament
list`` and ``show`` say ``interrupted`` with the resume command, from the runner the tournament
recorded (host and pid), without a schema change. A runner on another machine cannot be looked
at from here, so its tournament stays ``running``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.arena.tournament.create import this_host
from bot_arena.db.models import Tournament
from bot_arena.db.session import make_engine, session_factory

runner = CliRunner()


def dead_pid() -> int:
    """The pid of a process that has ended (and was reaped)."""
    done = subprocess.run(["true"], check=True)
    assert done.returncode == 0
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.mark.parametrize(
    ("runner_entry", "shown"),
    [
        ({"host": this_host(), "pid": -1}, "interrupted"),  # pid filled in below: gone
        (None, "interrupted"),  # killed before it recorded itself
        ({"host": "another-machine", "pid": 1}, "running"),  # cannot be looked at
    ],
)
def test_a_runner_that_is_gone_is_said(
    tmp_path: Path, runner_entry: dict[str, object] | None, shown: str
) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    args = ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1"]
    assert runner.invoke(app, [*args, "--games", "2", "--jobs", "1", "--db", db]).exit_code == 0
    engine = make_engine(db)
    with session_factory(engine).begin() as session:  # as a killed runner leaves it
        tournament = session.scalars(select(Tournament)).one()
        tournament.status, tournament.finished = "running", None
        settings = {k: v for k, v in tournament.settings.items() if k != "runner"}
        if runner_entry is not None:
            entry = dict(runner_entry)
            if entry["pid"] == -1:
                entry["pid"] = dead_pid()
            settings["runner"] = entry
        tournament.settings = settings
    engine.dispose()
    listed = runner.invoke(app, ["tournament", "list", "--db", db])
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.splitlines()[2].split()[5] == shown
    as_json = json.loads(runner.invoke(app, ["tournament", "list", "--db", db, "--json"]).stdout)
    assert as_json[0]["status"] == "running"
    assert as_json[0]["interrupted"] is (shown == "interrupted")
    show = runner.invoke(app, ["tournament", "show", "1", "--db", db])
    text = " ".join(show.stdout.split())  # the status may wrap
    if shown == "interrupted":
        assert (
            "status interrupted: 2/2 done, 0 to play (its runner is gone); resume with: arena"
            " tournament resume 1" in text
        )
    else:
        assert "status running: 2/2 done" in text
