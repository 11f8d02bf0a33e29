"""``arena matches [void]``, ``arena replay``, ``arena export``: the stored matches.

``arena matches`` is a command group that lists matches when called without a subcommand (as it
always did) and has one subcommand, ``arena matches void`` (annul matches, optionally scheduling
replays)."""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bot_arena import games
from bot_arena.arena.cli.common import (
    ArenaCommand,
    DbOption,
    command_group,
    fail,
    open_existing_db,
    open_plain_reads,
)
from bot_arena.arena.match.text import shown, shown_all
from bot_arena.games.base import GameError
from bot_arena.games.quoting import shown as quoted

if TYPE_CHECKING:  # the database and the file formats load when a command needs them
    from bot_arena.db.match_list import ListedMatch

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]

matches_app = command_group(
    name="matches",
    help="The stored matches (the list without a subcommand); `void` annuls matches.",
    invoke_without_command=True,
    no_args_is_help=False,
)


def _listed(
    db: str | None, tournament: int | None, bot: str | None, status: str | None, last: int | None
) -> list[ListedMatch]:
    """The matches listed: the last ``last`` of a plain SQLite file by ``sqlite3`` alone, or of
    PostgreSQL by psycopg alone (``db/match_list.py``: SQLAlchemy is not loaded), else through
    the ORM."""
    if last is not None:
        from bot_arena.db.match_list import newest_matches

        plain = open_plain_reads(db)
        if plain is not None:
            connection, reads = plain
            try:
                found = newest_matches(reads.rows, reads.json_text, tournament, bot, status, last)
            finally:
                connection.close()
            if found is not None:
                return found
    from bot_arena.db import queries
    from bot_arena.db.match_list import listed

    factory = open_existing_db(db)
    with factory() as session:
        matches = queries.find_matches(session, tournament, bot, status, last=last)
        plies = queries.move_counts(session, [m.id for m in matches])
        return [listed(m, plies.get(m.id, 0)) for m in matches]


def _result_text(match: ListedMatch) -> str:
    if match.status != "done":  # pending, running, void
        return match.status
    from bot_arena.arena.formats.pgn import result_of_ranks

    ranks = match.ranks
    if len(ranks) == 2:
        return result_of_ranks(ranks[0] or 0, ranks[1] or 0)
    return "ranks " + "-".join(str(r) for r in ranks)


def _row(m: ListedMatch) -> dict[str, Any]:
    return {
        "match": m.id,
        "tournament": m.tournament_id,
        "round": m.round,
        "game": m.game,
        "bots": m.bots,
        "status": m.status,
        "result": _result_text(m),
        "ranks": m.ranks,
        "scores": m.scores,
        "termination": m.termination,
        "plies": m.plies,
        "duration_s": m.duration_s,
        "fault": m.fault_reason,
        "void_reason": m.void_reason,
        "voided": m.voided.isoformat(timespec="seconds") if m.voided else None,
    }


