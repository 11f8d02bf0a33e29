"""The progress display of a running tournament (stderr).

On a terminal one status line is redrawn in place: games done / total, rate, ETA and the top of
the table by score, cut to the terminal's width (a line that reaches the last column wraps, and
every redraw would leave a line behind). Elsewhere (a log file, a pipe, a test) it prints plain
lines, at most one per ``interval`` seconds plus the last one. Faults always get a line of their
own.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from bot_arena.arena.match.text import shown

BAR = 20  # characters of the progress bar on a terminal
#: The rate and the ETA are shown once this many seconds or games of the run have passed:
#: the first game's rate (one game in a few milliseconds) promises an ETA of nothing.
RATE_AFTER_SECONDS = 2.0
RATE_AFTER_GAMES = 20
#: Between the fields of a status line (``sprt``'s): a terminal's line drops fields from the
#: end, never cuts one (the last, the games played, stays).
FIELDS = " | "


def terminal_width(stream: TextIO) -> int:
    """The columns of the terminal ``stream`` writes to: $COLUMNS when set, else the stream's
    own terminal (stdout may be a pipe while stderr is the terminal), else shutil's answer."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        width = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):  # no descriptor, or not a terminal
        width = 0
    return width or shutil.get_terminal_size().columns


def format_duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Standings:
    """Points and games per bot (by field index): the live table."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.points = [0.0] * len(names)
        self.games = [0] * len(names)

    def add(self, bot: int, score: float) -> None:
        self.points[bot] += score
        self.games[bot] += 1

    def percent(self, bot: int) -> float:
        return 100.0 * self.points[bot] / self.games[bot] if self.games[bot] else 0.0

    def top(self, n: int = 3) -> list[tuple[str, float]]:
        order = sorted(
            (i for i in range(len(self.names)) if self.games[i]),
            key=lambda i: (-self.percent(i), self.names[i]),
        )
        return [(self.names[i], self.percent(i)) for i in order[:n]]


class Progress:
    def __init__(
        self,
        total: int,
        done: int,
        standings: Standings,
        *,
        stream: TextIO | None = None,
        tty: bool | None = None,
        interval: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.done = done
        self.standings = standings
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.interval = interval
        self.clock = clock
        self.start = clock()
        self.played = 0  # games finished in this run (the rate counts only these)
        self._last_line = -1e18
        self._drawn = False

    def line(self, width: int | None = None) -> str:
        """The status line: the plain one, or (``width``) the terminal's in at most
        ``width - 1`` characters: the top of the table goes first (fewer bots, then none), then
        the bar, the rate and the ETA; what is still too long is cut."""
        elapsed = self.clock() - self.start
        rate = self.played / elapsed if elapsed > 0 else 0.0
        left = self.total - self.done
        eta = f"ETA {format_duration(left / rate) if rate > 0 else '?'}"
        digits = len(str(self.total))
        pct = 100.0 * self.done / self.total if self.total else 100.0
        counts = f"[{self.done:>{digits}}/{self.total}] {pct:5.1f}%"
        known = elapsed >= RATE_AFTER_SECONDS or self.played >= RATE_AFTER_GAMES
        core = f"{counts}  {rate:6.2f} games/s  {eta}" if known else counts
        top = [f"{shown(name)} {p:.1f}%" for name, p in self.standings.top()]
        if width is None:
            return f"{core}  top: {', '.join(top)}" if top else core
        filled = int(BAR * self.done / self.total) if self.total else BAR
        bar = f"{'#' * filled}{'.' * (BAR - filled)} {core}"
        tops = [f"{bar}  top: {', '.join(top[:n])}" for n in range(len(top), 0, -1)]
        for text in (*tops, bar, core, f"{counts}  {eta}" if known else counts, counts):
            if len(text) < width:
                return text
        return counts[: max(width - 1, 0)]

    def match_done(self, scores: Sequence[tuple[int, float]], faults: Sequence[str] = ()) -> None:
        """One match finished: (field index, score) per seat and a text per fault."""
        self.done += 1
        self.played += 1
        for bot, score in scores:
            self.standings.add(bot, score)
        for text in faults:
            self.message(f"fault: {text}")
        now = self.clock()
        if self.tty or now - self._last_line >= self.interval or self.done == self.total:
            self._show(now)

    def message(self, text: str) -> None:
        """A line of its own (a fault, a warning), without losing the status line. Such lines
        quote the bots (names, fault messages, incidents), so the text is shown as text: one
        line, its controls escaped (``text.shown``)."""
        if self.tty and self._drawn:
            self.stream.write("\r\x1b[K")
            self._drawn = False
        self.stream.write(shown(text) + "\n")
        self.stream.flush()

    def status(self, text: str) -> None:
        """A status line of fields (``a | b | c``, e.g. an SPRT's state): on a terminal, fitted
        to its width (the last fields but the final one dropped, a line that reaches the last
        column wraps), elsewhere whole, as ``message``."""
        if self.tty:
            text = fit_fields(text, terminal_width(self.stream))
        self.message(text)

    def _show(self, now: float) -> None:
        self._last_line = now
        if self.tty:
            self.stream.write("\r\x1b[K" + self.line(terminal_width(self.stream)))
            self._drawn = True
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False


def fit_fields(text: str, width: int) -> str:
    """``text``'s fields (split at ``FIELDS``) in fewer than ``width`` characters: whole when it
    fits, else the first ones and the last, as many as fit, else the first one cut."""
    if len(text) < width:
        return text
    fields = text.split(FIELDS)
    if len(fields) > 1:
        last = fields[-1]
        for n in range(len(fields) - 2, 0, -1):
            fitted = FIELDS.join([*fields[:n], last])
            if len(fitted) < width:
                return fitted
    return text[: max(width - 1, 0)]
