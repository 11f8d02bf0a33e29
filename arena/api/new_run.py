"""A new tournament, from its options to its stored schedule and its helpers started: the one
path of ``arena tournament run``, ``arena sprt``, ``tournament()`` and ``sprt()``. Each caller
says only where the database is (``Store``) and what becomes of a warning and of the banner;
every check raises ArenaError with the CLI's line, before anything is stored.

The run's helpers start as soon as what they need is known, each beside the work that follows,
not after it: the sandbox's probe before the options are checked; the bots' fork server (a fresh
interpreter that imports the worker's modules, about 0.4 s) once the probe has given the level,
before the bots are resolved and the tournament is stored; a ``jobs=1`` run's chess engines (a
net loaded, a few tenths of a second) before the database is opened and the schedule written.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot_arena.arena.api import checks, sandbox
from bot_arena.arena.api.errors import ArenaError
from bot_arena.arena.api.spec import DEFAULT_MOVE_TIME, TournamentSpec
from bot_arena.arena.match.timecontrol import DEFAULT_MARGIN

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from bot_arena.arena.api.sandbox import Confinement
    from bot_arena.arena.formats.pgn_out import PgnOut
    from bot_arena.arena.match.botref import BotRef
    from bot_arena.arena.match.pool import BotPool
    from bot_arena.arena.tournament.ray_executor import RayExecutor
    from bot_arena.arena.transport.forkserver_client import ForkServer
    from bot_arena.arena.transport.limits import ResourceLimits
    from bot_arena.games.base import Game

FormatSettings = Callable[
    ["sessionmaker[Session]", str, "list[BotRef]"], "Mapping[str, Any] | None"
]
"""A format's own settings, worked out once the database is open (the game's name, the field)."""


@dataclass(frozen=True)
class NewRun:
    """A new tournament's options besides its format: its spec (the game, the bots as spec
    strings, the limits and the book) and those ``tournament run`` and ``sprt`` share (each
    as its CLI option: ``move_time``/``clock`` once for all or once per bot)."""

    spec: TournamentSpec
    move_time: Sequence[float] = ()
    clock: Sequence[str] = ()
    margin: float = DEFAULT_MARGIN
    depth: int | None = None
    nodes: int | None = None
    draw_adjudicate: str | None = None
    resign_adjudicate: str | None = None
    max_moves: int | None = None
    seed: int | None = None
    openings_order: str = "sequential"
    name: str | None = None
    pgn_out: str | None = None
    sandbox: str | None = None
    allow_read: Sequence[str] | None = None
    executor: str = "local"
    ray_address: str | None = None
    ray_allow_unconfined: bool = False


@dataclass(frozen=True)
class Store:
    """Where the tournament is stored: ``open`` opens (or creates) the database, raising
    ArenaError (or exiting, for the CLI) when it cannot; ``exists``: is there a database
    already, whose registered bots a spec may name (none: nothing is opened to look)."""

    open: Callable[[], sessionmaker[Session]]
    exists: Callable[[], bool]


@dataclass(frozen=True)
class Started:
    """A tournament stored and ready to play, with its helpers started: the fork server (None
    on Ray), a ``jobs=1`` run's pool of engines started ahead (the run takes and closes it),
    ``--pgn-out``'s file, the Ray executor. ``left_out``: a line for each bot left out."""

    factory: sessionmaker[Session]
    tournament_id: int
    game: Game[Any, Any]
    refs: list[BotRef]
    limits: ResourceLimits
    confinement: Confinement
    left_out: list[str]
    server: ForkServer | None
    pool: BotPool | None
    pgn: PgnOut | None
    executor: RayExecutor | None


