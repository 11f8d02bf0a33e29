"""``arena games``: the registered games with their players and kind."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from bot_arena import games
from bot_arena.games.base import GameError
from bot_arena.games.params import accepted, limits


def games_command(
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON list instead of a table.")
    ] = False,
) -> None:
    """List the games: name, players, kind, parameters (with --json, their limits)."""
    rows: list[dict[str, Any]] = []
    for name in games.names():
        cls = games.game_class(name)
        params = {
            p.name: (None if p.default is p.empty else p.default) for p in accepted(cls).values()
        }
        try:
            game = games.get(name)
            players: Any = game.num_players
            kind = game.kind.value
        except GameError:  # needs a parameter to exist at all (tree needs its file)
            players, kind = "any", "from file"
        rows.append(
            {
                "game": name,
                "players": players,
                "kind": kind,
                "parameters": params,
                "limits": {key: limit.describe() for key, limit in limits(cls).items()},
                "description": cls.description,
            }
        )
    if as_json:
        typer.echo(json.dumps(rows))
        return
    table = [
        [
            r["game"],
            r["players"],
            r["kind"],
            ", ".join(f"{k}={v}" for k, v in r["parameters"].items()),
            r["description"],
        ]
        for r in rows
    ]
    from tabulate import tabulate

    typer.echo(tabulate(table, headers=["game", "players", "kind", "parameters", "description"]))
