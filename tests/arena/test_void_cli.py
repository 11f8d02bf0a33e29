"""`arena matches void`: real tournaments through the CLI, a match annulled, checked with SQL and
through every command that reads results."""

from __future__ import annotations

import csv
import io
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from bot_arena import games
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.tournament.create import create
from bot_arena.db.models import Tournament
from bot_arena.db.session import make_engine, session_factory
from tests.arena.test_tournament_cli import _error_line, arena, run_args, sql
from tests.db.dbtest import BACKENDS, database

# each test plays tournaments or whole games through separate processes: seconds a test
pytestmark = pytest.mark.slow

FIELD = ["random", "random:seed=1", "random:seed=2"]
REASON = "random:seed=1 ran a debug build"


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path, ready=True) as url:
        yield url


def execute(url: str, query: str, **params: Any) -> None:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text(query), params)
    finally:
        engine.dispose()


def ok(*args: str) -> Any:
    result = arena(*args)
    assert result.exit_code == 0, result.output
    return result


def leaderboard(url: str) -> dict[str, dict[str, Any]]:
    rows = json.loads(ok("leaderboard", "--db", url, "--tournament", "1", "--json").stdout)
    return {r["bot"]: r for r in rows}


def everything(url: str) -> list[list[tuple[Any, ...]]]:
    return [
        sql(url, f"SELECT * FROM {table} ORDER BY id")
        for table in ("tournaments", "matches", "seats", "moves")
    ]


def decisive_match(url: str) -> tuple[int, str, str]:
    """A done match with a winner: (id, winner, loser)."""
    rows = sql(
        url,
        "SELECT m.id, b.name, s.rank FROM matches m JOIN seats s ON s.match_id = m.id"
        " JOIN bot_versions v ON v.id = s.bot_version_id JOIN bots b ON b.id = v.bot_id"
        " WHERE m.status = 'done' ORDER BY m.id, s.rank",
    )
    by_match: dict[int, list[tuple[str, int]]] = {}
    for mid, name, rank in rows:
        by_match.setdefault(mid, []).append((name, rank))
    for mid, seats in by_match.items():
        if seats[0][1] != seats[1][1]:
            return mid, seats[0][0], seats[1][0]
    raise AssertionError("every game was a draw: pick another seed")


