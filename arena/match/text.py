"""Text a bot controls, shown as text: on a terminal and in a CSV file.

A bot chooses its name (a file name, a command line), its exception messages, its stderr and
the info of its moves. Printed raw, an escape sequence in them would drive the reader's terminal
(clear the screen, set its title, rewrite earlier lines: OSC sequences even pass through a pipe
and a log file); a cell that starts with ``=`` would be a live formula in a spreadsheet. So:

- ``shown``: every control character (C0, DEL, C1), lone surrogate, Unicode format character
  (bidi overrides and isolates, zero-width ones) and line or paragraph separator is written as
  its Python escape (ESC as ``\\x1b``, BEL as ``\\x07``, a tab as ``\\t``, U+202E as
  ``\\u202e``). One-line fields (names, fault messages, move info, table cells) escape newlines
  too, so nothing can forge a line of the arena's; ``lines=True`` keeps ``\\n`` (and only it)
  for text that is a block of lines by design (an error message with the bot's traceback under
  it). A backslash is left alone: the escapes are for reading, not for decoding back.
- ``csv_cell``: OWASP's rule for CSV injection. A text cell that starts with ``=``, ``+``,
  ``-``, ``@``, a tab or a carriage return gets a ``'`` in front (a spreadsheet shows it as
  text), and ``csv_text`` quotes every text cell of the rows (``csv.QUOTE_NONNUMERIC``; the
  header, the arena's own words, stays plain). Numbers the arena writes (ints and floats: a
  rating of -35) stay bare numbers, and so does text that is only a decimal number (``-35``,
  ``0.5``): it cannot be a formula. A cell that already starts with quotes before such a
  character gets one more, so ``csv_value`` undoes exactly what was added: what the arena
  writes reads back the same (``arena rate`` on an export).

This module is the one place of these rules; it imports nothing of the arena, so every layer
that prints (match records up to the command line) can use it.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

#: Unicode categories written as escapes: controls, format characters (bidi overrides, marks,
#: isolates, zero-width spaces and joiners), lone surrogates, line and paragraph separators.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


@lru_cache(maxsize=4096)
def _hidden(ch: str) -> bool:
    return unicodedata.category(ch) in _HIDDEN_CATEGORIES


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch in _SHORT:
        return _SHORT[ch]
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def shown(text: object, *, lines: bool = False) -> str:
    """``text`` (made a str) with every character that could drive a terminal or reorder what
    it shows written as its escape; with ``lines``, newlines are kept (and only them)."""
    text = str(text)
    if text.isprintable():  # the usual case: nothing to replace
        return text
    return "".join(_escape(ch) if _hidden(ch) and not (lines and ch == "\n") else ch for ch in text)


def shown_all(items: Iterable[object]) -> list[str]:
    """``shown`` of every item (the cells of a table row)."""
    return [shown(item) for item in items]


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
# a cell csv_cell wrote: quotes, then what would have been a formula (after its own quotes)
_ESCAPED = re.compile(r"'+[=+\-@\t\r]")


def csv_cell(value: object) -> object:
    """A value for a CSV cell: numbers as they are, text that could start a formula with a
    ``'`` in front. Text that already starts with quotes before such a character gets one more,
    so ``csv_value`` can undo exactly what was added."""
    if not isinstance(value, str) or _NUMBER.fullmatch(value):
        return value
    if value.startswith(_FORMULA_START) or _ESCAPED.match(value):
        return "'" + value
    return value


def csv_row(values: Iterable[object]) -> list[object]:
    """``csv_cell`` of every value of a row."""
    return [csv_cell(v) for v in values]


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A CSV file's text (lines ended by ``\\n``): the header (the arena's own column names,
    written plain), then the rows, every cell through ``csv_cell`` and every text cell quoted
    (numbers are not). The one CSV writer of the arena."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(csv_row(header))
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
    for row in rows:
        writer.writerow(csv_row(row))
    return buffer.getvalue()


def csv_value(cell: str) -> str:
    """A cell read back: the ``'`` that ``csv_cell`` put in front of a would-be formula taken
    off (a cell that merely starts with a quote is left alone)."""
    return cell[1:] if _ESCAPED.match(cell) else cell
