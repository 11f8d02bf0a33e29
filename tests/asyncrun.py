"""``run(coroutine)``: ``asyncio.run`` in a thread of its own.

The ``browser`` fixture (``tests/browser.py``) keeps one Playwright for the whole test process,
and Playwright's sync API leaves an event loop marked running in the main thread; a later test
in the same process (xdist puts files on one worker one after another) that calls
``asyncio.run`` there fails with "cannot be called from a running event loop". A fresh thread
has no running loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """The coroutine's result (or its exception), run to the end on a new loop in a new thread."""
    result: list[T] = []
    error: list[BaseException] = []

    def main() -> None:
        try:
            result.append(asyncio.run(coroutine))
        except BaseException as exc:  # handed to the caller's thread
            error.append(exc)

    thread = threading.Thread(target=main, name="asyncio-run")
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return result[0]
