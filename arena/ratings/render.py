"""Rating tables as text: a terminal table, Markdown, CSV or JSON (one object per bot).

The terminal table comes in two widths: every column (the CLI's ``--wide``; Markdown has them
all too), or compact for a terminal of a given width (the CLI's default): rank, bot, Elo, ±95%,
games, score and, when some bot has any, its number of faults; long names cut in the middle
with an ellipsis, the rows' notes said under each pool's table and the prose wrapped.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot_arena.arena.match.text import csv_text, shown
from bot_arena.arena.ratings.table import RatingTable

FORMATS = ("table", "json", "csv", "markdown")


@dataclass(frozen=True, slots=True)
class Faults:
    """A bot's faults over the rated matches (from the seats' fault records)."""

    timeouts: int = 0
    crashes: int = 0  # crashes and failures to start (stall)
    illegal: int = 0  # illegal moves and unparseable answers

    def add(self, termination: str) -> Faults:
        if termination == "timeout":
            return Faults(self.timeouts + 1, self.crashes, self.illegal)
        if termination in ("crash", "stall"):
            return Faults(self.timeouts, self.crashes + 1, self.illegal)
        if termination in ("illegal_move", "bad_output"):
            return Faults(self.timeouts, self.crashes, self.illegal + 1)
        return self


Labels = Mapping[str, tuple[str, str | None]]  # rating key -> (bot name, short version)


def leaderboard_rows(
    table: RatingTable, *, labels: Labels | None = None, faults: Mapping[str, Faults] | None = None
) -> list[dict[str, Any]]:
    """One JSON-ready object per bot, in table order (rank restarts in every pool)."""
    multi = any(r.stats.multi_games for r in table.rows)
    two = any(r.stats.games > r.stats.multi_games for r in table.rows)
    out: list[dict[str, Any]] = []
    rank = 0
    pool = 0
    for r in table.rows:
        rank = rank + 1 if r.pool == pool else 1
        pool = r.pool
        name, version = labels.get(r.bot, (r.bot, None)) if labels else (r.bot, None)
        row: dict[str, Any] = {"pool": r.pool, "rank": rank, "bot": name}
        if labels is not None:
            row["version"] = version
        st = r.stats
        row |= {
            "elo": r.elo,
            "error": r.error,
            "games": st.games,
            "points": st.points,
            "score": st.score,
        }
        if two:
            row |= {"wins": st.wins, "draws": st.draws, "losses": st.losses}
        if multi:
            row |= {"avg_rank": st.avg_rank, "firsts": st.firsts}
        row |= {"draw_rate": st.draw_rate, "los": r.los_next}
        if faults is not None:
            f = faults.get(r.bot, Faults())
            row |= {"timeouts": f.timeouts, "crashes": f.crashes, "illegal": f.illegal}
        row["note"] = r.note
        out.append(row)
    return out


def json_rows(
    table: RatingTable, *, labels: Labels | None = None, faults: Mapping[str, Faults] | None = None
) -> list[dict[str, Any]]:
    """The rows of ``--format json``: ``leaderboard_rows`` with what each is relative to and
    the method (what ``arena leaderboard --json`` prints and ``arena report`` shows)."""
    rows = leaderboard_rows(table, labels=labels, faults=faults)
    for row in rows:
        row["relative_to"] = table.pools[row["pool"] - 1].relative_to
        row["method"] = table.method
    return rows


def render(
    table: RatingTable,
    fmt: str = "table",
    *,
    title: str | None = None,
    labels: Labels | None = None,
    faults: Mapping[str, Faults] | None = None,
    width: int | None = None,
) -> str:
    """The table in ``fmt`` (one of FORMATS). Text formats carry a header saying what the
    ratings are relative to; JSON and CSV carry it per row (``pool``) and nothing else.
    ``width`` (format ``table`` only): the compact table for a terminal that many columns wide;
    None: every column."""
    if fmt == "json":
        return json.dumps(json_rows(table, labels=labels, faults=faults), indent=2)
    rows = leaderboard_rows(table, labels=labels, faults=faults)
    if fmt == "csv":
        if not rows:
            return ""
        header = list(rows[0])
        return csv_text(header, ([r.get(k) for k in header] for r in rows)).rstrip("\n")
    if fmt not in ("table", "markdown"):
        raise ValueError(f"unknown format {fmt!r} (use one of {', '.join(FORMATS)})")
    markdown = fmt == "markdown"
    if width is not None and not markdown:
        return _compact(table, rows, title, width)
    lines: list[str] = []
    if title:
        lines += [f"## {title}", ""] if markdown else [title]
    lines.append(table.description + ".")
    if not rows:
        lines.append("no rated games.")
        return "\n".join(lines)
    from tabulate import tabulate  # a table drawn: not loaded for JSON (issue 32's start-up)

    for head, entries in _pools(table, rows):
        lines += ["", f"**{head}**" if markdown else head, ""]
        headers, body = _cells(entries)
        lines.append(
            tabulate(
                body,
                headers=headers,
                tablefmt="github" if markdown else "simple",
                disable_numparse=True,
                colalign=_align(headers),
            )
        )
    if table.notes:
        lines.append("")
        lines += [f"- {n}" if markdown else f"note: {n}" for n in table.notes]
    return "\n".join(lines)


def _pools(
    table: RatingTable, rows: list[dict[str, Any]]
) -> list[tuple[str, list[dict[str, Any]]]]:
    """Each pool's heading and rows, leaving out a pool whose rows were all filtered out."""
    by_pool: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by_pool.setdefault(row["pool"], []).append(row)
    out: list[tuple[str, list[dict[str, Any]]]] = []
    for pool in table.pools:
        if pool.number not in by_pool:  # every row of this pool filtered out (--bot)
            continue
        if len(table.pools) > 1:
            head = f"Pool {pool.number} of {len(table.pools)}: "
            head += f"ratings relative to {pool.relative_to}"
        else:
            head = f"Ratings relative to {pool.relative_to}."
        out.append((head, by_pool[pool.number]))
    return out


