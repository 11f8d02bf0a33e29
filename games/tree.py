"""An explicit game tree from JSON: the trees of lectures and textbooks.

Format (as in the textbook trees shipped with the tests):

- a number is a leaf holding player 0's utility in a two-player zero-sum tree;
- ``{"utility": [u0, u1, ...]}`` is a leaf with one entry per player;
- a JSON array is an inner node whose children are the moves ``0, 1, ...``;
- ``{"player": k, "children": [...]}`` is an inner node whose mover is ``k``; otherwise the mover
  cycles 0, 1, ..., N-1 by depth from the root;
- an inner node may carry ``"eval": [..]`` (or a number), the heuristic value that depth-limited
  search sees when its horizon falls on that node;
- the top level is a node, or ``{"players": N, "root": node, ...}`` (other keys are ignored).

States are node numbers (ints, in depth-first order, the root 0); positions are written as the
path of moves from the root, ``0/1/0``, with ``root`` for the root itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Final

from bot_arena.games.base import Game, GameError, GameKind, Utility, UtilityBounds
from bot_arena.games.files import MIB, FileRefused, read_bytes
from bot_arena.games.params import Between, Described
from bot_arena.games.quoting import cut, shown

#: The deepest tree (moves from the root to its deepest leaf). The search bots recurse once a
#: move, and Python's stack holds a few hundred levels of that, not thousands; textbook trees
#: are a handful of levels deep, so a tree deeper than this is refused when it is read (one
#: line) rather than searched until the stack overflows.
MAX_DEPTH: Final = 400
MAX_PLAYERS: Final = 16
DEFAULT_NODES: Final = 1_000_000
#: A tree file may hold this many bytes per node it may have (32 MiB for a million nodes):
#: JSON's own parser builds the whole document before the nodes are counted, so its size is
#: what bounds that parse.
BYTES_PER_NODE: Final = 32


class TreeGame(Game[int, int]):
    name = "tree"
    description = "an explicit game tree from a JSON file (--tree FILE)"

    def __init__(
        self,
        tree: Annotated[
            str,
            Described(
                (
                    ("max_depth", MAX_DEPTH),
                    ("max_players", MAX_PLAYERS),
                    ("max_bytes_per_node", BYTES_PER_NODE),
                )
            ),
        ] = "",
        max_nodes: Annotated[int, Between(1, 10 * DEFAULT_NODES)] = DEFAULT_NODES,
    ) -> None:
        if not tree:
            raise GameError("tree: give the tree file (--tree FILE or tree=FILE)")
        path = Path(tree)
        limit = max(BYTES_PER_NODE * max_nodes, MIB)
        try:
            raw = read_bytes(path, "tree file", limit)
        except FileRefused as exc:
            big = "larger than" in str(exc)
            hint = f" (-p max_nodes=N allows {BYTES_PER_NODE} bytes a node)" if big else ""
            raise GameError(f"tree: {exc}{hint}") from None
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise GameError(
                f"tree: {shown(tree)} is not valid JSON ({exc.msg}, line {exc.lineno})"
            ) from None
        except RecursionError:
            raise GameError(
                f"tree: {shown(tree)} nests its JSON deeper than the parser goes "
                f"(a tree may be {MAX_DEPTH} moves deep)"
            ) from None
        except ValueError as exc:  # not UTF-8, a number of more than 4,300 digits
            raise GameError(f"tree: {shown(tree)} is not valid JSON ({cut(exc)})") from None
        del raw
        self._build(data, max_nodes)
        # absolute: a bot's process rebuilds the game in a private working folder, and a stored
        # match is replayed from wherever the reader stands
        self.params = {"tree": str(path.resolve())}
        if max_nodes != DEFAULT_NODES:
            self.params["max_nodes"] = max_nodes
        self.source: Path | None = path

    def input_files(self) -> tuple[str, ...]:
        return () if self.source is None else (self.params["tree"],)

    @classmethod
    def from_data(cls, data: Any, max_nodes: int = DEFAULT_NODES) -> TreeGame:
        """A tree game from already-parsed JSON (tests, generated trees)."""
        game = cls.__new__(cls)
        game._build(data, max_nodes)
        game.params = {"tree": "<data>"}
        game.source = None
        return game

    # --- building ----------------------------------------------------------------------------
    def _build(self, data: Any, max_nodes: int) -> None:
        if isinstance(data, dict) and "root" in data:
            players = data.get("players", 2)
            root = data["root"]
        else:
            players, root = 2, data
        if (
            not isinstance(players, int)
            or isinstance(players, bool)
            or not 1 <= players <= MAX_PLAYERS
        ):
            raise GameError(
                f"tree: players must be a positive whole number (at most {MAX_PLAYERS}), "
                f"not {shown(players)}"
            )
        self.num_players = players
        self._children: list[tuple[int, ...]] = []
        self._player: list[int] = []
        self._utility: list[Utility | None] = []
        self._eval: list[Utility | None] = []
        self._parent: list[int] = []  # -1 for the root
        self._slot: list[int] = []  # the move that leads to the node from its parent
        self._moves: list[tuple[int, ...]] = []
        self._add_all(root, max_nodes)
        leaves = [u for u in self._utility if u is not None]
        self.default_depth = None
        self._set_kind(leaves)

    def _path(self, node: int) -> tuple[int, ...]:
        """The moves from the root to ``node``."""
        moves: list[int] = []
        while node > 0:
            moves.append(self._slot[node])
            node = self._parent[node]
        return tuple(reversed(moves))

    def _at(self, node: int) -> str:
        return cut("/".join(map(str, self._path(node))) or "root")

    def _vector(self, value: Any, node: int) -> Utility:
        if isinstance(value, bool):
            raise GameError(f"tree: value at {self._at(node)} is not a number")
        if isinstance(value, int | float):
            if self.num_players != 2:
                raise GameError(
                    f"tree: a bare number at {self._at(node)} needs a two-player tree; "
                    f'use {{"utility": [...]}} with {self.num_players} entries'
                )
            return (float(value), -float(value))
        if (
            isinstance(value, list)
            and len(value) == self.num_players
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        ):
            return tuple(float(v) for v in value)
        raise GameError(
            f"tree: value at {self._at(node)} must be a number or {self.num_players} numbers"
        )

    def _add_all(self, root: Any, max_nodes: int) -> None:
        """Number the nodes depth-first from the root (0), without recursion (the JSON may be
        as deep as its parser went, far beyond Python's stack) and holding no more than the
        path being walked: one frame a level, each its children's list, the next one to visit
        and the numbers of those visited. A tree deeper than ``MAX_DEPTH`` or with more than
        ``max_nodes`` nodes is refused as soon as it shows."""
        frames: list[tuple[list[Any], int, int, list[int]]] = []  # children, parent, depth, done
        top = self._inner(root, self._new_node(0, -1, 0, max_nodes))
        if top is not None:
            frames.append((top, 0, 1, []))
        while frames:
            children, parent, depth, done = frames[-1]
            if len(done) == len(children):
                frames.pop()
                self._children[parent] = tuple(done)
                self._moves[parent] = tuple(range(len(done)))
                continue
            slot = len(done)
            index = self._new_node(depth, parent, slot, max_nodes)
            done.append(index)
            if depth > MAX_DEPTH:
                raise GameError(
                    f"tree: deeper than {MAX_DEPTH} moves (its limit) at {self._at(index)}"
                )
            grand = self._inner(children[slot], index)
            if grand is not None:
                frames.append((grand, index, depth + 1, []))

    def _new_node(self, depth: int, parent: int, slot: int, max_nodes: int) -> int:
        index = len(self._children)
        if index >= max_nodes:
            raise GameError(
                f"tree: more than {max_nodes} nodes (its limit; -p max_nodes=N raises it)"
            )
        self._children.append(())
        self._player.append(depth % self.num_players)
        self._utility.append(None)
        self._eval.append(None)
        self._parent.append(parent)
        self._slot.append(slot)
        self._moves.append(())
        return index

    def _inner(self, node: Any, index: int) -> list[Any] | None:
        """The children of an inner node (its player and eval noted), None for a leaf (its
        utility noted)."""
        if isinstance(node, dict) and "utility" in node:
            self._utility[index] = self._vector(node["utility"], index)
            return None
        if isinstance(node, int | float) and not isinstance(node, bool):
            self._utility[index] = self._vector(node, index)
            return None
        children: Any = node
        if isinstance(node, dict):
            if "children" not in node:
                raise GameError(f"tree: node at {self._at(index)} has neither children nor utility")
            children = node["children"]
            if "player" in node:
                player = node["player"]
                if not isinstance(player, int) or not 0 <= player < self.num_players:
                    raise GameError(
                        f"tree: player at {self._at(index)} must be 0..{self.num_players - 1}"
                    )
                self._player[index] = player
            if "eval" in node:
                self._eval[index] = self._vector(node["eval"], index)
        if not isinstance(children, list) or not children:
            raise GameError(
                f"tree: node at {self._at(index)} must have a non-empty list of children"
            )
        return children

    def _set_kind(self, leaves: list[Utility]) -> None:
        flat = [v for u in leaves for v in u]
        sums = [sum(u) for u in leaves]
        lo, hi = min(flat), max(flat)
        if self.num_players == 2 and all(u[0] == -u[1] for u in leaves):
            self.kind = GameKind.ZERO_SUM
        elif max(sums) - min(sums) < 1e-9:
            self.kind = GameKind.CONSTANT_SUM
        else:
            self.kind = GameKind.GENERAL_SUM
        self.bounds = UtilityBounds(min_each=lo, max_each=hi, max_sum=max(sums))

    # --- rules -------------------------------------------------------------------------------
    def initial_state(self) -> int:
        return 0

    def current_player(self, state: int) -> int:
        return self._player[state]

    def legal_moves(self, state: int) -> tuple[int, ...]:
        return self._moves[state]

    def apply(self, state: int, move: int) -> int:
        return self._children[state][move]

    def is_terminal(self, state: int) -> bool:
        return self._utility[state] is not None

    def utility(self, state: int) -> Utility:
        u = self._utility[state]
        if u is None:
            raise GameError(f"tree: node {self.format_position(state)} is not a leaf")
        return u

    def evaluate(self, state: int) -> Utility:
        u = self._utility[state]
        if u is not None:
            return u
        e = self._eval[state]
        return e if e is not None else super().evaluate(state)

    # --- text --------------------------------------------------------------------------------
    def parse_move(self, text: str) -> int:
        try:
            move = int(text)
        except ValueError:
            raise GameError(f"tree: move {shown(text)} is not a child index") from None
        if move < 0:
            raise GameError(f"tree: move {shown(text)} is not a child index")
        return move

    def format_move(self, move: int) -> str:
        return str(move)

    def parse_position(self, text: str) -> int:
        text = text.strip()
        state = 0
        if text in ("", "root"):
            return state
        for part in text.replace(",", "/").split("/"):
            move = self.parse_move(part)
            if move >= len(self._children[state]):
                raise GameError(
                    f"tree: position {shown(text)} leaves the tree at move {shown(part)}"
                )
            state = self._children[state][move]
        return state

    def format_position(self, state: int) -> str:
        return "/".join(map(str, self._path(state))) or "root"

    def render(self, state: int) -> str:
        lines = []
        stack = [(0, 0)]  # node, indent: depth-first without recursion, as the tree was built
        while stack:
            node, indent = stack.pop()
            mark = "  <- here" if node == state else ""
            label = self.format_position(node)
            u = self._utility[node]
            what = f"leaf {list(u)}" if u is not None else f"player {self._player[node]}"
            lines.append(f"{'  ' * indent}{label}: {what}{mark}")
            stack.extend((child, indent + 1) for child in reversed(self._children[node]))
        return "\n".join(lines)
