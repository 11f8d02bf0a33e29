"""Ladders (issue 30) from Python, as ``arena ladder create|add|retire|run|show`` do: a
tournament that never ends, bots joining and leaving while it runs, its next games chosen by
how much each would tell (docs/ratings.md, "Ladders"). Every check is here; bad input raises
ArenaError (the CLI's one line) before anything is stored or started."""

from __future__ import annotations

import dataclasses
import math
import os
import re
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot_arena.arena.api import checks
from bot_arena.arena.api import sandbox as sandboxes
from bot_arena.arena.api.errors import ArenaError
from bot_arena.arena.api.spec import DEFAULT_MOVE_TIME, TournamentSpec
from bot_arena.arena.match.timecontrol import DEFAULT_MARGIN

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from bot_arena.arena.api.ladder_follow import Followers
    from bot_arena.arena.match.botref import BotRef
    from bot_arena.arena.tournament.directors.ladder import LadderDirector
    from bot_arena.db.ladders import LadderRow
    from bot_arena.db.models import Tournament

#: An entrant is suspended after this many faults in a row unless ``suspend_after`` says.
DEFAULT_SUSPEND_AFTER = 5
#: Seconds per move of the validation games of ``add`` (as ``arena bots add``).
VALIDATION_MOVE_TIME = 2.0
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)?\s*$")
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


@dataclass(frozen=True)
class Added:
    """An entrant ``add`` stored: its field position, the name it plays under (``NAME@2`` for
    a new version of a bot already in the ladder) and its version."""

    position: int
    name: str
    sha256: str
    games: int  # validation games it played


@dataclass(frozen=True)
class RunEnd:
    """How ``ladder_run`` ended: ``why`` is ``games`` (``until_games`` stored), ``time``
    (``for_seconds`` passed), ``stable`` or ``failed`` (matches kept failing: ``failed``
    says why); ``played``: games stored by this run."""

    why: str
    played: int
    games: int
    failed: list[str]


def parse_duration(text: str) -> float:
    """``--for``'s value in seconds: a number with an optional unit (s, m, h, d)."""
    found = _DURATION.match(text)
    if found is None:
        raise ArenaError(f"--for {text[:40]!r}: give a duration such as 90s, 30m or 2h")
    seconds = float(found.group(1)) * _UNITS[found.group(2) or "s"]
    if not 0 < seconds < 10 * 365 * 86400:
        raise ArenaError(f"--for {text[:40]!r}: give a duration above zero")
    return seconds


def _name(name: str) -> str:
    """A ladder's name follows the rule of bot names (a word typed on command lines)."""
    from bot_arena.arena.match.names import BotNameError, check_name

    try:
        return check_name(name)
    except BotNameError as exc:
        raise ArenaError(str(exc).replace("bot name", "ladder name", 1)) from None


def _factory(db: str | None, *, new: bool = False) -> sessionmaker[Session]:
    """The database named by ``db`` (default $ARENA_DB, else arena.db); unless ``new``, a
    SQLite file that is not there is an error rather than a new empty database."""
    from bot_arena.db.session import (
        DatabaseOpenError,
        check_url,
        database_url,
        exists,
        make_engine,
        session_factory,
        short,
    )

    try:
        check_url(db, write=True)
        if not new and not exists(database_url(db)):
            raise ArenaError(f"no database at {short(database_url(db))} (give --db or $ARENA_DB)")
        return session_factory(make_engine(db))
    except DatabaseOpenError as exc:
        raise ArenaError(str(exc)) from None


def _ladder(session: Session, name: str) -> LadderRow:
    from bot_arena.db import ladders

    found = ladders.find_ladder(session, name)
    if found is None:
        raise ArenaError(f"no ladder {name[:80]!r} (create it with: arena ladder create)")
    return found


