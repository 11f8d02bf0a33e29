"""``arena tournament run|resume|list|show``: tournaments stored in the database."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bot_arena.arena.cli.common import (
    AllowReadOption,
    ArenaCommand,
    DbOption,
    MatchRules,
    MemoryOption,
    SandboxOption,
    StartupOption,
    command_group,
    fail,
    open_db,
    open_existing_db,
    open_plain_reads,
    sandbox_options,
    warn_unconfined,
)
from bot_arena.arena.cli.option_sets import with_option_sets
from bot_arena.arena.cli.rating_cmd import WideOption, table_width
from bot_arena.arena.cli.run_config import ConfigOption
from bot_arena.arena.match.text import shown

if TYPE_CHECKING:  # the database, the bots' machinery and the ratings load when a command
    # runs, not for --help
    from sqlalchemy.orm import Session, sessionmaker

    from bot_arena.arena.api.new_run import FormatSettings, NewRun, Store
    from bot_arena.arena.api.sandbox import Confinement
    from bot_arena.arena.formats.pgn_out import PgnOut
    from bot_arena.arena.match.botref import BotRef
    from bot_arena.arena.match.pool import BotPool
    from bot_arena.arena.tournament.ray_executor import RayExecutor
    from bot_arena.arena.tournament.runner import Outcome
    from bot_arena.arena.transport.forkserver_client import ForkServer
    from bot_arena.arena.transport.limits import ResourceLimits
    from bot_arena.db.tournament_list import ListedTournament

tournament_app = command_group(
    name="tournament",
    help="Run, resume and inspect tournaments (round-robin, gauntlet, Swiss, knockout).",
    no_args_is_help=True,
)

DEFAULT_MOVE_TIME = 1.0


class BookOrder(StrEnum):
    SEQUENTIAL = "sequential"
    RANDOM = "random"


class Format(StrEnum):
    ROUND_ROBIN = "round-robin"
    GAUNTLET = "gauntlet"
    SWISS = "swiss"
    KNOCKOUT = "knockout"


class Seeding(StrEnum):
    ORDER = "order"
    RATING = "rating"


class ExecutorKind(StrEnum):
    LOCAL = "local"
    RAY = "ray"


ExecutorOption = Annotated[
    ExecutorKind,
    typer.Option(
        "--executor",
        help="Where matches are played: local job processes, or the actors of a Ray cluster "
        "(pip install 'bot-arena[ray]').",
    ),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        metavar="ADDRESS",
        help="With --executor ray: the cluster (default $ARENA_RAY_ADDRESS; auto: the one this "
        "machine belongs to; none: a local Ray for a try-out).",
    ),
]

RayUnconfinedOption = Annotated[
    bool,
    typer.Option(
        "--ray-allow-unconfined",
        help="With --executor ray: play even though bots are not fully confined (--sandbox "
        "off, or a machine without every layer), accepting that they may use the cluster.",
    ),
]


JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
BotsOption = Annotated[
    list[str] | None, typer.Option("--bot", "-b", help="Bot spec, once per entrant.")
]
MoveTimeOption = Annotated[
    list[float] | None,
    typer.Option(
        "--move-time",
        help=f"Seconds per move (default {DEFAULT_MOVE_TIME:g}): once, or once per --bot "
        "in order (time odds).",
    ),
]
ClockOption = Annotated[
    list[str] | None,
    typer.Option("--clock", help="Game clock BASE+INC seconds: once, or once per --bot in order."),
]
JobsOption = Annotated[
    int | None, typer.Option("--jobs", "-j", help="Parallel matches (default: cores).")
]
SeedOption = Annotated[int | None, typer.Option("--seed", help="Tournament seed (default random).")]
OpeningPliesOption = Annotated[
    int, typer.Option("--opening-plies", help="Random plies before each pair of games.")
]
OpeningsOption = Annotated[
    str | None,
    typer.Option(
        "--openings",
        metavar="FILE",
        help="Opening book: positions a line (FEN/EPD for chess, the game's notation "
        "otherwise) or PGN games; each game pair plays one, colours swapped.",
    ),
]
OpeningsOrderOption = Annotated[
    BookOrder,
    typer.Option("--openings-order", help="Take the book in order or shuffled by the seed."),
]
OpeningsPliesOption = Annotated[
    int | None,
    typer.Option("--openings-plies", help="Cut PGN openings to this many half-moves."),
]
NameOption = Annotated[str | None, typer.Option("--name", help="Tournament name.")]
PgnOutOption = Annotated[
    str | None,
    typer.Option(
        "--pgn-out",
        metavar="FILE",
        help="Append each game to this PGN file as it is stored (two-player games; a resumed "
        "run appends the games it lacks, never one twice).",
    ),
]
ParamOption = Annotated[list[str] | None, typer.Option("--param", "-p", help="Game parameter k=v.")]


@dataclass(frozen=True)
class RayOptions:
    """An option set (``option_sets``): where the matches are played."""

    executor: ExecutorOption = ExecutorKind.LOCAL
    ray_address: RayAddressOption = None
    ray_allow_unconfined: RayUnconfinedOption = False

    def check(self, confinement: Confinement) -> None:
        """The API's checks of these options (ArenaError, before anything is stored)."""
        from bot_arena.arena.api import sandbox

        sandbox.check_executor(self.executor.value, self.ray_address)
        confinement.check_executor(self.executor.value, self.ray_allow_unconfined)


