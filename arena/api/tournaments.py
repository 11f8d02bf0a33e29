"""``tournament`` and ``sprt``: a tournament stored, played in parallel confined jobs and
summed up, as ``arena tournament run`` and ``arena sprt`` do; in a temporary database (deleted
when the call returns) unless ``db=`` names one."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import secrets
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot_arena.arena.api import checks
from bot_arena.arena.api.bots import BotLike, spec_of
from bot_arena.arena.api.errors import ArenaError
from bot_arena.arena.api.play import floats, param_list, texts
from bot_arena.arena.api.spec import DEFAULT_MOVE_TIME, SprtSpec, TournamentSpec, check_format
from bot_arena.arena.match.timecontrol import DEFAULT_MARGIN

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from bot_arena.arena.match.botref import BotRef


@dataclass(frozen=True)
class Tournament:
    """A played tournament: ``leaderboard`` holds the rows of ``arena leaderboard --tournament
    ID --json`` (empty when no game could be rated), ``crosstable`` points and games of each
    bot against each other, ``matches`` each done match's seats (bot, rank, score),
    ``summary`` everything ``arena tournament show ID --json`` prints."""

    id: int
    leaderboard: list[dict[str, Any]]
    crosstable: dict[str, dict[str, dict[str, float]]]
    matches: list[dict[str, Any]]
    summary: dict[str, Any]
    finished: bool


@dataclass(frozen=True)
class SprtResult:
    """A finished SPRT: ``decision`` ``"H1"`` (NEW is better by elo1), ``"H0"`` (not better)
    or None (no decision within max_games); ``verdict`` says it in words; ``state`` holds the
    LLR, its bounds, Elo and nElo with intervals and the pair counts."""

    decision: str | None
    verdict: str
    llr: float
    games: int
    state: dict[str, Any]
    tournament: Tournament


def tournament(
    game: str,
    bots: Sequence[BotLike],
    *,
    format: str = "round-robin",
    games: int | None = None,
    rounds: int | None = None,
    tiebreak_pairs: int = 2,
    move_time: float | Sequence[float] | None = None,
    clock: str | Sequence[str] | None = None,
    margin: float = DEFAULT_MARGIN,
    max_moves: int | None = None,
    draw_adjudicate: str | None = None,
    resign_adjudicate: str | None = None,
    depth: int | None = None,
    nodes: int | None = None,
    jobs: int | None = None,
    seed: int | None = None,
    params: dict[str, object] | Sequence[str] | None = None,
    opening_plies: int = 0,
    openings: str | None = None,
    openings_order: str = "sequential",
    openings_plies: int | None = None,
    memory_mb: int = 1024,
    startup_time: float = 10.0,
    sandbox: str | None = None,
    name: str | None = None,
    db: str | None = None,
    progress: bool = False,
) -> Tournament:
    """Play a tournament of ``game`` between ``bots`` (spec strings, bot files, or functions
    and classes of this program) and return its results. The options are those of ``arena
    tournament run``; bad input raises ArenaError with its message before anything is stored
    or started. ``progress``: the progress lines on stderr."""
    check_format(format, games, rounds, tiebreak_pairs)
    options = _Options(game, bots, move_time, clock, margin, max_moves, jobs, seed, params)
    options = dataclasses.replace(
        options,
        opening_plies=opening_plies,
        openings=openings,
        openings_order=openings_order,
        draw_adjudicate=draw_adjudicate,
        resign_adjudicate=resign_adjudicate,
        depth=depth,
        nodes=nodes,
        openings_plies=openings_plies,
        memory_mb=memory_mb,
        startup_time=startup_time,
        sandbox=sandbox,
        name=name,
        db=db,
        progress=progress,
    )

    def settings(refs: list[BotRef]) -> dict[str, Any] | None:
        per = games if games is not None else 2
        if format == "swiss":
            from bot_arena.arena.tournament.directors.swiss import default_rounds

            return {"rounds": rounds or default_rounds(len(refs)), "games": per}
        if format == "knockout":
            order = list(range(len(refs)))
            return {
                "seeding": order,
                "seeded_by": "order",
                "games": per,
                "tiebreak_pairs": tiebreak_pairs,
            }
        return None

    return _run(options, format, games, settings)


def sprt(
    game: str,
    new: BotLike,
    base: BotLike,
    *,
    elo0: float = 0.0,
    elo1: float = 5.0,
    alpha: float = 0.05,
    beta: float = 0.05,
    model: str = "normalized",
    statistics: str = "pentanomial",
    max_games: int = 100_000,
    move_time: float | Sequence[float] | None = None,
    clock: str | Sequence[str] | None = None,
    margin: float = DEFAULT_MARGIN,
    max_moves: int | None = None,
    draw_adjudicate: str | None = None,
    resign_adjudicate: str | None = None,
    depth: int | None = None,
    nodes: int | None = None,
    jobs: int | None = None,
    seed: int | None = None,
    params: dict[str, object] | Sequence[str] | None = None,
    opening_plies: int = 0,
    openings: str | None = None,
    openings_order: str = "sequential",
    memory_mb: int = 1024,
    startup_time: float = 10.0,
    sandbox: str | None = None,
    db: str | None = None,
    progress: bool = False,
) -> SprtResult:
    """Is ``new`` stronger than ``base``? Game pairs until the SPRT decides (or ``max_games``),
    as ``arena sprt`` plays them."""
    test = SprtSpec(elo0, elo1, alpha, beta, model, statistics, max_games).validate(2)
    options = _Options(game, [new, base], move_time, clock, margin, max_moves, jobs, seed, params)
    options = dataclasses.replace(
        options,
        opening_plies=opening_plies,
        openings=openings,
        openings_order=openings_order,
        draw_adjudicate=draw_adjudicate,
        resign_adjudicate=resign_adjudicate,
        depth=depth,
        nodes=nodes,
        memory_mb=memory_mb,
        startup_time=startup_time,
        sandbox=sandbox,
        db=db,
        progress=progress,
    )
    played = _run(options, "sprt", 2, lambda refs: test)
    state = dict(played.summary["sprt"])
    return SprtResult(
        state["decision"], state["verdict"], state["llr"], state["games"], state, played
    )


@dataclass(frozen=True)
class _Options:
    game: str
    bots: Sequence[BotLike]
    move_time: float | Sequence[float] | None
    clock: str | Sequence[str] | None
    margin: float
    max_moves: int | None
    jobs: int | None
    seed: int | None
    params: dict[str, object] | Sequence[str] | None
    opening_plies: int = 0
    openings: str | None = None
    openings_plies: int | None = None
    openings_order: str = "sequential"
    draw_adjudicate: str | None = None
    resign_adjudicate: str | None = None
    depth: int | None = None
    nodes: int | None = None
    memory_mb: int = 1024
    startup_time: float = 10.0
    sandbox: str | None = None
    name: str | None = None
    db: str | None = None
    progress: bool = False


def _run(
    options: _Options,
    fmt: str,
    games_per: int | None,
    settings: Callable[[list[BotRef]], Mapping[str, Any] | None],
) -> Tournament:
    """Check, store, play and sum up (``tournament_cmd.start_tournament``'s steps)."""
    from bot_arena.arena.match.confinement import server_env
    from bot_arena.arena.tournament.create import TournamentError, check_field, create
    from bot_arena.arena.tournament.job_handle import start_job_server
    from bot_arena.arena.tournament.runner import Runner, default_jobs
    from bot_arena.arena.tournament.schedule import ScheduleError
    from bot_arena.arena.transport.sandbox.mode import SandboxSettings

    with tempfile.TemporaryDirectory(prefix="arena-") as folder:
        bot_folder = Path(folder, "bots")
        bot_folder.mkdir()
        spec = TournamentSpec(
            options.game,
            [spec_of(b, bot_folder) for b in options.bots],
            param_list(options.params),
            options.memory_mb,
            options.startup_time,
            options.jobs,
            options.opening_plies,
            options.openings,
            options.openings_plies,
        )
        checked = spec.validate()
        mode = checks.sandbox_mode(options.sandbox)
        level, _ = checks.sandbox_level(mode)
        with _database(options.db, folder) as factory:
            refs = checks.resolve_bots(checked.specs, _lookup(factory) if options.db else None)
            try:
                check_field(refs)
            except TournamentError as exc:
                raise ArenaError(str(exc)) from None
            checks.check_engines(refs, checked.game)
            rules = checks.adjudication(
                options.draw_adjudicate, options.resign_adjudicate, options.max_moves
            )
            tcs = checks.time_controls(
                refs,
                floats(options.move_time),
                texts(options.clock),
                options.margin,
                DEFAULT_MOVE_TIME,
                each="--bot",
                depth=options.depth,
                nodes=options.nodes,
            )
            seed = options.seed if options.seed is not None else secrets.randbits(31)
            extra = settings(refs)
            server = start_job_server(server_env(level))
            try:
                try:
                    tid = create(
                        factory,
                        checked.game,
                        checked.specs,
                        refs,
                        fmt=fmt,
                        games_per_group=games_per,
                        time_control=tcs[0],
                        seed=seed,
                        opening_plies=options.opening_plies,
                        name=options.name,
                        time_controls=tcs,
                        limits=checked.limits,
                        book=checked.book,
                        book_order=options.openings_order,
                        adjudication=rules,
                        book_settings=None
                        if options.openings is None
                        else {
                            "file": os.path.abspath(options.openings),
                            "order": options.openings_order,
                            "plies": options.openings_plies,
                            "entries": len(checked.book),
                        },
                        format_settings=extra,
                    )
                except (ScheduleError, TournamentError) as exc:
                    raise ArenaError(str(exc)) from None
                runner = Runner(
                    factory,
                    tid,
                    refs,
                    jobs=options.jobs or default_jobs(),
                    forkserver=server,
                    sandbox=SandboxSettings(mode),
                    limits=checked.limits,
                    progress_stream=None if options.progress else io.StringIO(),
                    tty=None if options.progress else False,
                )
                outcome = runner.run()
            finally:
                if server is not None:
                    server.close()
            return _results(factory, tid, outcome.finished)


@contextlib.contextmanager
def _database(url: str | None, folder: str) -> Iterator[sessionmaker[Session]]:
    """The database named by ``url``, else a SQLite file in ``folder`` (the call's temporary
    folder): the runner's writer thread and its jobs open connections of their own, which an
    in-memory database would not share."""
    from bot_arena.db.session import (
        DatabaseOpenError,
        database_url,
        make_engine,
        session_factory,
        sqlite_path,
    )

    if (
        url is not None
        and database_url(url).startswith("sqlite")
        and not sqlite_path(database_url(url))
    ):
        raise ArenaError(
            f"db={url!r} is an in-memory database, which the tournament's writer and jobs "
            "cannot share: leave db out (a temporary database) or name a file"
        )
    try:
        engine = make_engine(url or f"sqlite:///{Path(folder, 'arena.db')}")
    except DatabaseOpenError as exc:
        raise ArenaError(str(exc)) from None
    try:
        yield session_factory(engine)
    finally:
        engine.dispose()


def _lookup(factory: sessionmaker[Session]) -> Callable[[str], BotRef | None]:
    """Bots registered in the database by name (``arena bots add``)."""
    from bot_arena.db.store import lookup_bot

    def lookup(name: str) -> BotRef | None:
        with factory() as session:
            return lookup_bot(session, name)

    return lookup


def _results(factory: sessionmaker[Session], tid: int, finished: bool) -> Tournament:
    from bot_arena.arena.ratings.query import LeaderboardError, render_leaderboard
    from bot_arena.arena.tournament.summary import tournament_summary
    from bot_arena.db import queries

    with factory() as session:
        summary = tournament_summary(session, tid)
        try:
            board = json.loads(render_leaderboard(session, tournament_id=tid, fmt="json"))
        except LeaderboardError:
            board = []
        matches = [dataclasses.asdict(r) for r in queries.results(session, tid)]
    return Tournament(tid, board, summary["crosstable"], matches, summary, finished)
