"""Real tournaments of real bots (worker processes) through the CLI, checked with SQL."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from typer.testing import CliRunner

from bot_arena import games
from bot_arena.arena.cli.app import app
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.tournament.create import create
from bot_arena.db.session import make_engine, session_factory
from tests.db.dbtest import BACKENDS, database

# each test plays tournaments or whole games through separate processes: seconds a test
pytestmark = pytest.mark.slow

runner = CliRunner()
TTT_FIELD = ["random", "random:seed=1", "random:seed=2"]


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as url:
        yield url


def arena(*args: str) -> Any:
    return runner.invoke(app, list(args))


def sql(url: str, query: str, **params: Any) -> list[tuple[Any, ...]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(query), params)]
    finally:
        engine.dispose()


def run_args(game: str, field: list[str], url: str, *extra: str) -> list[str]:
    args = ["tournament", "run", game, "--db", url, "--move-time", "5"]
    for spec in field:
        args += ["--bot", spec]
    return [*args, *extra]


def replayed_final(game_name: str, params: dict[str, Any], start: str, moves: list[str]) -> str:
    game = games.get(game_name, **params)
    state = game.parse_position(start)
    for move in moves:
        state = game.apply(state, game.move_from_text(state, move))
    return game.format_position(state)


def check_matches_replay(url: str, tournament: int) -> None:
    """Every stored match replays from its start position to its final position."""
    for mid, game, params, start, final in sql(
        url,
        "SELECT id, game, params, start_position, final_position FROM matches"
        " WHERE tournament_id = :t",
        t=tournament,
    ):
        moves = [
            m for (m,) in sql(url, "SELECT move FROM moves WHERE match_id=:m ORDER BY ply", m=mid)
        ]
        p = json.loads(params) if isinstance(params, str) else params
        assert replayed_final(game, p, start, moves) == final, mid


def test_round_robin_through_the_cli(db_url: str) -> None:
    result = arena(
        *run_args("tictactoe", TTT_FIELD, db_url, "--jobs", "2", "--seed", "7", "--json")
    )
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("tournament 1: round-robin of 3 bots")
    summary = json.loads(result.stdout)
    assert summary["status"] == "done" and summary["progress"]["done"] == 6

    assert sql(db_url, "SELECT count(*), min(status), max(status) FROM matches") == [
        (6, "done", "done")
    ]
    assert sql(db_url, "SELECT status, finished IS NOT NULL FROM tournaments") == [("done", True)]
    assert sql(db_url, "SELECT count(*) FROM tournament_entries") == [(3,)]
    assert sql(db_url, "SELECT count(*) FROM seats WHERE rank IS NOT NULL") == [(12,)]
    # scores of a two-player match add up to 1; ranks are 1/2 or a shared 1
    for total, ranks in sql(db_url, "SELECT sum(score), sum(rank) FROM seats GROUP BY match_id"):
        assert total == pytest.approx(1.0) and ranks in (2, 3)
    # every pair twice, with the seats swapped
    pairs = sql(
        db_url,
        "SELECT b0.name, b1.name FROM matches m"
        " JOIN seats s0 ON s0.match_id = m.id AND s0.seat = 0"
        " JOIN seats s1 ON s1.match_id = m.id AND s1.seat = 1"
        " JOIN bot_versions v0 ON v0.id = s0.bot_version_id JOIN bots b0 ON b0.id = v0.bot_id"
        " JOIN bot_versions v1 ON v1.id = s1.bot_version_id JOIN bots b1 ON b1.id = v1.bot_id",
    )
    assert Counter(pairs) == Counter({(a, b): 1 for a in TTT_FIELD for b in TTT_FIELD if a != b})
    # the moves stored are the game: they replay to the stored final position
    check_matches_replay(db_url, 1)
    standings = {s["bot"]: s for s in summary["standings"]}
    assert {s["games"] for s in standings.values()} == {4}
    assert sum(s["points"] for s in standings.values()) == pytest.approx(6.0)


def _results(url: str) -> list[tuple[Any, ...]]:
    rows = sql(
        url,
        "SELECT m.round, m.seed, s.seat, b.name, s.rank, s.score FROM matches m"
        " JOIN seats s ON s.match_id = m.id JOIN bot_versions v ON v.id = s.bot_version_id"
        " JOIN bots b ON b.id = v.bot_id ORDER BY m.id, s.seat",
    )
    moves = sql(url, "SELECT match_id, ply, seat, move FROM moves ORDER BY match_id, ply")
    return [*rows, *moves]


def test_same_seed_same_tournament_whatever_the_jobs(tmp_path: Path) -> None:
    urls = [f"sqlite:///{tmp_path / f'{i}.db'}" for i in range(2)]
    for url, jobs in zip(urls, ["1", "2"], strict=True):
        field = ["random", "random:seed=5", "random:seed=6"]
        result = arena(
            *run_args(
                "tictactoe",
                field,
                url,
                "--jobs",
                jobs,
                "--seed",
                "11",
                "--opening-plies",
                "1",
                "--games",
                "4",
            )
        )
        assert result.exit_code == 0, result.output
    assert _results(urls[0]) == _results(urls[1])


def test_three_player_round_robin_balances_seats(db_url: str) -> None:
    field = ["random", "random:seed=1", "random:seed=2", "random:seed=3"]
    result = arena(*run_args("nim", field, db_url, "--jobs", "1", "--seed", "3"))
    assert result.exit_code == 0, result.output
    assert sql(db_url, "SELECT count(*), min(players) FROM matches WHERE status='done'") == [
        (12, 3)
    ]
    seat_counts = sql(
        db_url,
        "SELECT b.name, s.seat, count(*) FROM seats s JOIN bot_versions v"
        " ON v.id = s.bot_version_id JOIN bots b ON b.id = v.bot_id GROUP BY b.name, s.seat",
    )
    assert sorted(c for _, _, c in seat_counts) == [3] * 12  # C(3,2) groups per bot, per seat
    assert sql(db_url, "SELECT min(rank), max(rank) FROM seats")[0][0] >= 1
    assert sql(db_url, "SELECT max(rank) FROM seats")[0][0] <= 3
    check_matches_replay(db_url, 1)


def test_gauntlet_with_openings(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'g.db'}"
    field = ["random:seed=9", "random:seed=1", "random:seed=2"]
    result = arena(
        *run_args(
            "tictactoe",
            field,
            url,
            "--format",
            "gauntlet",
            "--games",
            "4",
            "--opening-plies",
            "2",
            "--seed",
            "5",
            "--jobs",
            "2",
        )
    )
    assert result.exit_code == 0, result.output
    rows = sql(
        url,
        "SELECT m.id, m.opening, m.start_position, group_concat(b.name, ',') FROM matches m"
        " JOIN seats s ON s.match_id = m.id JOIN bot_versions v ON v.id = s.bot_version_id"
        " JOIN bots b ON b.id = v.bot_id GROUP BY m.id ORDER BY m.id",
    )
    assert len(rows) == 2 * 4
    game = games.get("tictactoe")
    by_pair: dict[frozenset[str], set[str]] = {}
    for _mid, opening, start, names in rows:
        bots = names.split(",")
        assert "random:seed=9" in bots
        assert len(opening.split()) == 2
        state = game.initial_state()
        for move in opening.split():
            state = game.apply(state, game.move_from_text(state, move))
        assert game.format_position(state) == start
        by_pair.setdefault(frozenset(bots), set()).add(opening)
    # 4 games per pair = 2 openings, each played with both seatings
    assert all(len(openings) <= 2 for openings in by_pair.values())
    check_matches_replay(url, 1)


def test_inspection_commands(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'i.db'}"
    result = arena(
        *run_args("tictactoe", TTT_FIELD, url, "--seed", "1", "--jobs", "1", "--name", "nightly")
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("tournament 1: ")

    listed = json.loads(arena("tournament", "list", "--db", url, "--json").stdout)
    assert [(t["id"], t["name"], t["done"], t["total"]) for t in listed] == [(1, "nightly", 6, 6)]

    show = json.loads(arena("tournament", "show", "1", "--db", url, "--json").stdout)
    cross = show["crosstable"]
    for a in TTT_FIELD:
        for b in TTT_FIELD:
            if a != b:
                assert cross[a][b]["games"] == 2
                assert cross[a][b]["points"] + cross[b][a]["points"] == pytest.approx(2.0)
    table = arena("tournament", "show", "1", "--db", url)
    assert table.exit_code == 0 and "crosstable" in table.stdout and "6/6 done" in table.stdout

    mine = json.loads(arena("matches", "--db", url, "--bot", "random:seed=1", "--json").stdout)
    assert len(mine) == 4 and all("random:seed=1" in m["bots"] for m in mine)

    exported = json.loads(arena("export", "--db", url, "--format", "json").stdout)
    assert len(exported) == 6
    first = exported[0]
    assert {"match", "tournament", "game", "termination", "seats", "moves"} <= set(first)
    assert first["tournament"] == 1 and {"bot", "utility", "rank", "score", "fault"} <= set(
        first["seats"][0]
    )
    assert {"seat", "move", "time_ms", "info"} <= set(first["moves"][0])

    replay = arena("replay", str(first["match"]), "--db", url)
    assert replay.exit_code == 0, replay.output
    assert replay.stdout.count("\nply ") == len(first["moves"])
    assert f"termination: {first['termination']}" in replay.stdout

    rows = list(csv.DictReader(io.StringIO(arena("export", "--db", url, "--format", "csv").stdout)))
    assert len(rows) == 6 and {r["result"] for r in rows} <= {"1-0", "0-1", "1/2-1/2"}
    pgn = arena("export", "--db", url, "--format", "pgn", "--tournament", "1").stdout
    assert pgn.count('[Event "nightly"]') == 6
    assert pgn.count("[White ") == pgn.count("[Black ") == pgn.count("[Termination ") == 6
    for r, m in zip(rows, exported, strict=True):
        assert f'[Result "{r["result"]}"]' in pgn and r["white"] == m["seats"][0]["bot"]


def _error_line(result: Any) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return str(lines[0])


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["tictactoe", "--bot", "random", "--bot", "nosuchbot"], "unknown bot"),
        (["nosuchgame", "--bot", "random", "--bot", "random"], "unknown game"),
        (["tictactoe", "--bot", "random", "--bot", "minimax", "--clock", "fast"], "clock"),
        (["tictactoe", "--bot", "random", "--bot", "minimax", "--move-time", "-1"], "move time"),
        (["tictactoe", "--bot", "random", "--bot", "random"], "twice"),
        (["tictactoe", "--bot", "random"], "at least two"),
        (["tictactoe", "--bot", "random", "--bot", "human"], "human"),
        (["coins", "--bot", "random", "--bot", "random:seed=1", "--opening-plies", "9"], "opening"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    path = tmp_path / "arena.db"
    result = arena("tournament", "run", *args, "--db", f"sqlite:///{path}")
    assert fragment in _error_line(result)
    if path.exists():  # only the opening error comes after the database was opened
        assert sql(f"sqlite:///{path}", "SELECT count(*) FROM tournaments") == [(0,)]
        assert sql(f"sqlite:///{path}", "SELECT count(*) FROM matches") == [(0,)]


def test_unreadable_database_is_one_line_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    junk = b"not a database at all " * 200
    path.write_bytes(junk)
    for cmd in (
        ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1"],
        ["tournament", "list"],
        ["matches"],
        ["export"],
    ):
        assert "database" in _error_line(arena(*cmd, "--db", f"sqlite:///{path}"))
    assert path.read_bytes() == junk
    assert "invalid database URL" in _error_line(arena("tournament", "list", "--db", "nope://"))
    missing = tmp_path / "missing.db"
    for cmd in (
        ["tournament", "list"],
        ["tournament", "show", "1"],
        ["matches"],
        ["export"],
        ["replay", "1"],
        ["tournament", "resume", "1"],
    ):
        assert "no database" in _error_line(arena(*cmd, "--db", f"sqlite:///{missing}"))
    assert not missing.exists()  # reading commands never create a database


def test_resume_of_a_finished_tournament_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'f.db'}"
    assert arena(*run_args("coins", ["random", "random:seed=1"], url, "-j", "1")).exit_code == 0
    before = (
        sql(url, "SELECT id, status, finished FROM tournaments"),
        sql(url, "SELECT count(*) FROM moves"),
    )
    assert "already finished" in _error_line(arena("tournament", "resume", "1", "--db", url))
    assert "no tournament 7" in _error_line(arena("tournament", "resume", "7", "--db", url))
    after = (
        sql(url, "SELECT id, status, finished FROM tournaments"),
        sql(url, "SELECT count(*) FROM moves"),
    )
    assert before == after


BOT_SOURCE = """
import random

