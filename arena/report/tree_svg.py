"""A recorded minimax / alpha-beta search drawn as an SVG picture, the way the lectures draw it.

``render_svg`` turns a ``bots.trace.Trace`` into one standalone SVG document: MAX nodes are
upward triangles, MIN nodes downward ones, leaves small boxes, each with its backed-up value; in
an alpha-beta trace every inner node carries the window it was entered with (alpha=3 beta=+inf,
in Greek letters and with the infinity sign); every
edge carries its move; each pruned move is a short grey dashed edge to a stub with the move,
crossed out in red; the principal variation is drawn thick and coloured. A caption says whose
values they are and how big the search was.

The layout is our own (no Graphviz): a tidy tree whose leaves, pruned stubs included, are evenly
spaced left to right in search order, each parent centred over its children and the levels
evenly spaced. Every position is a number of leaf slots, so the one free quantity is the width of
a slot: it is the smallest that keeps apart, on every horizontal band of the picture (a level's
nodes with their alpha-beta labels, the move labels between levels, the pruned stubs), the
neighbours that would otherwise touch. Text widths are estimated from the advance widths of a
wide sans-serif (DejaVu Sans), so browsers' narrower default fonts only leave more room.

The document has no XML declaration (it can be pasted inline into an HTML page), no ``<style>``
(an inline SVG's stylesheet would apply to the whole page), no script and nothing external.
Elements carry classes and data attributes for machines: node groups ``class="node max"``,
``"node min"`` or ``"node leaf"`` with ``data-node`` (the path of child indices, ``r.1.0``),
``data-value``, ``data-x``/``data-y`` (the shape's centre) and ``data-w``/``data-h`` (its size);
edges ``class="edge"`` (plus ``pv`` on the principal variation) with ``data-from``/``data-to``;
one ``class="cut"`` mark per pruned move; alpha-beta labels ``class="ab"``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from bot_arena.bots.trace import Trace, TraceNode, number
from bot_arena.games.base import Game

# --- sizes (px) ------------------------------------------------------------------------------
MARGIN = 18
LEVEL = 110  # centre to centre of two levels
TRI_H = 38  # triangle height (every inner node)
TRI_MIN_W = 44
LEAF_H = 22
LEAF_MIN_W = 28
STUB_H = 16
STUB_MIN_W = 18
MIN_SLOT = 40
GAP = 10  # between neighbours on a band
VALUE_FONT = 12
MOVE_FONT = 11
AB_FONT = 10
CAPTION_FONT = 12
CAPTION_LINE = 18
AB_GAP = 5  # between a triangle's side and its alpha-beta label
#: Half the width of a triangle across its alpha-beta label's line (around mid-height), a little
#: more than a quarter of its width, so the label sits next to the slanted side, not the corner.
AB_AT = 0.33
LABEL_T = 0.5  # where, from parent to child, the move labels and cut marks sit
STUB_T = 0.7  # where a pruned edge stops
CUT_HALF = 6.5  # half the length of a slash of a cut mark
CUT_OFFSET = 4.0  # the two slashes' distance from the mark's centre, along the edge

# --- colours ---------------------------------------------------------------------------------
INK = "#212529"
EDGE = "#868e96"
MAX_FILL = "#dbe8ff"
MIN_FILL = "#ffe8cc"
LEAF_FILL = "#ffffff"
HORIZON_FILL = "#f1f3f5"
PV = "#2b8a3e"
PRUNED = "#adb5bd"
CUT = "#e03131"
AB_INK = "#5f3dc4"
CAPTION_INK = "#495057"

_NARROW = set(" .,:;'|!ijl")
_WIDE = set("mwMW%@")
# the Greek letters and signs the picture writes (escapes: they look like Latin letters in code)
ALPHA, BETA, INFINITY, AT_LEAST = "\u03b1", "\u03b2", "\u221e", "\u2265"
_SYMBOL = set("+=<>~" + INFINITY + AT_LEAST)


def text_width(text: str, size: float, bold: bool = False) -> float:
    """An upper estimate of the width of ``text`` in a sans-serif font of ``size`` px."""
    em = 0.0
    for ch in text:
        if ch in _NARROW:
            em += 0.32
        elif ch in "-()[]{}/\\frt":
            em += 0.42
        elif ch in _SYMBOL:
            em += 0.84
        elif ch in _WIDE:
            em += 0.98
        elif ch.isupper():
            em += 0.74
        else:  # digits, lower case, Greek
            em += 0.64
    return em * size * (1.1 if bold else 1.0)


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def esc(text: str) -> str:
    """``text`` safe inside an XML element or a double-quoted attribute.

    Characters that XML 1.0 forbids even as references (most control characters) become U+FFFD:
    a move label from a user's file must not make the document unreadable.
    """
    text = _NOT_XML.sub("\ufffd", text)
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def shown(x: float) -> str:
    """A value as the picture writes it: ``number`` with the infinity sign for ``inf``."""
    return number(x).replace("inf", INFINITY)


def _f(x: float) -> str:
    """A coordinate: two decimals at most, no trailing zeros."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


