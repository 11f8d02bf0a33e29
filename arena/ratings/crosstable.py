"""Score of every bot against every other: points and games per ordered pair.

In an N-player match each pair of seats counts as one mini-game (1 for the better rank, 1/2
each when tied), the same pairwise scores that ``games.base.scores_from_ranks`` averages.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot_arena.arena.match.text import csv_text, shown
from bot_arena.arena.ratings.grid import Cell, grid_text
from bot_arena.arena.ratings.outcomes import GameResult, pair_points
from bot_arena.arena.ratings.render import wrap


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


def pair_cell(points: float, games: int) -> str:
    """A played pair's cell: "points/games" ("-" marks a bot against itself, blank a pair that
    never played)."""
    return f"{points:g}/{games}"


def _cell_text(table: Crosstable) -> Cell:
    """Cell (row i, column j) as the table shows it: "points/games", "-" for a bot against
    itself, blank for a pair that never played; column N (after the bots) is the row's total.
    Asked for lazily: a table fitted to a terminal may show a few of a big field's cells."""
    bots = table.bots

    totals: dict[int, str] = {}

    def total(i: int) -> str:
        if i not in totals:
            pts = 0.0  # added in column order, one by one (sum() would round differently)
            n = 0
            for b in bots:
                if (bots[i], b) in table.games:
                    pts += table.points[(bots[i], b)]
                    n += table.games[(bots[i], b)]
            totals[i] = pair_cell(pts, n)
        return totals[i]

    def cell(i: int, j: int) -> str:
        if j == len(bots):
            return total(i)
        a, b = bots[i], bots[j]
        if a == b:
            return "-"
        if (a, b) not in table.games:
            return ""
        return pair_cell(table.points[(a, b)], table.games[(a, b)])

    return cell


def render_crosstable(
    table: Crosstable,
    fmt: str = "table",
    *,
    title: str | None = None,
    labels: Mapping[str, str] | None = None,
    width: int | None = None,
) -> str:
    """``table``/``markdown``: one row per bot, "points/games" in each cell; ``json``: objects
    ``{"bot", "opponent", "points", "games", "score"}``; ``csv``: the same as rows. ``width``
    fits the table to a terminal (see :func:`grid_text`); None keeps it whole."""
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
        header = ["bot", "opponent", "points", "games", "score"]
        return csv_text(header, ([r[k] for k in header] for r in rows)).rstrip("\n")
    if fmt not in ("table", "markdown"):
        raise ValueError(f"unknown format {fmt!r}")
    cell = _cell_text(table)
    columns = [*(str(i + 1) for i in range(len(table.bots))), "total"]
    if fmt == "markdown":
        from tabulate import tabulate  # a table drawn: not loaded for JSON (issue 32's start-up)

        body = [
            [str(i + 1), shown(show[i]), *(cell(i, j) for j in range(len(columns)))]
            for i in range(len(table.bots))
        ]
        text = tabulate(
            body, headers=["#", "bot", *columns], tablefmt="github", disable_numparse=True
        )
    else:
        text = grid_text("bot", show, columns, cell, width)
    prose = "Row bot's points / games against each column bot (columns numbered as rows)."
    lines: list[str] = []
    if fmt == "markdown":
        lines += [f"## {title}", "", prose] if title else [prose]
    else:
        for line in ([title] if title else []) + [prose]:
            lines += [line] if width is None else wrap(line, width)
    lines.append("")
    lines.append(text if table.bots else "no games.")
    return "\n".join(lines)
