"""``tournament`` and ``sprt``: a tournament stored, played in parallel confined jobs and
summed up, as ``arena tournament run`` and ``arena sprt`` do; in a temporary database (deleted
when the call returns) unless ``db=`` names one."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot_arena.arena.api.bots import BotLike, spec_of
from bot_arena.arena.api.errors import ArenaError
from bot_arena.arena.api.formats import format_settings
from bot_arena.arena.api.new_run import FormatSettings, Store
from bot_arena.arena.api.play import floats, param_list, texts
from bot_arena.arena.api.spec import MatchOptions, SprtSpec, TournamentSpec, check_format
from bot_arena.arena.match.timecontrol import DEFAULT_MARGIN

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlalchemy.orm import Session, sessionmaker
    from typing_extensions import Unpack  # typing's own from Python 3.12

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
    seeding: str = "order",
    **options: Unpack[MatchOptions],
) -> Tournament:
    """Play a tournament of ``game`` between ``bots`` (spec strings, bot files, or functions
    and classes of this program) and return its results. The options are those of ``arena
    tournament run`` (``MatchOptions`` for those ``sprt`` shares); bad input raises ArenaError
    with its message before anything is stored or started."""
    check_format(format, games, rounds, tiebreak_pairs, seeding)

    def settings(
        factory: sessionmaker[Session], name: str, refs: list[BotRef]
    ) -> dict[str, Any] | None:
        return format_settings(format, games, rounds, seeding, tiebreak_pairs, factory, name, refs)

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
    played = _run(game, [new, base], options, "sprt", 2, lambda factory, name, refs: test)
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
    settings: FormatSettings,
) -> Tournament:
    """Check, store, play and sum up, on the one path of ``arena tournament run``
    (``new_run.start``); each of ``options``' defaults is written here, once."""
    from bot_arena.arena.api.new_run import NewRun, start
    from bot_arena.arena.api.runner_setup import runner

    o = options
    db, progress = o.get("db"), o.get("progress", False)
    with tempfile.TemporaryDirectory(prefix="arena-") as folder:
        bot_folder = Path(folder, "bots")
        bot_folder.mkdir()
        run = NewRun(
            TournamentSpec(
                game,
                [spec_of(b, bot_folder) for b in bots],
                param_list(o.get("params")),
                o.get("memory_mb", 1024),
                o.get("startup_time", 10.0),
                o.get("jobs"),
                o.get("opening_plies", 0),
                o.get("openings"),
                o.get("openings_plies"),
            ),
            move_time=floats(o.get("move_time")),
            clock=texts(o.get("clock")),
            margin=o.get("margin", DEFAULT_MARGIN),
            depth=o.get("depth"),
            nodes=o.get("nodes"),
            draw_adjudicate=o.get("draw_adjudicate"),
            resign_adjudicate=o.get("resign_adjudicate"),
            max_moves=o.get("max_moves"),
            seed=o.get("seed"),
            openings_order=o.get("openings_order", "sequential"),
            name=o.get("name"),
            pgn_out=o.get("pgn_out"),
            sandbox=o.get("sandbox"),
            allow_read=o.get("allow_read"),
            executor=o.get("executor", "local"),
            ray_address=o.get("ray_address"),
            ray_allow_unconfined=o.get("ray_allow_unconfined", False),
        )
        with (
            _database(db, folder) as store,
            start(run, fmt, games_per, settings, store, what=fmt, warn=_warn) as started,
        ):
            outcome = runner(
                started.factory,
                started.tournament_id,
                started.refs,
                run.spec.jobs,
                started.confinement,
                server=started.server,
                limits=started.limits,
                executor=started.executor,
                pgn=started.pgn,
                pool=started.pool,
                progress_stream=None if progress else io.StringIO(),
                tty=None if progress else False,
            ).run()
            return _results(started.factory, started.tournament_id, outcome.finished)


def _warn(line: str) -> None:
    """A bot left out of the field (registered, its files gone), said as a Python warning
    with the CLI's words."""
    warnings.warn(f"warning: {line}", RuntimeWarning, stacklevel=2)


@contextlib.contextmanager
def _database(url: str | None, folder: str) -> Iterator[Store]:
    """The database named by ``url``, else a SQLite file in ``folder`` (the call's temporary
    folder): the runner's writer thread and its jobs open connections of their own, which an
    in-memory database would not share. Opened when the run asks (``Store``: SQLAlchemy is
    imported once a jobs=1 run's engines have started), closed after."""
    engines: list[Engine] = []

    def opened() -> sessionmaker[Session]:
        from bot_arena.db.session import (
            DatabaseOpenError,
            database_url,
            make_engine,
            session_factory,
            sqlite_path,
        )

        if not engines:
            try:
                if (
                    url is not None
                    and database_url(url).startswith("sqlite")
                    and not sqlite_path(database_url(url))
                ):
                    raise ArenaError(
                        f"db={url!r} is an in-memory database, which the tournament's writer "
                        "and jobs cannot share: leave db out (a temporary database) or name a "
                        "file"
                    )
                engines.append(make_engine(url or f"sqlite:///{Path(folder, 'arena.db')}"))
            except DatabaseOpenError as exc:
                raise ArenaError(str(exc)) from None
        return session_factory(engines[0])

    def exists() -> bool:
        from bot_arena.db.session import DatabaseOpenError, database_url, exists

        try:
            return url is not None and exists(database_url(url))
        except DatabaseOpenError as exc:
            raise ArenaError(str(exc)) from None

    try:
        yield Store(opened, exists)
    finally:
        for engine in engines:
            engine.dispose()


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
