"""Recorded minimax / alpha-beta searches: the teaching view of the lectures' figures.

``traced_search`` runs the same algorithm as ``bots.minimax.minimax`` (``prune=False``) or
``bots.alphabeta.alphabeta`` (``prune=True``, game move order) but builds a ``TraceNode`` for every
position it visits: the alpha and beta it was entered with, the value it backed up, its best move
and the moves it never searched because ``alpha >= beta``. It is a separate function so that the
real searches pay nothing for it; the tests check that both count the same nodes and leaves.

``render_text`` prints the recorded tree, ``render_dot`` writes it as Graphviz DOT with the cut
branches dashed and grey; the picture of it drawn the lectures' way, as SVG, is a report's job
(``arena.report.tree_svg``, the CLI's ``arena analyze --svg``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from bot_arena.bots.search_common import INF
from bot_arena.games.base import Game

#: Largest tree the trace records by default; a bigger one is refused, not printed.
DEFAULT_NODE_LIMIT = 2000


class TraceTooLarge(Exception):
    """The search visits more nodes than the trace was allowed to record."""


@dataclass(slots=True)
class TraceNode:
    """One visited position of a recorded search (values are player ``me``'s)."""

    move: Hashable | None  # the move that led here (None at the root)
    player: int  # the player to move here
    maximizing: bool
    alpha: float
    beta: float
    value: float = 0.0
    kind: str = "inner"  # "inner", "terminal" (utility) or "horizon" (heuristic)
    best: Hashable | None = None
    children: list[TraceNode] = field(default_factory=list)
    pruned: list[Hashable] = field(default_factory=list)  # moves skipped by a cut

    def to_dict(self, game: Game[Any, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "move": None if self.move is None else game.format_move(self.move),
            "player": self.player,
            "kind": self.kind,
            "value": self.value,
        }
        if self.kind == "inner":
            out["max"] = self.maximizing
            out["alpha"] = _json_number(self.alpha)
            out["beta"] = _json_number(self.beta)
            out["best"] = None if self.best is None else game.format_move(self.best)
            out["children"] = [c.to_dict(game) for c in self.children]
            out["pruned"] = [game.format_move(m) for m in self.pruned]
        return out


@dataclass(slots=True)
class Trace:
    root: TraceNode
    nodes: int
    leaves: int
    cutoffs: int
    me: int
    prune: bool


def traced_search(
    game: Game[Any, Any],
    state: Any,
    depth: int,
    me: int = 0,
    prune: bool = True,
    limit: int = DEFAULT_NODE_LIMIT,
) -> Trace:
    """Search like ``minimax``/``alphabeta`` and record the tree (TraceTooLarge past ``limit``)."""
    counts = [0, 0, 0]  # nodes, leaves, cutoffs

    def search(
        state: Any, depth: int, alpha: float, beta: float, move: Hashable | None
    ) -> TraceNode:
        counts[0] += 1
        if counts[0] > limit:
            raise TraceTooLarge(f"the search visits more than {limit} nodes")
        player = game.current_player(state)
        node = TraceNode(move, player, player == me, alpha, beta)
        if depth == 0:
            counts[1] += 1
            node.kind = "terminal" if game.is_terminal(state) else "horizon"
            node.value = game.evaluate(state)[me]
            return node
        moves = game.legal_moves(state)
        if not moves:
            counts[1] += 1
            node.kind = "terminal"
            node.value = game.utility(state)[me]
            return node
        best = -INF if node.maximizing else INF
        for i, m in enumerate(moves):
            child = search(game.apply(state, m), depth - 1, alpha, beta, m)
            node.children.append(child)
            v = child.value
            if (v > best) if node.maximizing else (v < best):
                best = v
                node.best = m
                if prune:
                    if node.maximizing:
                        alpha = max(alpha, v)
                    else:
                        beta = min(beta, v)
                    if alpha >= beta:
                        node.pruned = list(moves[i + 1 :])
                        if node.pruned:
                            counts[2] += 1
                        break
        node.value = best
        return node

    root = search(state, depth, -INF, INF, None)
    return Trace(root, counts[0], counts[1], counts[2], me, prune)


def _json_number(x: float) -> float | str:
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def number(x: float) -> str:
    """Compact text for a value: ``3``, ``-0.25``, ``+inf``."""
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{x:g}"


def render_text(trace: Trace, game: Game[Any, Any]) -> str:
    """The recorded tree, one line per node, indented by depth."""
    lines = [
        f"values are player {trace.me}'s; MAX nodes maximise them, MIN nodes minimise them"
        + ("; alpha/beta on entry" if trace.prune else ""),
    ]

    def walk(node: TraceNode, indent: str) -> None:
        label = "root" if node.move is None else f"{game.format_move(node.move)}:"
        if node.kind != "inner":
            what = "leaf" if node.kind == "terminal" else "horizon"
            lines.append(f"{indent}{label} {what} {number(node.value)}")
            return
        side = "MAX" if node.maximizing else "MIN"
        text = f"{indent}{label} {side} (player {node.player})"
        if trace.prune:
            text += f" [alpha={number(node.alpha)} beta={number(node.beta)}]"
        text += f" -> {number(node.value)}"
        if node.best is not None:
            text += f", best {game.format_move(node.best)}"
        lines.append(text)
        for child in node.children:
            walk(child, indent + "  ")
        if node.pruned:
            cut = ", ".join(game.format_move(m) for m in node.pruned)
            lines.append(f"{indent}  cut: {cut} not searched (alpha >= beta)")

    walk(trace.root, "")
    lines.append(
        f"nodes {trace.nodes}, leaves {trace.leaves}, cutoffs {trace.cutoffs}, "
        f"root value {number(trace.root.value)}"
    )
    return "\n".join(lines)


def render_dot(trace: Trace, game: Game[Any, Any]) -> str:
    """Graphviz DOT: triangles up for MAX, down for MIN, boxes for leaves, cuts dashed grey."""
    out = [
        "digraph search {",
        '  node [fontname="Helvetica"];',
        '  edge [fontname="Helvetica"];',
    ]
    counter = [0]

    def new_id() -> str:
        counter[0] += 1
        return f"n{counter[0]}"

    def quote(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    def walk(node: TraceNode) -> str:
        me = new_id()
        if node.kind != "inner":
            out.append(f"  {me} [shape=box, label={quote(number(node.value))}];")
            return me
        shape = "triangle" if node.maximizing else "invtriangle"
        label = number(node.value)
        if trace.prune:
            label += f"\\na={number(node.alpha)} b={number(node.beta)}"
        label = label.replace('"', '\\"')
        out.append(f'  {me} [shape={shape}, label="{label}"];')
        for child in node.children:
            kid = walk(child)
            bold = ", penwidth=2" if child.move == node.best else ""
            move = quote(game.format_move(child.move))
            out.append(f"  {me} -> {kid} [label={move}{bold}];")
        for m in node.pruned:
            kid = new_id()
            out.append(f'  {kid} [shape=plaintext, fontcolor=grey, label="pruned"];')
            move = quote(game.format_move(m))
            out.append(f"  {me} -> {kid} [label={move}, style=dashed, color=grey, fontcolor=grey];")
        return me

    walk(trace.root)
    out.append("}")
    return "\n".join(out) + "\n"
