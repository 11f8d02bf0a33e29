"""The report's board views and replay encoding (arena/report/boards.py), pure Python.

Every registered game (and parameter variants) is played out at random; the decoded frames of
its encoded replay must be the views of the states the moves went through, the final frame must
match the stored final position read back from its text, and patches must stay small. The cells
are also checked against each game's own text forms (``render``, ``format_position``) and chess
against python-chess itself, so a view cannot agree with the encoder by sharing its mistake.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena import games
from bot_arena.arena.report import boards
from bot_arena.games.base import Game, GameError
from bot_arena.games.chess import Chess
from bot_arena.games.tree import TreeGame
from tests.report.plugin_game import Countdown

AnyGame = Game[Any, Any]
TREES = sorted((Path(__file__).resolve().parents[1] / "bots" / "data" / "trees").glob("*.json"))

# (game, params, playouts, most plies per playout)
CASES: list[tuple[str, dict[str, Any], int, int]] = [
    ("tictactoe", {}, 20, 9),
    ("connect4", {}, 20, 42),
    ("connect4", {"width": 4, "height": 4}, 10, 16),
    ("connect4", {"width": 5, "height": 3}, 10, 15),
    ("connect4", {"width": 9, "height": 7}, 5, 63),
    ("coins", {}, 10, 4),
    ("coins", {"coins": 9, "max_take": 3, "players": 4}, 10, 9),
    ("nim", {}, 10, 12),
    ("nim", {"players": 2, "piles": "1,3,5,7"}, 10, 16),
    ("nim", {"players": 4, "piles": "2,3,1,2"}, 10, 8),
    ("rolit", {}, 3, 60),
    ("rolit", {"players": 2, "size": 4}, 10, 12),
    ("rolit", {"players": 3, "size": 6, "neutral": True}, 5, 32),
    *(("tree", {"tree": str(path)}, 10, 20) for path in TREES),
    ("chess", {}, 3, 220),
]


def _cases() -> list[Any]:
    out = []
    for name, params, count, cap in CASES:
        label = ",".join(f"{k}={Path(str(v)).stem}" for k, v in params.items())
        out.append(pytest.param(name, params, count, cap, id=f"{name}[{label}]"))
    covered = {name for name, *_ in CASES}
    for name in games.names():  # games registered through entry points: their defaults
        if name not in covered:
            out.append(pytest.param(name, {}, 5, 200, id=f"{name}[defaults]"))
    return out


def playout(game: AnyGame, seed: int, cap: int) -> tuple[list[Any], list[Any]]:
    """The moves and states (start first) of a random game of at most ``cap`` plies."""
    rng = random.Random(seed)
    states = [game.initial_state()]
    moves: list[Any] = []
    while not game.is_terminal(states[-1]) and len(moves) < cap:
        move = rng.choice(list(game.legal_moves(states[-1])))
        moves.append(move)
        states.append(game.apply(states[-1], move))
    return moves, states


def static_part(view: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k not in boards.PER_FRAME}


def check_replay(game: AnyGame, moves: Sequence[Any], states: Sequence[Any]) -> dict[str, Any]:
    """What every encoded replay must satisfy; returns the encoding for more checks."""
    encoded = boards.encode_replay(game, states[0], moves)
    assert json.loads(json.dumps(encoded)) == encoded  # JSON-able, and nothing lost on the way
    views = [boards.board_view(game, s) for s in states]
    frames = boards.decode_frames(encoded)
    assert frames == [v["cells"] for v in views]
    assert encoded["to_move"] == [game.current_player(s) for s in states]
    assert encoded["to_move"] == [v["to_move"] for v in views]
    final = game.parse_position(game.format_position(states[-1]))
    assert frames[-1] == boards.board_view(game, final)["cells"]
    if encoded["view"]["kind"] != "tree" or encoded["view"]["complete"]:
        for view in views:
            assert static_part(view) == encoded["view"]
    assert len(encoded["patches"]) == len(moves)
    for before, after, patch in zip(frames, frames[1:], encoded["patches"], strict=False):
        changed = [i for i in range(len(after)) if i >= len(before) or before[i] != after[i]]
        assert patch[::2] == ([boards.RESIZE] if len(before) != len(after) else []) + changed
    marks = boards.frame_marks(encoded)
    assert len(marks) == len(frames) and marks[0] == []
    for frame, mark in zip(frames[1:], marks[1:], strict=True):
        assert mark and all(0 <= i < len(frame) for i in mark)
    for view in views:
        assert view["players"] == game.num_players and len(view["sides"]) == game.num_players
        assert all(isinstance(c, int | str) and not isinstance(c, bool) for c in view["cells"])
    return encoded


# --- the games' own pictures, read independently of boards.py ----------------------------------
def reference_cells(game: AnyGame, state: Any) -> list[Any] | None:
    """The cells as the game's text forms tell them, where a game has a simple one."""
    if game.name == "tictactoe":
        return [" xo".index(ch) if ch != "." else 0 for ch in game.format_position(state)]
    if game.name == "connect4":
        rows = game.render(state).splitlines()[: game.params["height"]]
        return [".XO".index(ch) for row in rows for ch in row.split()]
    if game.name == "rolit":
        rows = game.format_position(state).split("@")[0].split("/")
        return [0 if ch == "." else int(ch) + 1 for row in rows for ch in row]
    if isinstance(game, Chess):
        board = chess.Board(game.fen(state))
        out: list[Any] = []
        for rank in range(7, -1, -1):
            for file in range(8):
                piece = board.piece_at(chess.square(file, rank))
                out.append(piece.symbol() if piece else "")
        return out
    if game.name == "nim":
        return [int(p) for p in game.format_position(state).split("@")[0].split(",")]
    if game.name == "coins":
        return [int(game.format_position(state).split("@")[0])]
    return None


