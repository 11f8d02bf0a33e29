"""``arena leaderboard`` / ``arena crosstable`` on a database filled with hand-made matches
through DB's store (SQLite file in a temporary folder)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.arena.match.botref import BotRef, sha256_text
from bot_arena.arena.match.record import Fault, MatchRecord, SeatResult, Termination
from bot_arena.arena.ratings.query import LeaderboardError, render_leaderboard
from bot_arena.db.models import Tournament
from bot_arena.db.session import make_engine, session_factory
from bot_arena.db.store import save_match

runner = CliRunner()


def ref(name: str, version: str = "") -> BotRef:
    return BotRef(name, "builtin", name, None, sha256_text(name + version))


class Filler:
    def __init__(self, url: str) -> None:
        self.sessions = session_factory(make_engine(url))
        self.clock = 1_000_000.0

    def tournament(self, game: str) -> int:
        with self.sessions.begin() as session:
            t = Tournament(name="t", game=game, format="round-robin", seed=1)
            session.add(t)
            session.flush()
            return t.id

    def match(
        self,
        game: str,
        seats: list[tuple[BotRef, int]],
        *,
        tournament: int | None = None,
        fault: tuple[int, Termination] | None = None,
    ) -> None:
        n = len(seats)
        results = []
        for i, (r, rank) in enumerate(seats):
            beaten = sum(1 for _, other in seats if other > rank)
            tied = sum(1 for _, other in seats if other == rank) - 1
            bad = Fault(fault[1], "test fault") if fault and fault[0] == i else None
            results.append(
                SeatResult(r.name, float(-rank), rank, (beaten + tied / 2) / (n - 1), bad, r.sha256)
            )
        self.clock += 10.0
        record = MatchRecord(
            game=game,
            params={},
            start_position="",
            seats=results,
            moves=[],
            termination=fault[1] if fault else Termination.NORMAL,
            final_position="",
            started=self.clock,
            finished=self.clock + 1.0,
        )
        with self.sessions.begin() as session:
            save_match(session, record, [r for r, _ in seats], tournament_id=tournament)


@pytest.fixture()
def db(tmp_path: Path) -> tuple[str, int]:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    fill = Filler(url)
    a, b, c = ref("alpha"), ref("beta"), ref("gamma")
    t = fill.tournament("coins")
    # tournament: alpha 3 wins (one by beta's timeout), beta 1 win -> 75%
    fill.match("coins", [(a, 1), (b, 2)], tournament=t)
    fill.match("coins", [(b, 1), (a, 2)], tournament=t)
    fill.match("coins", [(b, 2), (a, 1)], tournament=t, fault=(0, Termination.TIMEOUT))
    fill.match("coins", [(a, 1), (b, 2)], tournament=t, fault=(1, Termination.ILLEGAL_MOVE))
    # outside the tournament: gamma draws and crashes
    fill.match("coins", [(c, 1), (a, 1)])
    fill.match("coins", [(c, 2), (b, 1)], fault=(0, Termination.CRASH))
    fill.match("coins", [(b, 1), (c, 1)])
    # the most recent game type: three-player nim
    fill.match("nim", [(a, 1), (b, 2), (c, 3)])
    fill.match("nim", [(c, 1), (b, 2), (a, 2)])
    return url, t


def invoke(url: str, *args: str) -> list[dict[str, Any]]:
    result = runner.invoke(app, [*args, "--db", url, "--json"])
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


def test_tournament_leaderboard_closed_form_and_faults(db: tuple[str, int]) -> None:
    url, t = db
    rows = {r["bot"]: r for r in invoke(url, "leaderboard", "--tournament", str(t))}
    assert set(rows) == {"alpha", "beta"}
    alpha, beta = rows["alpha"], rows["beta"]
    diff = alpha["elo"] - beta["elo"]
    assert diff == pytest.approx(-400 * math.log10(1 / 0.75 - 1), abs=1e-6)
    assert (alpha["wins"], alpha["draws"], alpha["losses"]) == (3, 0, 1)
    assert alpha["version"] == sha256_text("alpha")[:7]
    assert (beta["timeouts"], beta["crashes"], beta["illegal"]) == (1, 0, 1)
    assert (alpha["timeouts"], alpha["crashes"], alpha["illegal"]) == (0, 0, 0)
    assert alpha["rank"] == 1 and alpha["relative_to"] == "pool average = 1500"


def test_default_is_latest_game_and_game_filter(db: tuple[str, int]) -> None:
    url, _ = db
    nim = invoke(url, "leaderboard")
    assert {r["bot"] for r in nim} == {"alpha", "beta", "gamma"}
    assert all(r["games"] == 2 and "avg_rank" in r for r in nim)
    gamma = next(r for r in nim if r["bot"] == "gamma")
    assert gamma["firsts"] == 1 and gamma["avg_rank"] == pytest.approx(2.0)
    coins = {r["bot"]: r for r in invoke(url, "leaderboard", "--game", "coins")}
    assert coins["gamma"]["crashes"] == 1 and coins["gamma"]["draws"] == 2
    assert coins["alpha"]["games"] == 5


def test_text_formats_and_options(db: tuple[str, int]) -> None:
    url, t = db
    table = runner.invoke(app, ["leaderboard", "--game", "coins", "--wide", "--db", url])
    assert table.exit_code == 0, table.output
    out = table.stdout
    assert "relative to pool average = 1500" in out and "tournament" not in out.splitlines()[0]
    assert f"alpha ({sha256_text('alpha')[:7]})" in out
    for column in ("Elo", "±95%", "W-D-L", "score", "draws", "LOS", "timeouts", "crashes"):
        assert column in out
    csv_out = runner.invoke(app, ["leaderboard", "-g", "coins", "--format", "csv", "--db", url])
    assert csv_out.stdout.splitlines()[0].startswith("pool,rank,bot,version,elo,error,games")
    md = runner.invoke(app, ["leaderboard", "-g", "coins", "--format", "markdown", "--db", url])
    assert "| bot" in md.stdout
    only = invoke(url, "leaderboard", "-g", "coins", "--bot", "gamma")
    assert [r["bot"] for r in only] == ["gamma"]
    anchored = invoke(url, "leaderboard", "-t", str(t), "--anchor", "beta=1000")
    assert {r["bot"]: r["elo"] for r in anchored}["beta"] == 1000.0
    seq = runner.invoke(app, ["leaderboard", "-t", str(t), "--method", "elo", "--db", url])
    assert "order-dependent" in seq.stdout


def test_crosstable(db: tuple[str, int]) -> None:
    url, t = db
    cells = invoke(url, "crosstable", "--tournament", str(t))
    short = {(str(c["bot"]).split()[0], str(c["opponent"]).split()[0]): c for c in cells}
    assert short[("alpha", "beta")]["points"] == 3.0 and short[("alpha", "beta")]["games"] == 4
    assert short[("beta", "alpha")]["points"] == 1.0
    text = runner.invoke(app, ["crosstable", "-g", "coins", "--db", url]).stdout
    assert "3/4" in text and "1/4" in text  # alpha vs beta both ways within coins


def test_render_leaderboard_for_the_tournament_runner(db: tuple[str, int]) -> None:
    url, t = db
    sessions = session_factory(make_engine(url))
    with sessions() as session:
        text = render_leaderboard(session, tournament_id=t, fmt="table")
        assert text.splitlines()[0] == f"Leaderboard, tournament {t} 't', game coins, 4 matches"
        with pytest.raises(LeaderboardError, match="no tournament with id 999"):
            render_leaderboard(session, tournament_id=999)


def test_versions_are_rated_separately(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'v.db'}"
    fill = Filler(url)
    old, new, other = ref("bot", "1"), ref("bot", "2"), ref("other")
    for _ in range(2):
        fill.match("coins", [(old, 2), (other, 1)])
        fill.match("coins", [(new, 1), (other, 2)])
    fill.match("coins", [(new, 2), (other, 1)])
    rows = invoke(url, "leaderboard")
    versions = sorted(str(r["version"]) for r in rows if r["bot"] == "bot")
    assert versions == sorted([old.sha256[:7], new.sha256[:7]])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["leaderboard", "--tournament", "999"], "no tournament with id 999"),
        (["leaderboard", "--game", "chess"], "no matches of game 'chess'"),
        (["leaderboard", "--anchor", "nobody=1"], "bot 'nobody' played no rated match"),
        (["crosstable", "--tournament", "42"], "no tournament with id 42"),
    ],
)
def test_bad_input_is_one_line_exit_2(db: tuple[str, int], args: list[str], message: str) -> None:
    url, _ = db
    result = runner.invoke(app, [*args, "--db", url])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


def test_missing_database_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["leaderboard", "--db", f"sqlite:///{tmp_path / 'none.db'}"])
    assert result.exit_code == 2 and "no database at" in result.stderr
    assert not (tmp_path / "none.db").exists()


def test_bot_filter_across_pools(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.db'}"
    fill = Filler(url)
    a, b, x, y = ref("a"), ref("b"), ref("x"), ref("y")
    fill.match("coins", [(a, 1), (b, 2)])
    fill.match("coins", [(a, 1), (b, 1)])
    fill.match("coins", [(x, 2), (y, 1)])
    fill.match("coins", [(x, 1), (y, 1)])
    table = runner.invoke(app, ["leaderboard", "--db", url, "--bot", "x"])
    assert table.exit_code == 0, table.output
    assert "Pool 2 of 2" in table.stdout and "Pool 1 of 2" not in table.stdout
    assert "separate pools" in table.stdout
    rows = invoke(url, "leaderboard", "--bot", "x", "--bot", "a")
    assert [(r["pool"], r["bot"]) for r in rows] == [(1, "a"), (2, "x")]