def _compact(table: RatingTable, rows: list[dict[str, Any]], title: str | None, width: int) -> str:
    lines = wrap(title, width) if title else []
    lines += wrap(table.description + ".", width)
    if not rows:
        return "\n".join([*lines, "no rated games."])
    for head, entries in _pools(table, rows):
        lines += ["", *wrap(head, width), "", *_compact_pool(entries, width)]
    if table.notes:
        lines.append("")
        for note in table.notes:
            lines += wrap(f"note: {note}", width)
    return "\n".join(lines)


def _compact_pool(rows: list[dict[str, Any]], width: int) -> list[str]:
    """One pool's compact table and under it the rows' notes (it has no note column), one line
    per note naming its bots as the table does."""
    has_err = any(r["error"] is not None for r in rows)
    faulty = any(_fault_count(r) for r in rows)
    headers = ["#", "bot", "Elo"] + (["±95%"] if has_err else []) + ["games", "score"]
    headers += ["faults"] if faulty else []

    def body(room: int | None) -> list[list[str]]:
        out: list[list[str]] = []
        for r in rows:
            cells = [str(r["rank"]), _label(r, room), f"{r['elo']:.0f}"]
            if has_err:
                cells.append("" if r["error"] is None else f"{r['error']:.0f}")
            cells += [str(r["games"]), _pct(r["score"])]
            if faulty:
                cells.append(str(_fault_count(r)))
            out.append(cells)
        return out

    room, text = fitted(headers, body, width, column=1, colalign=_align(headers))
    lines = [text]
    bots: dict[str, list[str]] = {}
    for r in rows:
        if r["note"]:
            bots.setdefault(r["note"], []).append(_label(r, room))
    lines += [""] if bots else []
    for note, names in bots.items():
        lines += wrap(f"note: {', '.join(names)}: {note}", width)
    return lines


def _fault_count(row: Mapping[str, Any]) -> int:
    return int(row.get("timeouts", 0) + row.get("crashes", 0) + row.get("illegal", 0))


def _label(row: Mapping[str, Any], room: int | None) -> str:
    """The bot's name and short version, the name cut to leave ``room`` characters in all."""
    name, version = shown(row["bot"]), f" ({shown(row['version'])})" if row.get("version") else ""
    if room is None:
        return name + version
    return shorten(name, max(room - len(version), MIN_NAME)) + version


ELLIPSIS = "…"
#: The fewest characters a name is cut to (its ellipsis included): a terminal narrower than a
#: table with names this short gets lines longer than its width.
MIN_NAME = 6


