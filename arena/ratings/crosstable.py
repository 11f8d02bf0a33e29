"""Score of every bot against every other: points and games per ordered pair.

In an N-player match each pair of seats counts as one mini-game (1 for the better rank, 1/2
each when tied), the same pairwise scores that ``games.base.scores_from_ranks`` averages.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tabulate import tabulate

from bot_arena.arena.ratings.results import GameResult, pair_points


@dataclass(frozen=True, slots=True)
class Crosstable:
    bots: tuple[str, ...]  # by total score, best first
    points: dict[tuple[str, str], float]  # (row bot, column bot) -> row bot's points
    games: dict[tuple[str, str], int]

    def score(self, a: str, b: str) -> float | None:
        n = self.games.get((a, b), 0)
        return self.points[(a, b)] / n if n else None


def crosstable(results: Iterable[GameResult]) -> Crosstable:
    points: dict[tuple[str, str], float] = {}
    games: dict[tuple[str, str], int] = {}
    total: dict[str, float] = {}
    count: dict[str, int] = {}
    for res in results:
        seats = range(len(res.players))
        for a in seats:
            for b in seats:
                pa, pb = res.players[a], res.players[b]
                if a == b or pa == pb:
                    continue
                key = (pa, pb)
                got = pair_points(res.ranks, a, b)
                points[key] = points.get(key, 0.0) + got
                games[key] = games.get(key, 0) + 1
                total[pa] = total.get(pa, 0.0) + got
                count[pa] = count.get(pa, 0) + 1
    order = sorted(total, key=lambda n: (-total[n] / count[n], n))
    return Crosstable(tuple(order), points, games)


def _fmt_points(x: float) -> str:
    return f"{x:g}"


def render_crosstable(
    table: Crosstable,
    fmt: str = "table",
    *,
    title: str | None = None,
    labels: Mapping[str, str] | None = None,
) -> str:
    """``table``/``markdown``: one row per bot, "points/games" in each cell; ``json``: objects
    ``{"bot", "opponent", "points", "games", "score"}``; ``csv``: the same as rows."""
    show = [labels.get(b, b) if labels else b for b in table.bots]
    if fmt in ("json", "csv"):
        rows = [
            {
                "bot": show[i],
                "opponent": show[j],
                "points": table.points[(a, b)],
                "games": table.games[(a, b)],
                "score": table.score(a, b),
            }
            for i, a in enumerate(table.bots)
            for j, b in enumerate(table.bots)
            if (a, b) in table.games
        ]
        if fmt == "json":
            return json.dumps(rows, indent=2)
        buf = io.StringIO()
        writer = csv.DictWriter(
            buf, fieldnames=["bot", "opponent", "points", "games", "score"], lineterminator="\n"
        )
        writer.writeheader()
        writer.writerows(rows)
        return buf.getvalue().rstrip("\n")
    if fmt not in ("table", "markdown"):
        raise ValueError(f"unknown format {fmt!r}")
    body2: list[list[str]] = []
    for i, a in enumerate(table.bots):
        cells = [str(i + 1), show[i]]
        pts = 0.0
        n = 0
        for b in table.bots:
            if a == b:
                cells.append("-")
            elif (a, b) in table.games:
                cells.append(f"{_fmt_points(table.points[(a, b)])}/{table.games[(a, b)]}")
                pts += table.points[(a, b)]
                n += table.games[(a, b)]
            else:
                cells.append("")
        cells.append(f"{_fmt_points(pts)}/{n}")
        body2.append(cells)
    headers = ["#", "bot", *[str(i + 1) for i in range(len(table.bots))], "total"]
    text = tabulate(
        body2,
        headers=headers,
        tablefmt="github" if fmt == "markdown" else "simple",
        disable_numparse=True,
    )
    lines: list[str] = []
    if title:
        lines += [f"## {title}", ""] if fmt == "markdown" else [title]
    lines.append("Row bot's points / games against each column bot (columns numbered as rows).")
    lines.append("")
    lines.append(text if table.bots else "no games.")
    return "\n".join(lines)
