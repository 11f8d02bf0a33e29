"""Explicit game trees from JSON: the shared textbook trees, the format's keys, and its errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot_arena import games
from bot_arena.games.base import GameError, GameKind
from bot_arena.games.tree import TreeGame


def write(tmp_path: Path, data: Any, name: str = "t.json") -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def minimax(game: TreeGame, state: int) -> tuple[float, int, int]:
    """(player 0's value, best move at ``state`` (first of equals), leaves) for two players."""
    if game.is_terminal(state):
        return game.utility(state)[0], -1, 1
    maximise = game.current_player(state) == 0
    best, best_move, leaves = 0.0, -1, 0
    for move in game.legal_moves(state):
        v, _, n = minimax(game, game.apply(state, move))
        leaves += n
        if best_move < 0 or (v > best if maximise else v < best):
            best, best_move = v, move
    return best, best_move, leaves


def test_shared_textbook_trees_load_with_their_expected_values(shared_data: Path) -> None:
    files = sorted((shared_data / "trees").glob("*.json"))
    assert files, f"no trees in {shared_data / 'trees'}"
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        game = games.get("tree", tree=str(path))
        assert isinstance(game, TreeGame)
        assert game.num_players == data.get("players", 2)
        assert game.kind is GameKind.ZERO_SUM
        expected = data["expected"]
        value, move, leaves = minimax(game, game.initial_state())
        assert (value, move, leaves) == (
            expected["value"],
            expected["best_move"],
            expected["minimax_leaves"],
        ), path.name


def test_structure_players_and_positions(tmp_path: Path) -> None:
    tree = {
        "players": 3,
        "comment": "other keys are ignored",
        "root": [
            [{"utility": [1, 2, 3]}, {"utility": [0, 0, 6]}],
            {"player": 0, "children": [{"utility": [2, 2, 2]}], "eval": [1, 1, 4]},
        ],
    }
    game = games.get("tree", tree=write(tmp_path, tree))
    root = game.initial_state()
    assert game.num_players == 3 and game.kind is GameKind.CONSTANT_SUM
    assert game.bounds.min_each == 0 and game.bounds.max_each == 6 and game.bounds.max_sum == 6
    assert game.current_player(root) == 0
    left, right = (game.apply(root, m) for m in game.legal_moves(root))
    assert game.current_player(left) == 1  # by depth
    assert game.current_player(right) == 0  # "player" overrides the depth
    assert game.format_position(game.apply(left, 1)) == "0/1"
    assert game.utility(game.parse_position("0/1")) == (0.0, 0.0, 6.0)
    assert game.parse_position("0,1") == game.parse_position("0/1")
    assert game.parse_position("root") == root == game.parse_position("")
    # eval keys: given where present, the fair share where not, the utility at leaves.
    assert game.evaluate(right) == (1.0, 1.0, 4.0)
    assert game.evaluate(left) == (2.0, 2.0, 2.0)
    assert game.evaluate(game.parse_position("1/0")) == (2.0, 2.0, 2.0)
    assert "<- here" in game.render(right)
    with pytest.raises(GameError, match="leaves the tree"):
        game.parse_position("1/1")
    with pytest.raises(GameError, match="leaves the tree"):
        game.parse_position("0/0/0")


def test_two_player_numbers_and_general_sum(tmp_path: Path) -> None:
    two = games.get("tree", tree=write(tmp_path, [[3, {"children": [5, 1], "eval": 4}], -2]))
    assert two.kind is GameKind.ZERO_SUM and two.num_players == 2
    assert two.utility(two.parse_position("1")) == (-2.0, 2.0)
    assert two.evaluate(two.parse_position("0/1")) == (4.0, -4.0)
    assert two.bounds.min_each == -5 and two.bounds.max_each == 5
    general = {"players": 2, "root": [{"utility": [1, 1]}, {"utility": [0, 3]}]}
    g = games.get("tree", tree=write(tmp_path, general, "g.json"))
    assert g.kind is GameKind.GENERAL_SUM and g.bounds.max_sum == 3


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ("{not json", "is not valid JSON"),
        ("", "is not valid JSON"),
        ([1, True], "node at 1 must have a non-empty list of children"),
        ([{"utility": [True, 1]}], "value at 0 must be a number or 2 numbers"),
        ([{"utility": True}], "value at 0 is not a number"),
        ([1, "x"], "must have a non-empty list of children"),
        ([], "must have a non-empty list of children"),
        ([1, []], "node at 1 must have a non-empty list of children"),
        ([1, {"foo": 1}], "node at 1 has neither children nor utility"),
        ({"players": 3, "root": [1, 2]}, "needs a two-player tree"),
        ({"players": 3, "root": [{"utility": [1, 2]}]}, "must be a number or 3 numbers"),
        ({"players": 0, "root": [1]}, "players must be a positive whole number"),
        ({"players": "2", "root": [1]}, "players must be a positive whole number"),
        ({"root": [{"player": 2, "children": [1]}]}, "player at 0 must be 0..1"),
        ({"root": [{"children": [1], "eval": [1, 2, 3]}]}, "value at 0 must be"),
    ],
)
def test_bad_trees_are_one_line_game_errors(tmp_path: Path, data: Any, why: str) -> None:
    with pytest.raises(GameError, match=why) as info:
        games.get("tree", tree=write(tmp_path, data))
    assert "\n" not in str(info.value)


def test_missing_file_and_no_file(tmp_path: Path) -> None:
    with pytest.raises(GameError, match="cannot read") as info:
        games.get("tree", tree=str(tmp_path / "nope.json"))
    assert "\n" not in str(info.value)
    with pytest.raises(GameError, match="give the tree file"):
        games.get("tree")


def test_from_data_matches_the_file(tmp_path: Path) -> None:
    data = [[3, 12, 8], [2, 4, 6], [14, 5, 2]]
    from_file = games.get("tree", tree=write(tmp_path, data))
    assert isinstance(from_file, TreeGame)
    direct = TreeGame.from_data(data)
    assert minimax(direct, 0) == minimax(from_file, 0) == (3.0, 0, 9)
