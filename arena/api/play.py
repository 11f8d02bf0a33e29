"""``play``: one match between bots, each in its own confined process, as ``arena play
--no-save`` plays it."""

from __future__ import annotations

import contextlib
import random
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bot_arena.arena.api import checks
from bot_arena.arena.api.bots import BotLike, spec_of
from bot_arena.arena.match.record import MatchRecord as MatchRecord  # the API's result type
from bot_arena.arena.match.timecontrol import DEFAULT_MARGIN

PLAY_MOVE_TIME = 1.0  # seconds per move when neither move_time nor clock is given


def play(
    game: str,
    bots: Sequence[BotLike],
    *,
    move_time: float | Sequence[float] | None = None,
    clock: str | Sequence[str] | None = None,
    margin: float = DEFAULT_MARGIN,
    seed: int | None = None,
    params: dict[str, object] | Sequence[str] | None = None,
    position: str | None = None,
    max_moves: int | None = None,
    memory_mb: int = 1024,
    startup_time: float = 10.0,
    sandbox: str | None = None,
) -> MatchRecord:
    """Play one match of ``game`` between ``bots`` (one per seat, in seat order: spec strings
    such as ``"alphabeta:depth=3"``, bot files, or functions/classes of this program) and
    return its record; nothing is stored. ``move_time`` (seconds) or ``clock`` (``"60+0.5"``)
    once for all or once per seat; ``sandbox``: ``auto``, ``on`` or ``off``. Bad input raises
    ArenaError before any bot starts; a bot that fails loses with a fault in the record."""
    from bot_arena.arena.match.pool import BotPool
    from bot_arena.arena.match.xboard import moves_from_start
    from bot_arena.arena.transport.sandbox.mode import SandboxSettings

    the_game = checks.load_game(game, param_list(params))
    checks.position(the_game, position)
    mode = checks.sandbox_mode(sandbox)
    checks.sandbox_level(mode)
    checks.seat_count(the_game, len(bots))
    with tempfile.TemporaryDirectory(prefix="arena-bots-") as folder:
        refs = checks.resolve_bots([spec_of(b, Path(folder)) for b in bots])
        checks.check_engines(refs, the_game)
        rules = checks.adjudication(None, None, max_moves)
        tcs = checks.time_controls(refs, floats(move_time), texts(clock), margin, PLAY_MOVE_TIME)
        limits = checks.resource_limits(memory_mb, startup_time)
        with BotPool(limits, sandbox=SandboxSettings(mode)) as pool:
            opening = moves_from_start(the_game, position)  # told as moves without setboard
            starts = [(opening, position)]
            checks.check_setboard(refs, the_game, starts, lambda: contextlib.nullcontext(pool))
            return pool.play(
                the_game,
                refs,
                time_control=tcs,
                start_position=position,
                opening=opening,
                seed=random.randrange(2**31) if seed is None else seed,
                adjudication=rules,
            )


def param_list(params: dict[str, object] | Sequence[str] | None) -> list[str]:
    """Game parameters as ``k=v`` items (what ``--param`` takes), from a dict or items."""
    if params is None:
        return []
    if isinstance(params, dict):
        return [f"{k}={v}" for k, v in params.items()]
    if isinstance(params, str):
        return [params]
    return list(params)


def floats(value: float | Sequence[float] | None) -> list[float]:
    """One number or one per bot, as the list the CLI's repeated option gives."""
    if value is None:
        return []
    return [float(value)] if isinstance(value, int | float) else [float(v) for v in value]


def texts(value: str | Sequence[str] | None) -> list[str]:
    """One text or one per bot, as the list the CLI's repeated option gives."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)