# --- layout ----------------------------------------------------------------------------------
@dataclass(slots=True)
class Stub:
    """A move the search never tried (cut off), drawn as a short edge from its parent."""

    move: Hashable
    label: str
    slot: float
    width: float


@dataclass(slots=True)
class Placed:
    """A trace node with its place: ``slot`` is x in leaf slots, ``depth`` its level."""

    node: TraceNode
    key: str
    depth: int
    slot: float
    on_pv: bool
    label: str  # the move that led here ("" at the root)
    value_text: str
    width: float  # the shape's width
    children: list[Placed] = field(default_factory=list)
    stubs: list[Stub] = field(default_factory=list)

    @property
    def inner(self) -> bool:
        return self.node.kind == "inner"


def _place(trace: Trace, game: Game[Any, Any]) -> Placed:
    """Every node with its slot: leaves and stubs one slot each in search order, parents centred
    over their first and last child (pruned stubs count: they are drawn as children)."""
    next_slot = [0]

    def leaf_slot() -> float:
        next_slot[0] += 1
        return float(next_slot[0] - 1)

    def walk(node: TraceNode, key: str, depth: int, on_pv: bool) -> Placed:
        label = "" if node.move is None else game.format_move(node.move)
        value = shown(node.value)
        if node.kind != "inner":
            width = max(LEAF_MIN_W, text_width(value, VALUE_FONT, bold=True) + 10)
            return Placed(node, key, depth, leaf_slot(), on_pv, label, value, width)
        here = Placed(node, key, depth, 0.0, on_pv, label, value, 0.0)
        best_seen = False
        for i, child in enumerate(node.children):
            # moves are distinct at a node, so the first child with the best move is the one
            child_pv = on_pv and not best_seen and child.move == node.best
            best_seen = best_seen or child_pv
            here.children.append(walk(child, f"{key}.{i}", depth + 1, child_pv))
        for move in node.pruned:
            text = game.format_move(move)
            width = max(STUB_MIN_W, text_width(text, MOVE_FONT) + 8)
            here.stubs.append(Stub(move, text, leaf_slot(), width))
        first = here.children[0].slot if here.children else here.stubs[0].slot
        last = here.stubs[-1].slot if here.stubs else here.children[-1].slot
        here.slot = (first + last) / 2
        return here

    return walk(trace.root, "r", 0, True)


def _walk(placed: Placed) -> Iterator[Placed]:
    yield placed
    for child in placed.children:
        yield from _walk(child)


@dataclass(slots=True)
class _Band:
    """Things side by side on one horizontal band: (slot, px left of it, px right of it)."""

    items: list[tuple[float, float, float]] = field(default_factory=list)

    def need(self) -> float:
        """The smallest slot width (px) that keeps every pair of neighbours ``GAP`` apart."""
        slot = 0.0
        ordered = sorted(self.items)
        for (a, _, right), (b, left, _) in pairwise(ordered):
            if b - a > 1e-9:
                slot = max(slot, (right + left + GAP) / (b - a))
        return slot


