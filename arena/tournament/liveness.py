"""Is anybody playing a tournament? Read from what it keeps of its runner (the host and pid
the runner recorded, its heartbeat), without SQLAlchemy: ``tournament list`` answers it from
plain rows, ``show``, resume and the ladders from a stored ``Tournament``.

The stamps are UTC from the runner's clock and compared with the reader's (``heartbeat.py``
refreshes them): machines that share a database must agree on the time within the lease.
"""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot_arena.db.run_trace import RunTrace, recorded_runner

#: a stamp older than this: its runner is gone (six of ``heartbeat.BEAT_S``, so a database
#: that is slow for a while, or a loaded machine, does not make a live run look interrupted)
LEASE_S = 60.0


def stale(stamp: datetime | None, now: datetime | None = None) -> bool:
    """Whether a runner's last ``stamp`` is older than the lease at ``now`` (default: this
    machine's clock); no stamp (a runner of a version without heartbeats) is stale too."""
    if stamp is None:
        return True
    now = now if now is not None else datetime.now(UTC)
    return now - stamp > timedelta(seconds=LEASE_S)


def this_host() -> str:
    return socket.gethostname()


def active_runner(tournament: RunTrace) -> int | None:
    """The pid of a live arena process on this machine that is playing ``tournament``, if any.

    A runner records itself in the tournament's settings when it starts and clears the entry when
    it ends; an entry left by a killed runner names a process that is gone (or is no longer an
    arena), so it does not count.
    """
    runner = recorded_runner(tournament)
    if runner is None or runner[0] != this_host():
        return None
    pid = runner[1]
    if pid == os.getpid():
        return None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return pid if b"arena" in cmdline else None


def runner_elsewhere(tournament: RunTrace, now: datetime | None = None) -> tuple[str, float] | None:
    """The host of a runner on another machine playing ``tournament`` and its heartbeat's age
    in seconds, while that heartbeat is fresh at ``now`` (:func:`stale`); None when there is
    none (a runner on this machine is known by its process: :func:`active_runner`)."""
    if tournament.status != "running":
        return None
    runner = recorded_runner(tournament)
    stamp = tournament.heartbeat
    if runner is None or runner[0] == this_host() or stamp is None or stale(stamp, now):
        return None
    age = ((now if now is not None else datetime.now(UTC)) - stamp).total_seconds()
    return runner[0], max(0.0, age)


def interrupted(tournament: RunTrace, now: datetime | None = None) -> bool:
    """Whether a tournament marked ``running`` has no runner left: it recorded none, its
    heartbeat is older than the lease at ``now`` (whatever the host: :func:`stale`), or the
    process it recorded on this machine is gone (killed, or the machine restarted)."""
    if tournament.status != "running":
        return False
    runner = recorded_runner(tournament)
    if runner is None or stale(tournament.heartbeat, now):
        return True
    if runner[0] != this_host():
        return False
    return runner[1] == os.getpid() or active_runner(tournament) is None
