"""The ``arena`` command: one module per command group, composed here."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from bot_arena.arena.cli.common import ArenaCommand, command_group

HELP = "Bot Arena: tournaments between game-playing bots, with Elo leaderboards."


def _show_version(value: bool) -> None:
    if value:
        from bot_arena.arena.cli import __version__

        typer.echo(f"arena (bot-arena) {__version__}")
        raise typer.Exit()


def _root(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Bot Arena: tournaments between game-playing bots, with Elo leaderboards."""


# Every command and group, in the order they are registered: (name, "module:attribute", a group?).
# Only the one a command line names is imported and built (``build``): a read command does not
# pay for the other thirty-odd commands' modules and typer's reading of their signatures.
COMMANDS: tuple[tuple[str, str, bool], ...] = (
    ("games", "bot_arena.arena.cli.games_cmd:games_command", False),
    ("analyze", "bot_arena.arena.cli.analyze_cmd:analyze_command", False),
    ("play", "bot_arena.arena.cli.play_cmd:play_command", False),
    ("bots", "bot_arena.arena.cli.bots_cmd:bots_app", True),
    ("tournament", "bot_arena.arena.cli.tournament_cmd:tournament_app", True),
    ("ladder", "bot_arena.arena.cli.ladder_cmd:ladder_app", True),
    ("matches", "bot_arena.arena.cli.matches_cmd:matches_app", True),
    ("replay", "bot_arena.arena.cli.matches_cmd:replay_command", False),
    ("export", "bot_arena.arena.cli.matches_cmd:export_command", False),
    ("solve", "bot_arena.arena.cli.solve_cmd:solve_command", False),
    ("leaderboard", "bot_arena.arena.cli.rating_cmd:leaderboard_command", False),
    ("crosstable", "bot_arena.arena.cli.rating_cmd:crosstable_command", False),
    ("rate", "bot_arena.arena.cli.rating_cmd:rate_command", False),
    ("sprt", "bot_arena.arena.cli.sprt_cmd:sprt_command", False),
    ("report", "bot_arena.arena.cli.report_cmd:report_command", False),
    ("db", "bot_arena.arena.cli.db_cmd:db_app", True),
    ("serve", "bot_arena.arena.cli.serve_cmd:serve_command", False),
    ("users", "bot_arena.arena.cli.users_cmd:users_app", True),
    ("submit", "bot_arena.arena.cli.submit_cmd:submit_command", False),
)


def build(only: str | None = None) -> typer.Typer:
    """The ``arena`` app with every command, or with only the command or group ``only``
    (what ``main`` runs when the command line names it: the same output, byte for byte)."""
    from importlib import import_module

    built = command_group(name="arena", help=HELP, no_args_is_help=True)
    built.callback()(_root)
    for name, target, group in COMMANDS:
        if only is not None and name != only:
            continue
        module, _, attribute = target.partition(":")
        value = getattr(import_module(module), attribute)
        if group:
            built.add_typer(value, name=name)
        else:
            built.command(name, cls=ArenaCommand)(value)
    return built


def __getattr__(name: str) -> typer.Typer:
    """``app``, the whole command (tests and the documentation use it), built on first use."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    whole = build()
    globals()["app"] = whole
    return whole


def main() -> None:
    named = sys.argv[1] if len(sys.argv) > 1 else None
    build(named if any(named == name for name, _, _ in COMMANDS) else None)()


if __name__ == "__main__":
    main()
