"""``render_svg`` and ``arena analyze --svg``: the searched tree drawn the lectures' way.

The drawing is checked against the trace it came from (node shapes by kind, one cut mark per
pruned move, the principal variation, the root's value, the alpha-beta labels) and against the
textbook trees' expected figures; the layout's own coordinates must keep node shapes apart, and a
real Chromium renders the picture (no console errors, no request out, no text running into other
text or shapes, measured with the browser's font) and leaves screenshots to look at.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot_arena import games
from bot_arena.arena.cli.app import app
from bot_arena.arena.report.tree_svg import render_svg
from bot_arena.bots.search_common import resolve_depth
from bot_arena.bots.trace import Trace, TraceNode, number, traced_search
from bot_arena.games.tree import TreeGame

NS = "{http://www.w3.org/2000/svg}"
ALPHA, BETA, INFINITY = "\u03b1", "\u03b2", "\u221e"  # escapes: they pass for Latin letters
LECTURE_TREES = (
    "blog-alphabeta-walkthrough",
    "lecture-alphabeta-deep-cut",
    "lecture-minimax-three-ply",
    "lecture-minimax-two-ply",
    "textbook-three-by-three",
)
#: A tree cut hard: the second and third MIN nodes stop after one leaf, their pruned moves
#: drawn side by side as close as the layout lets stubs come.
MANY_CUTS = {"players": 2, "root": [[5], [1, 9, 9, 9, 9, 9, 9], [2, 9, 9, 9]]}
runner = CliRunner()


# --- helpers -----------------------------------------------------------------------------------
def load_tree(shared_data: Path, name: str) -> tuple[TreeGame, dict[str, Any]]:
    path = shared_data / "trees" / f"{name}.json"
    return TreeGame(str(path)), json.loads(path.read_text(encoding="utf-8"))


def trace_tree(game: TreeGame, prune: bool) -> Trace:
    """The trace ``arena analyze --bot minimax|alphabeta`` records (whole tree, player 0)."""
    return traced_search(game, game.initial_state(), resolve_depth(game, None), prune=prune)


def tictactoe_trace(position: str, depth: int, prune: bool) -> tuple[Any, Trace]:
    game = games.get("tictactoe")
    return game, traced_search(game, game.parse_position(position), depth, prune=prune)


def walk(node: TraceNode) -> Iterator[TraceNode]:
    yield node
    for child in node.children:
        yield from walk(child)


def classes(element: ET.Element) -> set[str]:
    return set(element.get("class", "").split())


def with_class(root: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in root.iter() if name in classes(e)]


def node_groups(root: ET.Element) -> list[ET.Element]:
    return [e for e in root.iter(f"{NS}g") if "node" in classes(e)]


def expected_pv(trace: Trace) -> set[tuple[str, str]]:
    """(from, to) keys of the root-to-leaf path that follows ``best`` (keys: child indices)."""
    edges: set[tuple[str, str]] = set()
    node, key = trace.root, "r"
    while node.children:
        index = next(i for i, c in enumerate(node.children) if c.move == node.best)
        edges.add((key, f"{key}.{index}"))
        node, key = node.children[index], f"{key}.{index}"
    return edges


def assert_shapes_apart(root: ET.Element) -> None:
    """No two node shapes overlap, by the layout's own centres and sizes."""
    boxes = []
    for g in node_groups(root):
        x, y = float(g.get("data-x", "nan")), float(g.get("data-y", "nan"))
        w, h = float(g.get("data-w", "nan")), float(g.get("data-h", "nan"))
        boxes.append((x - w / 2, y - h / 2, x + w / 2, y + h / 2, g.get("data-node")))
    boxes.sort()
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if b[0] >= a[2]:
                break  # sorted by left edge: nothing further right can reach a
            assert b[1] >= a[3] or a[1] >= b[3], f"nodes {a[4]} and {b[4]} overlap"


