"""The runner's handle on one tournament job process: its pipes and the matches sent to it.

A job (``bot_arena.arena.tournament.job``) is forked by the runner's fork server, which preloads
the job module (``start_job_server``), or else started as a fresh interpreter.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections import deque
from multiprocessing.connection import Connection as Pipe
from multiprocessing.connection import wait
from typing import Any

from bot_arena.arena.tournament import job as job_module
from bot_arena.arena.tournament.job import Job, Plan
from bot_arena.arena.transport.forkserver import (
    ForkedChild,
    ForkServer,
    start_forkserver,
    wait_for_exit,
)

JOB_MODULE = job_module.__name__
JOB_TARGET = f"{JOB_MODULE}:run_forked"


def start_job_server() -> ForkServer | None:
    """A fork server that can also fork tournament jobs (it preloads the job module)."""
    return start_forkserver(preload=[JOB_MODULE])


class JobHandle:
    """A job process (``arena.tournament_job``) and the matches sent to it, oldest first.

    Forked by the runner's fork server when there is one (a millisecond, and its bots are forks
    of the same server), else started as a fresh interpreter; either way before its Plan is known
    (``start`` sends it), so its start-up overlaps the runner's reading of the database."""

    def __init__(self, server: ForkServer | None = None) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        self.process: subprocess.Popen[bytes] | ForkedChild
        try:
            if server is not None:
                self.process = server.spawn_job(JOB_TARGET, to_child_r, from_child_w)  # closes both
            else:
                argv = [sys.executable, "-P", "-m", JOB_MODULE]
                self.process = subprocess.Popen(
                    [*argv, str(to_child_r), str(from_child_w)],
                    pass_fds=(to_child_r, from_child_w),
                    stdin=subprocess.DEVNULL,
                )
        except BaseException:
            os.close(to_child_w)
            os.close(from_child_r)
            raise
        finally:
            if server is None:
                os.close(to_child_r)
                os.close(from_child_w)
        self.outbox: Pipe[Any, Any] = Pipe(to_child_w, readable=False)
        self.inbox: Pipe[Any, Any] = Pipe(from_child_r, writable=False)
        self.queue: deque[Job] = deque()
        self.stopping = False

    def start(self, plan: Plan) -> JobHandle:
        self.outbox.send(plan)
        return self

    def send(self, job: Job) -> None:
        self.queue.append(job)
        self.outbox.send(job)

    def terminate(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()

    def ask_stop(self) -> None:
        """Ask the job to finish (it closes its bots and exits); once."""
        if not self.stopping:
            self.stopping = True
            with contextlib.suppress(OSError):
                self.outbox.send(None)

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the job to finish (bounded wait), then make sure it is gone.

        The wait is for the end of the job's pipe, which its exit closes: ``Popen.wait`` with a
        timeout polls with sleeps of up to 50 ms, which made the end of every parallel run late.
        """
        self.ask_stop()
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0 and wait([self.inbox], left):
            try:
                self.inbox.recv()  # a result nobody waits for any more (interrupted)
            except (EOFError, OSError):
                break
        if wait_for_exit(self.process, max(0.0, deadline - time.monotonic())) is None:
            self.process.terminate()
            if wait_for_exit(self.process, timeout) is None:
                self.process.kill()
                self.process.wait()
        self.outbox.close()
        self.inbox.close()
