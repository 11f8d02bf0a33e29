"""Shared pieces of the command line: one-line errors with exit code 2, game loading, the
sandbox options of the commands that start bots."""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, Protocol

import typer
from typer.core import TyperCommand, TyperGroup

from bot_arena.arena.match.text import shown
from bot_arena.arena.match.timecontrol import DEFAULT_MARGIN
from bot_arena.games.base import Game

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from bot_arena.arena.api.sandbox import Confinement
    from bot_arena.arena.match.adjudication import Adjudication
    from bot_arena.arena.match.botref import BotRef
    from bot_arena.arena.match.record import Fault
    from bot_arena.arena.transport.limits import ResourceLimits
    from bot_arena.db.rated_sql import RatedReads

USAGE_EXIT = 2

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Database: a SQLAlchemy URL or a SQLite file's path (default: $ARENA_DB, else "
        "arena.db in this directory).",
        envvar="ARENA_DB",
        show_envvar=False,
    ),
]


SandboxOption = Annotated[
    str | None,
    typer.Option(
        "--sandbox",
        metavar="auto|on|off",
        help="Confine the bots: auto uses what this machine offers (one warning line when that "
        "is not everything), on refuses to start unless bots can be fully confined, off runs "
        "them unconfined (default: $ARENA_SANDBOX, else auto).",
        show_default=False,
    ),
]
AllowReadOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-read",
        metavar="[BOT=]PATH",
        help="A file or folder the bots may read besides what they need to run (an opening "
        "book); BOT=PATH: only the bot of that name (an engine's network file). Repeatable.",
    ),
]


MarginOption = Annotated[
    float, typer.Option("--margin", help="Grace seconds before a loss on time.")
]
StartupOption = Annotated[
    float, typer.Option("--startup-time", help="Seconds a bot may take to start.")
]
DepthOption = Annotated[
    int | None,
    typer.Option(
        "--depth", help="Search depth limit of UCI engines (go depth N; cutechess tc=inf depth=N)."
    ),
]
NodesOption = Annotated[
    int | None, typer.Option("--nodes", help="Node limit of UCI engines' searches (go nodes N).")
]
DrawAdjudicateOption = Annotated[
    str | None,
    typer.Option(
        "--draw-adjudicate",
        metavar="movenumber=N,movecount=M,score=S",
        help="A draw once N full moves are played and both engines' scores stayed within S "
        "centipawns of zero for M moves each (cutechess -draw).",
    ),
]
ResignAdjudicateOption = Annotated[
    str | None,
    typer.Option(
        "--resign-adjudicate",
        metavar="movecount=M,score=S[,twosided=true]",
        help="A loss for an engine whose score was S centipawns or more below zero on each of "
        "its last M moves (cutechess -resign).",
    ),
]
MaxMovesOption = Annotated[
    int | None, typer.Option("--max-moves", help="A draw after this many full moves.")
]


@dataclass(frozen=True)
class MatchRules:
    """An option set (``option_sets``) of every command that plays games: the grace before a
    loss on time, the engines' search limits and the adjudication rules."""

    margin: MarginOption = DEFAULT_MARGIN
    depth: DepthOption = None
    nodes: NodesOption = None
    draw_adjudicate: DrawAdjudicateOption = None
    resign_adjudicate: ResignAdjudicateOption = None
    max_moves: MaxMovesOption = None


MemoryOption = Annotated[
    int, typer.Option("--memory-mb", help="Memory limit per bot (MiB, all its processes).")
]


def resource_limits(memory_mb: int, startup_s: float) -> ResourceLimits:
    """``--memory-mb`` and ``--startup-time`` as limits (one-line error when out of range)."""
    from bot_arena.arena.api import checks

    try:
        return checks.resource_limits(memory_mb, startup_s)
    except checks.ArenaError as exc:
        fail(str(exc))


def fail(message: str, code: int = USAGE_EXIT) -> NoReturn:
    """``error: message`` on stderr and exit ``code``; a message may quote what a bot or a
    file holds, so its controls are shown as text (``text.shown``)."""
    typer.echo(f"error: {shown(message, lines=True)}", err=True)
    raise typer.Exit(code)


def load_game(
    name: str, params: list[str] | None = None, tree: str | None = None
) -> Game[Any, Any]:
    """The game from CLI arguments (``--param k=v`` items and ``--tree FILE``)."""
    from bot_arena.arena.api import checks

    try:
        return checks.load_game(name, params, tree)
    except checks.ArenaError as exc:
        fail(str(exc))


