"""Modules imported on a thread of their own while this one waits on the database (issue 29).

A leaderboard of a large field reads its pair totals in one statement (``rated_sql``'s bulk
read: about 0.3 s at 1M matches and 1,000 bots, SQLite's own C code or PostgreSQL's server,
during which this thread holds no GIL) and only then imports numpy and the fit (about 0.13 s
of CPU). Started just before the statement, the imports run beside it, on the machine's other
core or while the server works: the same CPU, less wall time. Only the bulk read starts it,
so a small field's leaderboard still loads no numpy.

Nothing waits for the thread: a later ``import`` of the same module waits for it under the
import system's own per-module lock. It is not a daemon, so a command that ends early ends
after it (never in the middle of an import). A module that fails to import is left to the
import that needs it, which then says why; the others are still imported.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence


def import_meanwhile(modules: Sequence[str]) -> threading.Thread:
    """Start importing ``modules`` (dotted names, in order) on a new thread; the thread."""

    def load() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # the import that needs it raises it, in context
                continue

    thread = threading.Thread(target=load, name="import-meanwhile")
    thread.start()
    return thread