@dataclass(frozen=True)
class NewTournament:
    """An option set (``option_sets``): what ``tournament run`` and ``sprt`` share after the
    game and the field: the clocks, the rules, the openings, the limits, where it is stored
    and played."""

    move_time: MoveTimeOption = None
    clock: ClockOption = None
    rules: MatchRules = field(default_factory=MatchRules)
    memory_mb: MemoryOption = 1024
    startup_time: StartupOption = 10.0
    jobs: JobsOption = None
    seed: SeedOption = None
    opening_plies: OpeningPliesOption = 0
    openings: OpeningsOption = None
    openings_order: OpeningsOrderOption = BookOrder.SEQUENTIAL
    openings_plies: OpeningsPliesOption = None
    name: NameOption = None
    pgn_out: PgnOutOption = None
    param: ParamOption = None
    sandbox: SandboxOption = None
    allow_read: AllowReadOption = None
    db: DbOption = None
    as_json: JsonOption = False
    ray: RayOptions = field(default_factory=RayOptions)
    config: ConfigOption = None  # read first, as the other options' defaults (run_config)

    def run(self, game: str, bots: list[str] | None) -> NewRun:
        """The API's new run these options and ``bots`` ask for."""
        from bot_arena.arena.api.new_run import NewRun
        from bot_arena.arena.api.spec import TournamentSpec

        r = self.rules
        spec = TournamentSpec(
            game, bots or [], self.param, self.memory_mb, self.startup_time, self.jobs,
            self.opening_plies, self.openings, self.openings_plies,
        )  # fmt: skip
        return NewRun(
            spec, self.move_time or [], self.clock or [], r.margin, r.depth, r.nodes,
            r.draw_adjudicate, r.resign_adjudicate, r.max_moves, self.seed,
            self.openings_order.value, self.name, self.pgn_out, self.sandbox, self.allow_read,
            self.ray.executor.value, self.ray.ray_address, self.ray.ray_allow_unconfined,
        )  # fmt: skip