def test_void_a_done_match_then_replay_one(db_url: str) -> None:
    ok(*run_args("tictactoe", FIELD, db_url, "--jobs", "1", "--seed", "3"))
    board = leaderboard(db_url)
    show = json.loads(ok("tournament", "show", "1", "--db", db_url, "--json").stdout)
    standings = {s["bot"]: s for s in show["standings"]}
    mid, winner, loser = decisive_match(db_url)
    moves = sql(db_url, "SELECT count(*) FROM moves WHERE match_id = :m", m=mid)[0][0]
    assert moves > 0

    out = ok("matches", "void", str(mid), "--reason", REASON, "--db", db_url, "--json")
    assert json.loads(out.stdout) == [
        {"match": mid, "tournament": 1, "previous_status": "done", "replay": None}
    ]
    # stored: status, reason, time; seats and moves kept
    [(status, reason, voided, termination)] = sql(
        db_url, "SELECT status, void_reason, voided, termination FROM matches WHERE id = :m", m=mid
    )
    assert (status, reason, termination is not None, voided is not None) == (
        "void",
        REASON,
        True,
        True,
    )
    assert sql(db_url, "SELECT count(*) FROM moves WHERE match_id = :m", m=mid) == [(moves,)]
    assert sql(
        db_url, "SELECT count(*) FROM seats WHERE match_id = :m AND rank IS NOT NULL", m=mid
    ) == [(2,)]
    assert sql(db_url, "SELECT status FROM tournaments") == [("done",)]

    # the leaderboard: exactly that game is gone
    after = leaderboard(db_url)
    for bot in FIELD:
        lost_game = bot in (winner, loser)
        assert after[bot]["games"] == board[bot]["games"] - lost_game
        assert after[bot]["wins"] == board[bot]["wins"] - (bot == winner)
        assert after[bot]["losses"] == board[bot]["losses"] - (bot == loser)
        assert after[bot]["draws"] == board[bot]["draws"]
    cross = json.loads(ok("crosstable", "--db", db_url, "-t", "1", "--json").stdout)
    pair = [c for c in cross if c["bot"].startswith(f"{winner} (")]
    pair = [c for c in pair if c["opponent"].startswith(f"{loser} (")]
    assert [c["games"] for c in pair] == [1]  # two games per pair, one annulled
    all_boards = json.loads(ok("leaderboard", "--db", db_url, "--json").stdout)
    assert sum(r["games"] for r in all_boards) == 2 * 5

    # tournament show / list: totals without the void match
    show = json.loads(ok("tournament", "show", "1", "--db", db_url, "--json").stdout)
    assert show["progress"] == {"pending": 0, "running": 0, "done": 5, "void": 1}
    shown = {s["bot"]: s for s in show["standings"]}
    assert shown[winner]["wins"] == standings[winner]["wins"] - 1
    assert shown[loser]["points"] == standings[loser]["points"]
    assert shown[winner]["points"] == standings[winner]["points"] - 1
    assert sum(s["games"] for s in shown.values()) == 10
    text_show = ok("tournament", "show", "1", "--db", db_url).stdout
    assert "5/5 done" in text_show and "(1 void, not counted)" in text_show
    listed = json.loads(ok("tournament", "list", "--db", db_url, "--json").stdout)
    assert [(t["done"], t["total"]) for t in listed] == [(5, 5)]

    # exports: done matches only
    exported = json.loads(ok("export", "--db", db_url).stdout)
    assert len(exported) == 5 and mid not in {e["match"] for e in exported}
    rows = list(csv.DictReader(io.StringIO(ok("export", "--db", db_url, "-f", "csv").stdout)))
    assert len(rows) == 5 and str(mid) not in {r["match"] for r in rows}
    pgn = ok("export", "--db", db_url, "-f", "pgn").stdout
    assert pgn.count("[Event ") == 5 and f'[Match "{mid}"]' not in pgn

    # matches: result void and the reason; --status void filters
    listed_void = json.loads(ok("matches", "--db", db_url, "--status", "void", "--json").stdout)
    assert [(m["match"], m["result"], m["void_reason"]) for m in listed_void] == [
        (mid, "void", REASON)
    ]
    table = ok("matches", "--db", db_url).stdout
    [line] = [x for x in table.splitlines() if x.split()[0] == str(mid)]
    assert " void " in line and line.endswith(REASON)
    # replay still replays it, saying it is void and why
    replay = ok("replay", str(mid), "--db", db_url)
    assert f"VOID: {REASON}" in replay.stdout and replay.stdout.count("\nply ") == moves
    replay_json = json.loads(ok("replay", str(mid), "--db", db_url, "--json").stdout)
    assert replay_json["void_reason"] == REASON and len(replay_json["moves"]) == moves

    # --replay: a pending copy, the tournament running again, resume plays exactly it
    other, _, _ = decisive_match(db_url)
    out = ok("matches", "void", str(other), "-r", "replay it", "--replay", "--db", db_url)
    assert "arena tournament resume 1" in out.stdout
    [(copy,)] = sql(db_url, "SELECT id FROM matches WHERE status = 'pending'")
    same = "tournament_id, round, game, players, seed, opening, start_position"
    assert sql(db_url, f"SELECT {same} FROM matches WHERE id = :m", m=copy) == sql(
        db_url, f"SELECT {same} FROM matches WHERE id = :m", m=other
    )
    seats = "SELECT seat, bot_version_id FROM seats WHERE match_id = :m ORDER BY seat"
    assert sql(db_url, seats, m=copy) == sql(db_url, seats, m=other)
    assert sql(db_url, "SELECT status, finished FROM tournaments") == [("running", None)]
    resumed = ok("tournament", "resume", "1", "--db", db_url, "--jobs", "1", "--json")
    outcome = json.loads(resumed.stdout)["outcome"]
    assert (outcome["played"], outcome["done"], outcome["total"]) == (1, 5, 5)
    assert sql(db_url, "SELECT status, finished IS NOT NULL FROM tournaments") == [("done", True)]
    assert sql(db_url, "SELECT status, count(*) FROM matches GROUP BY status ORDER BY status") == [
        ("done", 5),
        ("void", 2),
    ]
    assert sql(db_url, "SELECT status FROM matches WHERE id = :m", m=copy) == [("done",)]


def _pending_tournament(url: str, matches: int = 2) -> int:
    engine = make_engine(url)
    try:
        return create(
            session_factory(engine),
            games.get("coins"),
            FIELD[:2],
            [resolve(s) for s in FIELD[:2]],
            fmt="round-robin",
            games_per_group=matches,
            time_control=TimeControl(move_time=5.0),
            seed=1,
            opening_plies=0,
        )
    finally:
        engine.dispose()