def check_drawing(svg: str, trace: Trace) -> ET.Element:
    """Everything a drawing owes its trace, whatever the tree; returns the parsed document."""
    root = ET.fromstring(svg)
    nodes = list(walk(trace.root))
    inner = [n for n in nodes if n.kind == "inner"]
    groups = node_groups(root)
    kinds = [g.get("class") for g in groups]
    assert kinds.count("node max") == sum(n.maximizing for n in inner)
    assert kinds.count("node min") == sum(not n.maximizing for n in inner)
    assert kinds.count("node leaf") == len(nodes) - len(inner) == trace.leaves
    assert len(groups) == len(nodes) == trace.nodes
    # one cut mark per pruned move, on the edge of the node that pruned it
    cuts = with_class(root, "cut")
    assert len(cuts) == sum(len(n.pruned) for n in nodes)
    assert len(with_class(root, "pruned")) == len(cuts)
    # the principal variation: exactly the best path, edges and nodes
    pv = {(e.get("data-from"), e.get("data-to")) for e in with_class(root, "pv")}
    assert pv == expected_pv(trace)
    on_pv = {g.get("data-node") for g in groups if g.get("data-pv") == "1"}
    assert on_pv == {"r"} | {to for _, to in pv}
    # the values, in search order (the drawing's nodes come in the order the search made them)
    assert [g.get("data-value") for g in groups] == [number(n.value) for n in nodes]
    by_key = {g.get("data-node"): g for g in groups}
    assert by_key["r"].get("data-value") == number(trace.root.value)
    # alpha-beta labels on every inner node of an alpha-beta trace, none for minimax
    assert len(with_class(root, "ab")) == (len(inner) if trace.prune else 0)
    # a tooltip on every node, saying its side and value
    for g, n in zip(groups, nodes, strict=True):
        title = g.find(f"{NS}title")
        assert title is not None and title.text is not None
        side = "leaf" if n.kind != "inner" else ("MAX" if n.maximizing else "MIN")
        value = number(n.value).replace("inf", INFINITY)
        assert side in title.text and f"value {value}" in title.text
    caption = " ".join(t.text or "" for t in root.iter(f"{NS}text"))
    assert f"values are player {trace.me}'s; MAX maximises, MIN minimises" in caption
    assert (
        f"nodes {trace.nodes}, leaves {trace.leaves}, cutoffs {trace.cutoffs}, "
        f"root value {number(trace.root.value)}"
    ) in caption
    assert_shapes_apart(root)
    return root


# --- the textbook trees ------------------------------------------------------------------------
@pytest.mark.parametrize("prune", [False, True], ids=["minimax", "alphabeta"])
@pytest.mark.parametrize("name", LECTURE_TREES)
def test_lecture_trees_are_drawn_from_their_traces(
    shared_data: Path, name: str, prune: bool
) -> None:
    game, data = load_tree(shared_data, name)
    trace = trace_tree(game, prune)
    expected = data["expected"]
    root = check_drawing(render_svg(trace, game), trace)
    leaves = [g for g in node_groups(root) if g.get("class") == "node leaf"]
    assert len(leaves) == expected["alphabeta_leaves" if prune else "minimax_leaves"]
    root_group = next(g for g in node_groups(root) if g.get("data-node") == "r")
    assert float(root_group.get("data-value", "nan")) == expected["value"]
    first = next(e for e in with_class(root, "pv") if e.get("data-from") == "r")
    assert first.get("data-move") == str(expected["best_move"])
    if not prune:
        assert with_class(root, "cut") == []


def test_the_deep_cut_in_detail(shared_data: Path) -> None:
    """The lecture's figure: cuts after 5 (deep, at a MIN node entered with alpha 5), root 6."""
    game, _ = load_tree(shared_data, "lecture-alphabeta-deep-cut")
    root = ET.fromstring(render_svg(trace_tree(game, prune=True), game))
    cuts = {(c.get("data-from"), c.get("data-move")) for c in with_class(root, "cut")}
    assert cuts == {("r.0.0.1", "1"), ("r.0.1", "1"), ("r.1.0.0", "1"), ("r.1.1", "1")}
    labels = {
        g.get("data-node"): "".join(t.itertext())
        for g in node_groups(root)
        for t in g
        if "ab" in classes(t)
    }
    assert labels["r"] == f"{ALPHA}=-{INFINITY} {BETA}=+{INFINITY}"
    assert labels["r.1.0.0"] == f"{ALPHA}=5 {BETA}=+{INFINITY}"
    assert labels["r.1.1"] == f"{ALPHA}=5 {BETA}=6"
    # the stub of a pruned move carries its move and no value
    stubs = with_class(root, "pruned")
    assert all("".join(s.itertext()).strip() == s.get("data-move") for s in stubs)