def load_position(game: Game[Any, Any], text: str | None) -> Any:
    from bot_arena.arena.api import checks

    try:
        return checks.position(game, text)
    except checks.ArenaError as exc:
        fail(str(exc))


def echo_err(message: str) -> None:
    print(message, file=sys.stderr)


_opened: list[str | None] = []  # the --db of the database this command opened (for messages)


def open_db(url: str | None, *, write: bool = True) -> sessionmaker[Session]:
    """A session factory for the database; one-line error and exit 2 when it cannot be opened.
    ``write``: a command that stores results (a database in memory is refused, the schema is
    migrated to the latest); else one that only reads (the file opened read-only, never
    migrated: an older schema is refused with the advice to run ``arena db upgrade``)."""
    from bot_arena.db.session import DatabaseOpenError, check_url, make_engine, session_factory

    _opened.append(url)
    try:
        check_url(url, write=write)
        return session_factory(make_engine(url, read_only=not write))
    except DatabaseOpenError as exc:
        fail(str(exc))


def noted_db(url: str | None) -> str | None:
    """``url``, noted as the database this command opens through the Python API (so a
    database error names it)."""
    _opened.append(url)
    return url


class Closing(Protocol):
    """A connection, as a read command holds it: closed when done."""

    def close(self) -> None: ...


def open_plain_reads(url: str | None) -> tuple[Closing, RatedReads] | None:
    """A read command's reads of a plain SQLite file on the standard library's ``sqlite3``
    (``db/sqlite_read.py``) or of PostgreSQL on psycopg alone (``db/pg_read.py``), or None:
    open the database with ``open_db`` (which also says why one that is not plain cannot be
    opened)."""
    from bot_arena.db.sqlite_read import open_reads

    found: tuple[Closing, RatedReads] | None = open_reads(url)
    if found is None:
        from bot_arena.db.pg_read import open_reads as open_pg_reads

        found = open_pg_reads(url)
    if found is not None:
        _opened.append(url)
    return found


def open_writable_db(url: str | None) -> sessionmaker[Session]:
    """``open_db`` for a command that will store what it plays: a database this user cannot
    write (a read-only file, a locked one, no right to insert) is a one-line error (exit 2)
    before any game is played, not after."""
    from sqlalchemy.exc import SQLAlchemyError

    from bot_arena.db.session import check_writable, describe_error

    factory = open_db(url)
    try:
        check_writable(factory.kw["bind"])
    except (SQLAlchemyError, sqlite3.DatabaseError) as err:
        fail(describe_error(err, url))
    return factory


def keep_unsaved(data: dict[str, Any], what: str) -> str:
    """Write ``data`` (a finished game's record that could not be stored) to a new JSON file
    in the current folder (else the temporary one) and return its path: a finished game is
    never lost."""
    import json
    import tempfile
    import time

    name = f"arena-unsaved-{what}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.json"
    for folder in (os.getcwd(), tempfile.gettempdir()):
        path = os.path.join(folder, name)
        try:
            with open(path, "x") as fh:
                json.dump(data, fh)
            return path
        except OSError:
            continue
    raise OSError("no folder to write the unsaved record to")


