"""The validation games a submitted bot plays before it is stored (``arena bots add``, ``arena
bots check``, ``arena ladder add``): Kaggle's validation episode, one game in every seat against
``random``, which the bot must play without a fault."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded when a bot is validated, not when a command starts
    from bot_arena.arena.match.botref import BotRef
    from bot_arena.arena.match.record import MatchRecord
    from bot_arena.arena.transport.sandbox.mode import SandboxSettings
    from bot_arena.games.base import Game


def validation_games(
    game: Game[Any, Any],
    ref: BotRef,
    move_time: float,
    startup_s: float,
    seed: int = 0,
    sandbox: SandboxSettings | None = None,
) -> list[MatchRecord]:
    """One game per seat against ``random``, stopping at the first fault of the bot (its
    processes confined as ``sandbox`` says: by default auto)."""
    from bot_arena.arena.match.botspec import resolve
    from bot_arena.arena.match.pool import BotPool
    from bot_arena.arena.match.timecontrol import TimeControl
    from bot_arena.arena.transport.limits import ResourceLimits
    from bot_arena.arena.transport.sandbox.mode import SandboxSettings

    records: list[MatchRecord] = []
    opponent = resolve("random")
    tc = TimeControl(move_time=move_time)
    limits = ResourceLimits(startup_s=startup_s)
    with BotPool(limits, sandbox=sandbox or SandboxSettings()) as pool:
        for seat in range(game.num_players):
            refs = [opponent] * game.num_players
            refs[seat] = ref
            record = pool.play(game, refs, time_control=tc, seed=seed + seat)
            records.append(record)
            if record.seats[seat].fault is not None:
                break
    return records
