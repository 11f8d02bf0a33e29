"""``arena play``: one match between bots in their own processes, refereed and stored."""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bot_arena.arena.cli.common import (
    AllowReadOption,
    DbOption,
    MatchRules,
    MemoryOption,
    SandboxOption,
    StartupOption,
    adjudication,
    check_engines,
    fail,
    fault_evidence,
    keep_unsaved,
    load_game,
    load_position,
    noted_db,
    open_db,
    open_writable_db,
    resource_limits,
    sandbox_options,
    warn_unconfined,
)
from bot_arena.arena.cli.option_sets import with_option_sets
from bot_arena.arena.match.text import shown, shown_all

if TYPE_CHECKING:  # loaded when a match is played, not for --help
    from sqlalchemy.orm import Session, sessionmaker

    from bot_arena.arena.match.botref import BotRef
    from bot_arena.arena.match.record import MatchRecord, MoveRecord
    from bot_arena.db.sqlite_play import PlainStore
    from bot_arena.games.base import Game

DEFAULT_MOVE_TIME = 10.0  # seconds per move for bots when no time control is given


def registered_lookup(db: str | None) -> Callable[[str], BotRef | None]:
    """A lookup of registered bot names that opens the database only when first asked."""

    def lookup(name: str) -> BotRef | None:
        from bot_arena.db.session import database_url, exists
        from bot_arena.db.store import lookup_bot

        if not exists(database_url(db)):
            return None  # no database yet: nothing is registered (and don't create one)
        with open_db(db).begin() as session:
            return lookup_bot(session, name)

    return lookup


def verdict(record: MatchRecord) -> str:
    """The result line: who won (or the draw) and how the match ended; under it, each fault
    with a few lines of why (``fault_evidence``), or the person who gave up."""
    from bot_arena.arena.match.record import Termination

    firsts = [f"seat {i} ({shown(s.bot)})" for i, s in enumerate(record.seats) if s.rank == 1]
    if len(firsts) == 1:
        who = f"{firsts[0]} wins"
    elif len(firsts) == len(record.seats):
        who = "draw"
    else:
        who = "shared first place: " + ", ".join(firsts)
    how = record.termination.value
    if record.adjudication is not None:
        how += f" ({record.adjudication.get('rule')})"
    utilities = ", ".join(f"{s.utility:g}" for s in record.seats)
    lines = [f"result: {who}; termination {how}; utilities [{utilities}]"]
    for i, s in enumerate(record.seats):
        if s.fault is not None:
            what = "gave up" if s.fault.termination is Termination.RESIGN else "fault"
            lines.append(
                f"  {what}: seat {i} ({shown(s.bot)}) {s.fault.termination.value}: "
                + shown(s.fault.message)
            )
            lines += [f"    {line}" for line in fault_evidence(s.fault)]
    return "\n".join(lines)


def show_moves(
    game: Game[Any, Any], start: Any, names: list[str], humans: Collection[int]
) -> Callable[[MoveRecord], None]:
    """Print the start position now, and return an on_move callback that prints every move and
    the position after it.

    A human seat (``humans``) shows the position it is asked about itself, with its prompt
    (``HumanSeat.ask``): those positions are not printed here, or the human sees the board
    twice. A human that gave up is not asked again (with three players or more the game goes
    on): from its first stand-in move, the positions it is to move in are printed here."""
    asked = set(humans)
    state = [start]

    def show(position: Any) -> None:
        if game.is_terminal(position) or game.current_player(position) not in asked:
            typer.echo(game.render(position))

    def on_move(move: MoveRecord) -> None:
        if move.forced:
            asked.discard(move.seat)
        state[0] = game.apply(state[0], game.move_from_text(state[0], move.move))
        how = " (stand-in)" if move.forced else f" [{move.time_ms:.1f} ms]"
        who = shown(names[move.seat])
        typer.echo(f"\nseat {move.seat} ({who}) plays {shown(move.move)}{how}")
        show(state[0])

    show(start)
    return on_move


