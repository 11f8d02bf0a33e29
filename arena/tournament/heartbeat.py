"""A runner's heartbeat (issue 32, item 9 across machines): while a process plays a tournament
it refreshes the tournament's time stamp every ``BEAT_S`` from a thread of its own (its own
connection, one short UPDATE of one column), so that ``tournament list`` and ``show`` on any
machine can tell a runner that is gone: a ``running`` tournament whose stamp is older than
``LEASE_S`` has nobody playing it, whatever the host its runner recorded (``liveness.interrupted``).

The stamps are UTC from the runner's clock and compared with the reader's: machines that share
a database must agree on the time within the lease (NTP keeps them within milliseconds). The
lease (``liveness.LEASE_S``) is six beats, so a database that is slow for a while, or a loaded
machine, does not make a live run look interrupted.
"""

from __future__ import annotations

import contextlib
import threading
from datetime import UTC, datetime
from types import TracebackType

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from bot_arena.db.tournaments import beat

BEAT_S = 10.0  # seconds between two refreshes of the stamp


class Heartbeat:
    """The thread that refreshes a tournament's stamp while a run lasts; a context manager."""

    def __init__(self, engine: Engine, tournament_id: int, every: float = BEAT_S) -> None:
        self._engine = engine
        self._id = tournament_id
        self._every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="arena-heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            # a failed beat (the database busy or gone for a moment) is tried again at the
            # next one; the run itself says what is wrong with its database
            with contextlib.suppress(SQLAlchemyError), self._engine.begin() as conn:
                beat(conn, self._id, datetime.now(UTC))