@pytest.mark.parametrize(("name", "params", "count", "cap"), _cases())
def test_random_games_decode_to_the_views_of_their_states(
    name: str, params: dict[str, Any], count: int, cap: int
) -> None:
    try:
        game = games.get(name, **params)
    except GameError as exc:
        if params:
            raise
        pytest.skip(f"{name} cannot be made with default parameters: {exc}")
    for seed in range(count):
        moves, states = playout(game, seed, cap)
        check_replay(game, moves, states)
        for state in states:
            expected = reference_cells(game, state)
            if expected is not None:
                assert boards.board_view(game, state)["cells"] == expected


# --- small patches ---------------------------------------------------------------------------
def test_connect4_patches_set_the_one_cell_the_disc_fell_to() -> None:
    game = games.get("connect4")
    sizes = []
    for seed in range(30):
        moves, states = playout(game, seed, 42)
        encoded = check_replay(game, moves, states)
        assert "marks" not in encoded
        heights = [0] * 7
        for ply, (column, patch) in enumerate(zip(moves, encoded["patches"], strict=True)):
            row_from_top = 5 - heights[column]
            heights[column] += 1
            assert patch == [row_from_top * 7 + column, 1 + ply % 2]
        sizes.append(len(json.dumps(encoded, separators=(",", ":"))))
    # a report of 1,000 games holds well under 1 MB of boards (the rest: moves and search info)
    assert max(sizes) < 1100, sizes
    assert sum(sizes) / len(sizes) < 900, sizes


def test_a_thousand_connect4_games_stay_well_under_5_mb() -> None:
    """The whole ``game`` object of the viewer (board, moves, per-ply info) for 1,000 games."""
    game = games.get("connect4")
    rng = random.Random(5)
    total = 0
    for seed in range(1000):
        moves, states = playout(game, seed, 42)
        info = [
            {
                "seat": ply % 2,
                "ms": round(rng.uniform(1, 900), 1),
                "value": round(rng.uniform(-1, 1), 3),
                "depth": rng.randint(4, 12),
                "nodes": rng.randint(100, 500_000),
                "pv": [game.format_move(m) for m in moves[ply : ply + 3]],
            }
            for ply in range(len(moves))
        ]
        data = {
            "board": boards.encode_replay(game, states[0], moves),
            "moves": [game.format_move(m) for m in moves],
            "info": info,
            "players": ["alpha-beta depth 6", "mcts 2000 playouts"],
            "result": "1-0",
        }
        total += len(json.dumps(data, separators=(",", ":")))
    assert total < 4_000_000, total


@pytest.mark.parametrize(("name", "params"), [("tictactoe", {}), ("nim", {}), ("coins", {})])
def test_one_cell_per_ply(name: str, params: dict[str, Any]) -> None:
    game = games.get(name, **params)
    for seed in range(10):
        moves, states = playout(game, seed, 100)
        encoded = check_replay(game, moves, states)
        assert "marks" not in encoded
        assert all(len(patch) == 2 for patch in encoded["patches"])


