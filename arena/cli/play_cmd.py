"""``arena play``: one match between bots, printing the board."""

from __future__ import annotations

import random
from typing import Annotated, Any

import typer

import bots
from arena.cli.common import fail, load_game, load_position
from bots.base import BotError, TimeBudget
from games.base import ranks_from_utilities


def play_command(
    game_name: Annotated[str, typer.Argument(metavar="GAME", help="Game name (see `arena games`).")],
    bot: Annotated[list[str] | None, typer.Option("--bot", "-b", help="Bot spec, once per seat.")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="Game parameter k=v.")] = None,
    tree: Annotated[str | None, typer.Option("--tree", help="Tree JSON file (game `tree`).")] = None,
    position: Annotated[str | None, typer.Option("--position", help="Start position text.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed for random bots.")] = None,
) -> None:
    """Play one game and print the board after every move."""
    game = load_game(game_name, param, tree)
    state: Any = load_position(game, position)
    specs = bot or ["random"] * game.num_players
    if len(specs) != game.num_players:
        fail(f"{game.name} takes {game.num_players} bots, got {len(specs)}")
    rng = random.Random(seed)
    try:
        players = [bots.make(s, seed=rng.randrange(2**31)) for s in specs]
    except BotError as exc:
        fail(str(exc))
    for seat, p in enumerate(players):
        p.new_game(game, seat)
    typer.echo(game.render(state))
    while not game.is_terminal(state):
        seat = game.current_player(state)
        move = players[seat].choose_move(game, state, TimeBudget.unlimited()).move
        state = game.apply(state, move)
        typer.echo(f"\nseat {seat} ({specs[seat]}) plays {game.format_move(move)}")
        typer.echo(game.render(state))
    utility = game.utility(state)
    ranks = ranks_from_utilities(utility)
    winners = [specs[i] + f" (seat {i})" for i, r in enumerate(ranks) if r == 1]
    verdict = "draw" if len(winners) == game.num_players else "winner: " + ", ".join(winners)
    typer.echo(f"\nresult: {verdict}; utilities {list(utility)}; termination normal")
