"""Limits on what costs the server: uploads per user (each starts validation games in the
sandbox, so a user or a stolen token cannot keep the machine busy) and sign-in attempts per
name (each checks a password hash: no guessing at speed, no hashing without end)."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Hashable


class RateLimiter:
    """At most ``limit`` attempts a key in any ``window`` seconds (a sliding window of the
    attempts' times; memory: ``limit`` times per key that made one recently)."""

    def __init__(
        self, limit: int, window: float = 3600.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._limit, self._window, self._clock = limit, window, clock
        self._seen: dict[Hashable, deque[float]] = {}
        self._lock = threading.Lock()

    def allow(self, key: Hashable) -> bool:
        """Count an attempt of ``key`` and say whether it is within the limit (an attempt
        refused is not counted)."""
        now = self._clock()
        with self._lock:
            times = self._seen.setdefault(key, deque())
            while times and times[0] <= now - self._window:
                times.popleft()
            if len(times) >= self._limit:
                return False
            times.append(now)
            return True