@contextlib.contextmanager
def start(
    run: NewRun,
    fmt: str,
    games_per: int | None,
    format_settings: FormatSettings,
    store: Store,
    *,
    what: str,
    warn: Callable[[str], None],
    banner: Callable[[str], None] | None = None,
) -> Iterator[Started]:
    """Check ``run`` (the CLI's order), resolve its field, start its helpers, open the
    database and store the tournament (format ``fmt``, ``games_per`` a pairing); then
    ``banner`` (if given) is told the run's line (``what``: its name for the format, as
    ``round-robin`` or ``SPRT``). A bot registered in the database that can no longer be loaded
    is left out, and ``warn`` told why. The helpers are closed on the way out."""
    sandbox.probe_ahead(run.sandbox)
    from bot_arena.arena.api.pgn_out import check_pgn_out

    with contextlib.ExitStack() as helpers:
        from bot_arena.arena.match.botspec import hash_ahead

        hashing = hash_ahead(run.spec.bots)  # the engines' digests, beside the checks
        if hashing is not None:
            helpers.callback(hashing.join)
        checked = run.spec.validate()
        check_pgn_out(run.pgn_out, checked.game)
        # the bots' fork server imports while the sandbox's probe is read, the bots are resolved
        # and the schedule written; a run its options refuse starts none (a fresh interpreter's
        # start-up, about 0.2 s of CPU, for nothing)
        server = _server_ahead(run, helpers)
        confinement = sandbox.confinement(run.sandbox, run.allow_read)
        sandbox.check_executor(run.executor, run.ray_address)
        confinement.check_executor(run.executor, run.ray_allow_unconfined)
        if run.executor != sandbox.RAY:
            server = _server_for(confinement.level, server, helpers)
        lookup, opened = _registered(store)
        specs, refs, left_out = _field(checked.specs, lookup, warn)
        game, limits, book = checked.game, checked.limits, checked.book
        checks.check_engines(refs, game)
        rules = checks.adjudication(run.draw_adjudicate, run.resign_adjudicate, run.max_moves)
        confinement = confinement.for_bots([ref.name for ref in refs])
        tcs = checks.time_controls(
            refs,
            run.move_time,
            run.clock,
            run.margin,
            DEFAULT_MOVE_TIME,
            each="--bot",
            depth=run.depth,
            nodes=run.nodes,
        )
        checks.check_book_setboard(refs, game, book, limits, confinement.settings)
        from bot_arena.arena.api.pgn_out import open_pgn_out

        pgn = open_pgn_out(run.pgn_out, game)  # before the database is made
        if pgn is not None:
            helpers.callback(pgn.close)
        pool = _engines_ahead(refs, run.spec.jobs, limits, confinement, server)
        if pool is not None:
            helpers.callback(pool.close)  # the run closed it, unless it stopped before it played
        factory = opened[0] if opened else store.open()
        if pool is not None:  # the engines have loaded meanwhile: their options set now
            pool.hear_ahead()
        seed = run.seed if run.seed is not None else secrets.randbits(31)
        extra = format_settings(factory, game.name, refs)
        from bot_arena.arena.api.cluster import cluster

        executor = cluster(run.executor, run.ray_address, run.ray_allow_unconfined)
        if executor is not None:
            helpers.callback(executor.close)
            executor.ask_ahead(run.spec.jobs)  # they start while the tournament is stored
        from bot_arena.arena.tournament.create import TournamentError, create
        from bot_arena.arena.tournament.schedule import ScheduleError

        openings = run.spec.openings
        try:
            tid = create(
                factory,
                game,
                specs,
                refs,
                fmt=fmt,
                games_per_group=games_per,
                time_control=tcs[0],
                seed=seed,
                opening_plies=run.spec.opening_plies,
                name=run.name,
                time_controls=tcs,
                limits=limits,
                book=book,
                adjudication=rules,
                book_order=run.openings_order,
                book_settings=None
                if openings is None
                else {
                    "file": os.path.abspath(openings),
                    "order": run.openings_order,
                    "plies": run.spec.openings_plies,
                    "entries": len(book),
                },
                format_settings=extra,
            )
        except (ScheduleError, TournamentError) as exc:
            raise ArenaError(str(exc)) from None
        if pool is not None:  # those that had not answered yet
            pool.hear_ahead()
        if banner is not None:
            with factory() as session:
                total = _expected_total(session, tid)
            odds = "time odds" if len(set(tcs)) > 1 else tcs[0].describe()
            banner(
                f"tournament {tid}: {what} of {len(refs)} bots, {game.describe()},"
                f" {total} matches, {odds}, seed {seed}"
            )
        yield Started(
            factory, tid, game, refs, limits, confinement, left_out, server, pool, pgn, executor
        )


