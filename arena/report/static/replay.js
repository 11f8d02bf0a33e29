/*
 * ArenaReplay: the game replay viewer of the arena's HTML report.
 *
 * ArenaReplay.mount(element, game) turns an element into a viewer of one game, where
 *   game = {board: <boards.encode_replay output>, moves: [move texts], info: [per ply:
 *           {seat, ms, value?, depth?, nodes?, pv?: [move texts], forced?}],
 *           players: [seat names], result: text}.
 * The board is drawn as inline SVG from the frames that arena/report/boards.py encodes (a static
 * view, the start cells, one patch per ply); decodeFrames here must agree with its
 * decode_frames. Plain JS, no libraries, nothing fetched, nothing evaluated; text from the data
 * (bot names, move texts, a plugin game's picture) only ever goes in as text nodes.
 *
 * Mounting is cheap, so a page can hold a thousand viewers: it builds a small skeleton and
 * decodes and draws only when the viewer comes near the screen (or is used).
 *
 * For tests: the mounted element carries data-ply (0 = the start), the board element
 * (.arena-board) carries data-cells (the current frame's cells as JSON), and the buttons have
 * the classes replay-first, replay-prev, replay-next and replay-last.
 */
(function (global) {
  "use strict";

  const FORMAT = 1;
  const RESIZE = -1; // a patch's [RESIZE, length] pair: the cell list changes length
  const SVG_NS = "http://www.w3.org/2000/svg";
  const GLYPH_FONT = '"DejaVu Sans", "Segoe UI Symbol", "Noto Sans Symbols 2", "Arial Unicode MS", sans-serif';
  // Rolit's ball colours by colour index; boards.py's _ROLIT_SIDES names them in this order.
  const ROLIT_COLOURS = ["#d7263d", "#2e9e4f", "#f2c14e", "#2f6fd6"];
  const ROLIT_EDGES = ["#8f1526", "#1d6b35", "#b8891c", "#1d4c9c"];
  // Players of the games drawn without colours of their own (Nim, coins, trees, text).
  const PLAYER_COLOURS = ["#2f6fd6", "#d64545", "#2e9e4f", "#e08a00", "#8e44ad", "#16a3a3"];
  const C4_COLOURS = [
    ["#e03c31", "#a4241b"],
    ["#f6c431", "#c4930f"],
  ];
  // Chess: solid glyphs for both colours, White's filled white under its outline glyph. The
  // text variation selector keeps the black pawn from turning into an emoji.
  const SOLID = { k: "\u265A", q: "\u265B", r: "\u265C", b: "\u265D", n: "\u265E", p: "\u265F" };
  const OUTLINE = { k: "\u2654", q: "\u2655", r: "\u2656", b: "\u2657", n: "\u2658", p: "\u2659" };
  const TEXT_STYLE = "\uFE0E";
  const PIECE_NAMES = { k: "king", q: "queen", r: "rook", b: "bishop", n: "knight", p: "pawn" };

  // --- the frames --------------------------------------------------------------------------
  function applyPatch(cells, patch) {
    const out = cells.slice();
    for (let k = 0; k < patch.length; k += 2) {
      const index = patch[k];
      const value = patch[k + 1];
      if (index === RESIZE) {
        out.length = Math.min(out.length, value);
        while (out.length < value) out.push(0); // every new cell is set by the pairs after
      } else {
        out[index] = value;
      }
    }
    return out;
  }

  /** Every frame's cells, the start first (boards.decode_frames). */
  function decodeFrames(board) {
    if (!board || board.format !== FORMAT) {
      throw new Error("replay format " + (board && board.format) + " is not " + FORMAT);
    }
    const frames = [board.start.slice()];
    for (const patch of board.patches) frames.push(applyPatch(frames[frames.length - 1], patch));
    return frames;
  }

  function changedCells(patch) {
    const out = [];
    for (let k = 0; k < patch.length; k += 2) if (patch[k] !== RESIZE) out.push(patch[k]);
    return out;
  }

  /** Per frame: [cells marked as the last move, cells that changed with it]. */
  function frameMarks(board) {
    const out = [[[], []]];
    board.patches.forEach(function (patch, k) {
      const changed = changedCells(patch);
      const mark = board.marks && board.marks[k];
      out.push([mark ? mark.slice() : changed, changed]);
    });
    return out;
  }

  // --- DOM helpers ---------------------------------------------------------------------------
  function html(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function svg(tag, attrs, parent, text) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const name in attrs) {
      if (attrs[name] !== undefined && attrs[name] !== null) node.setAttribute(name, String(attrs[name]));
    }
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (parent) parent.appendChild(node);
    return node;
  }

  /** An SVG drawn at its natural size at most (smaller when the viewer is narrow). */
  function svgRoot(width, height, label) {
    const root = svg("svg", {
      viewBox: "0 0 " + width + " " + height,
      width: width,
      height: height,
      role: "img",
      "aria-label": label,
      preserveAspectRatio: "xMidYMid meet",
    });
    root.style.maxWidth = width + "px";
    return root;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function has(list, value) {
    return list.indexOf(value) >= 0;
  }

  // --- painters: build the static picture once, then draw(frame) per frame -------------------
  // Each returns {node, draw(cells, marks, changed, previous, start)}; marks are the last move's
  // cells, changed every cell its patch touched, previous the frame before (or null).

  function gridLabels(g, view, x0, y0, size, where) {
    const font = Math.round(size * 0.28);
    if (view.col_labels) {
      view.col_labels.forEach(function (label, c) {
        const y = where.colsAbove ? y0 - font * 0.7 : y0 + view.rows * size + font * 1.25;
        svg("text", { x: x0 + (c + 0.5) * size, y: y, class: "rp-label", "font-size": font, "text-anchor": "middle" }, g, label);
      });
    }
    if (view.row_labels) {
      view.row_labels.forEach(function (label, r) {
        svg("text", { x: x0 - font * 0.8, y: y0 + (r + 0.5) * size, class: "rp-label", "font-size": font, "text-anchor": "middle", "dominant-baseline": "central" }, g, label);
      });
    }
  }

  function paintTicTacToe(view) {
    const S = 80;
    const pad = 12;
    const W = view.cols * S + 2 * pad;
    const H = view.rows * S + 2 * pad;
    const root = svgRoot(W, H, "tic-tac-toe board");
    svg("rect", { x: 0, y: 0, width: W, height: H, rx: 12, class: "rp-ttt-bg" }, root);
    const marksLayer = svg("g", {}, root);
    for (let i = 1; i < view.cols; i++) {
      svg("line", { x1: pad + i * S, y1: pad + 6, x2: pad + i * S, y2: H - pad - 6, class: "rp-ttt-line" }, root);
    }
    for (let i = 1; i < view.rows; i++) {
      svg("line", { x1: pad + 6, y1: pad + i * S, x2: W - pad - 6, y2: pad + i * S, class: "rp-ttt-line" }, root);
    }
    const layer = svg("g", {}, root);
    return {
      node: root,
      draw: function (cells, marks) {
        clear(marksLayer);
        clear(layer);
        cells.forEach(function (cell, i) {
          const x = pad + (i % view.cols) * S;
          const y = pad + Math.floor(i / view.cols) * S;
          const cx = x + S / 2;
          const cy = y + S / 2;
          if (has(marks, i)) svg("rect", { x: x + 5, y: y + 5, width: S - 10, height: S - 10, rx: 8, class: "rp-last" }, marksLayer);
          if (cell === 1) {
            const d = S * 0.26;
            svg("path", { d: "M" + (cx - d) + " " + (cy - d) + "L" + (cx + d) + " " + (cy + d) + "M" + (cx + d) + " " + (cy - d) + "L" + (cx - d) + " " + (cy + d), class: "rp-ttt-x" }, layer);
          } else if (cell === 2) {
            svg("circle", { cx: cx, cy: cy, r: S * 0.28, class: "rp-ttt-o" }, layer);
          } else {
            svg("text", { x: x + 10, y: y + 20, class: "rp-ttt-guide" }, layer, i + 1);
          }
        });
      },
    };
  }

  function paintConnectFour(view) {
    const S = 56;
    const pad = 10;
    const W = view.cols * S + 2 * pad;
    const H = view.rows * S + 2 * pad + 26;
    const root = svgRoot(W, H, "Connect Four board");
    const frameH = view.rows * S + 2 * pad;
    // The frame is one path with a hole per cell (even-odd), so discs show through from behind.
    let d = "M0 8a8 8 0 0 1 8-8H" + (W - 8) + "a8 8 0 0 1 8 8V" + (frameH - 8) + "a8 8 0 0 1-8 8H8a8 8 0 0 1-8-8Z";
    const r = S * 0.4;
    for (let row = 0; row < view.rows; row++) {
      for (let col = 0; col < view.cols; col++) {
        const cx = pad + (col + 0.5) * S;
        const cy = pad + (row + 0.5) * S;
        d += "M" + (cx - r) + " " + cy + "a" + r + " " + r + " 0 1 0 " + 2 * r + " 0a" + r + " " + r + " 0 1 0 " + -2 * r + " 0Z";
      }
    }
    svg("rect", { x: 2, y: 2, width: W - 4, height: frameH - 4, class: "rp-c4-back" }, root);
    const layer = svg("g", {}, root);
    svg("path", { d: d, "fill-rule": "evenodd", class: "rp-c4-frame" }, root);
    const rings = svg("g", {}, root);
    gridLabels(root, view, pad, pad, S, {});
    return {
      node: root,
      draw: function (cells, marks) {
        clear(layer);
        clear(rings);
        cells.forEach(function (cell, i) {
          const cx = pad + ((i % view.cols) + 0.5) * S;
          const cy = pad + (Math.floor(i / view.cols) + 0.5) * S;
          if (cell) {
            const colours = C4_COLOURS[(cell - 1) % 2];
            svg("circle", { cx: cx, cy: cy, r: r + 1, fill: colours[0], stroke: colours[1], "stroke-width": 3 }, layer);
            svg("circle", { cx: cx, cy: cy, r: r * 0.62, fill: "none", stroke: colours[1], "stroke-opacity": 0.35, "stroke-width": 2 }, layer);
          }
          if (has(marks, i)) svg("circle", { cx: cx, cy: cy, r: r * 0.22, class: "rp-c4-last" }, rings);
        });
      },
    };
  }

  function paintRolit(view) {
    const S = 46;
    const pad = 26;
    const W = view.cols * S + pad + 8;
    const H = view.rows * S + pad + 8;
    const root = svgRoot(W, H, "Rolit board");
    svg("rect", { x: pad - 4, y: pad - 4, width: view.cols * S + 8, height: view.rows * S + 8, rx: 6, class: "rp-rolit-rim" }, root);
    for (let row = 0; row < view.rows; row++) {
      for (let col = 0; col < view.cols; col++) {
        svg("rect", { x: pad + col * S, y: pad + row * S, width: S, height: S, class: "rp-rolit-square" }, root);
      }
    }
    gridLabels(root, view, pad, pad, S, { colsAbove: true });
    const layer = svg("g", {}, root);
    return {
      node: root,
      draw: function (cells, marks, changed) {
        clear(layer);
        cells.forEach(function (cell, i) {
          const x = pad + (i % view.cols) * S;
          const y = pad + Math.floor(i / view.cols) * S;
          if (has(marks, i)) svg("rect", { x: x + 1, y: y + 1, width: S - 2, height: S - 2, class: "rp-last" }, layer);
          if (!cell) return;
          const colour = cell - 1;
          const neutral = colour >= view.players;
          const ball = svg("circle", {
            cx: x + S / 2,
            cy: y + S / 2,
            r: S * 0.38,
            fill: ROLIT_COLOURS[colour % 4],
            stroke: ROLIT_EDGES[colour % 4],
            "stroke-width": 2.5,
            class: neutral ? "rp-neutral" : null,
          }, layer);
          ball.appendChild(svg("title", {}, null, neutral ? "neutral" : view.sides[colour] || "colour " + colour));
          svg("circle", { cx: x + S / 2 - S * 0.12, cy: y + S / 2 - S * 0.12, r: S * 0.1, class: "rp-shine" }, layer);
          if (has(marks, i)) {
            svg("circle", { cx: x + S / 2, cy: y + S / 2, r: S * 0.45, class: "rp-ring" }, layer);
          } else if (has(changed, i)) {
            svg("circle", { cx: x + S / 2, cy: y + S / 2, r: S * 0.09, class: "rp-flip" }, layer);
          }
        });
      },
    };
  }

  function paintChess(view) {
    const S = 52;
    const pad = 22;
    const W = 8 * S + pad + 6;
    const H = 8 * S + pad + 6;
    const x0 = pad;
    const y0 = 6;
    const root = svgRoot(W, H, "chess board");
    for (let row = 0; row < view.rows; row++) {
      for (let col = 0; col < view.cols; col++) {
        const dark = (row + col) % 2 === 1;
        svg("rect", { x: x0 + col * S, y: y0 + row * S, width: S, height: S, class: dark ? "rp-dark" : "rp-light" }, root);
      }
    }
    svg("rect", { x: x0, y: y0, width: 8 * S, height: 8 * S, class: "rp-chess-edge" }, root);
    gridLabels(root, view, x0, y0, S, {});
    const marksLayer = svg("g", {}, root);
    const layer = svg("g", { "font-family": GLYPH_FONT, "font-size": Math.round(S * 0.8), "text-anchor": "middle" }, root);
    return {
      node: root,
      draw: function (cells, marks) {
        clear(marksLayer);
        clear(layer);
        marks.forEach(function (i) {
          svg("rect", { x: x0 + (i % 8) * S, y: y0 + Math.floor(i / 8) * S, width: S, height: S, class: "rp-chess-last" }, marksLayer);
        });
        cells.forEach(function (cell, i) {
          if (!cell) return;
          const kind = cell.toLowerCase();
          const white = cell !== kind;
          const x = x0 + (i % 8 + 0.5) * S;
          const y = y0 + Math.floor(i / 8) * S + S * 0.8;
          const piece = svg("g", { class: white ? "rp-white" : "rp-black" }, layer);
          piece.appendChild(svg("title", {}, null, (white ? "white " : "black ") + (PIECE_NAMES[kind] || kind)));
          svg("text", { x: x, y: y, class: "rp-piece-body" }, piece, (SOLID[kind] || cell) + TEXT_STYLE);
          if (white && OUTLINE[kind]) svg("text", { x: x, y: y, class: "rp-piece-line" }, piece, OUTLINE[kind] + TEXT_STYLE);
        });
      },
    };
  }

  function paintPiles(view, start) {
    const step = 22;
    const labelW = 66;
    const rowH = 56;
    const widest = Math.max(1, Math.max.apply(null, start.concat([0])));
    const W = labelW + widest * step + 56;
    const H = Math.max(1, start.length) * rowH + 12;
    const root = svgRoot(W, H, "Nim piles");
    const layer = svg("g", {}, root);
    return {
      node: root,
      draw: function (cells, marks, changed, previous) {
        clear(layer);
        const rows = Math.max(cells.length, start.length);
        for (let i = 0; i < rows; i++) {
          const size = cells[i] || 0;
          const before = previous && has(marks, i) ? previous[i] || 0 : size;
          const full = Math.max(start[i] || 0, before);
          const y = 10 + i * rowH;
          if (has(marks, i)) svg("rect", { x: 2, y: y - 4, width: W - 4, height: rowH - 4, rx: 8, class: "rp-last" }, layer);
          svg("text", { x: 12, y: y + 28, class: "rp-pile-label" }, layer, "pile " + (i + 1));
          for (let k = 0; k < full; k++) {
            const cls = k < size ? "rp-stick" : k < before ? "rp-stick-taken" : "rp-stick-gone";
            svg("rect", { x: labelW + k * step, y: y + 2, width: 12, height: 44, rx: 6, class: cls }, layer);
          }
          svg("text", { x: labelW + full * step + 8, y: y + 30, class: "rp-pile-count" }, layer, size);
        }
      },
    };
  }

  function paintCoins(view, start) {
    const slots = Math.max(view.total || 0, start[0] || 0, 1);
    const perRow = Math.min(slots, 12);
    const rows = Math.ceil(slots / perRow);
    const step = 44;
    const W = perRow * step + 24;
    const H = rows * step + 44;
    const root = svgRoot(W, H, "coins");
    const layer = svg("g", {}, root);
    return {
      node: root,
      draw: function (cells, marks, changed, previous) {
        clear(layer);
        const left = cells[0] || 0;
        const before = previous ? previous[0] || 0 : left;
        for (let k = 0; k < slots; k++) {
          const cx = 12 + (k % perRow + 0.5) * step;
          const cy = 10 + (Math.floor(k / perRow) + 0.5) * step;
          if (k < left) {
            svg("circle", { cx: cx, cy: cy, r: 17, class: "rp-coin" }, layer);
            svg("circle", { cx: cx, cy: cy, r: 11, class: "rp-coin-inner" }, layer);
          } else {
            svg("circle", { cx: cx, cy: cy, r: 17, class: k < before ? "rp-coin-taken" : "rp-coin-gone" }, layer);
          }
        }
        let caption = left + (left === 1 ? " coin left" : " coins left");
        if (before > left) caption += " (" + (before - left) + " taken)";
        svg("text", { x: W / 2, y: H - 12, class: "rp-caption", "text-anchor": "middle" }, layer, caption);
      },
    };
  }

  function formatNumber(value) {
    if (typeof value !== "number") return String(value);
    if (Number.isInteger(value)) return String(value);
    return String(Math.round(value * 1000) / 1000);
  }

  function paintTree(view) {
    const byId = new Map();
    view.nodes.forEach(function (entry) {
      byId.set(entry[0], { id: entry[0], parent: entry[1], move: entry[2], player: entry[3], value: entry[4], kids: [] });
    });
    let top = null;
    byId.forEach(function (node) {
      const up = byId.get(node.parent);
      if (up) up.kids.push(node);
      else if (node.parent === -1) top = node;
    });
    const leafText = function (node) {
      return view.zero_sum ? formatNumber(node.value[0]) : node.value.map(formatNumber).join(", ");
    };
    let widest = 0;
    byId.forEach(function (node) {
      if (node.player < 0) widest = Math.max(widest, leafText(node).length);
    });
    const leafWidth = function (text) { return Math.max(30, 8 * text.length + 12); };
    const dx = Math.max(58, leafWidth("x".repeat(widest)) + 10);
    const dy = 78;
    let next = 0;
    let depth = 0;
    (function place(node, level) {
      node.depth = level;
      depth = Math.max(depth, level);
      if (!node.kids.length) {
        node.x = next++;
      } else {
        node.kids.forEach(function (kid) { place(kid, level + 1); });
        node.x = (node.kids[0].x + node.kids[node.kids.length - 1].x) / 2;
      }
    })(top, 0);
    const W = Math.max(1, next) * dx + 20;
    const H = depth * dy + 58;
    const root = svgRoot(W, H, "game tree");
    const pos = function (node) { return [10 + (node.x + 0.5) * dx, 26 + node.depth * dy]; };
    const edges = svg("g", {}, root);
    const nodes = svg("g", {}, root);
    const shapes = new Map();
    const lines = new Map();
    byId.forEach(function (node) {
      const p = pos(node);
      if (node.parent !== -1 && byId.has(node.parent)) {
        const q = pos(byId.get(node.parent));
        lines.set(node.id, svg("line", { x1: q[0], y1: q[1], x2: p[0], y2: p[1], class: "rp-edge" }, edges));
        // the move's label nearer the child than the parent, where siblings' edges are apart
        const t = 0.66;
        const side = p[0] < q[0] ? -8 : p[0] > q[0] ? 8 : 7;
        svg("text", { x: q[0] + t * (p[0] - q[0]) + side, y: q[1] + t * (p[1] - q[1]), class: "rp-edge-label", "text-anchor": "middle" }, edges, node.move);
      }
      const g = svg("g", { class: "rp-node" }, nodes);
      if (node.player < 0) {
        const shown = leafText(node);
        const w = leafWidth(shown);
        svg("rect", { x: p[0] - w / 2, y: p[1] - 13, width: w, height: 26, rx: 5, class: "rp-leaf" }, g);
        svg("text", { x: p[0], y: p[1] + 5, class: "rp-leaf-text", "text-anchor": "middle" }, g, shown);
      } else {
        const colour = PLAYER_COLOURS[node.player % PLAYER_COLOURS.length];
        if (view.zero_sum) {
          const up = node.player === 0;
          const pts = up ? [[0, -17], [16, 11], [-16, 11]] : [[0, 17], [16, -11], [-16, -11]];
          svg("polygon", { points: pts.map(function (v) { return p[0] + v[0] + "," + (p[1] + v[1]); }).join(" "), fill: colour, class: "rp-inner" }, g);
        } else {
          svg("circle", { cx: p[0], cy: p[1], r: 15, fill: colour, class: "rp-inner" }, g);
          svg("text", { x: p[0], y: p[1] + 5, class: "rp-inner-text", "text-anchor": "middle" }, g, node.player);
        }
        if (!node.kids.length) svg("text", { x: p[0], y: p[1] + 32, class: "rp-edge-label", "text-anchor": "middle" }, g, "\u2026");
      }
      g.appendChild(svg("title", {}, null, node.player < 0 ? "leaf " + node.value.map(formatNumber).join(", ") : "player " + node.player + " to move"));
      shapes.set(node.id, g);
    });
    return {
      node: root,
      /** Where the current node is, so that a tree wider than the viewer scrolls to it. */
      focusX: function (cells) {
        const node = byId.get(cells[0]);
        return node ? pos(node)[0] : null;
      },
      draw: function (cells) {
        const current = cells[0];
        shapes.forEach(function (g) { g.classList.remove("rp-current", "rp-on-path"); });
        lines.forEach(function (line) { line.classList.remove("rp-path"); });
        let node = byId.get(current);
        if (node) shapes.get(node.id).classList.add("rp-current");
        while (node) {
          shapes.get(node.id).classList.add("rp-on-path");
          if (lines.has(node.id)) lines.get(node.id).classList.add("rp-path");
          node = byId.get(node.parent);
        }
      },
    };
  }

  function paintText() {
    const pre = html("pre", "rp-text");
    return {
      node: pre,
      draw: function (cells, marks) {
        clear(pre);
        cells.forEach(function (line, i) {
          pre.appendChild(html("span", has(marks, i) ? "rp-text-line rp-text-changed" : "rp-text-line", line));
          pre.appendChild(document.createTextNode("\n"));
        });
      },
    };
  }

  function painterFor(view, start) {
    if (view.kind === "grid") {
      if (view.style === "ttt") return paintTicTacToe(view);
      if (view.style === "connect4") return paintConnectFour(view);
      if (view.style === "rolit") return paintRolit(view);
      if (view.style === "chess") return paintChess(view);
    }
    if (view.kind === "piles") return paintPiles(view, start);
    if (view.kind === "coins") return paintCoins(view, start);
    if (view.kind === "tree") return paintTree(view);
    return paintText();
  }

  // --- the side's token in the legend and the info panel -------------------------------------
  function swatch(view, player) {
    const s = svg("svg", { viewBox: "0 0 20 20", width: 16, height: 16, class: "rp-swatch", "aria-hidden": "true" });
    const style = view.kind === "grid" ? view.style : view.kind;
    if (style === "ttt") {
      if (player === 0) svg("path", { d: "M5 5L15 15M15 5L5 15", class: "rp-swatch-x" }, s);
      else svg("circle", { cx: 10, cy: 10, r: 6, class: "rp-swatch-o" }, s);
    } else if (style === "tree" && view.zero_sum && player < 2) {
      const points = player === 0 ? "10,3 18,16 2,16" : "10,17 18,4 2,4";
      svg("polygon", { points: points, fill: PLAYER_COLOURS[player] }, s);
    } else if (style === "connect4") {
      const c = C4_COLOURS[player % 2];
      svg("circle", { cx: 10, cy: 10, r: 8, fill: c[0], stroke: c[1], "stroke-width": 2 }, s);
    } else if (style === "rolit") {
      svg("circle", { cx: 10, cy: 10, r: 8, fill: ROLIT_COLOURS[player % 4], stroke: ROLIT_EDGES[player % 4], "stroke-width": 2 }, s);
    } else if (style === "chess") {
      svg("rect", { x: 3, y: 3, width: 14, height: 14, rx: 3, fill: player === 0 ? "#fff" : "#222", stroke: "#555", "stroke-width": 1.5 }, s);
    } else {
      svg("circle", { cx: 10, cy: 10, r: 7, fill: PLAYER_COLOURS[player % PLAYER_COLOURS.length] }, s);
    }
    return s;
  }

  // --- text of the info panel -------------------------------------------------------------------
  function formatMs(ms) {
    if (typeof ms !== "number" || !isFinite(ms)) return "";
    if (ms < 1000) return (ms < 10 ? Math.round(ms * 10) / 10 : Math.round(ms)) + " ms";
    return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s";
  }

  function formatCount(n) {
    return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, "\u2009");
  }

  function formatValue(value) {
    if (Array.isArray(value)) return value.map(formatNumber).join(", ");
    if (typeof value === "number") {
      const v = formatNumber(value);
      return value > 0 ? "+" + v : v;
    }
    return String(value);
  }

  const ICONS = {
    "replay-first": "M5 4h2.5v12H5zM16 4v12L8 10z",
    "replay-prev": "M14 4v12L6 10z",
    "replay-next": "M6 4v12l8-6z",
    "replay-last": "M12.5 4H15v12h-2.5zM4 4v12l8-6z",
  };
  const PLAY_ICON = "M5 3.5v13l11.5-6.5z";
  const PAUSE_ICON = "M5 4h3.5v12H5zM11.5 4H15v12h-3.5z";
  /** Milliseconds a move at speed x1; the speeds offered. */
  const STEP_MS = 800;
  const SPEEDS = [1, 2, 4, 16];
  const BUTTONS = [
    ["replay-first", "First position (Home)"],
    ["replay-prev", "Previous move (\u2190)"],
    ["replay-next", "Next move (\u2192)"],
    ["replay-last", "Last position (End)"],
  ];

  // --- the viewer ----------------------------------------------------------------------------------
  function Viewer(element, game) {
    this.root = element;
    this.game = game || {};
    this.board = this.game.board || {};
    this.view = this.board.view || { kind: "text", players: 0, sides: [] };
    this.moves = this.game.moves || [];
    this.info = this.game.info || [];
    this.players = this.game.players || [];
    this.plies = (this.board.patches || []).length;
    this.ply = 0;
    this.drawn = false;
    this.skeleton();
  }

  Viewer.prototype.skeleton = function () {
    const root = this.root;
    clear(root);
    root.classList.add("arena-replay");
    if (!root.hasAttribute("tabindex")) root.tabIndex = 0;
    root.setAttribute("data-ply", "0");
    const main = html("div", "replay-main");
    const style = this.view.kind === "grid" ? this.view.style : this.view.kind;
    this.boardEl = html("div", "arena-board arena-board-" + String(style).replace(/[^a-z0-9-]/gi, ""));
    this.status = html("div", "replay-status");
    const controls = html("div", "replay-controls");
    this.buttons = {};
    const self = this;
    BUTTONS.forEach(function (spec) {
      const button = html("button", "replay-button " + spec[0]);
      button.type = "button";
      button.title = spec[1];
      button.setAttribute("aria-label", spec[1]);
      const icon = svg("svg", { viewBox: "0 0 20 20", width: 18, height: 18, "aria-hidden": "true" }, button);
      svg("path", { d: ICONS[spec[0]] }, icon);
      controls.appendChild(button);
      self.buttons[spec[0]] = button;
    });
    this.counter = html("span", "replay-counter", "0 / " + this.plies);
    controls.appendChild(this.counter);
    // Play the game as an animation (Kaggle's episode viewer): a move every STEP_MS / speed.
    this.playButton = html("button", "replay-button replay-play");
    this.playButton.type = "button";
    this.playIcon = svg("svg", { viewBox: "0 0 20 20", width: 18, height: 18, "aria-hidden": "true" }, this.playButton);
    this.playPath = svg("path", { d: PLAY_ICON }, this.playIcon);
    controls.appendChild(this.playButton);
    this.speed = html("select", "replay-speed");
    this.speed.setAttribute("aria-label", "Playing speed");
    this.speed.title = "Playing speed";
    SPEEDS.forEach(function (factor) {
      const option = html("option", null, "\u00d7" + factor);
      option.value = String(factor);
      self.speed.appendChild(option);
    });
    controls.appendChild(this.speed);
    this.timer = null;
    this.updatePlay();
    main.append(this.boardEl, this.status, controls);
    const side = html("div", "replay-side");
    this.legend = html("ul", "replay-players");
    this.list = html("ol", "replay-moves");
    this.panel = html("div", "replay-info");
    side.append(this.legend, this.list, this.panel);
    root.append(main, side);

    const actions = {
      "replay-first": function () { self.show(0); },
      "replay-prev": function () { self.show(self.ply - 1); },
      "replay-next": function () { self.show(self.ply + 1); },
      "replay-last": function () { self.show(self.plies); },
    };
    controls.addEventListener("click", function (event) {
      const button = event.target.closest("button");
      if (!button) return;
      if (button === self.playButton) {
        self.toggle();
        return;
      }
      self.stop();
      for (const name in actions) if (button.classList.contains(name)) actions[name]();
    });
    this.speed.addEventListener("change", function () {
      if (self.timer !== null) {
        self.stop();
        self.play();
      }
    });
    this.list.addEventListener("click", function (event) {
      const item = event.target.closest("[data-ply]");
      if (item) {
        self.stop();
        self.show(Number(item.getAttribute("data-ply")));
      }
    });
    root.addEventListener("keydown", function (event) {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      const keys = { ArrowLeft: -1, ArrowRight: 1, Home: "first", End: "last", " ": "play" };
      const what = keys[event.key];
      if (what === undefined) return;
      if (what === "play" && event.target.closest && event.target.closest("button, select")) return;
      event.preventDefault();
      if (what === "play") {
        self.toggle();
        return;
      }
      self.stop();
      if (what === "first") self.show(0);
      else if (what === "last") self.show(self.plies);
      else self.show(self.ply + what);
    });
    // Somebody using the viewer before it came into sight gets it drawn at once.
    root.addEventListener("focusin", function () { self.ensure(); });
    root.addEventListener("pointerdown", function () { self.ensure(); });
    this.status.textContent = "";
    this.updateButtons();
  };

  /** Decode the frames and draw the board, the legend and the move list (once). */
  Viewer.prototype.ensure = function () {
    if (this.drawn) return;
    this.drawn = true;
    unwatch(this);
    try {
      this.frames = decodeFrames(this.board);
      this.marks = frameMarks(this.board);
      this.toMove = this.board.to_move || [];
      this.painter = painterFor(this.view, this.frames[0]);
    } catch (error) {
      this.frames = null;
      this.boardEl.appendChild(html("p", "replay-error", "This replay cannot be shown: " + error.message));
      return;
    }
    this.boardEl.appendChild(this.painter.node);
    this.fillLegend();
    this.fillMoves();
    this.show(this.ply);
  };

  Viewer.prototype.sideName = function (player) {
    const sides = this.view.sides || [];
    return sides[player] !== undefined ? sides[player] : "player " + player;
  };

  Viewer.prototype.seatName = function (seat) {
    return this.players[seat] !== undefined ? this.players[seat] : "seat " + seat;
  };

  Viewer.prototype.fillLegend = function () {
    const count = Math.max(this.players.length, this.view.players || 0);
    for (let seat = 0; seat < count; seat++) {
      const item = html("li", "replay-player");
      item.dataset.seat = String(seat);
      item.appendChild(swatch(this.view, seat));
      item.appendChild(html("span", "replay-player-name", this.seatName(seat)));
      item.appendChild(html("span", "replay-player-side", this.sideName(seat)));
      this.legend.appendChild(item);
    }
  };

  /** The moves by rounds (one move of every player: ``1. e2e4 e7e5``), a round never split
   * over two lines; each move is an item with its ply in data-ply. */
  Viewer.prototype.fillMoves = function () {
    const perRound = Math.max(1, this.view.players || 2);
    const fragment = document.createDocumentFragment();
    const startRound = html("li", "replay-round");
    const startItem = html("span", "replay-move replay-move-start", "start");
    startItem.dataset.ply = "0";
    startRound.appendChild(startItem);
    fragment.appendChild(startRound);
    this.items = [startItem];
    let round = null;
    for (let k = 0; k < this.plies; k++) {
      if (k % perRound === 0) {
        round = html("li", "replay-round");
        round.appendChild(html("span", "replay-move-number", k / perRound + 1 + "."));
        fragment.appendChild(round);
      }
      const item = html("span", "replay-move");
      item.dataset.ply = String(k + 1);
      const text = this.moves[k] !== undefined ? this.moves[k] : "?";
      item.textContent = text;
      const info = this.info[k];
      if (info && info.forced) item.classList.add("replay-forced");
      const seat = info && typeof info.seat === "number" ? info.seat : this.toMove[k];
      if (typeof seat === "number") item.style.setProperty("--rp-seat", PLAYER_COLOURS[seat % PLAYER_COLOURS.length]);
      item.title = this.seatName(seat) + ": " + text;
      round.appendChild(item);
      this.items.push(item);
    }
    this.list.appendChild(fragment);
  };

  /** Buttons with nowhere to go are marked aria-disabled, not disabled: a disabled button
   * drops the focus (and with it the arrow keys) the moment it is clicked to the end. */
  Viewer.prototype.updateButtons = function () {
    const atStart = String(this.ply <= 0);
    const atEnd = String(this.ply >= this.plies);
    this.buttons["replay-first"].setAttribute("aria-disabled", atStart);
    this.buttons["replay-prev"].setAttribute("aria-disabled", atStart);
    this.buttons["replay-next"].setAttribute("aria-disabled", atEnd);
    this.buttons["replay-last"].setAttribute("aria-disabled", atEnd);
  };

  Viewer.prototype.show = function (ply) {
    this.ensure();
    if (!this.frames) return;
    const target = Math.max(0, Math.min(this.plies, Number(ply) || 0));
    const old = this.items[this.ply];
    if (old) old.classList.remove("replay-current");
    this.ply = target;
    const cells = this.frames[target];
    const marks = this.marks[target];
    this.painter.draw(cells, marks[0], marks[1], target > 0 ? this.frames[target - 1] : null, this.frames[0]);
    this.boardEl.setAttribute("data-cells", JSON.stringify(cells));
    const focusX = this.painter.focusX ? this.painter.focusX(cells) : null;
    if (focusX !== null && this.boardEl.scrollWidth > this.boardEl.clientWidth) {
      this.boardEl.scrollLeft = focusX - this.boardEl.clientWidth / 2;
    }
    this.boardEl.setAttribute("aria-label", (this.view.game || "game") + " after ply " + target);
    this.root.setAttribute("data-ply", String(target));
    this.counter.textContent = target + " / " + this.plies;
    const item = this.items[target];
    if (item) {
      item.classList.add("replay-current");
      keepVisible(this.list, item);
    }
    this.updateStatus();
    this.updateInfo();
    this.updateButtons();
  };

  /** Start playing from here (from the start when at the end), a move a step. */
  Viewer.prototype.play = function () {
    this.ensure();
    if (!this.frames || this.timer !== null || this.plies === 0) return;
    if (this.ply >= this.plies) this.show(0);
    const self = this;
    const step = STEP_MS / (Number(this.speed.value) || 1);
    this.timer = setInterval(function () {
      self.show(self.ply + 1);
      if (self.ply >= self.plies) self.stop();
    }, step);
    this.updatePlay();
  };

  Viewer.prototype.stop = function () {
    if (this.timer === null) return;
    clearInterval(this.timer);
    this.timer = null;
    this.updatePlay();
  };

  Viewer.prototype.toggle = function () {
    if (this.timer === null) this.play();
    else this.stop();
  };

  Viewer.prototype.updatePlay = function () {
    const playing = this.timer !== null;
    const label = playing ? "Pause (space)" : "Play (space)";
    this.playButton.title = label;
    this.playButton.setAttribute("aria-label", label);
    this.playButton.setAttribute("aria-pressed", String(playing));
    this.playPath.setAttribute("d", playing ? PAUSE_ICON : PLAY_ICON);
    this.root.setAttribute("data-playing", String(playing));
  };

  Viewer.prototype.updateStatus = function () {
    clear(this.status);
    const toMove = this.toMove[this.ply];
    if (this.ply === this.plies && this.game.result) {
      this.status.appendChild(html("strong", "replay-result", this.game.result));
    } else if (typeof toMove === "number") {
      this.status.appendChild(swatch(this.view, toMove));
      this.status.appendChild(document.createTextNode(" " + this.sideName(toMove) + " to move"));
      if (this.players[toMove] !== undefined) {
        this.status.appendChild(html("span", "replay-status-seat", " (" + this.players[toMove] + ")"));
      }
    }
  };

  Viewer.prototype.updateInfo = function () {
    const panel = this.panel;
    clear(panel);
    if (this.ply === 0) {
      panel.appendChild(html("div", "replay-info-title", "Start position"));
      panel.appendChild(html("div", "replay-info-note", this.plies + (this.plies === 1 ? " ply" : " plies") + "; use \u2190 \u2192 or the buttons"));
      return;
    }
    const k = this.ply - 1;
    const info = this.info[k] || {};
    const seat = typeof info.seat === "number" ? info.seat : this.toMove[k];
    const title = html("div", "replay-info-title");
    if (typeof seat === "number") title.appendChild(swatch(this.view, seat));
    title.appendChild(document.createTextNode(" Ply " + this.ply + ": " + this.seatName(seat) + " played "));
    title.appendChild(html("strong", "replay-info-move", this.moves[k] !== undefined ? this.moves[k] : "?"));
    panel.appendChild(title);
    const rows = [];
    if (info.ms !== undefined) rows.push(["time", formatMs(info.ms)]);
    if (info.value !== undefined && info.value !== null) rows.push(["value", formatValue(info.value)]);
    if (info.depth !== undefined && info.depth !== null) rows.push(["depth", String(info.depth)]);
    if (info.nodes !== undefined && info.nodes !== null) rows.push(["nodes", formatCount(info.nodes)]);
    if (info.pv && info.pv.length) rows.push(["PV", info.pv.join(" ")]);
    if (info.forced) rows.push(["forced", "the only legal move"]);
    if (rows.length) {
      const table = html("dl", "replay-info-table");
      rows.forEach(function (row) {
        table.appendChild(html("dt", null, row[0]));
        table.appendChild(html("dd", row[0] === "PV" ? "replay-pv" : null, row[1]));
      });
      panel.appendChild(table);
    } else {
      panel.appendChild(html("div", "replay-info-note", "no search information"));
    }
  };

  /** Scroll the move list (never the page) so that ``item`` is in view. */
  function keepVisible(list, item) {
    const top = item.offsetTop - list.offsetTop;
    const bottom = top + item.offsetHeight;
    if (top < list.scrollTop) list.scrollTop = top - 4;
    else if (bottom > list.scrollTop + list.clientHeight) list.scrollTop = bottom - list.clientHeight + 4;
  }

  // --- lazy drawing: one observer for every viewer on the page ---------------------------------
  let observer = null;
  const waiting = new Map();

  function watch(viewer) {
    if (typeof IntersectionObserver !== "function") {
      viewer.ensure();
      return;
    }
    if (!observer) {
      observer = new IntersectionObserver(function (entries) {
        entries.forEach(function (entry) {
          if (entry.isIntersecting) {
            const found = waiting.get(entry.target);
            if (found) found.ensure();
          }
        });
      }, { rootMargin: "300px 0px" });
    }
    waiting.set(viewer.root, viewer);
    observer.observe(viewer.root);
  }

  function unwatch(viewer) {
    if (observer && waiting.has(viewer.root)) {
      observer.unobserve(viewer.root);
      waiting.delete(viewer.root);
    }
  }

  /** Make ``element`` a viewer of ``game``; it draws itself when it comes near the screen. */
  function mount(element, game) {
    const viewer = new Viewer(element, game);
    watch(viewer);
    return {
      show: function (ply) { viewer.show(ply); },
      draw: function () { viewer.ensure(); },
      get ply() { return viewer.ply; },
      get plies() { return viewer.plies; },
    };
  }

  global.ArenaReplay = { mount: mount, decodeFrames: decodeFrames, frameMarks: frameMarks, format: FORMAT };
})(typeof window !== "undefined" ? window : globalThis);
