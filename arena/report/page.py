"""The report as one HTML file: the template filled with the data, styles and scripts inline.

Jinja2 escapes every text that reaches the page (bot names, a crashed bot's stderr and moves are
a stranger's words) and its ``tojson`` filter makes the embedded data safe inside ``<script>``
(``<``, ``>``, ``&`` and ``'`` as unicode escapes); its JSON is strict (no NaN or infinity, which
``JSON.parse`` refuses), so the data's script runs whatever the database holds.
Nothing is loaded from elsewhere when the page opens: no script, font, style or image outside
the file (figures the user adds are embedded as data URIs).
"""

from __future__ import annotations

import base64
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from bot_arena.arena.report.data import ReportData, label_of
from bot_arena.arena.report.plots import history_plot, rating_plot
from bot_arena.arena.transport.strict_json import dumps, finite

#: The static files inlined into every page, in order.
STYLES = ("report.css", "replay.css")
SCRIPTS = ("replay.js", "report.js")


def _static(name: str) -> str:
    return (resources.files("bot_arena.arena.report") / "static" / name).read_text("utf-8")


def heat(score: float | None) -> str:
    """The crosstable cell's colour for a score: red (0) through near-white (1/2) to blue (1)."""
    if score is None:
        return "#f4f4f4"
    lo, mid, hi = (202, 0, 32), (247, 247, 247), (5, 113, 176)
    a, b, t = (lo, mid, score * 2) if score < 0.5 else (mid, hi, score * 2 - 1)
    r, g, bl = (round(x + (y - x) * t) for x, y in zip(a, b, strict=True))
    return f"#{r:02x}{g:02x}{bl:02x}"


def _columnar(info: list[dict[str, Any]]) -> dict[str, Any]:
    """A game's per-move info as columns (the keys once, not once a move): about half the size
    of a list of objects for a report of a thousand games."""
    out: dict[str, Any] = {"seat": [i["seat"] for i in info], "ms": [i["ms"] for i in info]}
    for key in ("value", "depth", "nodes"):
        if any(key in i for i in info):
            out[key] = [i.get(key) for i in info]
    if any("pv" in i for i in info):
        out["pv"] = [" ".join(i.get("pv", [])) for i in info]
    forced = [n for n, i in enumerate(info) if i.get("forced")]
    if forced:
        out["forced"] = forced
    return out


def page_data(report: ReportData) -> dict[str, Any]:
    """What the page's script reads: the leaderboard rows and every game. A NaN or an infinity
    stored by an older Bot Arena in a move's info is null here: ``JSON.parse`` refuses the
    bare tokens, and one of them would stop the whole page's script."""
    games = []
    for g in report.games:
        compact = {k: v for k, v in g.items() if k != "info"}
        compact["info"] = _columnar(g["info"])
        games.append(compact)
    data: dict[str, Any] = finite(
        {"game": report.game, "leaderboard": report.leaderboard, "games": games}
    )
    return data


def render_page(report: ReportData) -> str:
    """The whole HTML document of ``report``."""
    env = Environment(
        loader=PackageLoader("bot_arena.arena.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.policies["json.dumps_function"] = dumps  # tojson: a NaN left is an error, not a token
    env.filters["heat"] = heat
    env.filters["svg_uri"] = lambda text: (
        "data:image/svg+xml;base64," + base64.b64encode(text.encode("utf-8")).decode("ascii")
    )
    labels = [label_of(r) for r in report.leaderboard]
    cross = report.crosstable
    template = env.get_template("report.html.j2")
    return template.render(
        r=report,
        labels=labels,
        rating_svg=rating_plot(report.leaderboard, labels) if report.leaderboard else "",
        history_svg=history_plot(report.history, labels) if len(report.history) > 1 else "",
        cross=cross,
        styles="\n".join(_static(n) for n in STYLES),
        scripts=[_static(n) for n in SCRIPTS],
        data=page_data(report),
    )