def test_a_voided_pending_match_is_not_played(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.db'}"
    tid = _pending_tournament(url, 4)
    out = ok("matches", "void", "2", "3", "--reason", "bye", "--db", url, "--json")
    assert [m["previous_status"] for m in json.loads(out.stdout)] == ["pending", "pending"]
    resumed = json.loads(ok("tournament", "resume", str(tid), "--db", url, "--json").stdout)
    assert (resumed["outcome"]["played"], resumed["outcome"]["total"]) == (2, 2)
    assert resumed["status"] == "done"
    assert sql(url, "SELECT id, status FROM matches ORDER BY id") == [
        (1, "done"),
        (2, "void"),
        (3, "void"),
        (4, "done"),
    ]
    assert sql(url, "SELECT count(*) FROM moves WHERE match_id IN (2, 3)") == [(0,)]
    never = _error_line(arena("replay", "2", "--db", url))
    assert "void (bye)" in never and "never played" in never


@pytest.fixture
def live_runner() -> Iterator[int]:
    """A live process whose command line says arena (what active_runner looks for)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()", "arena-runner-stand-in"],
        stdin=subprocess.PIPE,
    )
    try:
        yield proc.pid
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()


def _set_runner(url: str, tid: int, pid: int) -> None:
    """Record ``pid`` as the tournament's runner, as a runner does when it starts."""
    engine = make_engine(url)
    try:
        with session_factory(engine).begin() as session:
            tournament = session.get(Tournament, tid)
            assert tournament is not None
            tournament.settings = {"runner": {"host": socket.gethostname(), "pid": pid}}
    finally:
        engine.dispose()


def test_errors_are_one_line_exit_2_and_write_nothing(db_url: str, live_runner: int) -> None:
    tid = _pending_tournament(db_url, 4)  # matches 1-4
    execute(db_url, "UPDATE matches SET status = 'running' WHERE id = 1")
    ok("matches", "void", "4", "--reason", "first", "--db", db_url)
    ok("play", "coins", "--bot", "random", "--bot", "random:seed=1", "--db", db_url, "--no-show")
    [(played,)] = sql(db_url, "SELECT max(id) FROM matches")
    _set_runner(db_url, tid, live_runner)
    before = everything(db_url)
    cases = [
        (["2", "99"], ["--reason", "x"], "no match 99"),
        (["2", "4"], ["--reason", "x"], "match 4 is void already (first)"),
        (["2"], ["--reason", "   "], "reason is required"),
        (["2", str(played)], ["--reason", "x", "--replay"], "not part of a tournament"),
        (["2", "1"], ["--reason", "x"], f"played by process {live_runner}"),
    ]
    for ids, opts, fragment in cases:
        assert fragment in _error_line(arena("matches", "void", *ids, *opts, "--db", db_url))
        assert everything(db_url) == before, ids
    assert "no database" in _error_line(
        arena("matches", "void", "1", "-r", "x", "--db", "sqlite:////nonexistent/x.db")
    )
    assert "subcommand" in _error_line(arena("matches", "--db", db_url, "void", "2", "-r", "x"))
    assert everything(db_url) == before

    # a pending match may be voided while the runner lives; a running one once it is gone
    ok("matches", "void", "2", "--reason", "withdrawn", "--db", db_url)
    _set_runner(db_url, tid, 2**22 + 7)  # no such process
    out = ok("matches", "void", "1", "--reason", "runner died", "--db", db_url, "--json")
    assert json.loads(out.stdout)[0]["previous_status"] == "running"
    # a match played with `arena play` can be voided (without a replay)
    ok("matches", "void", str(played), "--reason", "test game", "--db", db_url)
    assert sql(db_url, "SELECT id, status FROM matches ORDER BY id") == [
        (1, "void"),
        (2, "void"),
        (3, "pending"),
        (4, "void"),
        (played, "void"),
    ]
    listed = ok("matches", "--db", db_url, "--limit", "0").stdout  # the listing still works
    assert "runner died" in listed and "void reason" in listed.splitlines()[0]


def test_void_replay_of_a_ladder_game_says_how_it_is_played_and_that_is_true(
    tmp_path: Path,
) -> None:
    """A ladder's copies are played by its runner (``tournament resume`` refuses a ladder):
    the line after ``void --replay`` names ``arena ladder run``, and that command plays the
    copy."""
    from bot_arena.arena.api.ladders import ladder_add, ladder_create, ladder_run

    db = f"sqlite:///{tmp_path / 'arena.db'}"
    ladder_create("club", "tictactoe", db=db, seed=3)
    ladder_add("club", ["random", "random:seed=1"], db=db)
    ladder_run("club", jobs=1, until_games=2, db=db)
    [(mid,)] = sql(db, "SELECT min(id) FROM matches WHERE status = 'done'")
    out = ok("matches", "void", str(mid), "-r", "again", "--replay", "--db", db).stdout
    line = "replays scheduled: the ladder's runner plays them (`arena ladder run club`)"
    assert out.splitlines()[-1] == line, out
    [(copy,)] = sql(db, "SELECT max(id) FROM matches WHERE status = 'pending'")
    assert "is a ladder" in _error_line(arena("tournament", "resume", "1", "--db", db))
    ok("ladder", "run", "club", "--until-games", "3", "--jobs", "1", "--quiet", "--db", db)
    assert sql(db, f"SELECT status FROM matches WHERE id = {copy}") == [("done",)]