def _along(parent: float, child: float, t: float) -> float:
    return parent + t * (child - parent)


class _Drawing:
    """The laid-out tree: slot width, sizes, and the pixel position of everything."""

    def __init__(self, trace: Trace, game: Game[Any, Any]) -> None:
        self.trace = trace
        self.root = _place(trace, game)
        self.nodes = list(_walk(self.root))
        inner_values = [p.value_text for p in self.nodes if p.inner]
        widest = max((text_width(v, VALUE_FONT, bold=True) for v in inner_values), default=0.0)
        # the value sits in the wide part of the triangle: its top is 14 px from the flat side
        self.tri_w = max(TRI_MIN_W, (widest + 8) / ((TRI_H - 14) / TRI_H))
        for p in self.nodes:
            if p.inner:
                p.width = self.tri_w
        self.ab = {p.key: self._ab_text(p) for p in self.nodes if p.inner and trace.prune}
        self.slot = self._slot_width()
        lefts = [p.slot * self.slot - p.width / 2 for p in self.nodes]
        rights = [p.slot * self.slot + self._right(p) for p in self.nodes]
        self.tree_w = max(rights) - min(lefts)
        self.caption = self._caption()
        caption_w = max(text_width(line, CAPTION_FONT) for line in self.caption)
        self.width = max(self.tree_w, caption_w) + 2 * MARGIN
        self.x0 = MARGIN - min(lefts) + max(0.0, (caption_w - self.tree_w) / 2)
        depth = max(p.depth for p in self.nodes)
        self.tree_bottom = self.y(depth) + TRI_H / 2
        self.height = self.tree_bottom + 10 + CAPTION_LINE * len(self.caption) + MARGIN

    # geometry
    def x(self, slot: float) -> float:
        return self.x0 + slot * self.slot

    @staticmethod
    def y(depth: float) -> float:
        """The centre of a level (fractions: between levels, from node band to node band)."""
        return MARGIN + TRI_H / 2 + depth * LEVEL

    @staticmethod
    def edge_y(depth: int, t: float) -> float:
        """A point ``t`` of the way down an edge from a level-``depth`` node to its child."""
        top = _Drawing.y(depth) + TRI_H / 2
        return top + t * (LEVEL - TRI_H)

    def _ab_text(self, p: Placed) -> str:
        return f"{ALPHA}={shown(p.node.alpha)} {BETA}={shown(p.node.beta)}"

    def _right(self, p: Placed) -> float:
        """px right of the node's centre that it uses on its level (its alpha-beta label too)."""
        label = self.ab.get(p.key)
        if label is None:
            return p.width / 2
        return max(p.width / 2, p.width * AB_AT + AB_GAP + text_width(label, AB_FONT))

    def _slot_width(self) -> float:
        levels: dict[int, _Band] = {}
        labels: dict[int, _Band] = {}
        stubs: dict[int, _Band] = {}
        stub_t = STUB_T + STUB_H / 2 / (LEVEL - TRI_H)
        for p in self.nodes:
            levels.setdefault(p.depth, _Band()).items.append((p.slot, p.width / 2, self._right(p)))
            for c in p.children:
                half = text_width(c.label, MOVE_FONT, bold=c.on_pv) / 2 + 2
                labels.setdefault(p.depth, _Band()).items.append(
                    (_along(p.slot, c.slot, LABEL_T), half, half)
                )
                stubs.setdefault(p.depth, _Band()).items.append(
                    (_along(p.slot, c.slot, stub_t), 1.0, 1.0)
                )
            for s in p.stubs:
                stubs.setdefault(p.depth, _Band()).items.append(
                    (_along(p.slot, s.slot, stub_t), s.width / 2, s.width / 2)
                )
        bands = [*levels.values(), *labels.values(), *stubs.values()]
        slot = max([MIN_SLOT, *(band.need() for band in bands)])
        if not any(p.stubs for p in self.nodes):
            return slot
        # Cut marks sit among the move labels, and how far they reach sideways depends on the
        # slant of their edge, so on the slot width: widen until they fit (a few rounds: the
        # slant, and so the reach, changes less and less).
        for _ in range(8):
            wider = max(slot, *(band.need() for band in self._with_cuts(labels, slot)))
            if wider - slot < 0.25:
                return wider + 0.25
            slot = wider
        return slot

    def _with_cuts(self, labels: dict[int, _Band], slot: float) -> list[_Band]:
        """The move-label bands with each cut mark's reach at this slot width added."""
        bands = {depth: _Band(list(band.items)) for depth, band in labels.items()}
        rise = LEVEL - TRI_H
        for p in self.nodes:
            for s in p.stubs:
                centre = _along(p.slot, s.slot, LABEL_T)
                dx = (centre - p.slot) * slot
                xs = [
                    x
                    for x1, _, x2, _ in cut_strokes(0.0, 0.0, dx, LABEL_T * rise)
                    for x in (x1, x2)
                ]
                item = (centre, dx - min(xs), max(xs) - dx)
                bands.setdefault(p.depth, _Band()).items.append(item)
        return list(bands.values())

    def _caption(self) -> list[str]:
        t = self.trace
        first = f"values are player {t.me}'s; MAX maximises, MIN minimises"
        if t.prune:
            first += f"; {ALPHA}, {BETA}: the window each node was entered with"
        lines = [
            first,
            f"nodes {t.nodes}, leaves {t.leaves}, cutoffs {t.cutoffs}, "
            f"root value {number(t.root.value)}",
        ]
        legend = "thick: the principal variation"
        if any(p.stubs for p in self.nodes):
            legend += f"; dashed and crossed out: moves cut off ({ALPHA} {AT_LEAST} {BETA})"
        if any(p.node.kind == "horizon" for p in self.nodes):
            legend += "; grey boxes: heuristic values at the depth limit"
        lines.append(legend)
        return lines


