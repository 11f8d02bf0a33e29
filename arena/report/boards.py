"""Positions as data for the report's replay viewer (``static/replay.js`` draws them).

``board_view(game, state)`` describes what a picture of one position needs, as JSON-able data of
a few kinds. Every view holds

- ``kind`` (``"grid"``, ``"piles"``, ``"coins"``, ``"tree"`` or ``"text"``), ``game`` (the
  registry name), ``players`` (how many) and ``sides`` (what each player is called on the board:
  ``x``/``o``, ``White``/``Black``, ``red``/...): the static facts, the same in every position of
  a game;
- ``cells``: a flat list of small ints or strings that fully determines the drawn position;
- ``to_move``: ``game.current_player(state)``.

The kinds:

``grid`` (``style`` ``"ttt"``, ``"connect4"``, ``"rolit"``, ``"chess"``)
    ``rows`` x ``cols`` cells, row by row from the top left as drawn; ``col_labels`` and
    ``row_labels`` (top to bottom) when the game names them. ttt, connect4 and rolit cells are
    ``0`` for empty and ``1 + colour`` for a mark of player (colour) ``colour``; rolit also gives
    ``colours`` (4 with neutral balls, which belong to nobody). Chess cells are FEN letters
    (``"P"`` white pawn, ``"k"`` black king) or ``""``.
``piles`` (Nim)
    ``cells`` are the pile sizes.
``coins``
    ``cells`` is ``[coins left]``; ``total`` and ``max_take`` are the game's parameters.
``tree`` (explicit game trees)
    ``cells`` is ``[current node]`` (node numbers are the tree game's states). ``nodes`` lists
    ``[node, parent, move text, player, leaf utility]`` with parent ``-1`` for the root, player
    ``-1`` and the utility list for leaves, ``None`` for inner nodes. A tree of at most
    ``TREE_NODES`` nodes is listed whole (``complete`` true); a bigger one only along the
    path to the position(s) shown, with their children. ``zero_sum`` says that player 0's
    utility alone tells a leaf.
``text`` (any other game, plugins)
    ``cells`` are the lines of ``game.render(state)``, ``text`` the whole of it.

``encode_replay(game, start, moves)`` keeps a game small: the static part once, the start cells
in full, then one patch per ply (the changed indices and their new values) and, where the move
is not simply the changed cells, the cells to mark as the last move. ``decode_frames`` is the
reference decoder that ``replay.js`` must agree with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot_arena.games.base import Game, GameKind
from bot_arena.games.chess import Chess
from bot_arena.games.coins import CoinsGame
from bot_arena.games.connect4 import ConnectFour
from bot_arena.games.nim import NimGame
from bot_arena.games.rolit import Rolit
from bot_arena.games.tictactoe import TicTacToe
from bot_arena.games.tree import TreeGame

Cell = int | str
AnyGame = Game[Any, Any]

#: Version of the ``encode_replay`` layout; replay.js refuses others.
FORMAT = 1
#: Keys of a view that change from position to position (everything else is static).
PER_FRAME = frozenset({"cells", "to_move", "text"})
#: A tree of at most this many nodes is drawn whole; a bigger one along the path shown.
TREE_NODES = 300
#: The patch entry that resizes the cell list (``[RESIZE, new length]``, always first).
RESIZE = -1

_ROLIT_SIDES = ("red", "green", "yellow", "blue")  # replay.js's ROLIT_COLOURS, in this order
_FILES = "abcdefgh"


@dataclass(frozen=True, slots=True)
class _Painter:
    """How one family of games becomes a view.

    ``static`` gets every state a replay shows (only trees look at them); ``marks`` gives the
    cells of a move when they are not simply the cells that changed (None: the changed cells).
    """

    static: Callable[[Any, Sequence[Any]], dict[str, Any]]
    cells: Callable[[Any, Any], list[Cell]]
    marks: Callable[[Any, Any, Any], list[int]] | None = None


def _base(game: AnyGame, kind: str, sides: Sequence[str]) -> dict[str, Any]:
    return {"kind": kind, "game": game.name, "players": game.num_players, "sides": list(sides)}


def _numbered_sides(game: AnyGame) -> list[str]:
    return [f"player {p}" for p in range(game.num_players)]


# --- tic-tac-toe: a state is one int, x's cells in bits 0-8, o's in bits 9-17 -------------------
def _ttt_static(game: TicTacToe, states: Sequence[int]) -> dict[str, Any]:
    return {**_base(game, "grid", ("x", "o")), "style": "ttt", "rows": 3, "cols": 3}


def _ttt_cells(game: TicTacToe, state: int) -> list[Cell]:
    return [1 if state >> c & 1 else 2 if state >> (c + 9) & 1 else 0 for c in range(9)]


# --- Connect Four: (current, mask, plies, outcome), column c in bits c*(H+1) .. bottom first --
def _c4_static(game: ConnectFour, states: Sequence[Any]) -> dict[str, Any]:
    return {
        **_base(game, "grid", ("X", "O")),
        "style": "connect4",
        "rows": game.height,
        "cols": game.width,
        "col_labels": [str(c + 1) for c in range(game.width)],
    }


def _c4_cells(game: ConnectFour, state: tuple[int, int, int, int]) -> list[Cell]:
    current, mask, plies, _ = state
    first = current if plies % 2 == 0 else current ^ mask  # player 0's stones
    h1 = game.height + 1
    out: list[Cell] = []
    for r in range(game.height - 1, -1, -1):
        for c in range(game.width):
            bit = 1 << (c * h1 + r)
            out.append(0 if not mask & bit else 1 if first & bit else 2)
    return out


# --- Rolit: (to_move, occupied, board_0, ...), square (r, c) is bit r*(size+1) + c ------------
def _rolit_static(game: Rolit, states: Sequence[Any]) -> dict[str, Any]:
    size = game.size
    return {
        **_base(game, "grid", _ROLIT_SIDES[: game.num_players]),
        "style": "rolit",
        "rows": size,
        "cols": size,
        "colours": game.colours,
        "col_labels": [chr(ord("a") + c) for c in range(size)],
        "row_labels": [str(r + 1) for r in range(size)],
    }


def _rolit_cells(game: Rolit, state: tuple[int, ...]) -> list[Cell]:
    size, w = game.size, game.size + 1
    out: list[Cell] = [0] * (size * size)
    for colour, board in enumerate(state[2:]):
        while board:
            low = board & -board
            r, c = divmod(low.bit_length() - 1, w)
            out[r * size + c] = colour + 1
            board ^= low
    return out


def _rolit_marks(game: Rolit, state: tuple[int, ...], move: int) -> list[int]:
    r, c = divmod(move, game.size + 1)
    return [r * game.size + c]


# --- chess: the FEN's placement field, rank 8 first -----------------------------------------
def _chess_static(game: Chess, states: Sequence[Any]) -> dict[str, Any]:
    return {
        **_base(game, "grid", ("White", "Black")),
        "style": "chess",
        "rows": 8,
        "cols": 8,
        "col_labels": list(_FILES),
        "row_labels": [str(8 - r) for r in range(8)],
    }


def _chess_cells(game: Chess, state: Any) -> list[Cell]:
    out: list[Cell] = []
    for ch in game.fen(state).split(" ", 1)[0]:
        if ch.isdigit():
            out.extend([""] * int(ch))
        elif ch != "/":
            out.append(ch)
    return out


def _chess_square(name: str) -> int:
    return (8 - int(name[1])) * 8 + _FILES.index(name[0])


def _chess_marks(game: Chess, state: Any, move: str) -> list[int]:
    """The move's from and to squares (castling: the king's), whatever else it changed."""
    text = game.format_move(move)
    return [_chess_square(text[0:2]), _chess_square(text[2:4])]


# --- Nim: (piles, player to move) ------------------------------------------------------------
def _nim_static(game: NimGame, states: Sequence[Any]) -> dict[str, Any]:
    return _base(game, "piles", _numbered_sides(game))


def _nim_cells(game: NimGame, state: tuple[tuple[int, ...], int]) -> list[Cell]:
    return list(state[0])


# --- coins: (coins left, player to move) ----------------------------------------------------
def _coins_static(game: CoinsGame, states: Sequence[Any]) -> dict[str, Any]:
    return {
        **_base(game, "coins", _numbered_sides(game)),
        "total": game.coins,
        "max_take": game.max_take,
    }


def _coins_cells(game: CoinsGame, state: tuple[int, int]) -> list[Cell]:
    return [state[0]]


# --- explicit trees: states are node numbers, the root 0 ------------------------------------
def _tree_static(game: TreeGame, states: Sequence[int]) -> dict[str, Any]:
    """The tree's nodes, read through the rules (legal moves, apply, utility): all of them when
    the tree is small, else the paths to ``states`` and the children along them."""
    root = game.initial_state()
    parent: dict[int, tuple[int, str]] = {}  # node -> (parent, move text)
    order: list[int] = []
    stack = [root]
    complete = True
    while stack:  # depth first, children in move order
        node = stack.pop()
        order.append(node)
        if len(order) > TREE_NODES:
            complete = False
            break
        children = []
        for move in game.legal_moves(node):
            child = game.apply(node, move)
            parent[child] = (node, game.format_move(move))
            children.append(child)
        stack.extend(reversed(children))
    if not complete:
        order = _tree_paths(game, root, states, parent)
    nodes: list[list[Any]] = []
    for node in order:
        up, label = parent.get(node, (-1, ""))
        if game.is_terminal(node):
            nodes.append([node, up, label, -1, [_number(u) for u in game.utility(node)]])
        else:
            nodes.append([node, up, label, game.current_player(node), None])
    zero_sum = game.kind is GameKind.ZERO_SUM and game.num_players == 2
    sides = ("player 0 (max)", "player 1 (min)") if zero_sum else _numbered_sides(game)
    return {
        **_base(game, "tree", sides),
        "nodes": nodes,
        "complete": complete,
        "zero_sum": zero_sum,
    }


def _number(value: float) -> float | int:
    """``3`` rather than ``3.0``: shorter JSON, and what the tree file said."""
    return int(value) if float(value).is_integer() else value


def _tree_paths(
    game: TreeGame, root: int, states: Sequence[int], parent: dict[int, tuple[int, str]]
) -> list[int]:
    """The nodes on the way from the root to each of ``states``, with the children of each."""
    shown: dict[int, None] = {root: None}
    for state in states:
        node = root
        path = game.format_position(state)
        for text in [] if path == "root" else path.split("/"):
            shown[node] = None
            for move in game.legal_moves(node):
                child = game.apply(node, move)
                parent[child] = (node, game.format_move(move))
                shown[child] = None
            node = game.apply(node, game.parse_move(text))
        for move in game.legal_moves(node):
            child = game.apply(node, move)
            parent[child] = (node, game.format_move(move))
            shown[child] = None
    return sorted(shown)  # node numbers are depth first: parents before their children


def _tree_cells(game: TreeGame, state: int) -> list[Cell]:
    return [state]


# --- any other game: its own text picture -----------------------------------------------------
def _text_static(game: AnyGame, states: Sequence[Any]) -> dict[str, Any]:
    return _base(game, "text", _numbered_sides(game))


def _text_cells(game: AnyGame, state: Any) -> list[Cell]:
    return list(game.render(state).split("\n"))


_TEXT = _Painter(_text_static, _text_cells)
#: Checked in order with isinstance, so a plugin game subclassing one of these is drawn alike.
_PAINTERS: tuple[tuple[type[AnyGame], _Painter], ...] = (
    (TicTacToe, _Painter(_ttt_static, _ttt_cells)),
    (ConnectFour, _Painter(_c4_static, _c4_cells)),
    (Rolit, _Painter(_rolit_static, _rolit_cells, _rolit_marks)),
    (Chess, _Painter(_chess_static, _chess_cells, _chess_marks)),
    (NimGame, _Painter(_nim_static, _nim_cells)),
    (CoinsGame, _Painter(_coins_static, _coins_cells)),
    (TreeGame, _Painter(_tree_static, _tree_cells)),
)


def _painter(game: AnyGame) -> _Painter:
    for cls, painter in _PAINTERS:
        if isinstance(game, cls):
            return painter
    return _TEXT


def board_view(game: AnyGame, state: Any) -> dict[str, Any]:
    """What a picture of ``state`` needs (see the module docstring for the kinds and fields)."""
    painter = _painter(game)
    view = painter.static(game, [state])
    view["cells"] = painter.cells(game, state)
    view["to_move"] = game.current_player(state)
    if view["kind"] == "text":
        view["text"] = "\n".join(view["cells"])
    return view


def diff_cells(before: Sequence[Cell], after: Sequence[Cell]) -> list[Cell]:
    """The patch that turns ``before`` into ``after``: ``[i, value, i, value, ...]`` for the
    changed indices in increasing order, led by ``RESIZE, len(after)`` when the length changes."""
    patch: list[Cell] = []
    if len(after) != len(before):
        patch += [RESIZE, len(after)]
    for i, value in enumerate(after):
        if i >= len(before) or before[i] != value:
            patch += [i, value]
    return patch


def apply_patch(cells: list[Cell], patch: Sequence[Cell]) -> list[Cell]:
    """``cells`` after ``patch`` (a new list; see ``diff_cells``)."""
    out = list(cells)
    for k in range(0, len(patch), 2):
        index, value = patch[k], patch[k + 1]
        if index == RESIZE:
            assert isinstance(value, int)
            del out[value:]
            out.extend([0] * (value - len(out)))  # every new cell is set by the pairs after
        else:
            assert isinstance(index, int)
            out[index] = value
    return out


def _changed(patch: Sequence[Cell]) -> list[int]:
    return [i for i in patch[::2] if isinstance(i, int) and i != RESIZE]


def encode_replay(game: AnyGame, start_state: Any, moves: Sequence[Any]) -> dict[str, Any]:
    """A game's positions, small: ``{"format": 1, "view": static part, "start": cells,
    "to_move": [one per frame], "patches": [one per ply], "marks": [one per ply]}``.

    Frame 0 is ``start_state``, frame ``k`` the position after ``moves[k - 1]``. A patch is
    ``[i, value, ...]`` (``diff_cells``); ``marks[k]`` is the list of cells to highlight as the
    move of ply ``k + 1``, or ``None`` when those are the patch's changed indices, and the key is
    left out when every entry would be ``None`` (Connect Four, tic-tac-toe, Nim, coins, trees).
    Serialise with ``json.dumps(..., separators=(",", ":"))`` for the smallest text.
    """
    painter = _painter(game)
    states = [start_state]
    for move in moves:
        states.append(game.apply(states[-1], move))
    view = painter.static(game, states)
    frames = [painter.cells(game, s) for s in states]
    patches = [diff_cells(frames[k], frames[k + 1]) for k in range(len(moves))]
    marks: list[list[int] | None] = []
    for state, move, patch in zip(states[:-1], moves, patches, strict=True):
        cells = painter.marks(game, state, move) if painter.marks else None
        marks.append(None if cells is None or set(cells) == set(_changed(patch)) else cells)
    encoded: dict[str, Any] = {
        "format": FORMAT,
        "view": view,
        "start": frames[0],
        "to_move": [game.current_player(s) for s in states],
        "patches": patches,
    }
    if any(m is not None for m in marks):
        encoded["marks"] = marks
    return encoded


def decode_frames(encoded: dict[str, Any]) -> list[list[Cell]]:
    """Every frame's cells, the start first: the reference that replay.js agrees with."""
    if encoded.get("format") != FORMAT:
        raise ValueError(f"replay format {encoded.get('format')!r} is not {FORMAT}")
    frames = [list(encoded["start"])]
    for patch in encoded["patches"]:
        frames.append(apply_patch(frames[-1], patch))
    return frames


def frame_marks(encoded: dict[str, Any]) -> list[list[int]]:
    """The cells highlighted in each frame as the last move (none at the start)."""
    marks = encoded.get("marks") or [None] * len(encoded["patches"])
    out: list[list[int]] = [[]]
    for patch, mark in zip(encoded["patches"], marks, strict=True):
        out.append(list(mark) if mark is not None else _changed(patch))
    return out
