"""``arena games`` and ``arena play`` from the outside: listings, boards, results, user errors."""

from __future__ import annotations

import json
import os
import re
from itertools import pairwise
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot_arena import games
from bot_arena.arena.cli.app import app
from tests.forked_cli import Server

runner = CliRunner()
BOARD_ROW = re.compile(r"^ ([xo.]) ([xo.]) ([xo.])    \d \d \d$")
UTILITIES = re.compile(r"utilities \[([^\]]*)\]")
SHOW = ["--show", "--no-save"]  # render every board; keep matches out of any database


@pytest.fixture(autouse=True)
def _no_database_in_the_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARENA_DB", f"sqlite:///{tmp_path / 'arena.db'}")


def _result_utilities(output: str) -> list[float]:
    last = output.strip().splitlines()[-1]
    assert last.startswith("result:"), last
    found = UTILITIES.search(last)
    assert found, last
    return [float(v) for v in found.group(1).split(",")]


def test_games_table_lists_every_game_with_players_and_kind() -> None:
    result = runner.invoke(app, ["games"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["game", "players", "kind"]
    rows = {line.split()[0]: line.split() for line in lines[2:]}
    assert set(rows) == set(games.names())
    assert rows["tictactoe"][1:3] == ["2", "zero-sum"]
    assert rows["nim"][1:3] == ["3", "constant-sum"]
    assert rows["coins"][1:3] == ["2", "zero-sum"]


def test_games_json() -> None:
    result = runner.invoke(app, ["games", "--json"])
    assert result.exit_code == 0, result.output
    listed = {row["game"]: row for row in json.loads(result.stdout)}
    assert list(listed) == games.names()
    assert listed["nim"]["players"] == 3 and listed["nim"]["kind"] == "constant-sum"
    assert listed["nim"]["parameters"] == {"players": 3, "piles": "3,4,5"}
    assert listed["tictactoe"]["kind"] == "zero-sum" and listed["tictactoe"]["parameters"] == {}
    assert listed["tree"]["players"] == "any"


def _boards(output: str) -> list[str]:
    """The tic-tac-toe boards printed, each as 9 characters."""
    rows = [m.groups() for m in map(BOARD_ROW.match, output.splitlines()) if m]
    assert len(rows) % 3 == 0
    return ["".join(c for row in rows[i : i + 3] for c in row) for i in range(0, len(rows), 3)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_play_tictactoe_random_prints_every_board_and_the_result(seed: int) -> None:
    result = runner.invoke(app, ["play", "tictactoe", "--seed", str(seed), *SHOW])
    assert result.exit_code == 0, result.output
    boards = _boards(result.stdout)
    assert boards[0] == "........."
    assert 6 <= len(boards) <= 10  # at least 5 moves, at most 9
    for ply, (before, after) in enumerate(pairwise(boards)):
        changed = [i for i in range(9) if before[i] != after[i]]
        assert len(changed) == 1 and before[changed[0]] == "."
        assert after[changed[0]] == "xo"[ply % 2]
    game = games.get("tictactoe")
    final = game.parse_position(boards[-1])
    assert game.is_terminal(final)
    assert _result_utilities(result.stdout) == list(game.utility(final))


def test_play_from_a_position_to_a_known_win() -> None:
    result = runner.invoke(app, ["play", "tictactoe", "--position", "xoxoxoox.", *SHOW])
    assert result.exit_code == 0, result.output
    assert _boards(result.stdout) == ["xoxoxoox.", "xoxoxooxx"]
    assert "x wins (player 0)" in result.stdout
    assert "seat 0" in result.stdout.strip().splitlines()[-1]
    assert _result_utilities(result.stdout) == [1.0, -1.0]


def test_play_nim_three_random_bots() -> None:
    result = runner.invoke(app, ["play", "nim", "--param", "piles=2,1", "--seed", "5", *SHOW])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("to move") == 2  # two moves: 2,1 -> one pile left -> empty
    found = re.search(
        r"game over; placement, first to last: players (\d), (\d), (\d)", result.stdout
    )
    assert found
    first, second, third = (int(p) for p in found.groups())
    utilities = _result_utilities(result.stdout)
    assert (utilities[first], utilities[second], utilities[third]) == (2.0, 1.0, 0.0)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["play", "go"], "unknown game 'go'"),
        (["play", "tictactoe", "--param", "size=4"], "unknown parameter 'size'"),
        (["play", "nim", "--param", "players=many"], "players='many' is not a valid int"),
        (["play", "nim", "--param", "players"], "not of the form key=value"),
        (["play", "tictactoe", "--position", "xxxxxxxxx"], "tictactoe: position"),
        (["play", "tictactoe", "--position", "55"], "the cell is taken"),
        (["play", "nim", "--position", "3,4@7"], "player 7 is not 0..2"),
        (["play", "tree", "--tree", "/no/such/tree.json"], "cannot read"),
        (["play", "tree"], "give the tree file"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, [*args, "--no-save"])
    assert result.exit_code == 2, result.output
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], err
    assert "Traceback" not in result.output


def test_real_process_exit_code_and_stderr(tmp_path: Path, arena_cli: Server) -> None:
    """A process's exit code and output (a fork of ``arena_cli``: ``main()`` run as ``python
    -m bot_arena.arena.cli.app`` runs it, the status the interpreter would give)."""
    bad = tmp_path / "bad.json"
    bad.write_text("[1, ", encoding="utf-8")
    proc = arena_cli.run(
        ["play", "tree", "--tree", str(bad)], cwd=Path.cwd(), env=os.environ, timeout=60
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "is not valid JSON" in proc.stderr
    ok = arena_cli.run(["games", "--json"], cwd=Path.cwd(), env=os.environ, timeout=60)
    assert ok.returncode == 0 and {r["game"] for r in json.loads(ok.stdout)} == set(games.names())


def test_play_shows_the_board_by_default_and_the_move_list_with_no_show() -> None:
    shown = runner.invoke(app, ["play", "tictactoe", "--no-save", "--seed", "5"])
    assert shown.exit_code == 0, shown.output
    boards = [line for line in shown.stdout.splitlines() if BOARD_ROW.match(line)]
    plies = len(shown.stdout.split("plays")) - 1
    assert plies >= 5 and len(boards) == 3 * (plies + 1)  # the start and one board a move
    compact = runner.invoke(app, ["play", "tictactoe", "--no-save", "--seed", "5", "--no-show"])
    assert compact.exit_code == 0, compact.output
    assert not any(BOARD_ROW.match(line) for line in compact.stdout.splitlines())
    moves = next(x for x in compact.stdout.splitlines() if x.startswith("moves:")).split()[1:]
    assert len(moves) == plies
    assert _result_utilities(compact.stdout) == _result_utilities(shown.stdout)
