"""``arena analyze``: JSON report, the --explain teaching view, DOT output, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from search_helpers import TREES_DIR
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app

runner = CliRunner()
KEYS = {
    "player",
    "values",
    "move",
    "pv",
    "depth",
    "nodes",
    "leaves",
    "cutoffs",
    "tt_hits",
    "time_s",
}
DEEP_CUT = str(TREES_DIR / "lecture-alphabeta-deep-cut.json")
THREE = str(TREES_DIR / "textbook-three-by-three.json")


def analyze(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["analyze", *args])
    return result.exit_code, result.stdout, result.stderr


def test_minimax_visits_the_whole_tictactoe_tree() -> None:
    code, out, _ = analyze("tictactoe", "--bot", "minimax", "--json")
    assert code == 0
    report = json.loads(out)
    assert set(report) >= KEYS
    assert report["nodes"] == 549_946 and report["leaves"] == 255_168
    assert report["values"] == [0.0, 0.0] and report["player"] == 0
    assert report["move"] == "1" and len(report["pv"]) == 9
    assert report["depth"] == 9 and report["cutoffs"] == 0


def test_tree_json_names_the_child_index() -> None:
    code, out, _ = analyze("tree", "--tree", DEEP_CUT, "--bot", "alphabeta", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["move"] == "1" and report["values"] == [6.0, -6.0]
    assert report["pv"] == ["1", "0", "1", "0"]
    assert (report["nodes"], report["leaves"], report["cutoffs"]) == (23, 10, 4)


def test_position_and_params() -> None:
    code, out, _ = analyze(
        "coins", "--param", "coins=5", "--position", "5@1", "--bot", "alphabeta", "--json"
    )
    assert code == 0
    report = json.loads(out)
    assert report["player"] == 1 and report["move"] == "2" and report["values"] == [-1.0, 1.0]


def test_text_report() -> None:
    code, out, _ = analyze("connect4", "--position", "4453", "--bot", "iterative:max_depth=4")
    assert code == 0
    assert "best move:" in out and "pv:" in out and "tt hits" in out


def test_explain_shows_alpha_beta_and_the_cut_branches() -> None:
    code, out, _ = analyze("tree", "--tree", THREE, "--bot", "alphabeta", "--explain")
    assert code == 0
    lines = out.splitlines()
    assert "root MAX (player 0) [alpha=-inf beta=+inf] -> 3, best 0" in lines
    # the second MIN node is entered with alpha 3, finds 2 and skips its last two leaves
    assert "  1: MIN (player 1) [alpha=3 beta=+inf] -> 2, best 0" in lines
    assert "    cut: 1, 2 not searched (alpha >= beta)" in lines
    assert "  2: MIN (player 1) [alpha=3 beta=+inf] -> 2, best 2" in lines
    assert "nodes 11, leaves 7, cutoffs 1, root value 3" in lines
    assert "best move: 0" in lines


def test_explain_minimax_has_no_cuts() -> None:
    code, out, _ = analyze("tree", "--tree", THREE, "--bot", "minimax", "--explain")
    assert code == 0
    assert "cut:" not in out and "alpha" not in out.split("\n\n")[0].splitlines()[1]
    assert "nodes 13, leaves 9, cutoffs 0, root value 3" in out


def test_explain_json_carries_the_tree() -> None:
    code, out, _ = analyze("tree", "--tree", DEEP_CUT, "--bot", "alphabeta", "--explain", "--json")
    assert code == 0
    tree = json.loads(out)["tree"]
    assert tree["value"] == 6 and tree["best"] == "1" and tree["alpha"] == "-inf"
    assert tree["children"][0]["children"][0]["children"][1]["pruned"] == ["1"]


def test_dot_file(tmp_path: Path) -> None:
    target = tmp_path / "search.dot"
    code, _, _ = analyze("tree", "--tree", THREE, "--bot", "alphabeta", "--dot", str(target))
    assert code == 0
    dot = target.read_text()
    assert dot.startswith("digraph search {") and dot.rstrip().endswith("}")
    assert dot.count("style=dashed") == 2  # the two pruned leaves of the second MIN node
    assert dot.count("shape=box") == 7  # the evaluated leaves


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuchgame", "--bot", "minimax"], "unknown game"),
        (["tictactoe", "--bot", "minimax", "--position", "xxx"], "tictactoe"),
        (["tictactoe", "--bot", "nosuchbot"], "unknown bot"),
        (["tictactoe", "--bot", "alphabeta:depth=zero"], "depth"),
        (["coins", "--param", "players=3", "--bot", "minimax"], "two-player zero-sum"),
        (["tictactoe", "--bot", "minimax", "--explain"], "too large"),
        (["tictactoe", "--bot", "mcts", "--explain"], "--explain"),
        (["tictactoe", "--bot", "alphabeta:order=true", "--explain"], "order"),
        (["tictactoe", "--bot", "minimax", "--position", "xxx/oo./..."], "over"),
        (["tree", "--tree", "/nonexistent.json", "--bot", "minimax"], "cannot read"),
        (["coins", "--param", "coins", "--bot", "minimax"], "key=value"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    code, out, err = analyze(*args)
    assert code == 2
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1
    assert message in err


def test_explain_paranoid_on_a_three_player_tree(tmp_path: Path) -> None:
    tree = {
        "players": 3,
        "root": [
            [[{"utility": [1, 2, 0]}], [{"utility": [3, 0, 0]}]],
            [[{"utility": [2, 1, 0]}], [{"utility": [0, 0, 3]}]],
        ],
    }
    path = tmp_path / "three.json"
    path.write_text(json.dumps(tree))
    code, out, _ = analyze("tree", "--tree", str(path), "--bot", "paranoid", "--explain")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("values are player 0's")
    # player 1 minimises player 0's utility: 1 on the left, 0 on the right
    assert "  0: MIN (player 1) [alpha=-inf beta=+inf] -> 1, best 0" in lines
    assert "  1: MIN (player 1) [alpha=1 beta=+inf] -> 0, best 1" in lines
    assert "root MAX (player 0) [alpha=-inf beta=+inf] -> 1, best 0" in lines