def ladder_create(
    name: str,
    game: str,
    *,
    params: Sequence[str] | None = None,
    move_time: float | None = None,
    clock: str | None = None,
    margin: float = DEFAULT_MARGIN,
    depth: int | None = None,
    nodes: int | None = None,
    max_moves: int | None = None,
    draw_adjudicate: str | None = None,
    resign_adjudicate: str | None = None,
    opening_plies: int = 0,
    openings: str | None = None,
    openings_order: str = "sequential",
    openings_plies: int | None = None,
    memory_mb: int = 1024,
    startup_time: float = 10.0,
    sandbox: str | None = None,
    seed: int | None = None,
    suspend_after: int = DEFAULT_SUSPEND_AFTER,
    db: str | None = None,
) -> int:
    """Store a new, empty ladder of ``game`` (its rules for every game it will play: clock,
    openings, adjudication, limits, sandbox); its tournament id."""
    from sqlalchemy.exc import IntegrityError

    from bot_arena.arena.match.timecontrol import TimeControl, TimeControlError
    from bot_arena.arena.tournament.create import TournamentError, create
    from bot_arena.arena.tournament.schedule import ScheduleError
    from bot_arena.db import ladders

    name = _name(name)
    spec = TournamentSpec(
        game, ["-", "-"], list(params or []), memory_mb, startup_time, None,
        opening_plies, openings, openings_plies,
    )  # fmt: skip
    checked = spec.validate()
    if openings_order not in ("sequential", "random"):
        raise ArenaError(f"--openings-order {openings_order!r}: use sequential or random")
    if suspend_after < 1:
        raise ArenaError(f"--suspend-after must be >= 1, not {suspend_after}")
    mode = checks.sandbox_mode(sandbox)
    rules = checks.adjudication(draw_adjudicate, resign_adjudicate, max_moves)
    if move_time is None and clock is None:
        move_time = DEFAULT_MOVE_TIME
    try:
        tc = TimeControl.parse(move_time, clock, margin, depth, nodes)
    except TimeControlError as exc:
        raise ArenaError(str(exc)) from None
    factory = _factory(db, new=True)
    with factory() as session:
        if ladders.find_ladder(session, name) is not None:
            raise ArenaError(f"ladder {name!r} exists already")
    book_settings = None
    if openings is not None:
        book_settings = {
            "file": os.path.abspath(openings),
            "order": openings_order,
            "plies": openings_plies,
            "entries": len(checked.book),
        }
    try:
        return create(
            factory,
            checked.game,
            [],
            [],
            fmt="ladder",
            games_per_group=2,
            time_control=tc,
            seed=seed if seed is not None else secrets.randbits(31),
            opening_plies=opening_plies,
            name=name,
            limits=checked.limits,
            book=checked.book,
            book_order=openings_order,
            book_settings=book_settings,
            adjudication=rules,
            format_settings={"suspend_after": suspend_after, "sandbox": mode.value},
            also=lambda session, tid: ladders.create_ladder(session, tid, name, suspend_after),
        )
    except (ScheduleError, TournamentError) as exc:
        raise ArenaError(str(exc)) from None
    except IntegrityError:  # created by another process meanwhile
        raise ArenaError(f"ladder {name!r} exists already") from None


def _entrant_name(ref: BotRef, taken: dict[str, str]) -> str:
    return entrant_name(ref.name, ref.sha256, taken)


def entrant_name(name: str, sha256: str, taken: dict[str, str]) -> str:
    """The name the version ``sha256`` of the bot ``name`` plays under: its own, or ``NAME@k``
    when a version of a bot of that name is in the ladder already (``taken``: name -> SHA-256
    of the entrants so far); ArenaError when this very version is."""
    if name not in taken:
        return name
    k = 1
    candidate = name
    while candidate in taken:
        if taken[candidate] == sha256:
            raise ArenaError(f"{name} ({sha256[:12]}) is in the ladder already")
        k += 1
        candidate = f"{name}@{k}"
    return candidate