# --- drawing ---------------------------------------------------------------------------------
def render_svg(trace: Trace, game: Game[Any, Any]) -> str:
    """The recorded search as a standalone SVG document (no XML declaration: embeddable)."""
    d = _Drawing(trace, game)
    out: list[str] = []
    w, h = math.ceil(d.width), math.ceil(d.height)
    kind = "alpha-beta" if trace.prune else "minimax"
    out.append(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="{VALUE_FONT}" '
        f'role="img" aria-label="{kind} search tree, root value {esc(number(trace.root.value))}">'
    )
    out.append(f'<rect class="background" width="{w}" height="{h}" fill="#ffffff"/>')
    out.extend(_edges(d))
    out.extend(_stubs(d))
    out.extend(_move_labels(d))
    out.extend(_cut_marks(d))
    for p in d.nodes:
        out.extend(_node(d, p))
    out.extend(_caption_lines(d))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _edge_ends(d: _Drawing, p: Placed, slot: float, t_end: float) -> tuple[float, ...]:
    """Parent's bottom (a MIN triangle's tip, a MAX triangle's base) to a point on the way."""
    x1, y1 = d.x(p.slot), d.edge_y(p.depth, 0.0)
    x2 = _along(x1, d.x(slot), t_end)
    return x1, y1, x2, d.edge_y(p.depth, t_end)


def _edges(d: _Drawing) -> list[str]:
    plain: list[str] = []
    pv: list[str] = []
    for p in d.nodes:
        for c in p.children:
            x1, y1, x2, y2 = _edge_ends(d, p, c.slot, 1.0)  # a child's top: MAX tip, MIN side
            attrs = f'x1="{_f(x1)}" y1="{_f(y1)}" x2="{_f(x2)}" y2="{_f(y2)}"'
            ids = f'data-from="{p.key}" data-to="{c.key}" data-move="{esc(c.label)}"'
            if c.on_pv:
                pv.append(
                    f'<line class="edge pv" {ids} {attrs} stroke="{PV}" stroke-width="4" '
                    'stroke-linecap="round"/>'
                )
            else:
                plain.append(
                    f'<line class="edge" {ids} {attrs} stroke="{EDGE}" stroke-width="1.5"/>'
                )
    return plain + pv  # the principal variation on top


