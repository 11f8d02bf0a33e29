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
from typing import Any

from bot_arena.games.base import Game, GameError, GameKind, Utility, UtilityBounds


class TreeGame(Game[int, int]):
    name = "tree"
    description = "an explicit game tree from a JSON file (--tree FILE)"

    def __init__(self, tree: str = "") -> None:
        if not tree:
            raise GameError("tree: give the tree file (--tree FILE or tree=FILE)")
        path = Path(tree)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise GameError(f"tree: cannot read {tree}: {exc.strerror or exc}") from None
        except json.JSONDecodeError as exc:
            raise GameError(
                f"tree: {tree} is not valid JSON ({exc.msg}, line {exc.lineno})"
            ) from None
        self._build(data)
        self.params = {"tree": str(tree)}
        self.source = path

    @classmethod
    def from_data(cls, data: Any) -> TreeGame:
        """A tree game from already-parsed JSON (tests, generated trees)."""
        game = cls.__new__(cls)
        game._build(data)
        game.params = {"tree": "<data>"}
        return game

    # --- building ----------------------------------------------------------------------------
    def _build(self, data: Any) -> None:
        if isinstance(data, dict) and "root" in data:
            players = data.get("players", 2)
            root = data["root"]
        else:
            players, root = 2, data
        if not isinstance(players, int) or isinstance(players, bool) or players < 1:
            raise GameError(f"tree: players must be a positive whole number, not {players!r}")
        self.num_players = players
        self._children: list[tuple[int, ...]] = []
        self._player: list[int] = []
        self._utility: list[Utility | None] = []
        self._eval: list[Utility | None] = []
        self._path: list[tuple[int, ...]] = []
        self._moves: list[tuple[int, ...]] = []
        self._add(root, 0, ())
        leaves = [u for u in self._utility if u is not None]
        self.default_depth = None
        self._set_kind(leaves)

    def _vector(self, value: Any, where: tuple[int, ...]) -> Utility:
        at = "/".join(map(str, where)) or "root"
        if isinstance(value, bool):
            raise GameError(f"tree: value at {at} is not a number")
        if isinstance(value, int | float):
            if self.num_players != 2:
                raise GameError(
                    f"tree: a bare number at {at} needs a two-player tree; "
                    f'use {{"utility": [...]}} with {self.num_players} entries'
                )
            return (float(value), -float(value))
        if (
            isinstance(value, list)
            and len(value) == self.num_players
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        ):
            return tuple(float(v) for v in value)
        raise GameError(f"tree: value at {at} must be a number or {self.num_players} numbers")

    def _add(self, node: Any, depth: int, path: tuple[int, ...]) -> int:
        at = "/".join(map(str, path)) or "root"
        index = len(self._children)
        self._children.append(())
        self._player.append(depth % self.num_players)
        self._utility.append(None)
        self._eval.append(None)
        self._path.append(path)
        self._moves.append(())
        if isinstance(node, dict) and "utility" in node:
            self._utility[index] = self._vector(node["utility"], path)
            return index
        if isinstance(node, int | float) and not isinstance(node, bool):
            self._utility[index] = self._vector(node, path)
            return index
        children: Any = node
        if isinstance(node, dict):
            if "children" not in node:
                raise GameError(f"tree: node at {at} has neither children nor utility")
            children = node["children"]
            if "player" in node:
                player = node["player"]
                if not isinstance(player, int) or not 0 <= player < self.num_players:
                    raise GameError(f"tree: player at {at} must be 0..{self.num_players - 1}")
                self._player[index] = player
            if "eval" in node:
                self._eval[index] = self._vector(node["eval"], path)
        if not isinstance(children, list) or not children:
            raise GameError(f"tree: node at {at} must have a non-empty list of children")
        kids = tuple(self._add(child, depth + 1, (*path, i)) for i, child in enumerate(children))
        self._children[index] = kids
        self._moves[index] = tuple(range(len(kids)))
        return index

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
            raise GameError(f"tree: move {text!r} is not a child index") from None
        if move < 0:
            raise GameError(f"tree: move {text!r} is not a child index")
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
                raise GameError(f"tree: position {text!r} leaves the tree at move {part}")
            state = self._children[state][move]
        return state

    def format_position(self, state: int) -> str:
        return "/".join(map(str, self._path[state])) or "root"

    def render(self, state: int) -> str:
        lines = []

        def walk(node: int, indent: int) -> None:
            mark = "  <- here" if node == state else ""
            label = "/".join(map(str, self._path[node])) or "root"
            u = self._utility[node]
            what = f"leaf {list(u)}" if u is not None else f"player {self._player[node]}"
            lines.append(f"{'  ' * indent}{label}: {what}{mark}")
            for child in self._children[node]:
                walk(child, indent + 1)

        walk(0, 0)
        return "\n".join(lines)