class ArenaGroup(TyperGroup):
    """The ``arena`` command group: bad input the API's checks refuse (``ArenaError``) and a
    database failure in any command (damaged or read-only file, lock timeout, full disk,
    unreachable server) end it with one line and exit 2, the same for every command, never a
    traceback. Each command's own transactions see to it that
    nothing already stored is half-written."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _plain_help(self)

    def invoke(self, ctx: Any) -> Any:  # click's Context (typer vendors click privately)
        try:
            return super().invoke(ctx)
        except Exception as err:
            # a command that never loaded SQLAlchemy cannot have met one of its errors (and
            # --help, games, ... must not pay for importing it)
            alchemy = sys.modules.get("sqlalchemy.exc")
            stored = sys.modules.get("bot_arena.db.decode")
            errors = sys.modules.get("bot_arena.arena.api.errors")
            if errors is not None and isinstance(err, errors.ArenaError):
                fail(str(err))  # bad input found by the API's checks
            if stored is not None and isinstance(err, stored.StoredDataError):
                from bot_arena.db.session import database_url, display_url

                where = display_url(database_url(_opened[-1] if _opened else None))
                fail(f"database {where}: {err}")
            psycopg = sys.modules.get("psycopg")  # the plain reads of PostgreSQL (pg_read)
            if not isinstance(err, sqlite3.DatabaseError) and not (
                (alchemy is not None and isinstance(err, alchemy.SQLAlchemyError))
                or (psycopg is not None and isinstance(err, psycopg.Error))
            ):
                raise
            from bot_arena.db.session import describe_error

            fail(describe_error(err, _opened[-1] if _opened else None))


def open_existing_db(url: str | None, *, write: bool = False) -> sessionmaker[Session]:
    """The database for a command that reads it (``write``: and changes what is stored in it):
    a SQLite file that is not there is an error (a wrong directory or URL), not a new empty
    database."""
    from bot_arena.db.session import DatabaseOpenError, check_url, database_url, exists, short

    try:
        check_url(url, write=write)
    except DatabaseOpenError as exc:
        fail(str(exc))
    if not exists(database_url(url)):
        fail(f"no database at {short(database_url(url))} (give --db or $ARENA_DB)")
    return open_db(url, write=write)


def sandbox_options(mode: str | None, allow_read: list[str] | None) -> Confinement:
    """The sandbox options checked before anything is stored or started (the rules are the
    API's, ``api/sandbox.py``): a bad one is a one-line error (exit 2)."""
    from bot_arena.arena.api import sandbox

    return sandbox.confinement(mode, allow_read)


def warn_unconfined(confinement: Confinement) -> None:
    """One line on stderr when ``auto`` runs bots less than fully confined (a command calls
    this once, as its bots are about to start)."""
    line = confinement.warning()
    if line is not None:
        echo_err(line)


def _plain_help(command: Any) -> None:
    """Help as a command line reads: a flag shows no value type (``--json``, not ``--json
    <bool>``), an argument its name in capitals (``PATH``, not ``{path}``)."""
    for param in getattr(command, "params", []):
        if param.metavar is None:
            if getattr(param, "is_flag", False):
                param.metavar = ""
            elif param.param_type_name == "argument" and param.name:
                param.metavar = param.name.upper()
    for sub in getattr(command, "commands", {}).values():
        _plain_help(sub)


class ArenaCommand(TyperCommand):
    """A command whose usage line names its arguments as its help does (``arena bots add
    [OPTIONS] PATH``; typer writes a required one as ``{PATH}``, which reads as a literal)."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name != "argument":
                continue  # options are summed up by [OPTIONS]
            name = param.metavar or (param.name or "").upper()
            if param.nargs != 1:
                name += "..."
            pieces.append(name if param.required else f"[{name}]")
        return pieces


def command_group(**settings: Any) -> typer.Typer:
    """A group of ``arena`` commands (the root and each subgroup): plain help, which starts
    without loading rich's renderer (about a third of the start-up of ``--help``), and the
    one database error path of :class:`ArenaGroup`. Register its commands with
    ``cls=ArenaCommand``."""
    return typer.Typer(
        cls=ArenaGroup,
        rich_markup_mode=None,
        add_completion=False,
        pretty_exceptions_enable=False,
        **settings,
    )


def check_engines(refs: Sequence[BotRef], game: Game[Any, Any]) -> None:
    """Refuse (one line, exit 2) a bot that cannot play ``game`` at all: a chess engine (UCI,
    xboard) plays chess only. The user's setup, so no match is played and nobody loses one."""
    from bot_arena.arena.api import checks

    try:
        checks.check_engines(refs, game)
    except checks.ArenaError as exc:
        fail(str(exc))


def adjudication(draw: str | None, resign: str | None, max_moves: int | None) -> Adjudication:
    """The adjudication rules of ``--draw-adjudicate``/``--resign-adjudicate``/``--max-moves``
    (a bad value is one line, exit 2)."""
    from bot_arena.arena.api import checks

    try:
        return checks.adjudication(draw, resign, max_moves)
    except checks.ArenaError as exc:
        fail(str(exc))


def fault_evidence(fault: Fault) -> list[str]:
    """Why a bot failed, in a few lines (the API's ``evidence.fault_evidence``)."""
    from bot_arena.arena.api.evidence import fault_evidence as evidence

    return evidence(fault)
