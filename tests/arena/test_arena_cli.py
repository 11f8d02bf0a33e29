"""``arena play`` and ``arena bots`` through the command line, against a temporary SQLite db."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from arena_helpers import FIXTURES
from typer.testing import CliRunner

from bot_arena import games
from bot_arena.arena.cli.app import app

runner = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'arena.db'}"


def test_play_json_has_the_whole_record() -> None:
    result = runner.invoke(
        app,
        [
            "play",
            "tictactoe",
            "--bot",
            "random",
            "--bot",
            str(FIXTURES / "first_legal.py"),
            "--move-time",
            "5",
            "--seed",
            "4",
            "--json",
            "--no-save",
        ],
    )
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["game"] == "tictactoe" and record["termination"] == "normal"
    assert [s["bot"] for s in record["seats"]] == ["random", "first_legal"]
    assert all({"utility", "rank", "score", "fault"} <= set(s) for s in record["seats"])
    game = games.get("tictactoe")
    state = game.initial_state()
    for i, m in enumerate(record["moves"]):
        assert m["seat"] == i % 2 and m["time_ms"] > 0 and "info" in m
        state = game.apply(state, game.move_from_text(state, m["move"]))
    assert game.format_position(state) == record["final_position"]
    assert sorted(s["score"] for s in record["seats"]) in ([0.0, 1.0], [0.5, 0.5])


def test_play_fault_result_line_names_winner_and_reason() -> None:
    result = runner.invoke(
        app,
        [
            "play",
            "tictactoe",
            "--bot",
            str(FIXTURES / "sleep_forever.py"),
            "--bot",
            "random",
            "--move-time",
            "0.3",
            "--move-time",
            "20",
            "--no-save",
        ],
    )
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("result:"))
    assert "seat 1 (random) wins" in line and "termination timeout" in line


def test_play_show_renders_every_move() -> None:
    result = runner.invoke(
        app,
        [
            "play",
            "coins",
            "--param",
            "coins=5",
            "--bot",
            "random",
            "--bot",
            "random",
            "--show",
            "--no-save",
            "--move-time",
            "5",
        ],
    )
    assert result.exit_code == 0, result.output
    plays = result.stdout.count(" plays ")
    assert plays >= 3 and result.stdout.count("coin(s) left") == plays  # start board + moves - end
    assert "result:" in result.stdout


def test_play_saves_the_match(db: str) -> None:
    result = runner.invoke(
        app, ["play", "coins", "--bot", "random", "--bot", "random", "--db", db, "--json"]
    )
    assert result.exit_code == 0, result.output
    match_id = json.loads(result.stdout)["match_id"]
    from bot_arena.db.session import make_engine, session_factory
    from bot_arena.db.store import load_match, record_of

    with session_factory(make_engine(db)).begin() as session:
        match = load_match(session, match_id)
        assert match is not None
        stored = record_of(match)
    assert stored.termination.value == "normal" and len(stored.seats) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["play", "tictactoe", "--bot", "random"], "takes 2 bots"),
        (
            ["play", "tictactoe", "--bot", "random", "--bot", "nosuchbot", "--no-save"],
            "unknown bot",
        ),
        (["play", "tictactoe", "--clock", "1+x", "--no-save"], "BASE+INC"),
        (["play", "tictactoe", "--move-time", "-1", "--no-save"], "move time"),
        (["play", "tictactoe", "--position", "zzz", "--no-save"], "tictactoe"),
        (["play", "tictactoe", "--bot", "/nope/bot.py", "--bot", "random"], "cannot read"),
    ],
)
def test_bad_input_is_one_line(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code in (1, 2)
    err = result.stderr.strip()
    assert err.startswith("error:") and "\n" not in err and message in err
    assert "Traceback" not in result.output


def test_bots_add_list_show_and_versions(db: str, tmp_path: Path) -> None:
    bot = tmp_path / "mybot.py"
    shutil.copy(FIXTURES / "first_legal.py", bot)
    add = ["bots", "add", str(bot), "--name", "mine", "-g", "tictactoe", "--db", db, "--json"]
    first = runner.invoke(app, add)
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["created"] is True
    again = runner.invoke(app, add)
    assert json.loads(again.stdout)["created"] is False  # same source, same version
    bot.write_text(bot.read_text() + "\n# changed\n")
    changed = runner.invoke(app, add)
    out = json.loads(changed.stdout)
    assert out["created"] is True and out["version"] == 2

    listed = json.loads(runner.invoke(app, ["bots", "list", "--db", db, "--json"]).stdout)
    assert [(r["name"], r["versions"]) for r in listed] == [("mine", 2)]
    shown = json.loads(runner.invoke(app, ["bots", "show", "mine", "--db", db, "--json"]).stdout)
    assert [v["version"] for v in shown["versions"]] == [1, 2]
    assert shown["versions"][1]["sha256"] == out["sha256"]

    # the registered name plays, as the version that was stored (not the file now on disk)
    bot.write_text("raise SystemExit('gone')\n")
    played = runner.invoke(
        app, ["play", "tictactoe", "--bot", "mine", "--bot", "random", "--db", db, "--json"]
    )
    assert played.exit_code == 0, played.output
    record = json.loads(played.stdout)
    assert record["termination"] == "normal"
    assert record["seats"][0]["bot"] == "mine" and record["seats"][0]["version"] == out["sha256"]


def test_bots_add_refuses_a_failing_bot(db: str) -> None:
    result = runner.invoke(
        app,
        [
            "bots",
            "add",
            str(FIXTURES / "unparseable.py"),
            "-n",
            "bad",
            "-g",
            "tictactoe",
            "--db",
            db,
        ],
    )
    assert result.exit_code == 1
    assert "bad_output" in result.stderr
    listed = runner.invoke(app, ["bots", "list", "--db", db, "--json"])
    assert json.loads(listed.stdout) == []


def test_bots_check_shell_bot() -> None:
    result = runner.invoke(
        app, ["bots", "check", f"cmd:{FIXTURES / 'first_legal.sh'}", "--game", "coins", "--json"]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["ok"] is True and out["kind"] == "command" and out["games"] == 2