@tournament_app.command("run", cls=ArenaCommand)
@with_option_sets
def run_command(
    game_name: Annotated[
        str, typer.Argument(metavar="GAME", help="Game name (see `arena games`).")
    ],
    bot: BotsOption = None,
    fmt: Annotated[Format, typer.Option("--format", help="Tournament format.")] = (
        Format.ROUND_ROBIN
    ),
    games_per: Annotated[
        int | None,
        typer.Option(
            "--games",
            "-n",
            help="Games per pairing (default: one per seat rotation, 2 for 2p); in a Swiss "
            "per pairing and round, in a knockout per tie before its tie-break.",
        ),
    ] = None,
    rounds: Annotated[
        int | None,
        typer.Option("--rounds", help="Swiss: rounds to play (default ceil(log2 bots))."),
    ] = None,
    seeding: Annotated[
        Seeding,
        typer.Option(
            "--seeding",
            help="Knockout: seed the bracket by the --bot order or by the bots' current "
            "ratings in this game (unrated bots last, in --bot order).",
        ),
    ] = Seeding.ORDER,
    tiebreak_pairs: Annotated[
        int,
        typer.Option(
            "--tiebreak-pairs",
            help="Knockout: extra game pairs for a level tie before a coin from the seed "
            "decides it.",
        ),
    ] = 2,
    new: NewTournament = NewTournament(),  # an option set: its options
) -> None:
    """Play a tournament: a round-robin or gauntlet is stored whole first, a Swiss round by
    round, a knockout tie by tie; then it is played in parallel jobs.

    Every stored result records the sandbox level its bots ran under (confined, partial or off).
    """
    from bot_arena.arena.api.formats import format_settings
    from bot_arena.arena.api.spec import check_format

    check_format(fmt.value, games_per, rounds, tiebreak_pairs, seeding.value)

    def settings(
        factory: sessionmaker[Session], game: str, refs: list[BotRef]
    ) -> dict[str, Any] | None:
        return format_settings(
            fmt.value, games_per, rounds, seeding.value, tiebreak_pairs, factory, game, refs
        )

    start_tournament(game_name, bot, new, fmt.value, games_per, settings, fmt.value)


def start_tournament(
    game_name: str,
    bots: list[str] | None,
    new: NewTournament,
    fmt: str,
    games_per: int | None,
    format_settings: FormatSettings,
    what: str,
) -> None:
    """Store the tournament and play it on the API's one path (``new_run.start``: its checks'
    ArenaError is one line, exit 2), then print its result (``what``: the banner's name for
    it)."""
    from bot_arena.arena.api.new_run import start

    def banner(line: str) -> None:
        from bot_arena.arena.ratings.render import wrap

        typer.echo("\n".join(wrap(line, shutil.get_terminal_size().columns)), err=new.as_json)

    with start(
        new.run(game_name, bots),
        fmt,
        games_per,
        format_settings,
        _store(new.db),
        what=what,
        warn=lambda line: typer.echo(f"warning: {line}", err=True),
        banner=banner,
    ) as run:
        _play(
            run.factory, run.tournament_id, run.refs, new.jobs, new.as_json, run.confinement,
            run.server, run.limits, run.executor, run.left_out, pgn=run.pgn, pool=run.pool,
        )  # fmt: skip


def _store(url: str | None) -> Store:
    """``--db``'s database for a new tournament (``open_db``: a one-line error, exit 2),
    looked at only when the run asks: SQLAlchemy is not imported before the run's helpers
    have started."""
    from bot_arena.arena.api.new_run import Store

    def exists() -> bool:
        from bot_arena.db.session import database_url, exists

        return exists(database_url(url))

    return Store(lambda: open_db(url), exists)


def _executor(ray: RayOptions) -> RayExecutor | None:
    """The Ray executor for ``--executor ray`` (None: local job processes); Ray missing or
    its cluster unreachable is one line, exit 2."""
    if ray.executor != ExecutorKind.RAY:
        return None
    from bot_arena.arena.api.cluster import cluster

    return cluster(ray.executor.value, ray.ray_address, ray.ray_allow_unconfined)


@tournament_app.command("resume", cls=ArenaCommand)
@with_option_sets
def resume_command(
    tournament_id: Annotated[int, typer.Argument(metavar="ID", help="Tournament id.")],
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Resume even if a bot's source changed since or another runner seems to play it.",
        ),
    ] = False,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", help="Parallel matches (default: cores).")
    ] = None,
    sandbox: SandboxOption = None,
    allow_read: AllowReadOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
    pgn_out: PgnOutOption = None,
    ray: RayOptions = RayOptions(),  # an option set: its options
) -> None:
    """Play the matches of an interrupted tournament that are not done yet (each result
    records the sandbox level of this run)."""
    from bot_arena.arena.api.resume import check_jobs, check_resume
    from bot_arena.db.store import lookup_bot

    check_jobs(jobs)
    confinement = sandbox_options(sandbox, allow_read)  # before anything is stored
    ray.check(confinement)
    factory = open_existing_db(db, write=True)
    with factory() as session:  # registered bots looked up in the same session (a second
        # one would wait on this one's lock)
        field = check_resume(
            session, tournament_id, lambda name: lookup_bot(session, name), force=force
        )
    confinement = confinement.for_bots([r.name for r in field.refs])
    if force:  # a forced resume may play another version: an xboard engine is asked again
        from bot_arena.arena.api.checks import check_book_setboard

        check_book_setboard(
            field.refs, field.game, field.starts, field.limits, confinement.settings
        )
    for line in field.changed:
        typer.echo(f"warning: {shown(line)}", err=True)
    for line in field.left_out:
        typer.echo(f"warning: {shown(line)}", err=True)
    from bot_arena.arena.api.pgn_out import open_pgn_out

    pgn = open_pgn_out(pgn_out, field.game)
    try:
        cluster = _executor(ray)
        typer.echo(
            f"tournament {tournament_id}: resuming, {field.to_play} matches to play", err=as_json
        )
        _play(
            factory, tournament_id, field.refs, jobs, as_json, confinement, executor=cluster,
            left_out=field.left_out, skip=field.skip, pgn=pgn, force=force,
        )  # fmt: skip
    finally:
        if pgn is not None:
            pgn.close()