def test_the_document_stands_alone(shared_data: Path) -> None:
    game, _ = load_tree(shared_data, "textbook-three-by-three")
    svg = render_svg(trace_tree(game, prune=True), game)
    assert svg.startswith("<svg ") and "<?xml" not in svg
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    width, height = float(root.get("width", "0")), float(root.get("height", "0"))
    assert width > 0 and height > 0
    assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"
    assert root.get("font-family") == "sans-serif"
    tags = {e.tag.removeprefix(NS) for e in root.iter()}
    assert not tags & {"script", "style", "image", "foreignObject", "use", "a"}
    assert "http" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "url(" not in svg and "href" not in svg
    # every node and label lies inside the picture
    for g in node_groups(root):
        x, w = float(g.get("data-x", "nan")), float(g.get("data-w", "nan"))
        y, h = float(g.get("data-y", "nan")), float(g.get("data-h", "nan"))
        assert x - w / 2 >= 0 and y - h / 2 >= 0
        assert x + w / 2 <= width and y + h / 2 <= height


class HostileLabels(TreeGame):
    """A tree whose move labels are markup, quotes and a control character."""

    def format_move(self, move: int) -> str:
        return f'<b a="{move}">&\'\x01</b>'


def test_move_labels_are_escaped() -> None:
    game = HostileLabels.from_data({"players": 2, "root": [[1, 2], [0, 5]]})
    trace = traced_search(game, game.initial_state(), 10, prune=True)
    svg = render_svg(trace, game)
    root = check_drawing(svg, trace)
    assert "<b" not in svg
    moves = ["".join(t.itertext()) for t in with_class(root, "move")]
    assert moves[0] == '<b a="0">&\'\ufffd</b>'  # the control character replaced: valid XML
    assert len(with_class(root, "cut")) == 1


def test_cut_marks_packed_together_stay_apart() -> None:
    game = TreeGame.from_data(MANY_CUTS)
    trace = traced_search(game, game.initial_state(), 10, prune=True)
    root = check_drawing(render_svg(trace, game), trace)
    marks = []
    for cut in with_class(root, "cut"):
        numbers = [float(v) for v in re.findall(r"-?[0-9.]+", cut.get("d", ""))]
        xs, ys = numbers[0::2], numbers[1::2]
        assert len(xs) == 4  # two slashes
        marks.append((min(xs), min(ys), max(xs), max(ys)))
    assert len(marks) == 9
    marks.sort()
    for a, b in pairwise(marks):
        assert b[0] > a[2], f"cut marks {a} and {b} touch"


# --- real positions ----------------------------------------------------------------------------
def test_a_tictactoe_position_at_depth_two() -> None:
    """x 5, o 1, x 9: o to move, so the root is a MIN node of player 0's values."""
    game, trace = tictactoe_trace("519", 2, prune=True)
    root = check_drawing(render_svg(trace, game), trace)
    top = next(g for g in node_groups(root) if g.get("data-node") == "r")
    assert top.get("class") == "node min" and top.get("data-player") == "1"
    assert {g.get("data-kind") for g in node_groups(root)} == {"inner", "horizon"}
    assert len(with_class(root, "cut")) == 3 + 4 + 2 + 3 and trace.cutoffs == 4


def test_a_few_hundred_nodes_make_a_wide_but_valid_picture() -> None:
    game, trace = tictactoe_trace("5", 3, prune=False)
    assert trace.nodes > 300
    root = check_drawing(render_svg(trace, game), trace)
    assert float(root.get("width", "0")) > 40 * trace.leaves  # every leaf has its own slot


def test_a_root_that_is_a_leaf() -> None:
    game, trace = tictactoe_trace("5", 0, prune=True)
    root = check_drawing(render_svg(trace, game), trace)
    assert with_class(root, "edge") == [] and with_class(root, "ab") == []


def test_a_three_player_paranoid_trace() -> None:
    data = {
        "players": 3,
        "root": [
            [[{"utility": [1, 2, 0]}], [{"utility": [3, 0, 0]}]],
            [[{"utility": [2, 1, 0]}], [{"utility": [0, 0, 3]}]],
        ],
    }
    game = TreeGame.from_data(data)
    trace = traced_search(game, game.initial_state(), 10, me=0, prune=True)
    root = check_drawing(render_svg(trace, game), trace)
    players = {g.get("data-player") for g in node_groups(root) if g.get("class") == "node min"}
    assert players == {"1", "2"}


# --- the command line --------------------------------------------------------------------------
def analyze(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["analyze", *args])
    return result.exit_code, result.stdout, result.stderr