def ladder_add(
    name: str,
    specs: Sequence[str],
    *,
    move_time: float = VALIDATION_MOVE_TIME,
    startup_time: float = 10.0,
    sandbox: str | None = None,
    allow_read: Sequence[str] | None = None,
    db: str | None = None,
    warn: Callable[[str], None] = lambda line: None,
) -> list[Added]:
    """Add bots to the ladder (also while it runs: it picks them up within a second or so).
    Each plays its validation games first (one in every seat against ``random``, as ``arena
    bots add``); if any faults, ArenaError names it with its fault and none is added. An xboard
    engine without ``setboard`` is refused the same way, before its games, when the ladder's
    book has a FEN start (``checks.check_setboard``). A new version of a bot in the ladder
    enters as a new entrant, ``NAME@2``, beside the old one."""
    from bot_arena import games
    from bot_arena.arena.api.validation import validation_games
    from bot_arena.arena.match.botref import HUMAN, XBOARD
    from bot_arena.arena.tournament.create import TournamentError, load_tournament, tournament_book
    from bot_arena.db import ladders
    from bot_arena.db.store import lookup_bot, versions_for

    name = _name(name)
    if not specs:
        raise ArenaError("give at least one bot spec to add")
    if move_time <= 0 or not math.isfinite(move_time):
        raise ArenaError(f"--move-time must be above zero, not {move_time}")
    limits = checks.resource_limits(1024, startup_time)
    factory = _factory(db)
    with factory() as session:
        row = _ladder(session, name)
        tournament = load_tournament(session, row.tournament_id)
        game_name, params = tournament.game, dict(tournament.params)
        mode = sandbox if sandbox is not None else tournament.settings["ladder"].get("sandbox")
        taken = {e.name: e.sha256 for e in ladders.entrants(session, row.tournament_id)}
        refs = checks.resolve_bots([s.strip() for s in specs], lambda n: lookup_bot(session, n))
    game = games.get(game_name, **params)
    named: list[BotRef] = []
    for ref in refs:
        if ref.kind == HUMAN:
            raise ArenaError("a human cannot play in a ladder (use `arena play`)")
        ref = dataclasses.replace(ref, name=_entrant_name(ref, taken))
        taken[ref.name] = ref.sha256
        named.append(ref)
    checks.check_engines(named, game)
    confined = sandboxes.confinement(mode, allow_read).for_bots(
        [r.name for r in named] + ["random"]
    )
    # an xboard engine without setboard and the ladder's FEN openings: refused before its
    # validation games, as a run refuses it (the engine started once, under these limits)
    try:  # the book read again only for an xboard engine (a big book takes a while)
        book = tournament_book(game, tournament) if any(r.kind == XBOARD for r in named) else []
    except TournamentError as exc:
        raise ArenaError(str(exc)) from None
    checks.check_book_setboard(named, game, book, limits, confined.settings)
    line = confined.warning()
    if line is not None:
        warn(line)
    played: list[int] = []
    for ref in named:
        records = validation_games(
            game, ref, move_time, limits.startup_s, sandbox=confined.settings
        )
        seat = len(records) - 1
        fault = records[-1].seats[seat].fault
        if fault is not None:
            why = fault.message.splitlines()[0] if fault.message else ""
            raise ArenaError(
                f"{ref.name} refused: it failed its validation game ({game.name}, seat {seat}): "
                f"{fault.termination.value}: {why}; nothing added"
            )
        played.append(len(records))
    added = []
    with factory.begin() as session:
        row = _ladder(session, name)
        ladders.bump(session, row.tournament_id)  # the ladder's lock: adders take turns
        now = {e.name: e.sha256 for e in ladders.entrants(session, row.tournament_id)}
        for ref in named:  # another process may have added one of these names meanwhile
            if ref.name in now:
                raise ArenaError(f"{ref.name} was added to the ladder meanwhile; add it again")
        versions = versions_for(session, named)
        for ref, spec, version, count in zip(named, specs, versions, played, strict=True):
            position = ladders.add_entrant(session, row.tournament_id, spec.strip(), version.id)
            added.append(Added(position, ref.name, ref.sha256, count))
    return added


def ladder_retire(name: str, bot: str, *, db: str | None = None) -> None:
    """Retire the entrant ``bot`` (also while the ladder runs): it keeps its results and
    gets no new game. A suspended entrant can be retired too."""
    from bot_arena.db import ladders

    name = _name(name)
    factory = _factory(db)
    with factory.begin() as session:
        row = _ladder(session, name)
        found = [e for e in ladders.entrants(session, row.tournament_id) if e.name == bot]
        if not found:
            raise ArenaError(f"ladder {name!r} has no bot {bot[:80]!r}")
        if found[0].status == "retired":
            raise ArenaError(f"{bot} is retired already")
        ladders.set_status(session, row.tournament_id, [found[0].position], "retired")


def ladder_suspend(name: str, bot: str, suspended: bool, *, db: str | None = None) -> list[str]:
    """Suspend the bot ``bot``'s active entrants in the ladder (they get no new game, as after
    faults in a row), or, with ``suspended`` False, reinstate its suspended ones (their faults
    in a row counted from zero again); the entrants changed, by name. Nothing to change is an
    error, so a second click says so."""
    from bot_arena.db import ladders

    name = _name(name)
    before, after = ("active", "suspended") if suspended else ("suspended", "active")
    factory = _factory(db)
    with factory.begin() as session:
        row = _ladder(session, name)
        mine = [e for e in ladders.entrants(session, row.tournament_id) if e.name == bot]
        if not mine:
            raise ArenaError(f"ladder {name!r} has no bot {bot[:80]!r}")
        chosen = [e for e in mine if e.status == before]
        if not chosen:
            raise ArenaError(f"{bot} has no {before} entrant in ladder {name!r}")
        ladders.set_status(
            session, row.tournament_id, [e.position for e in chosen], after,
            clear_faults=not suspended,
        )  # fmt: skip
    return [e.name for e in chosen]


