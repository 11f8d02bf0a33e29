"""``arena submit FILE --server URL --ladder L``: a bot handed to a ladder of an ``arena
serve`` through its HTTP API (``arena/api/remote.py``), the server's answer as one line."""

from __future__ import annotations

from typing import Annotated

import typer


def submit_command(
    file: Annotated[str, typer.Argument(help="The bot: a .py file or an archive with main.py.")],
    server: Annotated[
        str, typer.Option("--server", help="The server's URL, like http://127.0.0.1:8000.")
    ],
    ladder: Annotated[str, typer.Option("--ladder", help="The ladder to enter the bot in.")],
    name: Annotated[
        str | None, typer.Option("--name", help="The bot's name (default: the file's stem).")
    ] = None,
    token_file: Annotated[
        str | None,
        typer.Option(
            "--token-file",
            help="A file holding your API token (default: $ARENA_TOKEN, else "
            "~/.config/bot-arena/token).",
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for the server's answer.")
    ] = 300.0,
) -> None:
    """Upload a bot to a ladder of an `arena serve` (docs/server.md): the server validates it
    as the web upload does."""
    from bot_arena.arena.api import remote
    from bot_arena.arena.cli.common import fail

    if not 0 < timeout <= 3600:
        fail(f"--timeout {timeout}: give 0 to 3600 seconds")
    token = remote.read_token(token_file)
    done = remote.submit_file(file, server, ladder, token=token, name=name, timeout=timeout)
    typer.echo(f"stored {done.line()}")
