"""The ``arena`` command: one module per command group, composed here."""

from __future__ import annotations

from typing import Annotated

import typer

from bot_arena.arena.cli.analyze_cmd import analyze_command
from bot_arena.arena.cli.bots_cmd import bots_app
from bot_arena.arena.cli.common import ArenaCommand, command_group
from bot_arena.arena.cli.db_cmd import db_app
from bot_arena.arena.cli.games_cmd import games_command
from bot_arena.arena.cli.ladder_cmd import ladder_app
from bot_arena.arena.cli.matches_cmd import export_command, matches_app, replay_command
from bot_arena.arena.cli.play_cmd import play_command
from bot_arena.arena.cli.rating_cmd import crosstable_command, leaderboard_command, rate_command
from bot_arena.arena.cli.report_cmd import report_command
from bot_arena.arena.cli.serve_cmd import serve_command
from bot_arena.arena.cli.solve_cmd import solve_command
from bot_arena.arena.cli.sprt_cmd import sprt_command
from bot_arena.arena.cli.submit_cmd import submit_command
from bot_arena.arena.cli.tournament_cmd import tournament_app
from bot_arena.arena.cli.users_cmd import users_app

app = command_group(
    name="arena",
    help="Bot Arena: tournaments between game-playing bots, with Elo leaderboards.",
    no_args_is_help=True,
)


def _show_version(value: bool) -> None:
    if value:
        from bot_arena.arena.cli import __version__

        typer.echo(f"arena (bot-arena) {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Bot Arena: tournaments between game-playing bots, with Elo leaderboards."""


app.command("games", cls=ArenaCommand)(games_command)
app.command("analyze", cls=ArenaCommand)(analyze_command)
app.command("play", cls=ArenaCommand)(play_command)
app.add_typer(bots_app, name="bots")
app.add_typer(tournament_app, name="tournament")
app.add_typer(ladder_app, name="ladder")
app.add_typer(matches_app, name="matches")
app.command("replay", cls=ArenaCommand)(replay_command)
app.command("export", cls=ArenaCommand)(export_command)
app.command("solve", cls=ArenaCommand)(solve_command)
app.command("leaderboard", cls=ArenaCommand)(leaderboard_command)
app.command("crosstable", cls=ArenaCommand)(crosstable_command)
app.command("rate", cls=ArenaCommand)(rate_command)
app.command("sprt", cls=ArenaCommand)(sprt_command)
app.command("report", cls=ArenaCommand)(report_command)
app.add_typer(db_app, name="db")
app.command("serve", cls=ArenaCommand)(serve_command)
app.add_typer(users_app, name="users")
app.command("submit", cls=ArenaCommand)(submit_command)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