def ladder_run(
    name: str,
    *,
    jobs: int | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    ray_allow_unconfined: bool = False,
    until_games: int | None = None,
    until_stable: bool = False,
    for_seconds: float | None = None,
    sandbox: str | None = None,
    allow_read: Sequence[str] | None = None,
    db: str | None = None,
    say: Callable[[str], None] = lambda line: None,
    progress: bool = False,
    pgn_out: str | None = None,
) -> RunEnd:
    """Play the ladder until ``until_games`` games are stored in all, ``for_seconds`` have
    passed or the standings are ``until_stable`` (whichever comes first; none: until
    interrupted, KeyboardInterrupt, what was played stays stored). Bots added or retired by
    another process meanwhile are picked up between writes; with fewer than two active bots it
    waits and ``say``s so. A stopped ladder runs on from exactly where it stood. ``pgn_out``:
    a PGN file each stored game is appended to (``api/pgn_out.py``)."""
    import io

    from bot_arena import games as rules
    from bot_arena.arena.api.cluster import cluster
    from bot_arena.arena.api.pgn_out import open_pgn_out, pgn_hook
    from bot_arena.arena.match.confinement import server_env
    from bot_arena.arena.tournament.create import TournamentError, active_runner, load_tournament
    from bot_arena.arena.tournament.job_handle import start_job_server
    from bot_arena.arena.tournament.ladder_runner import Limits, play_ladder
    from bot_arena.arena.tournament.runner import default_jobs
    from bot_arena.db import ladders

    name = _name(name)
    if jobs is not None and jobs < 1:
        raise ArenaError(f"--jobs must be >= 1, not {jobs}")
    if until_games is not None and until_games < 1:
        raise ArenaError(f"--until-games must be >= 1, not {until_games}")
    if for_seconds is not None and not (0 < for_seconds < math.inf):
        raise ArenaError(f"--for must be above zero, not {for_seconds}")
    sandboxes.check_executor(executor, ray_address)
    factory = _factory(db)
    with factory() as session:
        row = _ladder(session, name)
        tournament = load_tournament(session, row.tournament_id)
        running = active_runner(tournament)
        if running is not None:
            raise ArenaError(f"ladder {name!r} is being played by process {running}")
        stored_mode = tournament.settings["ladder"].get("sandbox")
        game = rules.get(tournament.game, **tournament.params)
    confined = sandboxes.confinement(sandbox if sandbox is not None else stored_mode, allow_read)
    confined.check_executor(executor, ray_allow_unconfined)
    pgn = open_pgn_out(pgn_out, game)
    deadline = None if for_seconds is None else time.monotonic() + for_seconds
    limits = Limits(until_games, deadline, until_stable)
    actors = cluster(executor, ray_address, ray_allow_unconfined)
    line = confined.warning()
    if line is not None:
        say(line)
    try:
        hook = pgn_hook(factory, pgn, row.tournament_id, say)
    except BaseException:
        if pgn is not None:
            pgn.close()
        raise
    server = None if actors is not None else start_job_server(server_env(confined.level))

    def settings(names: Sequence[str]) -> Any:
        return confined.for_bots(names).settings

    try:
        ended = play_ladder(
            factory,
            row.tournament_id,
            limits,
            jobs=(jobs or 0) if actors is not None else (jobs or default_jobs()),
            sandbox=settings,
            say=say,
            forkserver=server,
            executor=actors,
            progress_stream=None if progress else io.StringIO(),
            tty=None if progress else False,
            stored_hook=hook,
        )
    except TournamentError as exc:  # another runner claimed the ladder since the check above
        raise ArenaError(str(exc)) from None
    finally:
        if server is not None:
            server.close()
        if actors is not None:
            actors.close()
        if pgn is not None:
            pgn.close()
    with factory() as session:
        games = ladders.match_counts(session, row.tournament_id)["done"]
    return RunEnd(ended.why, ended.played, games, ended.failed)


