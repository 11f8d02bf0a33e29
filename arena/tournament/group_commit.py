"""The runner's group commit: checked results queued, then handed to the writer thread
(``committer.py``) together, each group in one transaction.

A group is stored when it is full or its oldest result would wait longer than GROUP_WAIT_S;
groups start at one result and double up to GROUP_MAX, so a run shows progress (and stores its
first games) at once. A match claimed since the last write is marked 'running' by the next one,
unless that same write completes it (then it goes from 'pending' straight to 'done'): the
database shows as 'running' exactly the matches in play at each commit, and a fast game costs
one row update, not two. A crash before a group's commit leaves all of its matches pending or
running, to be played again, so each match is stored once.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Future
from typing import TypeVar

from sqlalchemy import Connection

from bot_arena.arena.match.record import MatchRecord
from bot_arena.arena.tournament.committer import Committer
from bot_arena.arena.tournament.job import Job
from bot_arena.db.writer import Completion, MatchWriter

GROUP_MAX = 64  # results stored in one transaction at most (group commit)
GROUP_WAIT_S = 0.05  # the longest a finished game waits for its group to be stored
GROUPS_IN_FLIGHT = 2  # groups handed to the writer thread and not stored yet, at most

T = TypeVar("T")
Transaction = Callable[[Connection, MatchWriter], list[bool]]
Batch = list[tuple[Job, MatchRecord]]
Stored = Callable[[Batch, list[bool]], None]
"""Told each group's outcome, oldest first: per result, whether it was stored."""


def _marker(ids: list[int]) -> Transaction:
    """A transaction that marks the matches ``ids`` 'running'."""

    def mark(conn: Connection, writer: MatchWriter) -> list[bool]:
        writer.mark_running(ids)
        return []

    return mark


def _completer(marks: list[int], items: Sequence[Completion], sandbox: str | None) -> Transaction:
    """A group commit: the claims ``marks`` and the results ``items``, in one transaction."""

    def complete(conn: Connection, writer: MatchWriter) -> list[bool]:
        writer.mark_running(marks)
        return writer.complete_matches(items, sandbox=sandbox)

    return complete


class GroupCommit:
    """One run's results on their way to the database, through ``committer``'s thread."""

    def __init__(self, committer: Committer, stored: Stored) -> None:
        """``stored``: told the outcome of every group, in order."""
        self.committer = committer
        self._stored = stored
        self.version_ids: list[int] = []  # the bot version of each field position
        self.sandbox: str | None = None  # the level the results are stored with
        # wait for every group before going on (a director reads the results before it adds
        # matches); else only while more than GROUPS_IN_FLIGHT are not stored yet
        self.in_step = False
        self._groups: deque[tuple[Future[list[bool]], Batch]] = deque()  # oldest first
        self._ready: Batch = []  # played and checked, not handed over yet
        self._ready_since = 0.0  # monotonic time the oldest of them arrived
        self._size = 1  # group size that triggers a write: doubles up to GROUP_MAX
        self._to_mark: list[int] = []  # started since the last write
        # the least time between two groups handed over (``Runner.store``: an SPRT's check of
        # its bounds after each write, so that the checks stay a small share of the loop)
        self.spacing = 0.0
        self._handed_at = -math.inf  # monotonic time the last group was handed over
        # time the runner's loop was held by the database: waiting for the writer thread, or
        # in its own transactions (``call``)
        self.db_seconds = 0.0

    @property
    def pending(self) -> bool:
        """Whether results wait for their group."""
        return bool(self._ready)

    def wait_left(self) -> float:
        """Seconds until the oldest waiting result must be stored (inf: none waits)."""
        if not self._ready:
            return float("inf")
        now = time.monotonic()
        return max(self._ready_since + GROUP_WAIT_S, self._handed_at + self.spacing) - now

    def claim(self, job: Job) -> None:
        """Note that ``job`` starts: the next write marks it 'running' (see the module)."""
        self._to_mark.append(job.match_id)

    def _take_marks(self, finishing: AbstractSet[int] = frozenset()) -> list[int]:
        """The claimed matches the next write marks 'running' (not those it completes)."""
        ids = [m for m in self._to_mark if m not in finishing]
        self._to_mark.clear()
        return ids

    def flush_marks(self) -> None:
        """Mark the claimed matches 'running' now (the first matches of a run)."""
        if self._to_mark:
            ids = self._take_marks()
            self._groups.append((self.committer.submit(_marker(ids)), []))

    def add(self, job: Job, record: MatchRecord) -> None:
        """Queue a checked result for the next group."""
        if not self._ready:
            self._ready_since = time.monotonic()
        self._ready.append((job, record))

    def due(self, next_wait: float = 0.0) -> bool:
        """Whether the queued results must be stored now: the group is full, or its oldest
        result would wait longer than GROUP_WAIT_S (``next_wait``: the expected wait for the
        next result), and ``spacing`` has passed since the last group was handed over."""
        if not self._ready:
            return False
        now = time.monotonic()
        if now - self._handed_at < self.spacing:
            return False
        age = now - self._ready_since
        return len(self._ready) >= self._size or age + next_wait >= GROUP_WAIT_S

    def store_ready(self, wait: bool = False) -> Batch:
        """Hand every queued result (and any claims) to the writer thread as one group: one
        transaction for each match's row, seats and moves; returns that group (empty: none).
        ``wait``: until every group handed over is stored (always ``in_step``); else only while
        more than GROUPS_IN_FLIGHT are (the loop keeps feeding the workers meanwhile)."""
        wait = wait or self.in_step
        batch: Batch = []
        if self._ready:
            batch = self._ready
            marks = self._take_marks({job.match_id for job, _ in batch})
            items = [
                (job.match_id, record, [self.version_ids[i] for i in job.seats], job.recovered)
                for job, record in batch
            ]
            task = _completer(marks, items, self.sandbox)
            self._groups.append((self.committer.submit(task), batch))
            self._ready = []
            self._size = min(GROUP_MAX, 2 * self._size)
            self._handed_at = time.monotonic()
        self.collect(keep=0 if wait else GROUPS_IN_FLIGHT)
        return batch

    def collect(self, keep: int = GROUPS_IN_FLIGHT) -> None:
        """Take the outcome of the groups the writer thread has stored, oldest first, waiting
        while more than ``keep`` are not stored yet (that wait is the loop held by the
        database: ``db_seconds``)."""
        while self._groups:
            future, batch = self._groups[0]
            if not future.done():
                if len(self._groups) <= keep:
                    return
                start = time.perf_counter()
                future.result()
                self.db_seconds += time.perf_counter() - start
            self._groups.popleft()
            self._stored(batch, future.result())

    def call(self, task: Callable[[Connection, MatchWriter], T]) -> T:
        """Run a transaction of the runner's own in the writer thread (after every group
        handed over) and wait for it."""
        return self.result(self.submit(task))

    def submit(self, task: Callable[[Connection, MatchWriter], T]) -> Future[T]:
        """Run a transaction of the runner's own in the writer thread (after every group
        handed over) without waiting for it: its outcome comes with ``result``."""
        return self.committer.submit(task)

    def result(self, future: Future[T]) -> T:
        """The outcome of a transaction ``submit`` handed over, waiting for it if need be."""
        start = time.perf_counter()
        try:
            return future.result()
        finally:
            self.db_seconds += time.perf_counter() - start

    def close(self) -> None:
        """Wait for every group handed over, take their outcome, end the writer thread."""
        try:
            self.collect(keep=0)
        finally:
            self._groups.clear()
            self.committer.close()
