"""A square table (a crosstable) laid out for a terminal of any width, whatever the field.

Rows are numbered 1..N and named; the first N columns are the same bots, numbered as the rows,
and any further columns (``total``) are the row's own. Every width is computed once from the
cells' lengths (the plain table's rule: a column is as wide as its longest cell, at least its
header and two spaces; columns are two spaces apart), so the layout is chosen before a single
table is drawn, and each table drawn is drawn once.

The layouts, by what the terminal holds:

- the whole table, when it fits once names are cut (exactly as before);
- up to ``MAX_BLOCKS`` blocks of columns, one under the other, each with the rows' numbers and
  names again (cutechess-style; a crosstable of a dozen or twenty bots still reads as one);
- beyond that, the **top of the field**: the square of the best ``n`` bots (rows 1..n against
  columns 1..n, and the row's own columns), ``n`` as many as fit, with a note saying how many
  are left out and that ``--wide`` shows them all. Blocks grow as N² / width (1,346 lines in
  12 blocks at 100 bots, where a reader must match rows across pages); the standings above the
  crosstable already list every bot, and what a crosstable adds there is who beat whom among
  the leaders, which the top square shows in one screen, its cells exactly those of ``--wide``.
  A neighbourhood layout (each bot against the bots ranked beside it) was the alternative: it
  shows everyone, but its columns mean a different opponent on each row, which reads worse
  than a true, smaller crosstable.

Cells are asked for lazily (``cell(row, column)``): at a thousand bots the top square asks for
a few hundred of the million cells.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from bot_arena.arena.match.text import shown_all
from bot_arena.arena.ratings.render import MIN_NAME, fit_table, shorten, wrap

#: beyond this many blocks of columns, the top of the field is shown instead
MAX_BLOCKS = 2
_PAD = 2  # a column is at least its header and two spaces wide
_GAP = 2  # columns are two spaces apart

Cell = Callable[[int, int], str]


def grid_text(
    label: str,
    names: Sequence[str],
    columns: Sequence[str],
    cell: Cell,
    width: int | None,
) -> str:
    """Row i numbered i+1 and named ``names[i]`` (under the header ``label``), then
    ``cell(i, j)`` under each of ``columns``. Whole when ``width`` is None; else fitted to
    ``width`` as the module docstring says."""
    names = shown_all(names)  # a bot's name is its own: shown as text
    numbers = [str(i + 1) for i in range(len(names))]
    rows = range(len(names))
    every = range(len(columns))
    if width is None:
        return _block(label, numbers, names, columns, cell, rows, every, None)
    heads = [len(c) + _PAD for c in columns]
    number_width = max([len("#") + _PAD, *map(len, numbers)])
    cut_width = len(label) + _PAD  # a name cut to the header's length narrows nothing more
    if len(_pack(heads, number_width + _GAP + cut_width, width)) <= MAX_BLOCKS:
        widths = [max([heads[j], *(len(cell(i, j)) for i in rows)]) for j in every]
        if _fits_whole(widths, number_width, label, names, width):
            return _block(label, numbers, names, columns, cell, rows, every, width)
        blocks = _pack(widths, number_width + _GAP + cut_width, width)
        if len(blocks) <= MAX_BLOCKS:
            cut = [shorten(a, len(label)) for a in names]
            return "\n\n".join(
                _block(label, numbers, cut, columns, cell, rows, shown, width) for shown in blocks
            )
    return _top(label, numbers, names, columns, cell, width)


def cells_asked(field: int, width: int | None) -> int:
    """How many bots, from the top, ``grid_text`` may ask cells of at ``width`` (a caller
    need compute no others): the whole field when it may be drawn whole or in blocks (its
    columns, at least ``_PAD`` + 1 + ``_GAP`` characters each, fit in ``MAX_BLOCKS`` widths),
    else the top square's, at most ``width`` + 1 bots (``_top`` stops at ``width``)."""
    if width is None or field <= (MAX_BLOCKS + 1) * width + 1:
        return field
    return width + 1


def _pack(widths: Sequence[int], left: int, width: int) -> list[range]:
    """The columns in blocks, each as many as fit beside ``left`` characters (at least one)."""
    blocks: list[range] = []
    start = 0
    while start < len(widths) or not blocks:
        end = start
        used = left
        while end < len(widths) and (end == start or used + _GAP + widths[end] <= width):
            used += _GAP + widths[end]
            end += 1
        blocks.append(range(start, end))
        start = end
    return blocks


def _fits_whole(
    widths: Sequence[int], number_width: int, label: str, names: Sequence[str], width: int
) -> bool:
    """Whether the whole table fits once its names are cut as far as they may be (``MIN_NAME``,
    never below the header)."""
    longest = max(map(len, names), default=0)
    name_width = max(len(label) + _PAD, min(longest, MIN_NAME))
    return number_width + _GAP + name_width + sum(_GAP + w for w in widths) <= width


def _top(
    label: str,
    numbers: Sequence[str],
    names: Sequence[str],
    columns: Sequence[str],
    cell: Cell,
    width: int,
) -> str:
    """The square of the best bots that fits (at least one), its own columns kept, and the note
    on what it leaves out."""
    field = len(names)
    own = range(field, len(columns))  # the row's own columns (``total``)
    name_width = max(len(label) + _PAD, min(max(map(len, names), default=0), MIN_NAME))
    n = 1
    while n < field:
        shown = [*range(n + 1), *own]
        number_width = max(len("#") + _PAD, len(numbers[n]))
        used = number_width + _GAP + name_width
        for j in shown:
            used += _GAP + max([len(columns[j]) + _PAD, *(len(cell(i, j)) for i in range(n + 1))])
        if used > width:
            break
        n += 1
    text = _block(label, numbers, names, columns, cell, range(n), [*range(n), *own], width)
    left = field - n
    note = (
        f"The top {n} of {field} by score; {left} left out (rows and columns "
        f"{n + 1}-{field}): --wide shows every bot."
    )
    return "\n".join([text, "", *wrap(note, width)])


def _block(
    label: str,
    numbers: Sequence[str],
    names: Sequence[str],
    columns: Sequence[str],
    cell: Cell,
    rows: range,
    shown: Sequence[int],
    width: int | None,
) -> str:
    """One table: ``rows`` with their numbers and names, and the columns ``shown``, names cut
    to fit ``width`` (None: whole)."""
    grid = [[cell(i, j) for j in shown] for i in rows]

    def body(room: int | None) -> list[list[str]]:
        return [
            [numbers[i], names[i] if room is None else shorten(names[i], room), *grid[k]]
            for k, i in enumerate(rows)
        ]

    headers = ["#", label, *(columns[j] for j in shown)]
    align = ["right", *(["left"] * (len(shown) + 1))]
    whole = sys.maxsize  # no width: nothing is cut
    return fit_table(headers, body, whole if width is None else width, column=1, colalign=align)
