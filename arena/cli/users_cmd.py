"""``arena users add|list|suspend|unsuspend|password|token``: the accounts of ``arena serve``.

A user's API token is printed once, when it is made (``add``, ``token``): only its hash is
stored. Passwords (for the web sign-in) are read from standard input, never from the command
line (where ``ps`` and the shell's history would show them)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from bot_arena.arena.cli.common import ArenaCommand, DbOption, command_group, fail

users_app = command_group(
    help="Accounts of `arena serve`: add, list, suspend.", no_args_is_help=True
)

NameArgument = Annotated[str, typer.Argument(help="The user's name.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
PasswordOption = Annotated[
    bool,
    typer.Option(
        "--password-stdin", help="Read the user's web password from the first line of stdin."
    ),
]


def _password() -> str:
    line = sys.stdin.readline(2048)
    password = line.rstrip("\r\n")
    if not password:
        fail("--password-stdin: no password on standard input")
    return password


@users_app.command("add", cls=ArenaCommand)
def add_command(
    name: NameArgument,
    admin: Annotated[bool, typer.Option("--admin", help="May manage users and every bot.")] = False,
    password_stdin: PasswordOption = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Add a user and print its API token (shown this once)."""
    from bot_arena.arena.api import accounts
    from bot_arena.arena.cli.common import open_writable_db

    password = _password() if password_stdin else None
    factory = open_writable_db(db)
    with factory.begin() as session:
        user, token = accounts.add_user(session, name, admin=admin, password=password)
    if as_json:
        typer.echo(json.dumps({"user": user.to_dict(), "token": token}))
        return
    role = "admin" if user.admin else "user"
    typer.echo(f"{user.name}: {role} added; API token (shown once, keep it): {token}")


@users_app.command("list", cls=ArenaCommand)
def list_command(as_json: JsonOption = False, db: DbOption = None) -> None:
    """The users, by name."""
    from tabulate import tabulate

    from bot_arena.arena.api import accounts
    from bot_arena.arena.cli.common import open_existing_db

    with open_existing_db(db).begin() as session:
        rows = [u.to_dict() for u in accounts.users(session)]
    if as_json:
        typer.echo(json.dumps(rows))
        return
    if not rows:
        typer.echo("no users (add one with `arena users add NAME`)")
        return
    table = [
        [r["name"], "yes" if r["admin"] else "", "yes" if r["suspended"] else "", r["created"]]
        for r in rows
    ]
    typer.echo(tabulate(table, headers=["user", "admin", "suspended", "added"]))


def _suspend(name: str, suspended: bool, db: str | None) -> None:
    from bot_arena.arena.api import accounts
    from bot_arena.arena.cli.common import open_existing_db

    with open_existing_db(db, write=True).begin() as session:
        user = accounts.set_suspended(session, name, suspended)
    typer.echo(f"{user.name}: {'suspended' if suspended else 'active'}")


@users_app.command("suspend", cls=ArenaCommand)
def suspend_command(name: NameArgument, db: DbOption = None) -> None:
    """Suspend a user: signed out, its token and password refused."""
    _suspend(name, True, db)


@users_app.command("unsuspend", cls=ArenaCommand)
def unsuspend_command(name: NameArgument, db: DbOption = None) -> None:
    """Lift a user's suspension."""
    _suspend(name, False, db)


@users_app.command("password", cls=ArenaCommand)
def password_command(name: NameArgument, db: DbOption = None) -> None:
    """Set a user's web password from the first line of standard input."""
    from bot_arena.arena.api import accounts
    from bot_arena.arena.cli.common import open_existing_db

    password = _password()
    with open_existing_db(db, write=True).begin() as session:
        user = accounts.set_password(session, name, password)
    typer.echo(f"{user.name}: password set")


@users_app.command("token", cls=ArenaCommand)
def token_command(name: NameArgument, as_json: JsonOption = False, db: DbOption = None) -> None:
    """Make a new API token for a user (the old one stops working) and print it once."""
    from bot_arena.arena.api import accounts
    from bot_arena.arena.cli.common import open_existing_db

    with open_existing_db(db, write=True).begin() as session:
        user, token = accounts.new_token(session, name)
    if as_json:
        typer.echo(json.dumps({"user": user.to_dict(), "token": token}))
        return
    typer.echo(f"{user.name}: new API token (shown once, keep it): {token}")
