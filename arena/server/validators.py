"""Uploads' validation games, played by threads that keep the server's own CPU priority.

When ``arena serve`` plays its ladders, the web side's threads are niced
(``ladder_play.lower_priority``) so that readers yield the CPU to the ladders' games. An
upload's validation game must not yield so: its bot is timed like every other bot, and a bot
starved by the machine's load would be refused for a fault that is not its own. On Linux a
thread, and every process it starts, takes the nice value of the thread that made it, and an
unprivileged thread can never lower its own; so these threads are made before the web side's
priority is lowered (``start``, from the server's lifespan), and the validation games run on
them. Their count bounds the games played at once (the others wait in the queue)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


class Validators:
    """``count`` threads that run the jobs given to :meth:`run`, in the order given."""

    def __init__(self, count: int) -> None:
        self.count = count
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = (
            queue.SimpleQueue()
        )
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def start(self) -> None:
        """Make the threads (once): they keep the calling thread's priority."""
        with self._lock:
            if self._threads:
                return
            for i in range(self.count):
                thread = threading.Thread(target=self._work, name=f"validation-{i}", daemon=True)
                thread.start()
                self._threads.append(thread)

    def run(self, job: Callable[[], T]) -> T:
        """``job()`` run on one of the threads (made now if :meth:`start` was not called);
        blocks the caller until it returns, and raises what it raised."""
        self.start()
        future: Future[T] = Future()
        self._jobs.put((job, future))
        return future.result()

    def stop(self, timeout: float = 5.0) -> None:
        """Let the threads end once the jobs queued before are done."""
        with self._lock:
            threads, self._threads = self._threads, []
        for _ in threads:
            self._jobs.put(None)
        for thread in threads:
            thread.join(timeout)

    def _work(self) -> None:
        while (item := self._jobs.get()) is not None:
            job, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job())
            except BaseException as exc:  # handed to the caller, who raises it
                future.set_exception(exc)
