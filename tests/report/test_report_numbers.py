"""``arena report`` of a database that holds NaN and infinities in its moves' info (an older Bot
Arena stored them as Python's json writes them): the page's data is strict JSON and its script
runs in a real Chromium (tests/report/conftest.py), through the real ``arena`` command."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests import inprocess

# a whole tournament, then a report of it
pytestmark = pytest.mark.slow

# what a bot could answer before the protocol refused it, and Python's json wrote as it came
OLD_INFO = '{"values":[NaN,Infinity],"depth":-Infinity,"nodes":1e999,"pv":["5"]}'


def arena(*args: str, cwd: Path) -> None:
    done = inprocess.run(*args, cwd=cwd)  # in this process (tests/inprocess.py)
    assert done.returncode == 0, done.stderr


def strict_loads(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in the page's data")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.timeout(300)
def test_a_report_of_stored_nan_is_strict_json_and_its_script_runs(
    page: tuple[Any, Any], tmp_path: Path
) -> None:
    db = tmp_path / "arena.db"
    arena("play", "tictactoe", "--bot", "alphabeta:depth=2", "--bot", "random", "--seed", "2",
          "--no-show", "--db", str(db), cwd=tmp_path)  # fmt: skip
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE moves SET info = ?", (OLD_INFO,))
    out = tmp_path / "report.html"
    arena("report", "-o", str(out), "--db", str(db), cwd=tmp_path)
    html = out.read_text(encoding="utf-8")
    found = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S
    )
    assert found is not None
    data = strict_loads(found.group(1))
    info = data["games"][0]["info"]
    assert set(info["value"]) == {None} and set(info["depth"]) == {None}
    assert set(info["nodes"]) == {None} and set(info["pv"]) == {"5"}

    browser_page, log = page
    browser_page.goto(out.as_uri())
    browser_page.wait_for_function("window.ArenaReport !== undefined")
    # the script read the data and drew the game list and the leaderboard from it
    assert browser_page.locator("#game-table tbody tr").count() == 1
    assert browser_page.locator("#leaderboard-table tbody tr").count() == 2
    assert log.errors == [] and log.requests == []
