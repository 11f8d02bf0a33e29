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

from bot_arena.arena.api import checks, sandbox
from bot_arena.arena.api.bots import BotLike, spec_of
from bot_arena.arena.api.errors import ArenaError
from bot_arena.arena.api.formats import format_settings
from bot_arena.arena.api.play import floats, param_list, texts
from bot_arena.arena.api.spec import (
    DEFAULT_MOVE_TIME,
    MatchOptions,
    SprtSpec,
    TournamentSpec,
    check_format,
)
from bot_arena.arena.match.timecontrol import DEFAULT_MARGIN

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker
    from typing_extensions import Unpack  # typing's own from Python 3.12

    from bot_arena.arena.match.botref import BotRef
    from bot_arena.arena.tournament.ray_executor import RayExecutor


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
    seeding: str = "order",
    **options: Unpack[MatchOptions],
) -> Tournament:
    """Play a tournament of ``game`` between ``bots`` (spec strings, bot files, or functions
    and classes of this program) and return its results. The options are those of ``arena
    tournament run`` (``MatchOptions`` for those ``sprt`` shares); bad input raises ArenaError
    with its message before anything is stored or started."""
    check_format(format, games, rounds, tiebreak_pairs, seeding)

    def settings(factory: sessionmaker[Session], refs: list[BotRef]) -> dict[str, Any] | None:
        return format_settings(format, games, rounds, seeding, tiebreak_pairs, factory, game, refs)

    return _run(game, bots, options, format, games, settings)


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
    **options: Unpack[MatchOptions],
) -> SprtResult:
    """Is ``new`` stronger than ``base``? Game pairs until the SPRT decides (or ``max_games``),
    as ``arena sprt`` plays them (``MatchOptions``: the options it shares with ``tournament``)."""
    test = SprtSpec(elo0, elo1, alpha, beta, model, statistics, max_games).validate(2)
    played = _run(game, [new, base], options, "sprt", 2, lambda factory, refs: test)
    state = dict(played.summary["sprt"])
    return SprtResult(
        state["decision"], state["verdict"], state["llr"], state["games"], state, played
    )


def _run(
    game: str,
    bots: Sequence[BotLike],
    options: MatchOptions,
    fmt: str,
    games_per: int | None,
    settings: Callable[[sessionmaker[Session], list[BotRef]], Mapping[str, Any] | None],
) -> Tournament:
    """Check, store, play and sum up (``tournament_cmd.start_tournament``'s steps); each of
    ``options``' defaults is written here, once."""
    from bot_arena.arena.api.pgn_out import check_pgn_out, open_pgn_out, pgn_hook
    from bot_arena.arena.match.confinement import server_env
    from bot_arena.arena.match.pool import BotPool
    from bot_arena.arena.tournament.create import TournamentError, check_field, create
    from bot_arena.arena.tournament.job_handle import start_job_server
    from bot_arena.arena.tournament.runner import Runner, default_jobs
    from bot_arena.arena.tournament.schedule import ScheduleError

    o = options
    openings, openings_order = o.get("openings"), o.get("openings_order", "sequential")
    executor, ray_address = o.get("executor", "local"), o.get("ray_address")
    db, progress, jobs = o.get("db"), o.get("progress", False), o.get("jobs")
    with tempfile.TemporaryDirectory(prefix="arena-") as folder:
        bot_folder = Path(folder, "bots")
        bot_folder.mkdir()
        spec = TournamentSpec(
            game,
            [spec_of(b, bot_folder) for b in bots],
            param_list(o.get("params")),
            o.get("memory_mb", 1024),
            o.get("startup_time", 10.0),
            jobs,
            o.get("opening_plies", 0),
            openings,
            o.get("openings_plies"),
        )
        checked = spec.validate()
        confined = sandbox.confinement(o.get("sandbox"), o.get("allow_read"))
        sandbox.check_executor(executor, ray_address)
        confined.check_executor(executor, o.get("ray_allow_unconfined", False))
        with _database(db, folder) as factory:
            refs = checks.resolve_bots(checked.specs, _lookup(factory) if db else None)
            try:
                check_field(refs)
            except TournamentError as exc:
                raise ArenaError(str(exc)) from None
            checks.check_engines(refs, checked.game)
            check_pgn_out(o.get("pgn_out"), checked.game)
            limits = checked.limits
            checks.check_setboard(
                refs,
                checked.game,
                [(o.moves, o.position) for o in checked.book],
                lambda: BotPool(limits, sandbox=confined.for_bots([r.name for r in refs]).settings),
            )
            rules = checks.adjudication(
                o.get("draw_adjudicate"), o.get("resign_adjudicate"), o.get("max_moves")
            )
            confined = confined.for_bots([r.name for r in refs])
            tcs = checks.time_controls(
                refs,
                floats(o.get("move_time")),
                texts(o.get("clock")),
                o.get("margin", DEFAULT_MARGIN),
                DEFAULT_MOVE_TIME,
                each="--bot",
                depth=o.get("depth"),
                nodes=o.get("nodes"),
            )
            seed = o.get("seed")
            seed = seed if seed is not None else secrets.randbits(31)
            extra = settings(factory, refs)
            actors = cluster(executor, ray_address, o.get("ray_allow_unconfined", False))
            pgn = open_pgn_out(o.get("pgn_out"), checked.game)
            server = None if actors is not None else start_job_server(server_env(confined.level))
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
                        opening_plies=o.get("opening_plies", 0),
                        name=o.get("name"),
                        time_controls=tcs,
                        limits=checked.limits,
                        book=checked.book,
                        book_order=openings_order,
                        adjudication=rules,
                        book_settings=None
                        if openings is None
                        else {
                            "file": os.path.abspath(openings),
                            "order": openings_order,
                            "plies": o.get("openings_plies"),
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
                    # on Ray: one actor per CPU the cluster offers unless jobs caps them
                    jobs=(jobs or 0) if actors is not None else (jobs or default_jobs()),
                    forkserver=server,
                    sandbox=confined.settings,
                    limits=checked.limits,
                    executor=actors,
                    progress_stream=None if progress else io.StringIO(),
                    tty=None if progress else False,
                    stored_hook=pgn_hook(factory, pgn, tid),
                )
                outcome = runner.run()
            finally:
                if server is not None:
                    server.close()
                if pgn is not None:
                    pgn.close()
                if actors is not None:
                    actors.close()
            return _results(factory, tid, outcome.finished)


def cluster(executor: str, address: str | None, allow_unconfined: bool) -> RayExecutor | None:
    """The Ray executor for ``executor="ray"`` (None: local job processes); Ray missing or
    its cluster unreachable raises ArenaError."""
    if executor != sandbox.RAY:
        return None
    from bot_arena.arena.tournament.ray_executor import ClusterError, RayExecutor

    try:
        return RayExecutor(_address(address), allow_unconfined=allow_unconfined)
    except ClusterError as exc:
        raise ArenaError(str(exc)) from None


def check_cluster(address: str | None) -> None:
    """What ``cluster`` checks before it joins, without joining (``arena serve`` hands the
    cluster to its ladder runners): Ray installed, and something answering at a
    ``host:port`` address; ArenaError (one line) at once otherwise."""
    from bot_arena.arena.tournament.ray_executor import ClusterError, joinable

    try:
        joinable(_address(address))
    except ClusterError as exc:
        raise ArenaError(str(exc)) from None


def _address(address: str | None) -> str | None:
    """``--ray-address``'s word ``none``: no cluster, a local Ray (``RayExecutor``'s None)."""
    return None if address == "none" else address


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
