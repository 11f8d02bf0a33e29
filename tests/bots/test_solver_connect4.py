"""``arena solve connect4`` on the public benchmark sets: every score exact, best moves sound."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot_arena import games
from bot_arena.arena.cli.app import app
from bot_arena.arena.cli.solve_cmd import read_positions, solve_positions
from bot_arena.bots.connect4_solver import Connect4Solver


def _set(shared_data: Path, name: str) -> Path:
    path = shared_data / "connect4" / name
    if not path.is_file():
        pytest.skip(f"benchmark set {path} not found")
    return path


def _solve_file(path: Path, limit: int | None = None) -> list[tuple[dict[str, Any], int]]:
    game = games.get("connect4")
    lines = path.read_text(encoding="utf-8").splitlines()[:limit]
    todo = read_positions(game, lines, str(path))
    rows = list(solve_positions(game, todo))
    return [(row, int(line.extra[0])) for row, line in zip(rows, todo, strict=True)]


def test_every_score_of_test_l3_r1(shared_data: Path) -> None:
    results = _solve_file(_set(shared_data, "Test_L3_R1"))
    assert len(results) == 1000
    wrong = [(row["position"], row["score"], want) for row, want in results if row["score"] != want]
    assert wrong == []
    for row, want in results:
        assert row["values"][row["player"]] == want
        assert row["values"][0] == -row["values"][1]


def test_scores_of_test_l2_r1_and_moves_reach_them(shared_data: Path) -> None:
    results = _solve_file(_set(shared_data, "Test_L2_R1"), limit=300)
    assert len(results) == 300
    wrong = [(row["position"], row["score"], want) for row, want in results if row["score"] != want]
    assert wrong == []
    # The move reaches the score: the child position (solved from scratch) is worth -score.
    game = games.get("connect4")
    raw = Connect4Solver()
    for row, want in results[:60]:
        child = game.apply(game.parse_position(row["position"]), game.parse_move(row["move"]))
        if game.is_terminal(child):
            mover = row["player"]
            assert game.utility(child)[mover] == want
            continue
        raw.reset()
        assert raw.solve(child[0], child[1], child[2], want_move=False).score == -want


def _runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:  # click >= 8.2 keeps stderr apart already
        return CliRunner()


def test_cli_json_lines_on_a_subset(shared_data: Path, tmp_path: Path) -> None:
    source = _set(shared_data, "Test_L2_R1").read_text(encoding="utf-8").splitlines()
    subset = tmp_path / "subset"
    subset.write_text("\n".join(["# a comment", "", *source[300:340]]) + "\n", encoding="utf-8")
    result = _runner().invoke(
        app, ["solve", "connect4", "--positions", str(subset), "--json", "--check"]
    )
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 40
    for row, line in zip(rows, source[300:340], strict=True):
        position, score = line.split()
        assert row["position"] == position
        assert row["score"] == int(score)
        assert row["player"] == len(position) % 2
        assert set(row) >= {"position", "player", "values", "score", "move", "nodes", "time_s"}
        assert row["nodes"] >= 1
    assert "40 position(s)" in result.stderr
    assert "40 of 40 scores as expected" in result.stderr


def test_cli_check_reports_a_wrong_expectation(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong"
    wrong.write_text("2252576253462244111563365343671351441 5\n", encoding="utf-8")
    result = _runner().invoke(app, ["solve", "connect4", "--positions", str(wrong), "--check"])
    assert result.exit_code == 1
    assert "expected 5" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["solve", "connect4", "--position", "44x"], "not a column"),
        (["solve", "connect4", "--position", "1", "--positions", "f"], "not both"),
        (["solve", "nosuchgame"], "unknown game"),
        (["solve", "rolit"], "too large"),
        (["solve", "connect4", "--position", "4", "--max-nodes", "3000"], "3000 nodes"),
        (["solve", "connect4", "--positions", "/nonexistent/file"], "cannot read"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = _runner().invoke(app, args)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0]


def test_cli_bad_line_in_file_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.write_text("4453 1\n1111111 0\n", encoding="utf-8")
    result = _runner().invoke(app, ["solve", "connect4", "--positions", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:2" in result.stderr and result.stdout == ""


def test_arena_solve_in_a_real_process() -> None:
    """The installed entry point, table output: the L3 position scores -1 for player 1."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run(
        [sys.executable, "-m", "bot_arena.arena.cli.app", "solve", "connect4", "--position",
         "2252576253462244111563365343671351441"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    header, row = proc.stdout.splitlines()
    assert header.split()[:5] == ["position", "player", "values", "score", "move"]
    fields = row.split()
    assert fields[0] == "2252576253462244111563365343671351441"
    assert fields[1] == "1" and fields[4] == "-1"
    assert "1 position(s)" in proc.stderr