def test_cli_svg_file(shared_data: Path, tmp_path: Path) -> None:
    tree = str(shared_data / "trees" / "lecture-alphabeta-deep-cut.json")
    target = tmp_path / "tree.svg"
    code, out, _ = analyze("tree", "--tree", tree, "--bot", "alphabeta", "--svg", str(target))
    assert code == 0 and "best move: 1" in out
    root = ET.fromstring(target.read_text(encoding="utf-8"))
    assert len(with_class(root, "cut")) == 4 and len(with_class(root, "pv")) == 4
    game, _ = load_tree(shared_data, "lecture-alphabeta-deep-cut")
    assert target.read_text(encoding="utf-8") == render_svg(trace_tree(game, True), game)


def test_cli_svg_with_dot_and_explain(shared_data: Path, tmp_path: Path) -> None:
    tree = str(shared_data / "trees" / "textbook-three-by-three.json")
    svg, dot = tmp_path / "t.svg", tmp_path / "t.dot"
    code, out, _ = analyze(
        "tree",
        "--tree",
        tree,
        "--bot",
        "minimax",
        "--explain",
        "--dot",
        str(dot),
        "--svg",
        str(svg),
    )
    assert code == 0 and "nodes 13, leaves 9, cutoffs 0, root value 3" in out
    assert dot.read_text().startswith("digraph")
    assert len(node_groups(ET.fromstring(svg.read_text()))) == 13


@pytest.mark.parametrize(
    ("bot", "message"),
    [("mcts", "--svg trace minimax"), ("alphabeta:order=true", "order")],
)
def test_cli_svg_refuses_what_it_cannot_trace(tmp_path: Path, bot: str, message: str) -> None:
    target = tmp_path / "tree.svg"
    code, out, err = analyze("tictactoe", "--position", "519", "--bot", bot, "--svg", str(target))
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    assert not target.exists()