@matches_app.callback()
def matches_command(
    ctx: typer.Context,
    tournament: Annotated[
        int | None, typer.Option("--tournament", "-t", help="Only this tournament's matches.")
    ] = None,
    bot: Annotated[str | None, typer.Option("--bot", help="Only matches this bot played.")] = None,
    status: Annotated[
        str | None, typer.Option("--status", help="pending, running, done or void.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", help="Show the last N (0: all).")] = 50,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """The stored matches: bots in seat order, result, termination, plies, duration.

    Void matches show the result `void` and the reason (`--status void` lists only them).
    """
    if ctx.invoked_subcommand is not None:
        sources = [
            ctx.get_parameter_source(name)
            for name in ("tournament", "bot", "status", "limit", "as_json", "db")
        ]
        given = [s for s in sources if s is not None and s.name == "COMMANDLINE"]
        if given:
            fail(
                f"options of `arena matches` go without a subcommand; give them after "
                f"`{ctx.invoked_subcommand}` (e.g. `arena matches {ctx.invoked_subcommand} "
                "--help`)"
            )
        return
    from bot_arena.db.statuses import MATCH_STATUSES

    if status is not None and status not in MATCH_STATUSES:
        fail(f"--status {status!r}: one of {', '.join(MATCH_STATUSES)}")
    rows = [_row(m) for m in _listed(db, tournament, bot, status, limit if limit > 0 else None)]
    if as_json:
        typer.echo(json.dumps(rows))
        return
    voids = any(r["status"] == "void" for r in rows)
    table = [
        [
            r["match"],
            r["tournament"] if r["tournament"] is not None else "-",
            r["round"],
            " vs ".join(shown_all(r["bots"])),
            r["result"],
            r["termination"] or "",
            r["plies"],
            "" if r["duration_s"] is None else f"{r['duration_s']:.2f}s",
            *([shown(r["void_reason"] or "")] if voids else []),
        ]
        for r in rows
    ]
    headers = ["match", "tournament", "round", "bots", "result", "termination", "plies", "time"]
    if voids:  # the reason column only when a void match is shown
        headers.append("void reason")
    from tabulate import tabulate

    typer.echo(tabulate(table, headers=headers))


@matches_app.command("void", cls=ArenaCommand)
def void_command(
    match_ids: Annotated[list[int], typer.Argument(metavar="MATCH_ID", help="Matches to void.")],
    reason: Annotated[
        str, typer.Option("--reason", "-r", help="Why they are annulled (required).")
    ],
    replay: Annotated[
        bool,
        typer.Option(
            "--replay",
            help="Also schedule a fresh pending copy of each match; play the copies with "
            "`arena tournament resume ID`.",
        ),
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Annul matches (done, pending or running): kept with the reason, counted nowhere.

    Standings, leaderboards, ratings and exports leave void matches out. All or nothing: one
    bad match id (missing, void already, running under a live runner) and nothing is written.
    """
    from bot_arena.arena.tournament.voiding import VoidError, void_matches
    from bot_arena.db.ladders import ladder_of

    factory = open_existing_db(db, write=True)
    try:
        with factory.begin() as session:
            voided = void_matches(session, match_ids, reason, replay=replay)
            replayed = sorted(
                {v.tournament for v in voided if v.replay is not None and v.tournament}
            )
            ladders = {tid: ladder_of(session, tid) for tid in replayed}
    except VoidError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps([v.to_dict() for v in voided]))
        return
    table = [
        [
            v.match,
            v.tournament if v.tournament is not None else "-",
            v.previous_status,
            v.replay if v.replay is not None else "-",
        ]
        for v in voided
    ]
    from tabulate import tabulate

    typer.echo(tabulate(table, headers=["void", "tournament", "was", "replay"]))
    typer.echo(f"reason: {shown(reason.strip())}")
    for tid in replayed:  # a ladder's copies are played by its runner (resume refuses it)
        ladder = ladders[tid]
        if ladder is None:
            typer.echo(f"replays scheduled: play them with `arena tournament resume {tid}`")
        else:
            run = shown(f"arena ladder run {shlex.quote(ladder.name)}")
            typer.echo(f"replays scheduled: the ladder's runner plays them (`{run}`)")


def _strict(value: Any) -> str:
    """A stored record as strict JSON text: a NaN or an infinity that an older Bot Arena stored
    in a move's info is shown as null (a strict parser refuses the bare tokens)."""
    from bot_arena.arena.transport.strict_json import dumps, finite

    return dumps(finite(value))


def _info_text(info: dict[str, Any] | None) -> str:
    """A move's search info on one line: an engine's score (pawns from the mover's view, or
    mate in N), depth, nodes, the bot's values, the principal variation, then the rest. The bot
    wrote it, so it is shown as text (``text.shown``)."""
    if not info:
        return ""
    parts = []
    score = info.get("score")
    if isinstance(score, dict) and isinstance(score.get("cp"), int):
        parts.append(f"score {score['cp'] / 100:+.2f}")
    elif isinstance(score, dict) and isinstance(score.get("mate"), int):
        parts.append(f"score mate {score['mate']:+d}")
    shown_keys = ("score", "depth", "nodes", "values", "pv")
    for key in shown_keys[1:]:
        value = info.get(key)
        if value in (None, [], 0):
            continue
        text = " ".join(str(v) for v in value) if isinstance(value, list) else str(value)
        parts.append(f"{key} {text}")
    rest = {k: v for k, v in info.items() if k not in shown_keys}
    if rest:
        parts.append(", ".join(f"{k}={v}" for k, v in rest.items()))
    return shown("; ".join(parts))


def _next_step() -> bool:
    """Ask whether to show the next move (on stderr, as prompts go): no after ``q`` or at the
    end of input, yes after any other line."""
    typer.echo("[Enter] next, q quit: ", nl=False, err=True)
    try:
        answer = input()
    except EOFError:
        typer.echo(err=True)  # end the prompt's line, as typing Enter would have
        return False
    return answer.strip().lower() not in ("q", "quit")


def replay_command(
    match_id: Annotated[int, typer.Argument(metavar="MATCH_ID", help="Match id.")],
    step: Annotated[
        bool, typer.Option("--step", help="Wait for Enter after each move (q quits).")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Step through a stored match: the board after every move, with times and search info."""
    from bot_arena.db.store import load_match, record_of

    factory = open_existing_db(db)
    with factory() as session:
        match = load_match(session, match_id)
        if match is None:
            fail(f"no match {match_id}")
        void = match.void_reason if match.status == "void" else None
        if match.status == "void" and match.termination is None:
            fail(f"match {match_id} is void ({void}) and was never played: nothing to replay")
        if match.status not in ("done", "void"):
            fail(f"match {match_id} is {match.status}: nothing to replay yet")
        record = record_of(match)
    if as_json:
        extra = {"status": "void", "void_reason": void} if void is not None else {}
        typer.echo(_strict({"match": match_id, **extra, **record.to_dict()}))
        return
    try:
        game = games.get(record.game, **record.params)
        state = (
            game.parse_position(record.start_position)
            if record.start_position
            else game.initial_state()
        )
    except GameError as exc:
        fail(f"match {match_id}: {exc}")
    names = shown_all(s.bot for s in record.seats)
    typer.echo(f"match {match_id}: {game.describe()}")
    if void is not None:
        typer.echo(f"  VOID: {shown(void)} (it counts nowhere)")
    typer.echo("  " + "  ".join(f"seat {i}: {n}" for i, n in enumerate(names)))
    typer.echo("\n" + game.render(state))
    for ply, move in enumerate(record.moves):
        if step and not _next_step():
            raise typer.Exit(0)
        try:
            played = game.move_from_text(state, move.move)
            label = game.move_label(state, played)  # SAN in chess
            state = game.apply(state, played)
        except GameError as exc:
            fail(f"match {match_id}, ply {ply}: {exc}")
        shown_move = move.move if label == move.move else f"{label} ({move.move})"
        forced = " (forced: the arena's stand-in)" if move.forced else ""
        info = _info_text(move.info)
        typer.echo(
            f"\nply {ply + 1}: seat {move.seat} ({names[move.seat]}) plays {shown_move} "
            f"in {move.time_ms:.1f} ms{forced}" + (f"\n  {info}" if info else "")
        )
        typer.echo(game.render(state))
    typer.echo(f"\ntermination: {record.termination.value}")
    for i, s in enumerate(record.seats):
        fault = f"  fault: {s.fault.termination.value}: {shown(s.fault.message)}" if s.fault else ""
        typer.echo(
            f"  seat {i} {names[i]}: rank {s.rank}, score {s.score:g}, utility {s.utility:g}{fault}"
        )


class ExportFormat(StrEnum):
    JSON = "json"
    JSONL = "jsonl"
    CSV = "csv"
    PGN = "pgn"


def _when(option: str, text: str | None) -> datetime | None:
    """An ISO date or date-time of ``--since``/``--until``; without a zone it is UTC (a date
    alone: its midnight)."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        fail(
            fail(
                f"{option} takes an ISO date or date-time (2024-05-01, 2024-05-01T12:00), "
                f"not {quoted(text)}"
            )
        )
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when


def export_command(
    fmt: Annotated[
        ExportFormat,
        typer.Option("--format", "-f", help="json, jsonl (one match a line), csv or pgn."),
    ] = ExportFormat.JSON,
    tournament: Annotated[
        int | None, typer.Option("--tournament", "-t", help="Only this tournament's matches.")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Only matches started at or after this ISO date/time (UTC)."),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", help="Only matches started before this ISO date/time (UTC)."),
    ] = None,
    game: Annotated[
        str | None, typer.Option("--game", "-g", help="Only this game's matches (its name).")
    ] = None,
    db: DbOption = None,
) -> None:
    """Export done matches: JSON match records (an array, or JSON Lines), one CSV row per match,
    or PGN (two players; one game a file: --game), written as they are read."""
    from bot_arena.arena.formats.export import ExportNotes, export_text, pgn_mix, tournament_event
    from bot_arena.db.exported import ExportFilter, exported_games, stored_games
    from bot_arena.db.tournaments import get_tournament

    where = ExportFilter(tournament, _when("--since", since), _when("--until", until), game)
    factory = open_existing_db(db)
    with factory() as session:
        if tournament is not None and get_tournament(session, tournament) is None:
            fail(f"no tournament {tournament}")
        if game is not None and game not in (known := stored_games(session)):
            fail(
                f"no match of game {quoted(game)} in this database"
                + (f" (its games: {', '.join(quoted(k) for k in known)})" if known else "")
            )
        # a PGN export holds one game's two-player matches (a tournament's are of one game)
        pgn_of_all = fmt is ExportFormat.PGN and tournament is None
        mixed = pgn_mix(exported_games(session, where, players=2)) if pgn_of_all else None
        if mixed:
            fail(mixed)
        notes = ExportNotes()
        for text in export_text(fmt.value, session, where, notes, tournament_event(session)):
            typer.echo(text, nl=False)
        if notes.skipped_multiplayer:
            typer.echo(
                f"warning: {notes.skipped_multiplayer} matches of more than two players skipped "
                "(PGN holds two-player games)",
                err=True,
            )
