"""``arena ladder create|add|retire|run|show``: a tournament that never ends (the Python API's
``arena/api/ladders.py`` does the work; these commands parse, call it and print)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

import typer

from bot_arena.arena.cli.common import (
    ArenaCommand,
    DbOption,
    MatchRules,
    MemoryOption,
    SandboxOption,
    StartupOption,
    command_group,
    echo_err,
    fail,
    noted_db,
)
from bot_arena.arena.cli.option_sets import Sandboxing, Validation, with_option_sets
from bot_arena.arena.cli.tournament_cmd import (
    BookOrder,
    JobsOption,
    JsonOption,
    OpeningPliesOption,
    OpeningsOption,
    OpeningsOrderOption,
    OpeningsPliesOption,
    ParamOption,
    PgnOutOption,
    RayOptions,
    SeedOption,
    _terminate_as_interrupt,
)
from bot_arena.arena.match.text import shown

if TYPE_CHECKING:
    from bot_arena.arena.api.ladders import LadderView

ladder_app = command_group(
    name="ladder",
    help="A ladder: a tournament that never ends; bots join and retire while it runs, and "
    "each game is the one that tells the most about the standings.",
    no_args_is_help=True,
)

NameArgument = Annotated[str, typer.Argument(metavar="NAME", help="The ladder's name.")]


@dataclass(frozen=True)
class LadderRules:
    """An option set (``option_sets``): what every game of a new ladder is played with."""

    move_time: Annotated[
        float | None, typer.Option("--move-time", help="Seconds per move (default 1).")
    ] = None
    clock: Annotated[str | None, typer.Option("--clock", help="Game clock BASE+INC seconds.")] = (
        None
    )
    rules: MatchRules = field(default_factory=MatchRules)
    opening_plies: OpeningPliesOption = 0
    openings: OpeningsOption = None
    openings_order: OpeningsOrderOption = BookOrder.SEQUENTIAL
    openings_plies: OpeningsPliesOption = None
    param: ParamOption = None
    memory_mb: MemoryOption = 1024
    startup_time: StartupOption = 10.0
    sandbox: SandboxOption = None
    seed: SeedOption = None


@ladder_app.command("create", cls=ArenaCommand)
@with_option_sets
def create_command(
    name: NameArgument,
    game: Annotated[str, typer.Option("--game", "-g", help="Game name (see `arena games`).")],
    suspend_after: Annotated[
        int,
        typer.Option("--suspend-after", help="Suspend a bot after this many faults in a row."),
    ] = 5,
    new: LadderRules = LadderRules(),  # an option set: its options
    db: DbOption = None,
) -> None:
    """Create an empty ladder of GAME; add bots with `arena ladder add`, play it with
    `arena ladder run`."""
    from bot_arena.arena.api.errors import ArenaError
    from bot_arena.arena.api.ladders import ladder_create

    r = new.rules
    try:
        tid = ladder_create(
            name,
            game,
            params=new.param,
            move_time=new.move_time,
            clock=new.clock,
            margin=r.margin,
            depth=r.depth,
            nodes=r.nodes,
            max_moves=r.max_moves,
            draw_adjudicate=r.draw_adjudicate,
            resign_adjudicate=r.resign_adjudicate,
            opening_plies=new.opening_plies,
            openings=new.openings,
            openings_order=new.openings_order.value,
            openings_plies=new.openings_plies,
            memory_mb=new.memory_mb,
            startup_time=new.startup_time,
            sandbox=new.sandbox,
            seed=new.seed,
            suspend_after=suspend_after,
            db=noted_db(db),
        )
    except ArenaError as exc:
        fail(str(exc))
    typer.echo(f"ladder {name} created (tournament {tid}): add bots with: arena ladder add {name}")


@ladder_app.command("add", cls=ArenaCommand)
@with_option_sets
def add_command(
    name: NameArgument,
    specs: Annotated[
        list[str], typer.Argument(metavar="SPEC...", help="Bots: files, registered names, specs.")
    ],
    validation: Validation = Validation(),  # noqa: B008 (an option set: its options)
    db: DbOption = None,
) -> None:
    """Add bots to the ladder, also while it runs. Each plays a validation game in every seat
    first; one that faults is refused with its fault and none is added (exit 2)."""
    from bot_arena.arena.api.errors import ArenaError
    from bot_arena.arena.api.ladders import ladder_add

    v = validation
    try:
        added = ladder_add(
            name, specs, move_time=v.move_time, startup_time=v.startup_time, sandbox=v.sandbox,
            allow_read=v.allow_read, db=noted_db(db), warn=echo_err,
        )  # fmt: skip
    except ArenaError as exc:
        fail(str(exc))
    if v.as_json:
        typer.echo(json.dumps([a.__dict__ for a in added]))
        return
    for a in added:
        typer.echo(f"{shown(a.name)}: added to {name} (sha256 {a.sha256[:12]})")


@ladder_app.command("retire", cls=ArenaCommand)
def retire_command(
    name: NameArgument,
    bot: Annotated[str, typer.Argument(metavar="BOT", help="The entrant's name.")],
    db: DbOption = None,
) -> None:
    """Retire a bot: its results stay, it gets no new game (also while the ladder runs)."""
    from bot_arena.arena.api.errors import ArenaError
    from bot_arena.arena.api.ladders import ladder_retire

    try:
        ladder_retire(name, bot, db=noted_db(db))
    except ArenaError as exc:
        fail(str(exc))
    typer.echo(f"{shown(bot)}: retired from {name}")


@ladder_app.command("run", cls=ArenaCommand)
@with_option_sets
def run_command(
    name: NameArgument,
    jobs: JobsOption = None,
    until_games: Annotated[
        int | None,
        typer.Option("--until-games", help="Stop once the ladder holds this many games."),
    ] = None,
    until_stable: Annotated[
        bool,
        typer.Option(
            "--until-stable", help="Stop once every active bot's rank is known within 2 places."
        ),
    ] = False,
    for_duration: Annotated[
        str | None,
        typer.Option("--for", metavar="DURATION", help="Stop after this long (90s, 30m, 2h)."),
    ] = None,
    sandboxing: Sandboxing = Sandboxing(),  # noqa: B008 (an option set: its options)
    progress: Annotated[
        bool, typer.Option("--progress/--quiet", help="Show each game as it is stored.")
    ] = True,
    db: DbOption = None,
    pgn_out: PgnOutOption = None,
    ray: RayOptions = RayOptions(),  # noqa: B008 (an option set: its options)
) -> None:
    """Play the ladder until --until-games, --for or --until-stable (else until stopped).
    Bots added or retired meanwhile are picked up as it runs; a stopped ladder runs on from
    where it stood."""
    from bot_arena.arena.api.errors import ArenaError
    from bot_arena.arena.api.ladders import ladder_run, parse_duration

    def say(line: str) -> None:
        echo_err(f"ladder {name}: {shown(line)}")

    try:
        seconds = None if for_duration is None else parse_duration(for_duration)
        with _terminate_as_interrupt():
            end = ladder_run(
                name,
                jobs=jobs,
                executor=ray.executor.value,
                ray_address=ray.ray_address,
                ray_allow_unconfined=ray.ray_allow_unconfined,
                until_games=until_games,
                until_stable=until_stable,
                for_seconds=seconds,
                sandbox=sandboxing.sandbox,
                allow_read=sandboxing.allow_read,
                db=noted_db(db),
                say=say,
                progress=progress,
                pgn_out=pgn_out,
            )
    except ArenaError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        echo_err(f"ladder {name}: stopped; run it again to go on from here")
        raise typer.Exit(130) from None
    if end.why == "failed":
        fail(f"matches kept failing ({shown(end.failed[0])}); run it again to retry", code=1)
    echo_err(f"ladder {name}: {end.played} games played ({end.why}), {end.games} stored in all")


@ladder_app.command("show", cls=ArenaCommand)
def show_command(name: NameArgument, as_json: JsonOption = False, db: DbOption = None) -> None:
    """The standings: ratings and ranks with 95% intervals, games, games in play, status.
    The Elo is the leaderboard's (arena leaderboard --tournament ID: the pool's mean 1500)."""
    from bot_arena.arena.api.errors import ArenaError
    from bot_arena.arena.api.ladders import ladder_show

    try:
        view = ladder_show(name, db=noted_db(db))
    except ArenaError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(view.to_dict()))
        return
    typer.echo("\n".join(standings_text(view)))


def standings_text(view: LadderView) -> list[str]:
    """The standings as a table (names shown as text)."""
    lines = [
        f"ladder {view.name} (tournament {view.id}): {view.game}, {view.games} games stored, "
        f"{view.in_play} in play"
    ]
    header = ("rank", "95% ranks", "bot", "Elo", "95% Elo", "games", "in play", "status")
    rows = [header]
    for s in view.standings:
        status = s.status if s.status != "suspended" else f"suspended ({s.faults_in_row} faults)"
        ranks = f"{s.best}" if s.settled else f"{s.best}-{s.worst}"
        elo = "-" if s.elo is None else f"{s.elo:.0f}"
        spread = "-" if s.low is None or s.high is None else f"{s.low:.0f}..{s.high:.0f}"
        rows.append(
            (
                str(s.rank), ranks, shown(s.name), elo, spread, str(s.games), str(s.in_play),
                status,
            )
        )  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        cells = [
            c.rjust(w) if i in (0, 3, 5, 6) else c.ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    if not view.standings:
        lines.append(f"no bot yet: arena ladder add {view.name} SPEC")
    return lines