def _play(
    factory: sessionmaker[Session],
    tid: int,
    refs: list[BotRef],
    jobs: int | None,
    as_json: bool,
    confinement: Confinement,
    server: ForkServer | None = None,
    limits: ResourceLimits | None = None,
    executor: RayExecutor | None = None,
    left_out: Sequence[str] = (),
    skip: Sequence[int] = (),
    pgn: PgnOut | None = None,
    force: bool = False,
    pool: BotPool | None = None,
) -> None:
    """Run the tournament and print its summary (``left_out``: a line for each bot left out
    of the field, said after the leaderboard; ``skip``: their field positions on a resume,
    whose matches stay pending; ``pgn``: ``--pgn-out``'s file, each stored game appended;
    ``force``: ``resume --force``, played even while another process seems to play it)."""
    from bot_arena.arena.api.runner_setup import runner
    from bot_arena.arena.tournament.create import TournamentError
    from bot_arena.arena.tournament.ray_executor import ClusterError

    run = runner(
        factory, tid, refs, jobs, confinement, server=server, limits=limits, executor=executor,
        skip=skip, pgn=pgn, warn=lambda line: typer.echo(f"warning: {line}", err=True),
        force=force, pool=pool,
    )  # fmt: skip
    warn_unconfined(confinement)
    try:
        with _terminate_as_interrupt():
            outcome = run.run()
    except KeyboardInterrupt:
        typer.echo(f"interrupted; continue with: arena tournament resume {tid}", err=True)
        raise typer.Exit(130) from None
    except TournamentError as exc:  # its opening book changed, or another process plays it
        fail(str(exc))
    except ClusterError as exc:  # what was played is stored
        if executor is not None and executor.gone:
            # Ray's exit handlers would wait a minute for the cluster that is gone
            typer.echo(f"error: {str(exc).replace(' ID ', f' {tid} ')}", err=True)
            sys.stderr.flush()
            os._exit(1)
        fail(str(exc).replace(" ID ", f" {tid} "), code=1)
    finally:
        if executor is not None:
            executor.close()
    from bot_arena.arena.tournament.summary import format_text, tournament_summary

    with factory() as session:
        summary = tournament_summary(session, tid)
    if as_json:
        summary["outcome"] = _outcome_dict(outcome)
        if left_out:
            summary["left_out"] = list(left_out)
        typer.echo(json.dumps(summary))
    else:
        width = table_width(wide=False)
        typer.echo(_leaderboard_text(factory, tid, summary, width))
        with factory() as session:
            extra = format_text(session, tid, width)
        if extra:
            typer.echo("\n" + "\n".join(extra))
        if left_out:
            typer.echo("\n" + "\n".join(left_out))
    if outcome.interrupted:
        typer.echo(
            f"interrupted after {outcome.done}/{outcome.total} matches; "
            f"continue with: arena tournament resume {tid}",
            err=True,
        )
        raise typer.Exit(130)
    if not outcome.finished and not (skip and not outcome.failed):
        # (the matches of bots left out on a resume stay pending: said under the leaderboard)
        typer.echo(
            f"{outcome.total - outcome.done} matches failed to play "
            f"({shown(outcome.failed[0]) if outcome.failed else 'see above'}); "
            f"retry with: arena tournament resume {tid}",
            err=True,
        )
        raise typer.Exit(1)


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (``kill``, a service manager stopping the run) ends a run as Ctrl-C does:
    what is stored stays, the rest is left to resume, and the command says how."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _outcome_dict(outcome: Outcome) -> dict[str, Any]:
    return {
        "played": outcome.played,
        "done": outcome.done,
        "total": outcome.total,
        "failed": outcome.failed,
        "interrupted": outcome.interrupted,
    }


