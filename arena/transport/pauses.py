"""Whether this process stood still (stopped by SIGSTOP or Ctrl-Z, or starved of the CPU).

A referee that stands still while a bot thinks measures that time as the bot's: when it goes
on, the answer it finds (or does not find yet) looks late. ``watch`` starts a heartbeat thread
that counts every gap in its own beat longer than ``STALL_S``; a move during which the count
changed is timed knowing that the arena, not the bot, lost time (``match.seat``). A bare
SIGCONT (which an unconfined bot can send its referee) makes no gap and counts for nothing.
"""

from __future__ import annotations

import threading
import time

BEAT_S = 0.02  # the heartbeat
STALL_S = 0.1  # a beat this late: the process stood still

_stalls = 0
_last = time.monotonic()  # the latest beat
_lock = threading.Lock()
_thread: threading.Thread | None = None


def _beat() -> None:
    global _stalls, _last
    _last = time.monotonic()
    while True:
        time.sleep(BEAT_S)
        now = time.monotonic()
        if now - _last > STALL_S:
            _stalls += 1
        _last = now


def watch() -> None:
    """Start the heartbeat (once per process)."""
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_beat, name="arena-heartbeat", daemon=True)
            _thread.start()


def stalls() -> int:
    """How many times this process has stood still since ``watch``."""
    return _stalls


def stood_still(since: int) -> bool:
    """Whether this process has stood still since ``stalls()`` was ``since``, the stall that
    is just ending included (the heartbeat may not have run yet since the process went on)."""
    return _stalls != since or (_thread is not None and time.monotonic() - _last > STALL_S)
