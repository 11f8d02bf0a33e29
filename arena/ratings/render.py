"""Rating tables as text: a terminal table, Markdown, CSV or JSON (one object per bot)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tabulate import tabulate

from bot_arena.arena.ratings.table import BotRating, RatingTable

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


def render(
    table: RatingTable,
    fmt: str = "table",
    *,
    title: str | None = None,
    labels: Labels | None = None,
    faults: Mapping[str, Faults] | None = None,
) -> str:
    """The table in ``fmt`` (one of FORMATS). Text formats carry a header saying what the
    ratings are relative to; JSON and CSV carry it per row (``pool``) and nothing else."""
    rows = leaderboard_rows(table, labels=labels, faults=faults)
    if fmt == "json":
        for row in rows:
            row["relative_to"] = table.pools[row["pool"] - 1].relative_to
            row["method"] = table.method
        return json.dumps(rows, indent=2)
    if fmt == "csv":
        buf = io.StringIO()
        if rows:
            writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        return buf.getvalue().rstrip("\n")
    if fmt not in ("table", "markdown"):
        raise ValueError(f"unknown format {fmt!r} (use one of {', '.join(FORMATS)})")
    markdown = fmt == "markdown"
    lines: list[str] = []
    if title:
        lines += [f"## {title}", ""] if markdown else [title]
    lines.append(table.description + ".")
    if not rows:
        lines.append("no rated games.")
        return "\n".join(lines)
    by_pool: dict[int, list[tuple[dict[str, Any], BotRating]]] = {}
    for row, rating in zip(rows, table.rows, strict=True):
        by_pool.setdefault(row["pool"], []).append((row, rating))
    for pool in table.pools:
        entries = by_pool.get(pool.number, [])
        if not entries:  # every row of this pool filtered out (--bot)
            continue
        lines.append("")
        if len(table.pools) > 1:
            head = f"Pool {pool.number} of {len(table.pools)}: "
            head += f"ratings relative to {pool.relative_to}"
        else:
            head = f"Ratings relative to {pool.relative_to}."
        lines.append(f"**{head}**" if markdown else head)
        lines.append("")
        headers, body = _cells([e[0] for e in entries])
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
}


def _align(headers: list[str]) -> tuple[str, ...]:
    return tuple("right" if h in _RIGHT else "left" for h in headers)


def _pct(x: float | None) -> str:
    return "" if x is None else f"{100.0 * x:.1f}%"


def _cells(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
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
        bot = r["bot"] + (f" ({r['version']})" if r.get("version") else "")
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
