"""A tournament left ``running`` by a runner that is gone (issue 32, item 9): ``tournament
list`` and ``show`` say ``interrupted`` with the resume command, from the runner the tournament
recorded (host and pid) and its heartbeat: a runner on another machine is ``running`` while its
stamp is fresh and ``interrupted`` once it is older than the lease (stamps written directly, and
a fake clock: no test waits for a lease to run out)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.arena.tournament.heartbeat import Heartbeat
from bot_arena.arena.tournament.liveness import LEASE_S, interrupted, this_host
from bot_arena.db.models import Tournament
from bot_arena.db.session import make_engine, session_factory
from tests.arena.arena_helpers import dead_pid

runner = CliRunner()


FRESH = 0.0  # seconds the runner's last heartbeat is old
STALE = LEASE_S + 5.0


@pytest.mark.parametrize(
    ("runner_entry", "age", "shown"),
    [
        ({"host": this_host(), "pid": -1}, FRESH, "interrupted"),  # pid filled in below: gone
        (None, FRESH, "interrupted"),  # killed before it recorded itself
        ({"host": "another-machine", "pid": 1}, FRESH, "running"),  # its heartbeat is fresh
        ({"host": "another-machine", "pid": 1}, STALE, "interrupted"),  # its lease ran out
        ({"host": "another-machine", "pid": 1}, None, "interrupted"),  # a runner without one
    ],
)
def test_a_runner_that_is_gone_is_said(
    tmp_path: Path, runner_entry: dict[str, object] | None, age: float | None, shown: str
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
        tournament.heartbeat = None if age is None else datetime.now(UTC) - timedelta(seconds=age)
    engine.dispose()
    listed = runner.invoke(app, ["tournament", "list", "--db", db])
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.splitlines()[2].split()[5] == shown
    hint = "tournament 1 is interrupted; resume with: arena tournament resume 1"
    assert (hint in listed.stdout) is (shown == "interrupted")
    as_json = json.loads(runner.invoke(app, ["tournament", "list", "--db", db, "--json"]).stdout)
    assert as_json[0]["status"] == "running"
    assert as_json[0]["interrupted"] is (shown == "interrupted")
    if shown == "interrupted":
        assert as_json[0]["resume"] == "arena tournament resume 1"
    show = runner.invoke(app, ["tournament", "show", "1", "--db", db])
    text = " ".join(show.stdout.split())  # the status may wrap
    if shown == "interrupted":
        assert (
            "status interrupted: 2/2 done, 0 to play (its runner is gone); resume with: arena"
            " tournament resume 1" in text
        )
    else:
        assert "status running: 2/2 done" in text


def test_the_lease_is_read_against_the_clock() -> None:
    """A fake clock: a runner on another machine is running up to the lease after its last
    heartbeat, interrupted after it."""
    beat = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    tournament = Tournament(status="running", heartbeat=beat, settings={})
    tournament.settings = {"runner": {"host": "another-machine", "pid": 1}}
    assert not interrupted(tournament, now=beat + timedelta(seconds=LEASE_S - 1))
    assert interrupted(tournament, now=beat + timedelta(seconds=LEASE_S + 1))
    tournament.status = "done"  # a finished tournament is never interrupted
    assert not interrupted(tournament, now=beat + timedelta(seconds=LEASE_S + 1))


def test_a_run_keeps_its_heartbeat_fresh(tmp_path: Path) -> None:
    """The runner's thread refreshes a stale stamp (beating every 10 ms here; the test waits
    for the stamp to change, up to a bound, never for a guessed time) and a finished run
    clears it."""
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    args = ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1"]
    assert runner.invoke(app, [*args, "--games", "2", "--jobs", "1", "--db", db]).exit_code == 0
    engine = make_engine(db)
    factory = session_factory(engine)
    with factory.begin() as session:
        tournament = session.scalars(select(Tournament)).one()
        assert tournament.heartbeat is None  # the run ended: cleared
        old = datetime.now(UTC) - timedelta(seconds=STALE)
        tournament.heartbeat = old
    with Heartbeat(engine, 1, every=0.01):
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline:
            with factory() as session:
                stamp = session.get(Tournament, 1).heartbeat  # type: ignore[union-attr]
            if stamp != old:
                break
            time.sleep(0.01)
    assert stamp is not None and datetime.now(UTC) - stamp < timedelta(seconds=LEASE_S)
    engine.dispose()
