"""Whether this process was stopped and resumed (SIGSTOP or Ctrl-Z, then SIGCONT).

A referee that is stopped while a bot thinks measures the stop as the bot's time: when it
resumes, the answer it finds (or does not find yet) looks late. ``watch`` counts every
SIGCONT this process receives; a move during which the count changed is timed knowing that the
arena, not the bot, lost that time (``match.seat``). Signals run their Python handler in the
main thread only, so ``watch`` is a no-op elsewhere (a pool made in another thread then times
every move as before).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from types import FrameType

_resumed = 0
_watching = False


def _on_continue(signum: int, frame: FrameType | None) -> None:
    global _resumed
    _resumed += 1


def watch() -> None:
    """Count SIGCONTs from now on (once per process; keeps a handler someone else set)."""
    global _watching
    if _watching or threading.current_thread() is not threading.main_thread():
        return
    with contextlib.suppress(ValueError, OSError):
        if signal.getsignal(signal.SIGCONT) in (signal.SIG_DFL, None):
            signal.signal(signal.SIGCONT, _on_continue)
            _watching = True


def resumed() -> int:
    """How many times this process has been resumed since ``watch``."""
    return _resumed