def test_rolit_marks_the_placed_ball_and_patches_its_captures() -> None:
    game = games.get("rolit", players=3)
    captures = 0
    for seed in range(5):
        moves, states = playout(game, seed, 64)
        encoded = check_replay(game, moves, states)
        marks = boards.frame_marks(encoded)
        for ply, (move, patch) in enumerate(zip(moves, encoded["patches"], strict=True)):
            square = game.format_move(move)
            index = (int(square[1:]) - 1) * 8 + ord(square[0]) - ord("a")
            mover = game.current_player(states[ply])
            assert marks[ply + 1] == [index]
            assert dict(zip(patch[::2], patch[1::2], strict=True))[index] == mover + 1
            assert set(patch[1::2]) == {mover + 1}  # every ball changed took the mover's colour
            captures += len(patch) > 2
    assert captures > 20


# --- chess: the moves that change more than two squares -------------------------------------------
def _square(name: str) -> int:
    return (8 - int(name[1])) * 8 + "abcdefgh".index(name[0])


def _chess_line(line: str) -> tuple[list[str], dict[str, Any]]:
    """The moves of a UCI line from the start, and their checked replay."""
    game = games.get("chess")
    moves = [game.parse_move(m) for m in line.split()]
    states = [game.initial_state()]
    for move in moves:
        states.append(game.apply(states[-1], move))
    return moves, check_replay(game, moves, states)


def test_castling_moves_king_and_rook_and_marks_the_kings_move() -> None:
    line = "e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1g1 d7d6 d2d3 c8g4 b1c3 d8d7 c1e3 e8c8"
    moves, encoded = _chess_line(line)
    frames = boards.decode_frames(encoded)
    marks = boards.frame_marks(encoded)
    short = moves.index("e1g1") + 1
    assert [frames[short][_square(s)] for s in ("e1", "f1", "g1", "h1")] == ["", "R", "K", ""]
    assert marks[short] == [_square("e1"), _square("g1")]
    assert len(encoded["patches"][short - 1]) == 8
    long = moves.index("e8c8") + 1
    back_rank = [frames[long][_square(s)] for s in ("a8", "b8", "c8", "d8", "e8")]
    assert back_rank == ["", "", "k", "r", ""]
    assert marks[long] == [_square("e8"), _square("c8")]


@pytest.mark.parametrize(
    ("line", "gone"),
    [("e2e4 a7a6 e4e5 d7d5 e5d6", "d5"), ("a2a3 e7e5 a3a4 e5e4 d2d4 e4d3", "d4")],
)
def test_en_passant_empties_the_captured_pawns_square(line: str, gone: str) -> None:
    moves, encoded = _chess_line(line)
    frames = boards.decode_frames(encoded)
    last = moves[-1]
    assert frames[-2][_square(gone)] in ("p", "P") and frames[-1][_square(gone)] == ""
    assert frames[-1][_square(last[2:4])] == frames[-2][_square(last[0:2])]
    assert sorted(encoded["patches"][-1][::2]) == sorted(
        _square(s) for s in (last[:2], last[2:4], gone)
    )
    assert boards.frame_marks(encoded)[-1] == [_square(last[:2]), _square(last[2:4])]


@pytest.mark.parametrize(
    ("line", "piece"),
    [
        ("a2a4 b7b5 a4b5 a7a6 b5a6 c8b7 a6b7 b8c6 b7a8q", "Q"),
        ("a2a4 b7b5 a4b5 a7a6 b5a6 c8b7 a6b7 b8c6 b7a8n", "N"),
        ("e2e4 d7d5 e4e5 f7f5 e5f6 e7e6 f6g7 e8e7 g7h8q", "Q"),
        ("h2h4 g7g5 h4g5 h7h5 g5g6 h5h4 g6g7 h4h3 a2a3 h3g2 a3a4 g2h1r", "r"),
    ],
)
def test_promotion_puts_the_new_piece_on_the_last_rank(line: str, piece: str) -> None:
    moves, encoded = _chess_line(line)
    frames = boards.decode_frames(encoded)
    last = moves[-1]
    assert frames[-1][_square(last[2:4])] == piece
    assert frames[-1][_square(last[0:2])] == ""
    patch = encoded["patches"][-1]
    assert dict(zip(patch[::2], patch[1::2], strict=True)) == {
        _square(last[0:2]): "",
        _square(last[2:4]): piece,
    }