@dataclass(frozen=True)
class Standing:
    """An entrant in ``ladder_show``: its rating with its 95% interval, the leaderboard's
    (``arena leaderboard --tournament ID``: the pool's mean 1500, its prior; None while the
    entrant has no rated game), its rank with the ranks its 95% interval allows (``settled``:
    one rank only; the matchmaking model's, which the ladder plays and ``--until-stable``
    stops by), its games stored and in play, its status and faults in a row."""

    rank: int
    best: int
    worst: int
    name: str
    status: str
    elo: float | None
    low: float | None
    high: float | None
    games: int
    in_play: int
    faults_in_row: int

    @property
    def settled(self) -> bool:
        return self.best == self.worst


@dataclass(frozen=True)
class LadderView:
    """``ladder_show``'s answer: the ladder and its standings, best first."""

    id: int
    name: str
    game: str
    games: int
    in_play: int
    suspend_after: int
    standings: list[Standing]

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        for row, standing in zip(data["standings"], self.standings, strict=True):
            row["settled"] = standing.settled
        return data


def ladder_show(name: str, *, db: str | None = None) -> LadderView:
    """The ladder's standings now: the same fit the next games are chosen by, over every
    stored game (retired entrants keep their place)."""
    name = _name(name)
    factory = _factory(db)
    with factory() as session:
        return ladder_view(session, _ladder(session, name))


def ladder_view(
    session: Session,
    row: LadderRow,
    leaderboard: list[dict[str, Any]] | None = None,
    followers: Followers | None = None,
) -> LadderView:
    """``ladder_show``'s standings of the ladder ``row`` read in the caller's session.
    ``leaderboard``: the ladder's ``api.views.standings_rows`` when the caller has them
    (read here otherwise); each entrant's Elo is its row's. ``followers``: the ladders'
    directors kept between reads (the server's: ``api/ladder_follow.py``), else the ladder's
    director is loaded from all its matches."""
    from bot_arena.arena.tournament.create import TournamentError, load_tournament

    if followers is None:
        from bot_arena.arena.tournament.directors import load_director
        from bot_arena.arena.tournament.directors.ladder import LadderDirector

        tournament = load_tournament(session, row.tournament_id)
        director = load_director(session, tournament)
        assert isinstance(director, LadderDirector)
        return _view(session, row, tournament.game, director, leaderboard)
    from bot_arena.db.tournaments import get_tournament

    found = get_tournament(session, row.tournament_id)  # its row alone: the field only to load
    if found is None:
        raise TournamentError(f"no tournament {row.tournament_id}")

    def whole() -> Tournament:
        return load_tournament(session, row.tournament_id)

    with followers.following(session, row.tournament_id, row.revision, whole) as director:
        return _view(session, row, found.game, director, leaderboard)


def _view(
    session: Session,
    row: LadderRow,
    game: str,
    director: LadderDirector,
    leaderboard: list[dict[str, Any]] | None,
) -> LadderView:
    from bot_arena.db import ladders

    found = ladders.entrants(session, row.tournament_id)
    model = director.fitted()
    intervals = model.rank_intervals() if found else []
    in_play = director.in_play_counts()
    games = model.games.sum(axis=1)
    if leaderboard is None:
        leaderboard = ladder_leaderboard(session, row.tournament_id) if found else []
    rated = {r["bot"]: r for r in leaderboard}
    standings = []
    for e in found:
        i = e.position
        board = rated.get(e.name)
        elo = None if board is None else float(board["elo"])
        error = None if board is None else float(board["error"])
        standings.append(
            Standing(
                intervals[i].rank, intervals[i].best, intervals[i].worst, e.name, e.status,
                elo, None if elo is None or error is None else elo - error,
                None if elo is None or error is None else elo + error,
                int(games[i]), in_play[i], e.faults_in_row,
            )
        )  # fmt: skip
    standings.sort(key=lambda s: s.rank)
    summary = director.summary()
    return LadderView(
        row.tournament_id, row.name, game, summary["games"], summary["in_play"],
        row.suspend_after, standings,
    )  # fmt: skip


def ladder_leaderboard(session: Session, tournament_id: int) -> list[dict[str, Any]]:
    """The ladder's ``arena leaderboard --tournament ID --json`` rows (none before a game)."""
    from bot_arena.arena.api.views import standings_rows

    try:
        return standings_rows(session, tournament_id)
    except ArenaError:  # nothing rated yet
        return []
