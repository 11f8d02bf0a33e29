"""``arena play``: one match between bots in their own processes, refereed and stored."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bot_arena.arena.cli.common import (
    AllowReadOption,
    DbOption,
    SandboxOption,
    fail,
    keep_unsaved,
    load_game,
    load_position,
    open_db,
    open_writable_db,
    sandbox_options,
)
from bot_arena.arena.match.botref import HUMAN, BotRef, BotSpecError
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import BotPool, ServerDied
from bot_arena.arena.match.record import MatchRecord, MoveRecord
from bot_arena.arena.match.timecontrol import DEFAULT_MARGIN, TimeControl, TimeControlError
from bot_arena.arena.transport.limits import ResourceLimits
from bot_arena.arena.transport.sandbox.mode import CONFINED
from bot_arena.games.base import Game

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

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


def time_controls(
    refs: list[BotRef], move_time: list[float], clock: list[str], margin: float
) -> list[TimeControl]:
    """One time control per seat: each option given once applies to all seats, or once per
    seat. With none, bots get ``DEFAULT_MOVE_TIME`` per move and humans no limit."""
    n = len(refs)
    for what, values in (("--move-time", move_time), ("--clock", clock)):
        if len(values) not in (0, 1, n):
            fail(f"{what} given {len(values)} times: give it once or once per seat ({n})")
    out = []
    for i, ref in enumerate(refs):
        mt = move_time[i if len(move_time) == n else 0] if move_time else None
        ck = clock[i if len(clock) == n else 0] if clock else None
        if mt is None and ck is None and ref.kind != HUMAN:
            mt = DEFAULT_MOVE_TIME
        try:
            out.append(TimeControl.parse(mt, ck, margin))
        except TimeControlError as exc:
            fail(str(exc))
    return out


def verdict(record: MatchRecord) -> str:
    """The result line: who won (or the draw) and how the match ended."""
    firsts = [f"seat {i} ({s.bot})" for i, s in enumerate(record.seats) if s.rank == 1]
    if len(firsts) == 1:
        who = f"{firsts[0]} wins"
    elif len(firsts) == len(record.seats):
        who = "draw"
    else:
        who = "shared first place: " + ", ".join(firsts)
    how = record.termination.value
    faults = [
        f"seat {i} ({s.bot}) {s.fault.termination.value}: {s.fault.message}"
        for i, s in enumerate(record.seats)
        if s.fault is not None
    ]
    utilities = ", ".join(f"{s.utility:g}" for s in record.seats)
    line = f"result: {who}; termination {how}; utilities [{utilities}]"
    return line + "".join(f"\n  fault: {f}" for f in faults)


def show_moves(game: Game[Any, Any], start: Any, names: list[str]) -> Callable[[MoveRecord], None]:
    """An on_move callback that prints every move and the board after it."""
    state = [start]

    def on_move(move: MoveRecord) -> None:
        state[0] = game.apply(state[0], game.move_from_text(state[0], move.move))
        how = " (stand-in)" if move.forced else f" [{move.time_ms:.1f} ms]"
        typer.echo(f"\nseat {move.seat} ({names[move.seat]}) plays {move.move}{how}")
        typer.echo(game.render(state[0]))

    return on_move


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
    margin: Annotated[
        float, typer.Option("--margin", help="Grace seconds before a loss on time.")
    ] = DEFAULT_MARGIN,
    startup_time: Annotated[
        float, typer.Option("--startup-time", help="Seconds a bot may take to start.")
    ] = 10.0,
    memory_mb: Annotated[
        int, typer.Option("--memory-mb", help="Memory limit per bot process (MiB).")
    ] = 1024,
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
    game = load_game(game_name, param, tree)
    start = load_position(game, position)
    confinement = sandbox_options(sandbox, allow_read)
    specs = bot or ["random"] * game.num_players
    if len(specs) != game.num_players:
        fail(f"{game.name} takes {game.num_players} bots, got {len(specs)}")
    lookup = registered_lookup(db)
    try:
        refs = [resolve(s, lookup) for s in specs]
    except BotSpecError as exc:
        fail(str(exc))
    tcs = time_controls(refs, move_time or [], clock or [], margin)
    try:
        limits = ResourceLimits(memory_mb=memory_mb, startup_s=startup_time)
    except ValueError as exc:
        fail(str(exc))
    seed = random.randrange(2**31) if seed is None else seed
    names = [r.name for r in refs]
    confinement = confinement.for_bots(names)
    if show is None:
        show = not as_json
    on_move = None
    if show and not as_json:
        typer.echo(game.render(start))
        on_move = show_moves(game, start, names)
    factory = None if no_save else open_writable_db(db)  # before the game, not after it
    confinement.warn()
    with BotPool(limits, sandbox=confinement.settings) as pool:
        level = pool.sandbox_level
        try:
            record = pool.play(
                game, refs, time_control=tcs, start_position=position, seed=seed, on_move=on_move
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
        typer.echo(f"{game.describe()}: " + " vs ".join(names))
        typer.echo(
            "moves: "
            + (" ".join(m.move + ("*" if m.forced else "") for m in record.moves) or "(none)")
        )
    typer.echo(verdict(record))
    if match_id is not None:
        typer.echo(f"saved as match {match_id}")


def _store(
    factory: sessionmaker[Session],
    db: str | None,
    record: MatchRecord,
    refs: list[BotRef],
    level: str,
    out: dict[str, Any],
) -> int:
    """Store the played match; when the database fails now (a full disk, a lock held too
    long), the record goes to a file the one-line error names (exit 1): never lost."""
    from sqlalchemy.exc import SQLAlchemyError

    from bot_arena.db.session import describe_error
    from bot_arena.db.store import save_match

    try:
        with factory.begin() as session:
            return save_match(session, record, refs, sandbox=level)
    except SQLAlchemyError as err:
        kept = keep_unsaved(out, "match")
        fail(f"{describe_error(err, db)}; the game's record is in {kept}", 1)
