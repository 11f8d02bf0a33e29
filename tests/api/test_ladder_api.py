"""Ladders from Python (``bot_arena.arena.api.ladders``): the functions the ``arena ladder``
commands call, in process; every check raises ArenaError before anything is stored."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bot_arena.arena.api.errors import ArenaError
from bot_arena.arena.api.ladders import (
    ladder_add,
    ladder_create,
    ladder_retire,
    ladder_run,
    ladder_show,
    parse_duration,
)


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90.0), ("90s", 90.0), ("1.5m", 90.0), ("2h", 7200.0)]
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "0", "-5m", "5 weeks", "1e9999"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ArenaError, match="--for"):
        parse_duration(text)


def rows(path: Path, sql: str) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute(sql).fetchone()[0])


@pytest.mark.slow
def test_create_add_run_show_retire(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    db = str(path)
    tid = ladder_create("club", "tictactoe", seed=1, sandbox="off", db=db)
    with pytest.raises(ArenaError, match="--suspend-after"):
        ladder_create("other", "tictactoe", suspend_after=0, db=db)
    with pytest.raises(ArenaError, match="exists already"):
        ladder_create("club", "tictactoe", db=db)
    assert rows(path, "SELECT count(*) FROM tournaments") == 1
    empty = ladder_show("club", db=db)
    assert (empty.id, empty.games, empty.standings) == (tid, 0, [])
    added = ladder_add("club", ["random", "random:seed=2"], db=db)
    assert [(a.position, a.name) for a in added] == [(0, "random"), (1, "random:seed=2")]
    with pytest.raises(ArenaError, match="--until-games"):
        ladder_run("club", until_games=0, db=db)
    end = ladder_run("club", until_games=6, jobs=1, db=db)
    assert (end.why, end.games) == ("games", 6)
    view = ladder_show("club", db=db)
    assert view.games == 6 and view.in_play == 0
    assert sum(s.games for s in view.standings) == 12
    assert all(s.low <= s.elo <= s.high and s.best <= s.rank <= s.worst for s in view.standings)
    ladder_retire("club", "random", db=db)
    said: list[str] = []
    waited = ladder_run("club", for_seconds=0.5, db=db, say=said.append)
    assert waited.why == "time" and waited.played == 0
    assert said and "waiting: 1 active bot" in said[0]
    assert [s.status for s in ladder_show("club", db=db).standings if s.name == "random"] == [
        "retired"
    ]


@pytest.mark.slow
def test_until_stable_stops_once_the_order_is_certain(tmp_path: Path) -> None:
    db = str(tmp_path / "arena.db")
    ladder_create("st", "tictactoe", seed=2, sandbox="off", db=db)
    ladder_add("st", ["random", "alphabeta:depth=3"], db=db)
    end = ladder_run("st", until_stable=True, until_games=400, jobs=1, db=db)
    assert end.why == "stable" and 0 < end.games < 400
    best, worst = ladder_show("st", db=db).standings
    assert best.name == "alphabeta:depth=3" and best.settled and worst.settled


@pytest.mark.slow
def test_a_new_version_enters_beside_the_old_one(tmp_path: Path) -> None:
    db = str(tmp_path / "arena.db")
    bot = tmp_path / "alice.py"
    bot.write_text("def choose_move(game, state, budget):\n    return game.legal_moves(state)[0]\n")
    ladder_create("v", "tictactoe", sandbox="off", db=db)
    assert [a.name for a in ladder_add("v", [str(bot)], db=db)] == ["alice"]
    with pytest.raises(ArenaError, match="in the ladder already"):
        ladder_add("v", [str(bot)], db=db)
    bot.write_text(
        "def choose_move(game, state, budget):\n    return game.legal_moves(state)[-1]\n"
    )
    assert [a.name for a in ladder_add("v", [str(bot)], db=db)] == ["alice@2"]
    names = {s.name: s.status for s in ladder_show("v", db=db).standings}
    assert names == {"alice": "active", "alice@2": "active"}