def test_cli_svg_unwritable_path_is_one_line(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "tree.svg"
    code, out, err = analyze(
        "tictactoe", "--position", "519", "--bot", "alphabeta:depth=2", "--svg", str(target)
    )
    assert code == 2 and out == ""
    assert err.startswith("error: cannot write ") and err.count("\n") == 1
    assert str(target) in err


def test_cli_svg_of_a_tree_too_large(tmp_path: Path) -> None:
    code, _, err = analyze("tictactoe", "--bot", "minimax", "--svg", str(tmp_path / "t.svg"))
    assert code == 2 and "too large for --explain/--dot/--svg" in err


# --- in a browser ------------------------------------------------------------------------------
#: Every text and shape of the picture with its box as Chromium lays it out, grouped by owner (a
#: node with its value and alpha-beta label, a stub with its move, an edge with its move): boxes
#: of different owners must not meet, no edge may run through a box other than its own move's,
#: values must fit in their shapes, alpha-beta labels must clear their triangle.
OVERLAPS_JS = """
() => {
  const svg = document.querySelector('svg');
  const items = [];
  const add = (el, owner, what) => {
    const b = el.getBBox();
    items.push({owner, what, x0: b.x, y0: b.y, x1: b.x + b.width, y1: b.y + b.height});
  };
  const problems = [];
  for (const g of svg.querySelectorAll('g.node')) {
    const key = 'node ' + g.dataset.node;
    const shape = g.querySelector('polygon, rect');
    add(shape, key, 'shape');
    const x = +g.dataset.x, y = +g.dataset.y, w = +g.dataset.w, h = +g.dataset.h;
    const value = g.querySelector('text.value').getBBox();
    const mid = value.y + value.height / 2;
    // the triangle's half width at the value's middle line (a box: its whole width)
    let half = w / 2;
    if (g.classList.contains('max')) half = (w / 2) * (mid - (y - h / 2)) / h;
    if (g.classList.contains('min')) half = (w / 2) * ((y + h / 2) - mid) / h;
    if (value.width / 2 > half + 0.5) problems.push(`value of ${key} is wider than its shape`);
    const ab = g.querySelector('text.ab');
    if (ab) {
      add(ab, key + ' ab', 'alpha-beta label');
      const b = ab.getBBox();
      const low = Math.min(b.y + b.height, y + h / 2), high = Math.max(b.y, y - h / 2);
      const depthIn = g.classList.contains('max') ? low - (y - h / 2) : (y + h / 2) - high;
      if (b.x < x + (w / 2) * depthIn / h) problems.push(`alpha-beta label of ${key} hits it`);
    }
  }
  for (const t of svg.querySelectorAll('text.move')) {
    add(t, `move ${t.dataset.from} ${t.dataset.to}`, 'move');
  }
  for (const s of svg.querySelectorAll('g.pruned')) {
    const key = 'stub ' + s.dataset.from + ' ' + s.dataset.move;
    add(s.querySelector('rect'), key, 'stub');
    add(s.querySelector('text'), key, 'stub move');
  }
  for (const c of svg.querySelectorAll('.cut')) add(c, 'cut ' + items.length, 'cut mark');
  for (const t of svg.querySelectorAll('g.caption text')) add(t, 'caption', 'caption');
  // edges and pruned stubs: a line may touch the shapes it joins, never run through anything
  const clips = (l, r) => {  // Liang-Barsky: does the segment enter the box shrunk by 1 px?
    const x0 = r.x0 + 1, x1 = r.x1 - 1, y0 = r.y0 + 1, y1 = r.y1 - 1;
    if (x0 >= x1 || y0 >= y1) return false;
    let lo = 0, hi = 1;
    const dx = l.x2 - l.x1, dy = l.y2 - l.y1;
    for (const [p, q] of [[-dx, l.x1 - x0], [dx, x1 - l.x1], [-dy, l.y1 - y0], [dy, y1 - l.y1]]) {
      if (p === 0) { if (q < 0) return false; continue; }
      const t = q / p;
      if (p < 0) lo = Math.max(lo, t); else hi = Math.min(hi, t);
      if (lo > hi) return false;
    }
    return true;
  };
  for (const el of svg.querySelectorAll('line')) {
    const stub = el.closest('g.pruned');
    const owner = stub ? `stub ${stub.dataset.from} ${stub.dataset.move}`
                       : `move ${el.dataset.from} ${el.dataset.to}`;
    const l = {x1: +el.getAttribute('x1'), y1: +el.getAttribute('y1'),
               x2: +el.getAttribute('x2'), y2: +el.getAttribute('y2')};
    for (const r of items) {
      if (r.owner !== owner && r.what !== 'cut mark' && clips(l, r)) {
        problems.push(`the line of ${owner} runs through ${r.owner} (${r.what})`);
      }
    }
  }
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const a = items[i], b = items[j];
      const same = a.owner === b.owner;
      if (same || a.owner + ' ab' === b.owner || b.owner + ' ab' === a.owner) continue;
      const dx = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
      const dy = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
      if (dx > 0.5 && dy > 0.5) {
        problems.push(`${a.owner} (${a.what}) meets ${b.owner} (${b.what})`);
      }
    }
  }
  return problems;
}
"""


def _browser_cases(shared_data: Path) -> dict[str, tuple[Any, Trace]]:
    game, _ = load_tree(shared_data, "lecture-alphabeta-deep-cut")
    ttt, trace = tictactoe_trace("519", 2, prune=True)
    cut = TreeGame.from_data(MANY_CUTS)
    return {
        "lecture-alphabeta-deep-cut": (game, trace_tree(game, prune=True)),
        "tictactoe": (ttt, trace),
        "many-cuts": (cut, trace_tree(cut, prune=True)),
    }


@pytest.mark.parametrize("name", ["lecture-alphabeta-deep-cut", "tictactoe", "many-cuts"])
def test_the_picture_in_a_browser(
    page: tuple[Any, Any], test_output: Path, tmp_path: Path, shared_data: Path, name: str
) -> None:
    browser_page, log = page
    game, trace = _browser_cases(shared_data)[name]
    svg = render_svg(trace, game)
    root = ET.fromstring(svg)
    file = tmp_path / f"tree-{name}.svg"
    file.write_text(svg, encoding="utf-8")
    # Chromium cannot take a full-page shot of an SVG document: make the window its size
    width, height = int(root.get("width", "0")), int(root.get("height", "0"))
    browser_page.set_viewport_size({"width": width, "height": height})
    browser_page.goto(file.as_uri())
    shot = test_output / f"tree-{name}.png"
    browser_page.screenshot(path=str(shot))
    assert shot.stat().st_size > 0
    assert browser_page.evaluate(OVERLAPS_JS) == []
    shown = browser_page.evaluate("() => document.querySelectorAll('g.node').length")
    assert shown == trace.nodes
    assert log.errors == [] and log.requests == []
