"""``tournament run`` takes what ``play`` takes: time odds (``--move-time``/``--clock`` once per
entrant), ``--margin``, ``--memory-mb`` and ``--startup-time``; a resume keeps the limits the
tournament was created with. Through the real command line."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests import inprocess

# each test plays tournaments or whole games through separate processes: seconds a test
pytestmark = pytest.mark.slow

# A bot that takes 0.6 s to load: three times the 0.2 s start-up limit the test sets, so it
# stalls under that limit however fast the machine (its sleep alone is longer), and far below
# the default 10 s, so it starts in time under the default however loaded the machine. At
# 1.5 s against 0.5 s the test waited about 1.8 s more for the same four starts.
SLOW_START = (
    "import time\ntime.sleep(0.6)\n\n"
    "def choose_move(game, state, budget):\n    return game.legal_moves(state)[0]\n"
)


def run(*args: str, cwd: Path) -> Any:
    """``arena ARGS`` in ``cwd``, in this process (``tests/inprocess.py``)."""
    return inprocess.run(*args, cwd=cwd)


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute(sql).fetchall())


def test_time_odds_give_each_entrant_its_own_clock(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    args = ["tournament", "run", "tictactoe", "-b", "alphabeta:depth=1", "-b", "random"]
    args += ["--move-time", "0.5", "--move-time", "3", "--margin", "0.2", "--games", "2"]
    proc = run(*args, "--jobs", "1", "--db", str(db), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "time odds" in proc.stdout  # the banner
    for match_id, tc_json in rows(db, "SELECT id, time_control FROM matches"):
        seats = json.loads(tc_json)["seats"]
        names = [
            n
            for (n,) in rows(
                db,
                "SELECT b.name FROM seats s JOIN bot_versions v ON v.id = s.bot_version_id "
                f"JOIN bots b ON b.id = v.bot_id WHERE s.match_id = {match_id} ORDER BY s.seat",
            )
        ]
        wanted = {"alphabeta:depth=1": 0.5, "random": 3.0}
        assert [s["move_time"] for s in seats] == [wanted[n] for n in names], (names, seats)
        assert all(s["margin"] == 0.2 for s in seats)
    shown = run("tournament", "show", "1", "--db", str(db), cwd=tmp_path)
    assert "  time      alphabeta:depth=1: move 0.5s\n            random: move 3s\n" in shown.stdout


def test_odds_given_the_wrong_number_of_times_is_one_line(tmp_path: Path) -> None:
    args = ["tournament", "run", "tictactoe", "-b", "random", "-b", "random:seed=1"]
    args += ["-b", "random:seed=2", "--move-time", "1", "--move-time", "2"]
    proc = run(*args, "--db", str(tmp_path / "a.db"), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "error: --move-time given 2 times: give it once or once per --bot (3)"
    )


def test_startup_time_applies_and_a_resume_keeps_it(tmp_path: Path) -> None:
    bot = tmp_path / "slow_start.py"
    bot.write_text(SLOW_START)
    db = tmp_path / "arena.db"
    args = ["tournament", "run", "tictactoe", "-b", str(bot), "-b", "random", "--games", "2"]
    proc = run(*args, "--startup-time", "0.2", "--jobs", "1", "--db", str(db), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    faults = [json.loads(f) for (f,) in rows(db, "SELECT fault FROM seats WHERE fault IS NOT NULL")]
    assert len(faults) == 2 and all(f["termination"] == "stall" for f in faults), faults
    (settings,) = rows(db, "SELECT settings FROM tournaments")[0]
    assert json.loads(settings)["limits"]["startup_s"] == 0.2
    # as if interrupted: one match to play again; the resume keeps the 0.2 s start-up limit
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE matches SET status = 'running' WHERE id = 1")
        conn.execute("UPDATE tournaments SET status = 'running'")
    resumed = run("tournament", "resume", "1", "--jobs", "1", "--db", str(db), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    (fault,) = rows(db, "SELECT fault FROM seats WHERE match_id = 1 AND fault IS NOT NULL")[0]
    assert json.loads(fault)["termination"] == "stall"
    # the same bot with the default limit starts in time
    fresh = tmp_path / "fresh.db"
    proc = run(*args, "--jobs", "1", "--db", str(fresh), cwd=tmp_path)
    assert proc.returncode == 0 and rows(
        fresh, "SELECT count(*) FROM seats WHERE fault IS NOT NULL"
    ) == [(0,)]
