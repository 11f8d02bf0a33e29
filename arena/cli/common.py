"""Shared pieces of the command line: one-line errors with exit code 2, game loading."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from bot_arena import games
from bot_arena.games.base import Game, GameError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

USAGE_EXIT = 2

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Database URL (default: $ARENA_DB, else sqlite:///arena.db in this directory).",
        envvar="ARENA_DB",
        show_envvar=False,
    ),
]


def fail(message: str, code: int = USAGE_EXIT) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def load_game(
    name: str, params: list[str] | None = None, tree: str | None = None
) -> Game[Any, Any]:
    """The game from CLI arguments (``--param k=v`` items and ``--tree FILE``)."""
    try:
        kwargs: dict[str, Any] = games.parse_params(params or [])
        if tree is not None:
            kwargs["tree"] = tree
        return games.get(name, **kwargs)
    except GameError as exc:
        fail(str(exc))


def load_position(game: Game[Any, Any], text: str | None) -> Any:
    if text is None:
        return game.initial_state()
    try:
        return game.parse_position(text)
    except GameError as exc:
        fail(str(exc))


def echo_err(message: str) -> None:
    print(message, file=sys.stderr)


def open_db(url: str | None) -> sessionmaker[Session]:
    """A session factory for the database (migrated to the latest schema); one-line error and
    exit 2 when it cannot be opened."""
    from bot_arena.db.session import DatabaseOpenError, make_engine, session_factory

    try:
        return session_factory(make_engine(url))
    except DatabaseOpenError as exc:
        fail(str(exc))


def open_existing_db(url: str | None) -> sessionmaker[Session]:
    """The database for a command that only reads it: a SQLite file that is not there is an
    error (a wrong directory or URL), not a new empty database."""
    from bot_arena.db.session import database_url, exists

    if not exists(database_url(url)):
        fail(f"no database at {database_url(url)} (give --db or $ARENA_DB)")
    return open_db(url)