def _stubs(d: _Drawing) -> list[str]:
    out: list[str] = []
    for p in d.nodes:
        for s in p.stubs:
            x1, y1, x2, y2 = _edge_ends(d, p, s.slot, STUB_T)
            out.append(f'<g class="pruned" data-from="{p.key}" data-move="{esc(s.label)}">')
            out.append(
                f'<line x1="{_f(x1)}" y1="{_f(y1)}" x2="{_f(x2)}" y2="{_f(y2)}" '
                f'stroke="{PRUNED}" stroke-width="1.5" stroke-dasharray="4 3"/>'
            )
            out.append(
                f'<rect x="{_f(x2 - s.width / 2)}" y="{_f(y2)}" width="{_f(s.width)}" '
                f'height="{STUB_H}" rx="3" fill="#ffffff" stroke="{PRUNED}" '
                'stroke-dasharray="3 2"/>'
            )
            out.append(
                f'<text x="{_f(x2)}" y="{_f(y2 + STUB_H - 4.5)}" text-anchor="middle" '
                f'font-size="{MOVE_FONT}" fill="{EDGE}">{esc(s.label)}</text>'
            )
            out.append("</g>")
    return out


def _move_labels(d: _Drawing) -> list[str]:
    """Each edge's move, on the edge halfway down, over a white outline that hides the line."""
    out: list[str] = []
    for p in d.nodes:
        for c in p.children:
            _, _, x, y = _edge_ends(d, p, c.slot, LABEL_T)
            fill, weight = (PV, "bold") if c.on_pv else (INK, "normal")
            out.append(
                f'<text class="move" data-from="{p.key}" data-to="{c.key}" x="{_f(x)}" '
                f'y="{_f(y + MOVE_FONT * 0.36)}" text-anchor="middle" font-size="{MOVE_FONT}" '
                f'font-weight="{weight}" fill="{fill}" stroke="#ffffff" stroke-width="6" '
                f'stroke-linejoin="round" paint-order="stroke">{esc(c.label)}</text>'
            )
    return out


def _cut_marks(d: _Drawing) -> list[str]:
    """Two short red slashes across each pruned edge, where its move label would be."""
    out: list[str] = []
    for p in d.nodes:
        for s in p.stubs:
            path = "".join(
                f"M{_f(a)} {_f(b)}L{_f(c)} {_f(e)}"
                for a, b, c, e in cut_strokes(*_edge_ends(d, p, s.slot, LABEL_T))
            )
            out.append(
                f'<path class="cut" data-from="{p.key}" data-move="{esc(s.label)}" '
                f'd="{path}" stroke="{CUT}" stroke-width="2.2" '
                'stroke-linecap="round" fill="none"/>'
            )
    return out


def cut_strokes(
    x1: float, y1: float, x2: float, y2: float
) -> list[tuple[float, float, float, float]]:
    """The two slashes of a cut mark centred on ``(x2, y2)``, across an edge from ``(x1, y1)``.

    The slashes are at 45 degrees, rising to the right across an edge that goes straight down or
    down to the right, falling to the right across one that goes down to the left: never closer
    than 45 degrees to their edge, so always visibly across it.
    """
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    ux, uy = (x2 - x1) / length, (y2 - y1) / length  # along the edge
    half = math.sqrt(0.5)
    sx, sy = (half, -half) if ux >= -1e-9 else (half, half)
    strokes = []
    for off in (-CUT_OFFSET, CUT_OFFSET):
        cx, cy = x2 + ux * off, y2 + uy * off
        strokes.append(
            (cx - sx * CUT_HALF, cy - sy * CUT_HALF, cx + sx * CUT_HALF, cy + sy * CUT_HALF)
        )
    return strokes