def choose_move(game, state, budget):
    return random.Random({seed}).choice(list(game.legal_moves(state)))
"""


def test_resume_refuses_a_changed_bot_unless_forced(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    bot = tmp_path / "mybot.py"
    bot.write_text(BOT_SOURCE.format(seed=1))
    specs = [str(bot), "random"]
    refs = [resolve(s) for s in specs]
    engine = make_engine(url)
    tid = create(
        session_factory(engine),
        games.get("tictactoe"),
        specs,
        refs,
        fmt="round-robin",
        games_per_group=2,
        time_control=TimeControl(move_time=5.0),
        seed=1,
        opening_plies=0,
    )
    engine.dispose()
    bot.write_text(BOT_SOURCE.format(seed=2))  # the source changes before the resume
    line = _error_line(arena("tournament", "resume", str(tid), "--db", url))
    assert "mybot changed" in line and "--force" in line
    assert sql(url, "SELECT count(*) FROM matches WHERE status = 'pending'") == [(2,)]

    result = arena("tournament", "resume", str(tid), "--db", url, "--force", "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert sql(url, "SELECT count(*) FROM matches WHERE status = 'done'") == [(2,)]
    # the results point at the version that actually played
    played = sql(
        url,
        "SELECT DISTINCT v.sha256 FROM seats s JOIN bot_versions v ON v.id = s.bot_version_id"
        " JOIN bots b ON b.id = v.bot_id WHERE b.name = 'mybot'",
    )
    assert played == [(resolve(str(bot)).sha256,)]


def test_faults_are_reported_and_stored(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'f.db'}"
    flaky = str(Path(__file__).parent / "fixtures" / "raise_third.py")
    result = arena(*run_args("tictactoe", [flaky, "random"], url, "--jobs", "1", "--seed", "2"))
    assert result.exit_code == 0, result.output
    faults = sql(
        url,
        "SELECT m.termination, m.fault_reason, s.fault, o.rank FROM matches m"
        " JOIN seats s ON s.match_id = m.id JOIN seats o ON o.match_id = m.id AND o.seat <> s.seat"
        " WHERE s.fault IS NOT NULL",
    )
    assert faults, "the bot that raises on its third move never faulted"
    for termination, reason, fault, other_rank in faults:
        detail = json.loads(fault) if isinstance(fault, str) else fault
        assert termination == "crash" and detail["termination"] == "crash"
        assert "raise_third" in reason and other_rank == 1  # the opponent wins
    # one progress line per fault, naming the match and the bot
    assert result.stderr.count("fault: match ") == len(faults)
    assert "raise_third: crash" in result.stderr


def test_replay_step_waits_for_enter_and_pgn_skips_n_player_games(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    field = ["random", "random:seed=1", "random:seed=2"]
    assert arena(*run_args("nim", field, url, "--jobs", "1", "--seed", "4")).exit_code == 0
    assert arena(*run_args("coins", field[:2], url, "--jobs", "1", "--games", "1")).exit_code == 0
    nim = json.loads(arena("export", "--db", url, "--tournament", "1").stdout)
    plies = len(nim[0]["moves"])
    short = runner.invoke(
        app, ["replay", str(nim[0]["match"]), "--step", "--db", url], input="\n" * (plies - 1)
    )
    assert short.exit_code == 0  # input ran out: it stops where it was
    assert short.stdout.count("\nply ") == plies - 1
    full = runner.invoke(
        app, ["replay", str(nim[0]["match"]), "--step", "--db", url], input="\n" * plies
    )
    assert full.exit_code == 0 and full.stdout.count("\nply ") == plies

    pgn = arena("export", "--db", url, "--format", "pgn")
    assert pgn.exit_code == 0
    assert pgn.stdout.count("[Event ") == 1 and '[Variant "coins"]' in pgn.stdout
    assert "3 matches of more than two players skipped" in pgn.stderr
