"""A tournament as ``tournament show`` and ``arena report`` describe it: its settings, progress,
standings and crosstable as one JSON-ready dict, and its settings as labelled lines.

One home for the description, so the terminal and the report say exactly the same thing of
what was played (time control, openings, adjudication, seed, sandbox, bot versions).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from bot_arena.arena.match.adjudication import Adjudication
from bot_arena.arena.match.text import shown
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.ratings.query import confinement_summary
from bot_arena.arena.ratings.standings import (
    crosstable_json,
    exact,
    match_crosstable,
    outcomes_json,
    seat_standings,
    seats_exact,
    standings,
    totals_tables,
)
from bot_arena.arena.tournament.create import interrupted, load_tournament
from bot_arena.arena.tournament.directors import load_director
from bot_arena.db import queries


def tournament_summary(session: Session, tid: int, *, width: int | None = None) -> dict[str, Any]:
    """Settings, progress, standings and crosstable (TournamentError: no such tournament).
    ``width``: the crosstable of two-player results may hold only the cells a table of that
    width shows (``grid.cells_asked``: the top of a large field); None: every cell."""
    tournament = load_tournament(session, tid)
    names = queries.entry_names(session, tid)
    standing, cross = _tables(session, tid, names, width)
    director = load_director(session, tournament)
    state = {} if director is None else {tournament.format: director.summary()}
    return {
        "id": tournament.id,
        "name": tournament.name,
        "game": tournament.game,
        "params": tournament.params,
        "format": tournament.format,
        "time_control": tournament.time_control,
        "seed": tournament.seed,
        "settings": tournament.settings,
        "status": tournament.status,
        "interrupted": interrupted(tournament),  # running, but its runner is gone
        "created": tournament.created.isoformat(timespec="seconds"),
        "finished": tournament.finished.isoformat(timespec="seconds")
        if tournament.finished
        else None,
        "bots": [
            {"bot": n, "spec": e.spec, "version": e.version.sha256}
            for n, e in zip(names, tournament.entries, strict=True)
        ],
        "progress": queries.status_counts(session, tid),
        # done matches by the sandbox level their bots ran under ("unrecorded": stored before
        # the arena recorded it, counted as off)
        "sandbox": {
            level or "unrecorded": n
            for level, n in sorted(
                queries.sandbox_counts(session, tid).items(), key=lambda kv: kv[0] or ""
            )
        },
        "standings": standing,
        "crosstable": cross,
        **state,  # a Swiss's standings, a knockout's bracket, an SPRT's state
    }


def _tables(
    session: Session, tid: int, names: list[str], width: int | None = None
) -> tuple[list[dict[str, Any]], dict[str, dict[str, dict[str, float]]]]:
    """The standings (as dicts) and the crosstable's JSON: from totals summed by the database
    when every done match has two seats (rows follow the pairs, not the matches), else match
    by match; the same numbers either way."""
    if queries.two_player_only(session, tid):
        top = None if width is None else _top_tables(session, tid, names, width)
        if top is not None:
            return top
        records = queries.pair_records(session, tid)
        if exact(records):
            faults, bad = queries.seat_faults(session, tid)  # says a malformed match, once
            if bad:
                records = queries.pair_records(session, tid, bad)
            table, cross = totals_tables(records, faults, names, width)
            return [s.to_dict() for s in table], cross
    rows = queries.results(session, tid)
    return [s.to_dict() for s in standings(rows, names)], crosstable_json(match_crosstable(rows))


def _top_tables(
    session: Session, tid: int, names: list[str], width: int
) -> tuple[list[dict[str, Any]], dict[str, dict[str, dict[str, float]]]] | None:
    """``_tables`` of a two-player tournament for a table ``width`` wide whose field is larger
    than it shows whole (``grid.cells_asked``): the standings from totals per seat and outcome
    (``queries.seat_records``: a few rows a bot) and the crosstable's cells among the top bots
    only (``pair_outcomes``: the kept pair totals of those bots, by the index); None (the
    caller sums every pair) for a field shown whole or a score that is not exact. The same
    standings, and the same cells of the top bots, as summing every pair
    (tests/db/test_standings_totals.py); the cells in name order (the text looks them up).
    """
    from bot_arena.arena.ratings.grid import cells_asked

    records = queries.seat_records(session, tid)
    field = len(set(names) | {r.bot for r in records})
    if cells_asked(field, width) >= field or not seats_exact(records):
        return None
    faults, bad = queries.seat_faults(session, tid)  # says a malformed match, once
    if bad:
        records = queries.seat_records(session, tid, bad)
    table = seat_standings(records, faults, names)
    among = {s.bot for s in table[: cells_asked(len(table), width)]}
    pairs = queries.pair_outcomes(session, tid, among, bad)
    return [s.to_dict() for s in table], outcomes_json(pairs, among)


def format_text(session: Session, tid: int, width: int | None) -> list[str]:
    """A Swiss's standings and rounds, a knockout's bracket or an SPRT's state, as text (each
    line shown as text: it names the bots)."""
    director = load_director(session, load_tournament(session, tid))
    return [] if director is None else [shown(line) for line in director.text(width)]


def settings_rows(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """The settings of ``tournament_summary`` as (label, text) lines; a label is "" where a
    setting takes several lines (each entrant's own time control)."""
    p = summary["progress"]
    total = sum(p.values()) - p["void"]
    settings = summary["settings"]
    times = [TimeControl.from_dict(summary["time_control"]).describe()]
    if settings.get("time_controls"):  # time odds: each entrant's own, a line each
        times = [
            f"{bot}: {TimeControl.from_dict(t).describe()}"
            for bot, t in zip(settings["bots"], settings["time_controls"], strict=True)
        ]
    params = ", ".join(f"{k}={v}" for k, v in summary["params"].items())
    status = (
        f"{summary['status']}: {p['done']}/{total} done, {p['running']} running, "
        f"{p['pending']} pending" + (f" ({p['void']} void, not counted)" if p["void"] else "")
    )
    if summary.get("interrupted"):  # its runner is gone: nothing is running
        status = (
            f"interrupted: {p['done']}/{total} done, {p['running'] + p['pending']} to play "
            f"(its runner is gone); resume with: arena tournament resume {summary['id']}"
        )
    sandbox = sandbox_text(summary["sandbox"])
    book = book_text(settings.get("openings"))
    rules = Adjudication.from_dict(settings.get("adjudication")).describe()
    return [
        ("game", summary["game"] + (f"({params})" if params else "")),
        (
            "format",
            format_row(summary["format"], settings)
            + ("" if book else f", opening plies {settings.get('opening_plies', 0)}"),
        ),
        *([("openings", book)] if book else []),
        *([("adjudicate", rules)] if rules != "none" else []),
        *(("time" if i == 0 else "", line) for i, line in enumerate(times)),
        ("seed", str(summary["seed"])),
        ("status", status),
        *([("sandbox", sandbox)] if sandbox else []),
        (
            "created",
            str(summary["created"])
            + (f", finished {summary['finished']}" if summary["finished"] else ""),
        ),
    ]


def format_row(fmt: str, settings: dict[str, Any]) -> str:
    """The format line: the format and how many games its pairings play."""
    own = settings.get(fmt, {})
    if fmt == "swiss":
        return f"swiss, {own.get('rounds')} rounds, {own.get('games')} games per pairing"
    if fmt == "knockout":
        return (
            f"knockout seeded by {own.get('seeded_by', 'order')}, {own.get('games')} games "
            f"per tie, then up to {own.get('tiebreak_pairs')} tie-break pairs and a coin"
        )
    if fmt == "sprt":
        return f"sprt, game pairs (colours swapped), at most {own.get('max_games')} games"
    return f"{fmt}, {settings.get('games')} games per pairing"


def book_text(book: dict[str, Any] | None) -> str:
    """The line for an opening book: file, entries, order and the PGN cut."""
    if not book:
        return ""
    cut = f", cut to {book['plies']} plies" if book.get("plies") else ""
    return f"{book['file']} ({book['entries']} openings, {book['order']}{cut})"


def sandbox_text(levels: dict[str, int]) -> str | None:
    """The sandbox setting when some results came from bots not fully confined."""
    return confinement_summary({None if k == "unrecorded" else k: n for k, n in levels.items()})