def shorten(text: str, room: int) -> str:
    """``text`` in at most ``room`` characters (``room`` >= 1), its middle replaced by an
    ellipsis when it is longer: the ends tell bots apart (names share their beginnings, and
    numbers, versions or seeds end them)."""
    if len(text) <= room:
        return text
    tail = (room - 1) // 2
    return text[: room - 1 - tail] + ELLIPSIS + text[len(text) - tail :]


def wrap(text: str, width: int) -> list[str]:
    """A line of prose as lines of at most ``width`` characters (continued with an indent); a
    word longer than the width is broken."""
    lines = textwrap.wrap(text, width, subsequent_indent="  ", break_on_hyphens=False)
    return lines or [""]


def fitted(
    headers: Sequence[str],
    body: Callable[[int | None], list[list[str]]],
    width: int,
    *,
    column: int,
    colalign: Sequence[str] | None = None,
) -> tuple[int | None, str]:
    """How many characters the names in ``column`` may keep for the table's lines to fit in
    ``width`` (None when whole names fit, else what the other columns leave, at least
    MIN_NAME), and the plain table with its names cut so. ``body(room)`` builds the rows with
    every name in at most ``room`` characters (None: whole). The table of whole names is made
    once: when they fit, it is the table (issue 29: 1,000 rows took tabulate 0.1 s a time)."""
    full = body(None)
    whole = _plain(headers, full, colalign)
    over = widest(whole) - width
    if over <= 0:
        return None, whole
    room = max(max(len(row[column]) for row in full) - over, MIN_NAME)
    return room, _plain(headers, body(room), colalign)


def widest(text: str) -> int:
    """The length of the longest line of ``text``."""
    return max(map(len, text.splitlines()), default=0)


def fit_table(
    headers: Sequence[str],
    body: Callable[[int | None], list[list[str]]],
    width: int,
    *,
    column: int,
    colalign: Sequence[str] | None = None,
) -> str:
    """A plain table fitted to ``width`` by cutting the names in ``column`` (see
    ``fitted``)."""
    return fitted(headers, body, width, column=column, colalign=colalign)[1]


def _plain(headers: Sequence[str], body: list[list[str]], colalign: Sequence[str] | None) -> str:
    from tabulate import tabulate  # a table drawn: not loaded for JSON (issue 32's start-up)

    return tabulate(
        body,
        headers=list(headers),
        tablefmt="simple",
        disable_numparse=True,
        colalign=None if colalign is None else tuple(colalign),
    )


_RIGHT = {
    "#",
    "Elo",
    "±95%",
    "games",
    "W-D-L",
    "avg rank",
    "1st",
    "score",
    "draws",
    "LOS",
    "timeouts",
    "crashes",
    "illegal",
    "faults",
}


def _align(headers: list[str]) -> tuple[str, ...]:
    return tuple("right" if h in _RIGHT else "left" for h in headers)


def _pct(x: float | None) -> str:
    return "" if x is None else f"{100.0 * x:.1f}%"


def _cells(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The wide table's columns: every field of the rows."""
    has_err = any(r["error"] is not None for r in rows)
    has_los = any(r["los"] is not None for r in rows)
    headers = ["#", "bot", "Elo"] + (["±95%"] if has_err else []) + ["games"]
    if "wins" in rows[0]:
        headers.append("W-D-L")
    if "avg_rank" in rows[0]:
        headers += ["avg rank", "1st"]
    headers += ["score", "draws"] + (["LOS"] if has_los else [])
    if "timeouts" in rows[0]:
        headers += ["timeouts", "crashes", "illegal"]
    if any(r["note"] for r in rows):
        headers.append("note")
    body: list[list[str]] = []
    for r in rows:
        bot = _label(r, None)
        cells = [str(r["rank"]), bot, f"{r['elo']:.0f}"]
        if has_err:
            cells.append("" if r["error"] is None else f"{r['error']:.0f}")
        cells.append(str(r["games"]))
        if "wins" in r:
            cells.append(f"{r['wins']}-{r['draws']}-{r['losses']}")
        if "avg_rank" in r:
            cells += ["" if r["avg_rank"] is None else f"{r['avg_rank']:.2f}", str(r["firsts"])]
        cells += [_pct(r["score"]), _pct(r["draw_rate"])]
        if has_los:
            cells.append(_pct(r["los"]))
        if "timeouts" in r:
            cells += [str(r["timeouts"]), str(r["crashes"]), str(r["illegal"])]
        if "note" in headers:
            cells.append(r["note"])
        body.append(cells)
    return headers, body