def _server_ahead(run: NewRun, helpers: contextlib.ExitStack) -> ForkServer | None:
    """The fork server of a local run, started before the sandbox's probe has answered: its
    environment is the one for confined bots unless ``--sandbox off`` (``_server_for`` starts
    another in the rare case the probe finds no layer at all). None on Ray, or when the
    sandbox's word is not a mode (refused by the checks that follow)."""
    from bot_arena.arena.match.confinement import server_env
    from bot_arena.arena.transport.sandbox.mode import CONFINED, UNCONFINED, Mode

    if run.executor == sandbox.RAY:
        return None
    try:
        mode = checks.sandbox_mode(run.sandbox)
    except ArenaError:
        return None
    from bot_arena.arena.tournament.job_handle import start_job_server

    level = UNCONFINED if mode is Mode.OFF else CONFINED
    server = start_job_server(server_env(level))
    if server is not None:
        helpers.callback(server.release)
    return server


def _server_for(
    level: str, server: ForkServer | None, helpers: contextlib.ExitStack
) -> ForkServer | None:
    """The fork server for bots run at ``level``: ``server``, started ahead, when its
    environment is that level's, else a new one (the one started ahead closed)."""
    from bot_arena.arena.match.confinement import server_env

    env = server_env(level)
    if server is not None and server.env == env:
        return server
    if server is not None:
        server.close()
    from bot_arena.arena.tournament.job_handle import start_job_server

    server = start_job_server(env)
    if server is not None:
        helpers.callback(server.release)
    return server


def _registered(store: Store) -> tuple[Callable[[str], BotRef | None], list[Any]]:
    """A registered-name lookup that opens the database only when a spec needs it (so a bad
    bot spec never creates a database file), and the factory it opened (none yet)."""
    opened: list[sessionmaker[Session]] = []

    def lookup(name: str) -> BotRef | None:
        from bot_arena.db.store import lookup_bot

        if not opened:
            if not store.exists():
                return None
            opened.append(store.open())
        with opened[0]() as session:
            return lookup_bot(session, name)

    return lookup, opened


def _field(
    specs: Sequence[str], lookup: Callable[[str], BotRef | None], warn: Callable[[str], None]
) -> tuple[list[str], list[BotRef], list[str]]:
    """The specs kept, the bots they name (clashing file names told apart) and a line for each
    bot left out: one registered in the database whose files can no longer be loaded (said at
    once through ``warn``), if at least two bots are left."""
    from bot_arena.arena.match.botref import BotSpecError, UnloadableBot
    from bot_arena.arena.match.botspec import distinct_names, resolve
    from bot_arena.arena.tournament.field import TournamentError, check_field

    kept: list[str] = []
    refs: list[BotRef] = []
    left_out: list[str] = []
    try:
        for spec in specs:
            try:
                refs.append(resolve(spec, lookup))
            except UnloadableBot as exc:
                left_out.append(f"{exc}: left out of the tournament, none of its games played")
                warn(left_out[-1])
                continue
            kept.append(spec)
        if len(refs) < 2:
            raise ArenaError("a tournament needs at least two bots that can be loaded")
        refs = distinct_names(kept, refs)
        check_field(refs)
    except (BotSpecError, TournamentError) as exc:
        raise ArenaError(str(exc)) from None
    return kept, refs, left_out


def _engines_ahead(
    refs: list[BotRef],
    jobs: int | None,
    limits: ResourceLimits,
    confinement: Confinement,
    server: ForkServer | None,
) -> BotPool | None:
    """The pool of a ``jobs=1`` run of engines, its engines started now (``prestart``), or
    None. A chess engine takes a few tenths of a second to start (stockfish loads its net
    before it answers ``uci``): started here, that overlaps the opening of the database and
    the writing of the schedule instead of coming after them. Python bots start in
    milliseconds (forks of the server) and start with the run."""
    from bot_arena.arena.match.botref import ENGINES
    from bot_arena.arena.match.pool import BotPool

    if jobs != 1 or server is None or not any(ref.kind in ENGINES for ref in refs):
        return None
    pool = BotPool(limits, forkserver=server, sandbox=confinement.settings)
    pool.prestart(refs)
    return pool


def _expected_total(session: Session, tid: int) -> str:
    """The banner's number of matches: those stored, or for a format that makes them as it
    goes, as many as can be known (``up to`` for an SPRT, ``at least`` for a knockout)."""
    from bot_arena.arena.tournament.create import load_tournament
    from bot_arena.arena.tournament.directors import load_director
    from bot_arena.db import queries

    tournament = load_tournament(session, tid)
    director = load_director(session, tournament)
    if director is None:
        return str(sum(queries.status_counts(session, tid).values()))
    prefix = {"sprt": "up to ", "knockout": "at least "}.get(tournament.format, "")
    return f"{prefix}{director.expected_total()}"