def _leaderboard_text(
    factory: sessionmaker[Session], tid: int, summary: dict[str, Any], width: int | None
) -> str:
    """The tournament's leaderboard from the ratings module, fitted to ``width`` (None: every
    column); the plain score table when it cannot rate these results (no games yet, or the
    ratings module is absent)."""
    try:
        from bot_arena.arena.ratings.query import LeaderboardError, render_leaderboard
    except ImportError:
        return _standings_table(summary)
    with factory() as session:
        try:
            return render_leaderboard(session, tournament_id=tid, width=width)
        except LeaderboardError:
            return _standings_text(summary, width)


def _standings_text(summary: dict[str, Any], width: int | None) -> str:
    """The standings with every column (``width`` None), or fitted to ``width``: long names
    cut, and the faults as one count, in a column only when some bot has any."""
    if width is None:
        return _standings_table(summary)
    from bot_arena.arena.ratings.render import fit_table, shorten

    standings = summary["standings"]
    faulty = any(s["faults"] for s in standings)
    headers = ["#", "bot", "games", "points", "score %", "W-D-L"] + (["faults"] if faulty else [])

    def body(room: int | None) -> list[list[str]]:
        return [
            [
                str(i + 1),
                shown(s["bot"]) if room is None else shorten(shown(s["bot"]), room),
                str(s["games"]),
                f"{s['points']:g}",
                f"{s['score_pct']:.1f}",
                f"{s['wins']}-{s['draws']}-{s['losses']}",
                *([str(sum(s["faults"].values()))] if faulty else []),
            ]
            for i, s in enumerate(standings)
        ]

    align = ["right", "left", "right", "right", "right", "left", "right"]
    return fit_table(headers, body, width, column=1, colalign=align[: len(headers)])


def _standings_table(summary: dict[str, Any]) -> str:
    from tabulate import tabulate

    rows = [
        [
            i + 1,
            shown(s["bot"]),
            s["games"],
            f"{s['points']:g}",
            f"{s['score_pct']:.1f}",
            f"{s['wins']}-{s['draws']}-{s['losses']}",
            ", ".join(f"{k} {v}" for k, v in s["faults"].items()) or "-",
        ]
        for i, s in enumerate(summary["standings"])
    ]
    return tabulate(rows, headers=["#", "bot", "games", "points", "score %", "W-D-L", "faults"])


@tournament_app.command("list", cls=ArenaCommand)
def list_command(db: DbOption = None, as_json: JsonOption = False) -> None:
    """The tournaments in the database, newest first."""
    from bot_arena.arena.tournament.liveness import interrupted

    rows = []
    for listed in _listed_tournaments(db):
        r = listed.row
        r["interrupted"] = interrupted(listed)  # running, but its runner is gone: said so
        if r["interrupted"]:
            r["resume"] = _resume_command(r["id"], r["format"], r["name"])
        rows.append(r)
    if as_json:
        typer.echo(json.dumps(rows))
        return
    table = [
        [
            r["id"],
            shown(r["name"] or ""),
            r["game"],
            r["format"],
            r["bots"],
            f"{r['done']}/{r['total']}",
            "interrupted" if r["interrupted"] else r["status"],
            r["created"],
        ]
        for r in rows
    ]
    from tabulate import tabulate

    typer.echo(
        tabulate(
            table, headers=["id", "name", "game", "format", "bots", "done", "status", "created"]
        )
    )
    for r in rows:  # its runner is gone (or its heartbeat stale): how to play on
        if r["interrupted"]:
            typer.echo(f"tournament {r['id']} is interrupted; resume with: {shown(r['resume'])}")


