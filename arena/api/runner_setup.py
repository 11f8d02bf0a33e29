"""The Runner of a tournament run, new or resumed (``new_run.start``, ``tournament resume``):
how many workers it gets, and ``--pgn-out``'s hook on its stored groups."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from bot_arena.arena.api.sandbox import Confinement
    from bot_arena.arena.formats.pgn_out import PgnOut
    from bot_arena.arena.match.botref import BotRef
    from bot_arena.arena.match.pool import BotPool
    from bot_arena.arena.tournament.ray_executor import RayExecutor
    from bot_arena.arena.tournament.runner import Runner
    from bot_arena.arena.transport.forkserver_client import ForkServer
    from bot_arena.arena.transport.limits import ResourceLimits


def runner(
    factory: sessionmaker[Session],
    tid: int,
    refs: Sequence[BotRef],
    jobs: int | None,
    confinement: Confinement,
    *,
    server: ForkServer | None = None,
    limits: ResourceLimits | None = None,
    executor: RayExecutor | None = None,
    skip: Sequence[int] = (),
    pgn: PgnOut | None = None,
    warn: Callable[[str], None] = lambda line: None,
    force: bool = False,
    pool: BotPool | None = None,
    progress_stream: Any = None,
    tty: bool | None = None,
) -> Runner:
    """The run of tournament ``tid`` (``Runner``'s arguments): ``jobs`` None is one local job
    a core, or on Ray one actor per CPU the cluster offers (``jobs`` caps them); each stored
    group's games appended to ``pgn`` (a failed write said through ``warn``)."""
    from bot_arena.arena.api.pgn_out import pgn_hook
    from bot_arena.arena.tournament.runner import Runner, default_jobs

    return Runner(
        factory,
        tid,
        refs,
        jobs=(jobs or 0) if executor is not None else (jobs or default_jobs()),
        forkserver=server,
        sandbox=confinement.settings,
        limits=limits,
        executor=executor,
        skip=skip,
        stored_hook=pgn_hook(factory, pgn, tid, warn),
        force=force,
        pool=pool,
        progress_stream=progress_stream,
        tty=tty,
    )