def _title(d: _Drawing, p: Placed) -> str:
    n = p.node
    where = "the root" if not p.label else f"after move {p.label}"
    if not p.inner:
        what = "terminal leaf" if n.kind == "terminal" else "leaf at the depth limit (heuristic)"
        return f"{what}, {where}\nplayer {n.player} to move\nvalue {shown(n.value)}"
    side = "MAX" if n.maximizing else "MIN"
    lines = [f"{side} node, {where}", f"player {n.player} to move", f"value {shown(n.value)}"]
    if d.trace.prune:
        lines.append(f"entered with {ALPHA}={shown(n.alpha)}, {BETA}={shown(n.beta)}")
    if n.best is not None:
        best = next((c.label for c in p.children if c.node.move == n.best), "")
        lines.append(f"best move {best}")
    if n.pruned:
        lines.append(f"cut off: {', '.join(s.label for s in p.stubs)}")
    return "\n".join(lines)


def _node(d: _Drawing, p: Placed) -> list[str]:
    n = p.node
    x, y = d.x(p.slot), d.y(p.depth)
    stroke, stroke_w = (PV, 3.0) if p.on_pv else (INK, 1.3)
    if p.inner:
        cls = "node max" if n.maximizing else "node min"
        shape_h, shape_y = float(TRI_H), y
    else:
        cls = "node leaf"
        shape_h, shape_y = float(LEAF_H), y - TRI_H / 2 + LEAF_H / 2  # tops line up on a level
    half_w, half_h = p.width / 2, shape_h / 2
    out = [
        f'<g class="{cls}" data-node="{p.key}" data-kind="{n.kind}" data-player="{n.player}" '
        f'data-value="{number(n.value)}" data-x="{_f(x)}" data-y="{_f(shape_y)}" '
        f'data-w="{_f(p.width)}" data-h="{_f(shape_h)}"'
        + (' data-pv="1"' if p.on_pv else "")
        + ">",
        f"<title>{esc(_title(d, p))}</title>",
    ]
    paint = f'stroke="{stroke}" stroke-width="{stroke_w}" stroke-linejoin="round"'
    if not p.inner:
        fill = LEAF_FILL if n.kind == "terminal" else HORIZON_FILL
        out.append(
            f'<rect x="{_f(x - half_w)}" y="{_f(shape_y - half_h)}" width="{_f(p.width)}" '
            f'height="{LEAF_H}" rx="2" fill="{fill}" {paint}/>'
        )
        baseline = shape_y + VALUE_FONT * 0.36
    elif n.maximizing:  # apex up: the value in the wide lower part
        points = [(x, y - half_h), (x + half_w, y + half_h), (x - half_w, y + half_h)]
        out.append(f'<polygon points="{_points(points)}" fill="{MAX_FILL}" {paint}/>')
        baseline = y + half_h - 5
    else:  # apex down: the value in the wide upper part
        points = [(x - half_w, y - half_h), (x + half_w, y - half_h), (x, y + half_h)]
        out.append(f'<polygon points="{_points(points)}" fill="{MIN_FILL}" {paint}/>')
        baseline = y - half_h + 14
    out.append(
        f'<text class="value" x="{_f(x)}" y="{_f(baseline)}" text-anchor="middle" '
        f'font-weight="bold" fill="{INK}">{esc(p.value_text)}</text>'
    )
    ab = d.ab.get(p.key)
    if ab is not None:
        out.append(
            f'<text class="ab" x="{_f(x + p.width * AB_AT + AB_GAP)}" y="{_f(y + AB_FONT * 0.36)}" '
            f'font-size="{AB_FONT}" fill="{AB_INK}">{esc(ab)}</text>'
        )
    out.append("</g>")
    return out


def _points(points: list[tuple[float, float]]) -> str:
    return " ".join(f"{_f(px)},{_f(py)}" for px, py in points)


def _caption_lines(d: _Drawing) -> list[str]:
    out = ['<g class="caption">']
    for i, line in enumerate(d.caption):
        y = d.tree_bottom + 10 + CAPTION_LINE * (i + 1) - 4
        out.append(
            f'<text x="{MARGIN}" y="{_f(y)}" font-size="{CAPTION_FONT}" '
            f'fill="{CAPTION_INK}">{esc(line)}</text>'
        )
    out.append("</g>")
    return out