def _listed_tournaments(db: str | None) -> list[ListedTournament]:
    """The tournaments listed: of a plain SQLite file by ``sqlite3`` alone, of PostgreSQL by
    psycopg alone (SQLAlchemy is not loaded), else through a session; the same statements
    (``db/tournament_list.py``)."""
    from bot_arena.db.tournament_list import listed_tournaments

    plain = open_plain_reads(db)
    if plain is not None:
        connection, reads = plain
        try:
            return listed_tournaments(reads.rows, reads.json_text)
        finally:
            connection.close()
    from bot_arena.db.results import reads_of

    factory = open_existing_db(db)
    with factory() as session:
        reads = reads_of(session)
        return listed_tournaments(reads.rows, reads.json_text)


def _resume_command(tid: int, fmt: str, name: str | None) -> str:
    """The command that plays an interrupted tournament on (a ladder runs on by its name)."""
    if fmt == "ladder" and name:
        return f"arena ladder run {name}"
    return f"arena tournament resume {tid}"


@tournament_app.command("show", cls=ArenaCommand)
def show_command(
    tournament_id: Annotated[int, typer.Argument(metavar="ID", help="Tournament id.")],
    db: DbOption = None,
    as_json: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """A tournament's settings, progress, standings and crosstable.

    The tables fit the terminal: long names cut in the middle with "…", faults counted in one
    column (only when some bot has any), a crosstable too wide for it in two blocks of columns,
    or for a bigger field the top of the field with a note on how many are left out; --wide
    shows faults by kind and the crosstable in one piece.

    When any result came from bots that were not fully confined, a line says how many, e.g.
    "sandbox   12 of 40 results from bots not fully confined (off 10, partial 2)" (results
    stored before the arena recorded the sandbox count as off); nothing when all were confined.
    """
    from bot_arena.arena.tournament.create import TournamentError
    from bot_arena.arena.tournament.summary import format_text, settings_rows, tournament_summary

    width = None if as_json else table_width(wide)
    factory = open_existing_db(db)
    with factory() as session:
        try:  # the text's crosstable: only the cells it shows at its width (the JSON: all)
            summary = tournament_summary(session, tournament_id, width=width)
        except TournamentError as exc:
            fail(str(exc))
    if as_json:
        typer.echo(json.dumps(summary))
        return
    rows = settings_rows(summary)
    with factory() as session:
        extra = format_text(session, tournament_id, width)
    lines = [
        f"tournament {summary['id']}" + (f" ({shown(summary['name'])})" if summary["name"] else ""),
        *(line for label, text in rows for line in _setting(label, text, width)),
        *(["", *extra] if extra else []),
        "",
        _standings_text(summary, width),
        "",
        _crosstable_text(summary, width),
    ]
    typer.echo("\n".join(lines))


def _setting(label: str, text: str, width: int | None) -> list[str]:
    """One setting of ``tournament show``: the label in a column of its own and the text
    beside it, wrapped to ``width`` under itself (None: one line)."""
    first = f"  {label:<9} "  # a label of ten letters still gets its space
    text = shown(text)  # entrants' names and specs are the users' and the bots' own
    if width is None:
        return [first + text]
    import textwrap

    indent = " " * len(first)
    lines = textwrap.wrap(
        text,
        max(width, len(first) + 20),
        initial_indent=first,
        subsequent_indent=indent,
        break_on_hyphens=False,
        break_long_words=False,  # a file's path stays whole (and copyable), if long
    )
    return lines or [first.rstrip()]


def _crosstable_text(summary: dict[str, Any], width: int | None) -> str:
    """Points / games of each row bot against each column bot, columns numbered as the rows
    (fitted to ``width`` as ``arena crosstable`` fits its own)."""
    from bot_arena.arena.ratings.crosstable import pair_cell
    from bot_arena.arena.ratings.grid import grid_text

    names = [s["bot"] for s in summary["standings"]]
    cross = summary["crosstable"]

    def cell(i: int, j: int) -> str:
        # as `arena crosstable` marks them: "-" a bot against itself, blank not played
        if i == j:
            return "-"
        played = cross.get(names[i], {}).get(names[j])
        return "" if played is None else pair_cell(played["points"], played["games"])

    return grid_text("crosstable", names, [str(i + 1) for i in range(len(names))], cell, width)
