"""The runner's writer thread: its group commits, off the loop that feeds the workers.

The runner's loop sends matches to workers, reads their answers and checks every record; a group
of checked results is handed to this thread (``submit``), which stores it in one transaction on
a connection of its own, opened, used and closed only in that thread, one group after another in
the order they were given. Meanwhile the loop goes on reading answers and sending the next
matches, so no worker runs dry while a group is written; it learns a group's outcome (which of
its matches were stored) from the group's Future.

Nothing about exactly-once or crash safety changes: a result is stored only with its group, in
one transaction, and a match is completed only while it is pending or running, so a process
killed at any instant (this thread in the middle of a commit included) leaves every match of a
group done or none of them, and the rest pending or running for ``tournament resume``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from sqlalchemy import Connection, Engine

from bot_arena.db.writer import MatchWriter, writer_connection, writer_for

T = TypeVar("T")


class Committer:
    """One thread that runs write transactions on its own connection, in submission order."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._pool: ThreadPoolExecutor | None = None  # started by the first write
        self._conn: Connection | None = None  # the thread's, opened by its first write
        self._writer: MatchWriter | None = None
        self.busy_seconds = 0.0  # time the thread has spent in transactions
        self.cpu_seconds = 0.0  # CPU time of the thread in them (the rest: waits, the GIL's too)

    def submit(self, task: Callable[[Connection, MatchWriter], T]) -> Future[T]:
        """Run ``task(connection, writer)`` in one transaction in the thread, after every task
        submitted before it; its result (or exception) comes in the Future."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-writer")
        return self._pool.submit(self._transaction, task)

    def call(self, task: Callable[[Connection, MatchWriter], T]) -> T:
        """``submit`` and wait for the result."""
        return self.submit(task).result()

    def _transaction(self, task: Callable[[Connection, MatchWriter], T]) -> T:
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            if self._conn is None or self._writer is None:
                self._conn = writer_connection(self._engine)
                self._writer = writer_for(self._conn)
            with self._conn.begin():
                return task(self._conn, self._writer)
        finally:
            self.busy_seconds += time.perf_counter() - start
            self.cpu_seconds += time.thread_time() - cpu

    def _close_connection(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = self._writer = None

    def close(self) -> None:
        """Finish every submitted task, close the connection (in the thread), end the thread."""
        if self._pool is None:
            return
        self._pool.submit(self._close_connection)
        self._pool.shutdown(wait=True)
        self._pool = None
