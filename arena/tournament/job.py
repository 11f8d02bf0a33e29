"""A job of a parallel tournament: a process that plays the matches its parent sends.

Started as ``python -m bot_arena.arena.tournament.job READ_FD WRITE_FD`` (or forked by the fork
server) with two pipes. The parent sends a Plan (or None: not needed after all), then one Job at
a time (None to stop); the job answers each with ``("ok", match_id, MatchRecord)`` or
``("error", match_id, text)``. Messages are pickles framed by
``multiprocessing.connection.Connection``. One BotPool serves all the job's matches, so bot
processes are reused between games.

This module imports only what playing needs (no database, no command line), so a job starts in a
fraction of the time a ``multiprocessing`` spawn of the CLI would take. When the parent dies,
the pipe reaches end-of-file and the job closes its bots and exits.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.transport.limits import ResourceLimits

if TYPE_CHECKING:
    from bot_arena.arena.match.pool import BotPool
    from bot_arena.arena.match.record import MatchRecord
    from bot_arena.arena.transport.forkserver import ForkServer
    from bot_arena.games.base import Game


@dataclass(frozen=True)
class Plan:
    """Everything a job needs to play a tournament's matches (picklable)."""

    game: str
    params: dict[str, Any]
    refs: tuple[BotRef, ...]
    time_control: TimeControl
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    playing: tuple[int, ...] = ()  # field positions of the bots the pending matches need


@dataclass(frozen=True)
class Job:
    match_id: int
    seats: tuple[int, ...]  # field positions in seat order
    start_position: str | None
    seed: int
    recovered: bool = False  # left 'running' by an interrupted run: replace what it left


def play(pool: BotPool, game: Game[Any, Any], plan: Plan, job: Job) -> MatchRecord:
    """Play one job's match with ``pool`` (a job process and the runner's own loop alike)."""
    return pool.play(
        game,
        [plan.refs[i] for i in job.seats],
        time_control=plan.time_control,
        start_position=job.start_position,
        seed=job.seed,
    )


def serve(inbox: Connection, outbox: Connection, forkserver: ForkServer | None = None) -> None:
    """Play what ``inbox`` asks for until None or end-of-file; the pool's Python workers start
    through ``forkserver`` when given (else through one of its own)."""
    from bot_arena import games
    from bot_arena.arena.match.pool import BotPool

    try:
        plan: Plan | None = inbox.recv()
    except (EOFError, OSError):
        return
    if plan is None:  # started ahead and not needed after all
        return
    game = games.get(plan.game, **plan.params)
    pool = BotPool(plan.limits, forkserver=forkserver or True)
    try:
        pool.prestart([plan.refs[i] for i in plan.playing])
        while True:
            try:
                job: Job | None = inbox.recv()
            except (EOFError, OSError):
                return
            if job is None:
                return
            try:
                record = play(pool, game, plan, job)
                reply: tuple[str, int, Any] = ("ok", job.match_id, record)
            except Exception as exc:
                where = traceback.format_exc().strip().splitlines()[-1]
                reply = ("error", job.match_id, f"{type(exc).__name__}: {exc} ({where})")
            try:
                outbox.send(reply)
            except OSError:  # the parent is gone
                return
    finally:
        pool.close()


def _signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # exit through `finally`: bots closed


def run_forked(read_fd: int, write_fd: int, channel: int) -> int:
    """A job forked by the fork server (``arena.worker.forkserver``), which also starts its
    bots over ``channel``."""
    from bot_arena.arena.transport.forkserver import ForkServer

    _signals()
    serve(
        Connection(read_fd, writable=False),
        Connection(write_fd, readable=False),
        ForkServer(channel=channel),
    )
    return 0


def main(argv: list[str]) -> None:
    _signals()
    read_fd, write_fd = int(argv[0]), int(argv[1])
    outbox = Connection(write_fd, readable=False)
    serve(Connection(read_fd, writable=False), outbox)
    # Leave without the interpreter's teardown (tens of milliseconds the parent would wait for):
    # the bots are closed and nothing is buffered. The pipe closes last, as the parent's sign
    # that this process is gone.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
