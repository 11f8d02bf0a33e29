"""The runner's handle on one tournament job process: its pipes and the matches sent to it.

A job (``bot_arena.arena.tournament.job``) is forked by the runner's fork server, which preloads
the job module (``start_job_server``), or else started as a fresh interpreter. Messages are lines
of JSON both ways (``job.encode``). The runner reads a job's pipe without blocking and keeps
what is not a whole line yet, so a job (or a bot writing into its pipe) that sends half a line
holds up nobody; ``receive`` decodes every whole line with ``job.decode_reply`` and raises
JobFailed when the job is gone or sent anything that is not a reply.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections import deque
from collections.abc import Sequence
from multiprocessing.connection import wait

from bot_arena.arena.tournament import job as job_module
from bot_arena.arena.tournament.job import (
    MAX_MESSAGE,
    Job,
    MessageError,
    Plan,
    Reply,
    decode_reply,
    encode,
    write_all,
)
from bot_arena.arena.transport.forkserver_client import (
    ForkedChild,
    ForkServer,
    start_forkserver,
    wait_for_exit,
)
from bot_arena.arena.transport.process import is_stopped
from bot_arena.arena.transport.sandbox import support

JOB_MODULE = job_module.__name__
JOB_TARGET = f"{JOB_MODULE}:run_forked"
READ_SIZE = 1 << 16
AHEAD_S = 0.02  # a job's queue holds this much of its work (at its pace), beyond ``depth``
LOOK_S = 0.05  # the watchdog reads a job's state at most this often


class JobFailed(Exception):
    """The job is gone (end of its pipe) or sent something that is not a reply; the text says
    which, as "job process PID <text>"."""


def start_job_server(env: dict[str, str] | None = None) -> ForkServer | None:
    """A fork server that can also fork tournament jobs (it preloads the job module); ``env``
    its environment (see ``ForkServer``: a clean one when bots are confined)."""
    return start_forkserver(preload=[JOB_MODULE], env=env)


class JobHandle:
    """A job process (``arena.tournament_job``) and the matches sent to it, oldest first.

    Forked by the runner's fork server when there is one (a millisecond, and its bots are forks
    of the same server), else started as a fresh interpreter; either way before its Plan is known
    (``start`` sends it), so its start-up overlaps the runner's reading of the database."""

    def __init__(self, server: ForkServer | None = None, env: dict[str, str] | None = None) -> None:
        """``env``: the job's environment (default this process's; a clean one when bots are
        confined, since the server that forks the job forks its bots too)."""
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        self.process: subprocess.Popen[bytes] | ForkedChild
        try:
            if server is not None:
                self.process = server.spawn_job(JOB_TARGET, to_child_r, from_child_w, env)
            else:
                argv = [sys.executable, "-P", "-m", JOB_MODULE]
                self.process = subprocess.Popen(
                    [*argv, str(to_child_r), str(from_child_w)],
                    pass_fds=(to_child_r, from_child_w),
                    stdin=subprocess.DEVNULL,
                    env=env,
                )
        except BaseException:
            os.close(to_child_w)
            os.close(from_child_r)
            raise
        finally:
            if server is None:
                os.close(to_child_r)
                os.close(from_child_w)
        self.outbox = to_child_w  # blocking: the job reads its messages at once
        self.inbox = from_child_r  # non-blocking: read only what is there
        os.set_blocking(from_child_r, False)
        self._partial = b""  # the start of a line still to come
        self.queue: deque[Job] = deque()
        self.stopping = False
        self.closed = False
        self._stopped_since: float | None = None  # first seen stopped (``watch``)
        self._looked = 0.0  # when ``watch`` last read the process's state

    ready = True  # takes matches as soon as it is started (a Ray actor waits for its start)
    depth = 2  # matches queued ahead at least (the runner's PREFETCH)
    ahead_s = AHEAD_S

    @property
    def label(self) -> str:
        """How the run's messages name it."""
        return f"job process {self.process.pid}"

    def start(self, plan: Plan) -> JobHandle:
        """Send the run's Plan, with what this process's sandbox probe found (the job runs on
        this machine: it takes that answer instead of probing again, ``support.adopt``)."""
        write_all(self.outbox, encode({"plan": plan.to_dict(), "support": support.answer()}))
        return self

    def send(self, job: Job) -> None:
        """Queue ``job``; a job that cannot take it any more has closed its end, and its own
        end of the pipe says so to ``receive``."""
        self.queue.append(job)
        with contextlib.suppress(OSError):
            write_all(self.outbox, encode({"job": job.to_dict()}))

    def send_all(self, jobs: Sequence[Job], depth: int) -> None:
        """Queue ``jobs``: their lines in one write (``depth`` is for batching executors)."""
        self.queue.extend(jobs)
        with contextlib.suppress(OSError):
            write_all(self.outbox, b"".join(encode({"job": job.to_dict()}) for job in jobs))

    def receive(self) -> list[Reply]:
        """The replies the job has sent whole since the last call (maybe none: the rest of a
        line comes later); JobFailed when its pipe has ended or holds anything else."""
        try:
            data = os.read(self.inbox, READ_SIZE)
        except BlockingIOError:
            return []
        except OSError as exc:
            raise JobFailed(f"failed reading its pipe ({exc})") from None
        if not data:
            raise JobFailed("died")
        *lines, self._partial = (self._partial + data).split(b"\n")
        if len(self._partial) > MAX_MESSAGE:
            raise JobFailed("sent a message longer than any reply")
        try:
            return [decode_reply(line) for line in lines]
        except MessageError as exc:
            raise JobFailed(f"sent a malformed message ({exc})") from None

    def watch(self, grace: float) -> None:
        """JobFailed once the job has been found stopped (SIGSTOP, or any stop signal) for
        longer than ``grace`` seconds: nothing of the arena's stops a job, so a bot did, and
        the run would wait for it for ever. Called by the runner's loop after every wait; the
        process's state is read at most every ``LOOK_S`` (a read of /proc per loop and job cost
        the writer a tenth of its time in fast games)."""
        now = time.monotonic()
        if now - self._looked < LOOK_S:
            return
        self._looked = now
        if not is_stopped(self.process.pid):
            self._stopped_since = None
            return
        if self._stopped_since is None:
            self._stopped_since = now
        elif now - self._stopped_since > grace:
            raise JobFailed(f"was stopped (by a signal) for more than {grace:g} s")

    def terminate(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()

    def abandon(self) -> None:
        """End a job that failed or may be hostile without waiting for its games: SIGTERM (it
        closes its bots), or SIGKILL when it is stopped (a stopped process hears nothing else;
        its bots then die with its fork server, or its channel to the runner's)."""
        if is_stopped(self.process.pid) and self.process.poll() is None:
            self.process.kill()
        else:
            self.terminate()
        self.stop(timeout=1.0)

    def ask_stop(self) -> None:
        """Ask the job to finish (it closes its bots and exits); once."""
        if not self.stopping:
            self.stopping = True
            with contextlib.suppress(OSError):
                write_all(self.outbox, encode(None))

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the job to finish (bounded wait), then make sure it is gone.

        The wait is for the end of the job's pipe, which its exit closes: ``Popen.wait`` with a
        timeout polls with sleeps of up to 50 ms, which made the end of every parallel run late.
        """
        self.ask_stop()
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0 and wait([self.inbox], left):
            try:  # results nobody waits for any more (interrupted)
                if not os.read(self.inbox, READ_SIZE):
                    break
            except BlockingIOError:
                continue
            except OSError:
                break
        if wait_for_exit(self.process, max(0.0, deadline - time.monotonic())) is None:
            self.process.terminate()
            if wait_for_exit(self.process, timeout) is None:
                self.process.kill()
                self.process.wait()
        if not self.closed:
            self.closed = True
            os.close(self.outbox)
            os.close(self.inbox)
