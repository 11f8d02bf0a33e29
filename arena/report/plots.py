"""The report's plots as static SVG text, drawn by matplotlib.

Static SVG because the report must open anywhere with no network and no script library: the
text stays text (``svg.fonttype = none``, the page's own sans-serif font), so a plot costs a few
kilobytes, scales with the page and its labels can be searched and copied. Figures are made
with the object API (no pyplot: no global state, no GUI backend) and without dates or random
ids in the output, so the same data gives the same bytes.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, cast

from matplotlib import rc_context
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

#: The palette of lines and markers (colour-blind safe, Okabe and Ito), repeated past 8 bots.
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
)
STYLE = {
    "svg.fonttype": "none",
    "svg.hashsalt": "bot-arena",
    "font.family": "sans-serif",
    "font.size": 10,
    "text.parse_math": False,  # a bot named "a$b$" is a name, not a formula
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
}


def _styled() -> AbstractContextManager[Any]:
    """The report's rcParams for the figures made inside (matplotlib's stubs type the keys as
    a Literal of every rcParam name, which a dict of them is not inferred as)."""
    return rc_context(cast(Any, STYLE))


def _svg(fig: Figure) -> str:
    FigureCanvasSVG(fig)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    text = buf.getvalue()
    start = text.find("<svg")  # drop the XML prolog and doctype: the SVG goes inline
    return text[start:] if start >= 0 else text


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


#: Past this many bots the rating plot draws its points a colour at a time (small plots keep
#: their bytes: a call per bot, as before).
BATCHED = 40
#: Bots the rating plot names, with their numbers (the best of the leaderboard); past them the
#: others are grey points with their intervals, unnamed, in a band of ``REST_ROWS`` rows: a
#: plot of 1,000 named rows was 320 inches tall and its texts most of a big report's time.
NAMED = 100
REST_ROWS = 12


def rating_plot(rows: Sequence[dict[str, Any]], labels: Sequence[str]) -> str:
    """Each bot's rating with its 95% interval, best at the top (a pool per colour band); past
    ``NAMED`` bots the rest grey and unnamed below them."""
    with _styled():
        named = min(len(rows), NAMED)
        rest = len(rows) - named
        n = named + (REST_ROWS if rest else 0)
        fig = Figure(figsize=(7.5, 0.9 + 0.32 * max(n, 1)))
        ax = fig.add_subplot()
        ys = list(range(n - 1, n - 1 - named, -1))
        elos = [r["elo"] for r in rows]
        errs = [r["error"] if r.get("error") is not None else 0.0 for r in rows]
        if named > BATCHED:  # one call per colour: a call per bot is most of a big report's time
            pools: dict[str, list[int]] = {}
            for k, row in enumerate(rows[:named]):
                pools.setdefault(color(row.get("pool", 1) - 1), []).append(k)
            for c, ks in pools.items():
                ax.errorbar(
                    [elos[k] for k in ks],
                    [ys[k] for k in ks],
                    xerr=[[errs[k] for k in ks], [errs[k] for k in ks]],
                    fmt="o",
                    color=c,
                    ecolor=c,
                    capsize=3,
                    ms=5,
                )
        for y, elo, err, row in zip(ys, elos, errs, rows, strict=False):
            c = color(row.get("pool", 1) - 1)
            if named <= BATCHED:
                ax.errorbar(
                    [elo], [y], xerr=[[err], [err]], fmt="o", color=c, ecolor=c, capsize=3, ms=5
                )
            ax.annotate(
                f"{elo:.0f}" + (f" ± {err:.0f}" if err else ""),
                (elo + err, y),
                xytext=(6, 0),
                textcoords="offset points",
                va="center",
                fontsize=8,
                color="#444444",
            )
        if rest:
            _rest(ax, elos[named:], errs[named:], named, len(rows))
        ax.set_yticks(ys, list(labels[:named]))
        ax.set_ylim(-0.7, n - 0.3)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("Elo (95% interval)")
        lo = min((e - d for e, d in zip(elos, errs, strict=True)), default=0.0)
        hi = max((e + d for e, d in zip(elos, errs, strict=True)), default=0.0)
        pad = max(30.0, 0.12 * (hi - lo))
        ax.set_xlim(lo - pad, hi + 2.2 * pad)
        return _svg(fig)


def _rest(ax: Any, elos: list[float], errs: list[float], named: int, total: int) -> None:
    """The bots past the named ones: grey, in rank order down a band of ``REST_ROWS`` rows
    below them, their intervals one path and their points one path (a few SVG elements
    whatever their number), and one line saying who they are."""
    step = (REST_ROWS - 2) / max(len(elos) - 1, 1)  # the band's first row holds the line
    ys = [REST_ROWS - 2 - i * step for i in range(len(elos))]
    bars_x: list[float] = []
    bars_y: list[float] = []
    for elo, err, y in zip(elos, errs, ys, strict=True):
        bars_x += [elo - err, elo + err, math.nan]
        bars_y += [y, y, math.nan]
    ax.plot(bars_x, bars_y, lw=0.6, color=GREY, zorder=1)
    ax.plot(elos, ys, ls="none", marker="o", ms=2.5, color="#999999", zorder=2)
    ax.text(
        0.99,
        REST_ROWS - 1,
        f"ranks {named + 1}-{total}: grey, unnamed (the table names every bot)",
        transform=ax.get_yaxis_transform(),
        ha="right",
        va="center",
        fontsize=8,
        color="#444444",
    )


#: Bots the rating-over-time plot colours and names in its legend (the best of ``order``); the
#: others are thin grey lines behind them: 200 lines in 8 recycled colours name nobody.
COLOURED = len(PALETTE)
GREY = "#c8c8c8"


def history_plot(history: Sequence[dict[str, Any]], order: Sequence[str]) -> str:
    """Each bot's rating refitted as the games came in: one line per bot, in ``order``; past
    ``COLOURED`` bots, the first ones coloured and in the legend, the rest grey (all of them
    one SVG path: at 1,000 bots a path each was most of the plot's time and bytes)."""
    with _styled():
        fig = Figure(figsize=(7.5, 3.8))
        ax = fig.add_subplot()

        def points(bot: str) -> tuple[list[Any], list[Any]]:
            xs = [h["games"] for h in history if bot in h["elo"]]
            return xs, [h["elo"][bot] for h in history if bot in h["elo"]]

        grey_x: list[Any] = []  # the grey lines as one path (a gap between two bots)
        grey_y: list[Any] = []
        for bot in order[COLOURED:]:
            xs, ys = points(bot)
            grey_x += [*xs, math.nan]
            grey_y += [*ys, math.nan]
        if grey_x:  # drawn first: behind the coloured ones
            ax.plot(grey_x, grey_y, lw=0.7, color=GREY, zorder=1)
        for i, bot in enumerate(order[:COLOURED]):
            xs, ys = points(bot)
            if xs:
                ax.plot(xs, ys, marker="o", ms=3, lw=1.6, color=color(i), label=bot)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # no "2.5 games"
        ax.set_xlabel("games rated")
        ax.set_ylabel("Elo")
        if order:
            ax.legend(
                loc="upper left",
                bbox_to_anchor=(1.01, 1.0),
                frameon=False,
                fontsize=8,
                title=f"top {COLOURED} of {len(order)}" if len(order) > COLOURED else None,
            )
        return _svg(fig)
