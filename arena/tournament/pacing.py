"""How many matches each worker of a run keeps queued.

A worker (a job process or a Ray actor) should never wait for the runner: its queue holds at
least its own minimum (``depth``) and as many more matches as make ``ahead_s`` of its work at
its measured pace, so fast games never run it dry while the runner is busy elsewhere (and a Ray
actor's batches hold tens of milliseconds), at most MAX_DEPTH.
"""

from __future__ import annotations

import math
import time
from typing import Protocol

PREFETCH = 2  # matches queued per job at least, so a job never waits for the runner
MAX_DEPTH = 64  # matches queued per worker at most
PACE_WEIGHT = 0.2  # weight of the latest answers in a worker's pace (moving average)


class Paced(Protocol):
    """What pacing reads of a worker: its minimum queue and the work it should hold."""

    @property
    def depth(self) -> int: ...

    @property
    def ahead_s(self) -> float: ...


class Pacing:
    """Each worker's pace: seconds a match, a moving average of the time between its answers
    while it had matches queued."""

    def __init__(self) -> None:
        self.paces: dict[Paced, tuple[float, float]] = {}  # seconds a match, last answer

    def answered(self, worker: Paced, answers: int) -> None:
        """Note ``answers`` more answers of ``worker``."""
        now = time.monotonic()
        pace, last = self.paces.get(worker, (math.inf, now))
        each = (now - last) / answers
        pace = each if math.isinf(pace) else pace + PACE_WEIGHT * (each - pace)
        self.paces[worker] = (pace, now)

    def resumed(self, worker: Paced) -> None:
        """``worker`` was idle until now: its pace counts from the match it is sent now."""
        pace = self.paces.get(worker, (math.inf, 0.0))[0]
        self.paces[worker] = (pace, time.monotonic())

    def depth(self, worker: Paced) -> int:
        """How many matches ``worker`` keeps queued."""
        pace = self.paces.get(worker, (math.inf, 0.0))[0]
        if pace * MAX_DEPTH <= worker.ahead_s:
            return MAX_DEPTH
        return max(worker.depth, min(MAX_DEPTH, math.ceil(worker.ahead_s / pace)))

    def queued(self) -> int:
        """The matches the workers paced so far keep queued together."""
        return sum(self.depth(worker) for worker in self.paces)
