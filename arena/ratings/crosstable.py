"""Score of every bot against every other: points and games per ordered pair.

In an N-player match each pair of seats counts as one mini-game (1 for the better rank, 1/2
each when tied), the same pairwise scores that ``games.base.scores_from_ranks`` averages.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tabulate import tabulate

from bot_arena.arena.match.text import csv_text, shown, shown_all
from bot_arena.arena.ratings.outcomes import GameResult, pair_points
from bot_arena.arena.ratings.render import fit_table, shorten, widest, wrap


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
    cells: list[list[str]] = []
    for a in table.bots:
        row: list[str] = []
        pts = 0.0
        n = 0
        for b in table.bots:
            if a == b:
                row.append("-")
            elif (a, b) in table.games:
                row.append(f"{_fmt_points(table.points[(a, b)])}/{table.games[(a, b)]}")
                pts += table.points[(a, b)]
                n += table.games[(a, b)]
            else:
                row.append("")
        row.append(f"{_fmt_points(pts)}/{n}")
        cells.append(row)
    columns = [*(str(i + 1) for i in range(len(table.bots))), "total"]
    if fmt == "markdown":
        body = [[str(i + 1), shown(show[i]), *row] for i, row in enumerate(cells)]
        text = tabulate(
            body, headers=["#", "bot", *columns], tablefmt="github", disable_numparse=True
        )
    else:
        text = grid_text("bot", show, columns, cells, width)
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


def grid_text(
    label: str,
    names: Sequence[str],
    columns: Sequence[str],
    cells: Sequence[Sequence[str]],
    width: int | None,
) -> str:
    """A square table: row i numbered i+1 and named ``names[i]`` (under the header ``label``),
    then its ``cells`` under ``columns``. Whole when ``width`` is None; else fitted to
    ``width``: the names cut in the middle, and the columns that still do not fit in further
    blocks below, each with the row numbers and names again (cutechess-style wide crosstables
    read on a narrow terminal)."""
    names = shown_all(names)  # a bot's name is its own: shown as text
    numbers = [str(i + 1) for i in range(len(names))]
    if width is None:
        return _grid_block(label, numbers, names, columns, cells, range(len(columns)), None)
    whole = _grid_block(label, numbers, names, columns, cells, range(len(columns)), width)
    if widest(whole) <= width:
        return whole
    cut = [shorten(a, len(label)) for a in names]  # cutting below the header narrows nothing
    blocks: list[str] = []
    start = 0
    while start < len(columns) or not blocks:
        end = len(columns)
        text = _grid_block(label, numbers, cut, columns, cells, range(start, end), width)
        while end - start > 1 and widest(text) > width:
            end -= 1
            text = _grid_block(label, numbers, cut, columns, cells, range(start, end), width)
        blocks.append(text)
        start = end
    return "\n\n".join(blocks)


def _grid_block(
    label: str,
    numbers: Sequence[str],
    names: Sequence[str],
    columns: Sequence[str],
    cells: Sequence[Sequence[str]],
    shown: range,
    width: int | None,
) -> str:
    def body(room: int | None) -> list[list[str]]:
        return [
            [numbers[i], a if room is None else shorten(a, room), *(cells[i][j] for j in shown)]
            for i, a in enumerate(names)
        ]

    headers = ["#", label, *(columns[j] for j in shown)]
    align = ["right", *(["left"] * (len(shown) + 1))]
    whole = sys.maxsize  # no width: nothing is cut
    return fit_table(headers, body, whole if width is None else width, column=1, colalign=align)
