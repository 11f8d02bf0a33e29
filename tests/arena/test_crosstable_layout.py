"""The crosstable fitted to a terminal, for any field (issue 29): whole when it fits, in at most
two blocks of columns, beyond that the top of the field with a note naming what is left out;
each layout's cells are those of the whole table (``--wide``), and it is computed once: a
thousand bots ask for a few hundred cells, not a million."""

from __future__ import annotations

import re

from bot_arena.arena.cli.tournament_cmd import _crosstable_text
from bot_arena.arena.ratings.crosstable import Crosstable, render_crosstable
from bot_arena.arena.ratings.grid import MAX_BLOCKS, grid_text


def field(n: int) -> dict[str, object]:
    """A ``tournament show`` summary of ``n`` bots with long names, every pair played twice."""
    names = [f"a_bot_with_quite_a_long_name_{i:03d}" for i in range(n)]
    cross = {
        a: {b: {"points": (i * 7 + j) % 5 / 2, "games": 2} for j, b in enumerate(names) if b != a}
        for i, a in enumerate(names)
    }
    return {"standings": [{"bot": b} for b in names], "crosstable": cross}


def rows(text: str) -> dict[str, list[str]]:
    """Each table row of ``text`` by its number: its cells after the name, cut where the line
    of dashes under the header has them (every table of ``text``, blocks included)."""
    out: dict[str, list[str]] = {}
    lines = text.splitlines()
    for k, line in enumerate(lines):
        if not re.fullmatch(r"-+( +-+)+", line):
            continue
        spans = [m.span() for m in re.finditer("-+", line)]
        for row in lines[k + 1 :]:
            if not row.strip():
                break
            cells = [row[a:b].strip() for a, b in spans]
            out.setdefault(cells[0], []).extend(cells[2:])
    return out


def test_thirty_bots_at_80_columns_show_the_top_of_the_field() -> None:
    summary = field(30)
    text = _crosstable_text(summary, 80)
    wide = rows(_crosstable_text(summary, None))
    assert max(map(len, text.splitlines())) <= 80
    kept = rows(text)
    n = len(kept)
    assert 1 < n < 30 and list(kept) == [str(i + 1) for i in range(n)]
    header = next(line for line in text.splitlines() if line.lstrip().startswith("#"))
    assert header.split()[2:] == [str(i + 1) for i in range(n)]  # the same bots as the rows
    for number, cells in kept.items():
        assert cells == wide[number][:n]  # the cells --wide shows, for the rows kept
    note = " ".join(text.split("\n\n")[-1].split())
    assert note == (
        f"The top {n} of 30 by score; {30 - n} left out (rows and columns {n + 1}-30): "
        "--wide shows every bot."
    )


def test_a_crosstable_keeps_each_rows_total_beside_the_top_of_the_field() -> None:
    bots = tuple(f"bot{i}" for i in range(40))
    points = {(a, b): 1.0 for a in bots for b in bots if a != b}
    games = dict.fromkeys(points, 2)
    text = render_crosstable(Crosstable(bots, points, games), width=80)
    kept = rows(text)
    assert all(cells[-1] == "39/78" for cells in kept.values()) and len(kept) < 40
    assert max(map(len, text.splitlines())) <= 80 and "left out" in text


def test_fields_that_fit_print_whole_and_blocks_stay_few() -> None:
    for n, blocks in ((6, 1), (15, 2)):
        summary = field(n)
        text = _crosstable_text(summary, 80)
        assert "left out" not in text and text.count("\n\n") == blocks - 1
        assert rows(text) == rows(_crosstable_text(summary, None))  # every cell, once
    assert MAX_BLOCKS == 2


def test_a_thousand_bots_are_laid_out_from_a_few_cells() -> None:
    asked: set[tuple[int, int]] = set()

    def cell(i: int, j: int) -> str:
        asked.add((i, j))
        return "-" if i == j else "1.5/2"

    names = [f"bot_{i:04d}" for i in range(1000)]
    text = grid_text("crosstable", names, [str(i + 1) for i in range(1000)], cell, 80)
    assert max(map(len, text.splitlines())) <= 80 and "of 1000 by score" in text
    assert len(asked) < 500