@with_option_sets
def play_command(
    game_name: Annotated[
        str, typer.Argument(metavar="GAME", help="Game name (see `arena games`).")
    ],
    bot: Annotated[
        list[str] | None,
        typer.Option(
            "--bot",
            "-b",
            help="Bot, once per seat: built-in spec, FILE.py, pkg.mod:attr, cmd:<command>, "
            "a registered name, or human.",
        ),
    ] = None,
    move_time: Annotated[
        list[float] | None,
        typer.Option("--move-time", help="Seconds per move (once, or once per seat)."),
    ] = None,
    clock: Annotated[
        list[str] | None,
        typer.Option("--clock", help="Game clock BASE+INC in seconds, e.g. 60+0.5."),
    ] = None,
    rules: MatchRules = MatchRules(),  # noqa: B008 (an option set: its options)
    startup_time: StartupOption = 10.0,
    memory_mb: MemoryOption = 1024,
    position: Annotated[str | None, typer.Option("--position", help="Start position text.")] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="Game parameter k=v.")
    ] = None,
    tree: Annotated[
        str | None, typer.Option("--tree", help="Tree JSON file (game `tree`).")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed for random bots.")] = None,
    show: Annotated[
        bool | None,
        typer.Option(
            "--show/--no-show",
            help="Render the board after every move (the default, except with --json); "
            "--no-show prints the move list only.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole match record.")] = False,
    no_save: Annotated[bool, typer.Option("--no-save", help="Do not store the match.")] = False,
    sandbox: SandboxOption = None,
    allow_read: AllowReadOption = None,
    db: DbOption = None,
) -> None:
    """Play one match between bots in isolated processes and print the result.

    The stored match records the sandbox level its bots ran under (confined, partial or off).
    """
    from bot_arena.arena.match.botref import HUMAN, BotSpecError
    from bot_arena.arena.match.botspec import resolve_all
    from bot_arena.arena.match.pool import BotPool, ServerDied
    from bot_arena.arena.match.xboard import moves_from_start
    from bot_arena.arena.transport.sandbox.mode import CONFINED

    game = load_game(game_name, param, tree)
    start = load_position(game, position)
    confinement = sandbox_options(sandbox, allow_read)
    specs = bot or ["random"] * game.num_players
    from bot_arena.arena.api import checks

    try:  # the rule lives in the API's checks, shared with ``bot_arena.arena.play()``
        checks.seat_count(game, len(specs))
    except checks.ArenaError as exc:
        fail(str(exc))
    lookup = registered_lookup(db)
    try:
        refs = resolve_all(specs, lookup)
    except BotSpecError as exc:
        fail(str(exc))
    check_engines(refs, game)
    adjudicated = adjudication(rules.draw_adjudicate, rules.resign_adjudicate, rules.max_moves)
    from bot_arena.arena.api.checks import time_controls  # ArenaError: one line, exit 2

    tcs = time_controls(
        refs,
        move_time or [],
        clock or [],
        rules.margin,
        DEFAULT_MOVE_TIME,
        depth=rules.depth,
        nodes=rules.nodes,
    )
    limits = resource_limits(memory_mb, startup_time)
    seed = random.randrange(2**31) if seed is None else seed
    names = [r.name for r in refs]
    confinement = confinement.for_bots(names)
    if show is None:
        show = not as_json
    with BotPool(limits, sandbox=confinement.settings) as pool:
        # an xboard engine without setboard and a FEN start: refused before the game
        opening = moves_from_start(game, position)  # told as moves without setboard
        starts = [(opening, position)]
        checks.check_setboard(refs, game, starts, lambda: contextlib.nullcontext(pool))
        # before the game, not after it: a plain SQLite file of ours without SQLAlchemy
        factory = None if no_save else _open_store(db)
        warn_unconfined(confinement)  # after the refusals: a refused command says one line
        on_move = None
        if show and not as_json:
            humans = [i for i, ref in enumerate(refs) if ref.kind == HUMAN]
            on_move = show_moves(game, start, names, humans)
        level = pool.sandbox_level
        try:
            record = pool.play(
                game,
                refs,
                time_control=tcs,
                start_position=position,
                opening=opening,
                seed=seed,
                on_move=on_move,
                adjudication=adjudicated,
            )
        except ServerDied as exc:
            hint = "" if level == CONFINED else " (a bot may have killed it: confine bots)"
            fail(f"{exc}{hint}; nothing stored", 1)
    out = record.to_dict()
    out["seed"] = seed
    out["sandbox"] = level
    match_id = None if factory is None else _store(factory, db, record, refs, level, out)
    if as_json:
        out["match_id"] = match_id
        typer.echo(json.dumps(out))
        return
    if not show:
        typer.echo(f"{game.describe()}: " + " vs ".join(shown_all(names)))
        typer.echo(
            "moves: "
            + (" ".join(m.move + ("*" if m.forced else "") for m in record.moves) or "(none)")
        )
    typer.echo(verdict(record))
    if match_id is not None:
        typer.echo(f"saved as match {match_id}")


def _open_store(db: str | None) -> sessionmaker[Session] | PlainStore:
    """Where the match will be stored, checked writable before the game: a plain SQLite file
    of ours at the newest revision through ``sqlite3`` alone (``db/sqlite_play.py``: no
    SQLAlchemy to import, about half the command's CPU), else the usual open."""
    from bot_arena.db.sqlite_play import open_plain_store

    try:
        plain = open_plain_store(db)
    except sqlite3.DatabaseError as err:
        from bot_arena.db.session import describe_error

        fail(describe_error(err, db))
    if plain is None:
        return open_writable_db(db)
    noted_db(db)
    return plain


def _store(
    factory: sessionmaker[Session] | PlainStore,
    db: str | None,
    record: MatchRecord,
    refs: list[BotRef],
    level: str,
    out: dict[str, Any],
) -> int:
    """Store the played match; when the database fails now (a full disk, a lock held too
    long), the record goes to a file the one-line error names (exit 1): never lost."""
    from bot_arena.db.sqlite_play import PlainStore

    if isinstance(factory, PlainStore):
        try:
            return factory.save(record, refs, sandbox=level)
        except sqlite3.DatabaseError as err:
            from bot_arena.db.session import describe_error

            kept = keep_unsaved(out, "match")
            fail(f"{describe_error(err, db)}; the game's record is in {kept}", 1)
        finally:
            factory.close()
    from sqlalchemy.exc import SQLAlchemyError

    from bot_arena.db.session import describe_error
    from bot_arena.db.store import save_match

    try:
        with factory.begin() as session:
            return save_match(session, record, refs, sandbox=level)
    except SQLAlchemyError as err:
        kept = keep_unsaved(out, "match")
        fail(f"{describe_error(err, db)}; the game's record is in {kept}", 1)