def test_random_chess_covers_the_special_moves() -> None:
    """Long random games (python-chess's rules) with castling, en passant and promotions."""
    game = Chess()
    seen = {"castling": 0, "en passant": 0, "promotion": 0}
    plies = 0
    for seed in range(12):
        moves, states = playout(game, seed, 250)
        plies += len(moves)
        check_replay(game, moves, states)
        for state, move in zip(states, moves, strict=False):
            board = chess.Board(game.fen(state))
            parsed = chess.Move.from_uci(move)
            seen["castling"] += board.is_castling(parsed)
            seen["en passant"] += board.is_en_passant(parsed)
            seen["promotion"] += parsed.promotion is not None
    assert plies > 2000
    assert seen["castling"] and seen["promotion"], seen


# --- trees --------------------------------------------------------------------------------------
def _full_tree(depth: int, branching: int) -> Any:
    counter = iter(range(10**6))

    def node(level: int) -> Any:
        if level == depth:
            return next(counter) % 17 - 8
        return [node(level + 1) for _ in range(branching)]

    return node(0)


def test_a_small_tree_is_listed_whole() -> None:
    game = games.get("tree", tree=str(TREES[0]))
    view = boards.board_view(game, game.initial_state())
    assert view["complete"] and view["cells"] == [0]
    assert [n[0] for n in view["nodes"]] == sorted(n[0] for n in view["nodes"])
    assert view["nodes"][0][:2] == [0, -1]
    leaves = [n for n in view["nodes"] if n[3] == -1]
    assert leaves and all(isinstance(n[4], list) and len(n[4]) == 2 for n in leaves)


def test_a_big_tree_is_listed_along_the_path_shown() -> None:
    game = TreeGame.from_data(_full_tree(depth=9, branching=3))  # 29,524 nodes
    moves, states = playout(game, 1, 20)
    encoded = check_replay(game, moves, states)
    view = encoded["view"]
    assert not view["complete"]
    listed = {n[0]: n for n in view["nodes"]}
    assert len(listed) == 1 + 3 * len(moves)  # the root, then three children per step
    for state in states:
        assert state in listed
        for move in game.legal_moves(state):
            child = game.apply(state, move)
            assert listed[child][1] == state
            assert listed[child][2] == game.format_move(move)
    single = boards.board_view(game, states[2])
    assert {n[0] for n in single["nodes"]} <= set(listed)


# --- a game the report does not know --------------------------------------------------------------
def test_a_plugin_game_gets_its_text_picture() -> None:
    game = Countdown()
    view = boards.board_view(game, game.initial_state())
    assert view["kind"] == "text" and view["game"] == "countdown"
    assert view["text"] == game.render(game.initial_state())
    assert view["cells"] == view["text"].split("\n")
    moves, states = playout(game, 3, 10)
    encoded = check_replay(game, moves, states)
    # one line fewer every ply: each patch starts by resizing the list
    for after, patch in zip(states[1:], encoded["patches"], strict=True):
        assert patch[:2] == [boards.RESIZE, len(after)]


def test_an_unknown_format_is_refused() -> None:
    game = games.get("tictactoe")
    encoded = boards.encode_replay(game, game.initial_state(), [4])
    with pytest.raises(ValueError, match="format"):
        boards.decode_frames({**encoded, "format": 2})


# --- properties ---------------------------------------------------------------------------------
cells_lists = st.lists(st.one_of(st.integers(-3, 9), st.sampled_from(["", "P", "k"])), max_size=12)


@given(cells_lists, cells_lists)
def test_a_patch_turns_one_list_into_the_other(before: list[Any], after: list[Any]) -> None:
    assert boards.apply_patch(before, boards.diff_cells(before, after)) == after


PROPERTY_GAMES = [
    ("connect4", {}),
    ("connect4", {"width": 5, "height": 4}),
    ("rolit", {"players": 2, "size": 4}),
    ("rolit", {"players": 4, "size": 6, "neutral": True}),
    ("nim", {"players": 3, "piles": "4,1,6"}),
]


@pytest.mark.parametrize(("name", "params"), PROPERTY_GAMES)
@settings(max_examples=60, deadline=None)
@given(choices=st.lists(st.integers(0, 1_000), max_size=70))
def test_any_move_sequence_round_trips(
    name: str, params: dict[str, Any], choices: list[int]
) -> None:
    game = games.get(name, **params)
    states = [game.initial_state()]
    moves: list[Any] = []
    for choice in choices:
        legal = list(game.legal_moves(states[-1]))
        if not legal:
            break
        moves.append(legal[choice % len(legal)])
        states.append(game.apply(states[-1], moves[-1]))
    check_replay(game, moves, states)
    for state in states[:: max(1, len(states) // 5)]:
        assert boards.board_view(game, state)["cells"] == reference_cells(game, state)
