"""One bot process as the referee sees it: spawn, write a line, read a line by a deadline, kill.

Nothing here ever blocks without a deadline on the bot: stdin and stdout are non-blocking and
waited on with ``poll``; stderr is drained all the time by a thread into a bounded ring buffer, so
a bot that floods its stderr neither blocks itself nor eats the arena's memory. The bot runs in
its own session (and process group); ``kill`` takes down the group and the session's stragglers.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from enum import Enum

from bot_arena.arena.transport.forkserver_client import ForkedChild, ForkServer, wait_for_exit
from bot_arena.arena.transport.protocol import MAX_LINE

WORKER_MODULE = ["-P", "-m", "bot_arena.arena.worker"]  # after the interpreter: a Python worker
LAUNCH_MODULE = ["-P", "-m", "bot_arena.arena.worker.launch"]  # ... a command's launcher

STDERR_TAIL = 16 * 1024  # bytes of stderr kept per bot
_CHUNK = 1 << 16


class ReadStatus(Enum):
    LINE = "line"
    EOF = "eof"
    TIMEOUT = "timeout"
    TOO_LONG = "too_long"


class StderrTail:
    """Drains a pipe on a daemon thread, keeping the last ``limit`` bytes."""

    def __init__(self, fd: int, limit: int = STDERR_TAIL) -> None:
        self.fd = fd
        self.limit = limit
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.total = 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._drain, name=f"stderr-{fd}", daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        try:
            while True:
                try:
                    chunk = os.read(self.fd, _CHUNK)
                except InterruptedError:
                    continue
                except OSError:
                    return
                if not chunk:
                    return
                with self.lock:
                    self.chunks.append(chunk)
                    self.size += len(chunk)
                    self.total += len(chunk)
                    while self.size - len(self.chunks[0]) >= self.limit:
                        self.size -= len(self.chunks.popleft())
        finally:
            with contextlib.suppress(OSError):
                os.close(self.fd)

    def tail(self, limit: int = 2000) -> str:
        """The last ``limit`` characters written (decoded leniently)."""
        with self.lock:
            data = b"".join(self.chunks)
        return data[-limit:].decode("utf-8", "replace")

    def finish(self, timeout: float) -> None:
        self.thread.join(timeout)


class BotProcess:
    """A started bot process and its pipes."""

    def __init__(
        self,
        argv: Sequence[str],
        env: dict[str, str] | None = None,
        *,
        forkserver: ForkServer | None = None,
        spare: str | None = None,
    ) -> None:
        """Start ``argv`` in a new session. With ``forkserver``, ``argv`` must be a Python worker
        (``python -P -m arena.worker ARGS``): the server forks one instead, which behaves the same
        without the interpreter's start-up; ``spare``: the key of the server's spare prepared
        for it (``ForkServer.spawn``)."""
        self.argv = list(argv)
        self.proc: subprocess.Popen[bytes] | ForkedChild
        if forkserver is not None:
            launch = self.argv[1:4] == LAUNCH_MODULE
            if self.argv[1:4] != WORKER_MODULE and not launch:
                raise ValueError(f"not a Python worker: {self.argv[:4]}")
            self.proc, self.fd_in, self.fd_out, fd_err = forkserver.spawn(
                self.argv[4:], env, launch=launch, spare=spare
            )
            os.set_blocking(self.fd_in, False)
            os.set_blocking(self.fd_out, False)
            self.pid = self.proc.pid
            self.stderr = StderrTail(fd_err)
        else:
            self._popen(env)
        self.buffer = bytearray()
        self.eof = False
        self.cleanups: list[Callable[[], None]] = []  # run once the process is dead (kill)
        self.killed = False
        self.closed = False
        # registered once for the process's life: waiting for a line costs one poll call
        self._poll_out = select.poll()
        self._poll_out.register(self.fd_out, select.POLLIN | select.POLLHUP | select.POLLERR)
        self._poll_in = select.poll()  # used only when the bot does not read its stdin
        self._poll_in.register(self.fd_in, select.POLLOUT | select.POLLERR | select.POLLHUP)

    def _popen(self, env: dict[str, str] | None) -> None:
        proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            close_fds=True,
            start_new_session=True,
            env=env,
        )
        assert proc.stdin and proc.stdout and proc.stderr
        self.proc = proc
        self.pid = proc.pid
        self.fd_in = os.dup(proc.stdin.fileno())
        self.fd_out = os.dup(proc.stdout.fileno())
        proc.stdin.close()
        proc.stdout.close()
        os.set_blocking(self.fd_in, False)
        os.set_blocking(self.fd_out, False)
        self.stderr = StderrTail(os.dup(proc.stderr.fileno()))
        proc.stderr.close()

    # --- writing -------------------------------------------------------------------------------
    def send(self, data: bytes, deadline: float | None) -> bool:
        """Write all of ``data`` by ``deadline`` (monotonic); False if the bot is gone or stuck."""
        try:  # the usual case: the pipe has room for the whole line, one write
            written = os.write(self.fd_in, data)
        except BlockingIOError:
            written = 0
        except OSError:  # BrokenPipeError: the bot is gone
            return False
        if written == len(data):
            return True
        return self._send_rest(memoryview(data)[written:], deadline)

    def _send_rest(self, view: memoryview, deadline: float | None) -> bool:
        """The part of a line a full pipe did not take, written as the bot reads, by polling."""
        while view:
            wait = _wait_ms(deadline)
            if wait == 0:
                return False
            events = self._poll_in.poll(wait)
            if events and events[0][1] & (select.POLLERR | select.POLLHUP):
                return False
            try:
                view = view[os.write(self.fd_in, view) :]
            except BlockingIOError:
                pass
            except OSError:  # BrokenPipeError: the bot is gone
                return False
        return True

    # --- reading -------------------------------------------------------------------------------
    def unsolicited(self) -> bytes:
        """Output that arrived while no request was open (empty when there is none)."""
        if not self.buffer and not self.eof and self._poll_out.poll(0):
            try:
                chunk = os.read(self.fd_out, _CHUNK)
            except (BlockingIOError, InterruptedError):
                return b""
            except OSError:
                chunk = b""
            if chunk:
                self.buffer += chunk
            else:
                self.eof = True
        return bytes(self.buffer[:200])

    def read_line(self, deadline: float | None) -> tuple[ReadStatus, bytes]:
        """The next line (without its newline) by ``deadline``; never blocks past it."""
        if not self.buffer and not self.eof and self._poll_out.poll(_wait_ms(deadline)):
            # the usual answer: one poll, one read that holds exactly one whole line
            try:
                chunk = os.read(self.fd_out, _CHUNK)
            except BlockingIOError:
                chunk = None
            except OSError:
                chunk = b""
            if chunk:
                if chunk.find(b"\n") == len(chunk) - 1:
                    return ReadStatus.LINE, chunk[:-1]
                self.buffer += chunk
            elif chunk is not None:
                self.eof = True
        return self._read_line_slow(deadline)

    def _read_line_slow(self, deadline: float | None) -> tuple[ReadStatus, bytes]:
        """``read_line`` for the rest: buffered lines, partial lines, long lines, end of output."""
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                if len(line) > MAX_LINE:
                    return ReadStatus.TOO_LONG, line[:200]
                return ReadStatus.LINE, line
            if len(self.buffer) > MAX_LINE:
                return ReadStatus.TOO_LONG, bytes(self.buffer[:200])
            if self.eof:
                return ReadStatus.EOF, bytes(self.buffer[:200])
            # poll first: right after a request the answer is never there yet
            if not self._poll_out.poll(_wait_ms(deadline)):
                if deadline is not None and time.monotonic() >= deadline:
                    return ReadStatus.TIMEOUT, b""
                continue
            try:
                chunk = os.read(self.fd_out, _CHUNK)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if chunk:
                self.buffer += chunk
            else:
                self.eof = True

    # --- ending --------------------------------------------------------------------------------
    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_exit(self, timeout: float) -> int | None:
        """The exit status within ``timeout`` seconds, None while the bot still runs.

        Waits on a pidfd (Linux) that wakes at the exit itself: ``Popen.wait`` sleeps in
        doubling steps (1, 2, 4, 8 ms...) and would find a bot killed on time up to twice as
        late as it died, delaying the match that goes on."""
        return wait_for_exit(self.proc, timeout)

    def kill(self) -> None:
        """SIGKILL the bot, its process group and its descendants, then reap (once).

        Stragglers that left the group but stay in the bot's session are swept later, in one
        pass over the process table for the whole pool (``sweep_sessions``): the match goes on
        first."""
        if self.killed:
            return
        self.killed = True
        kids = descendants(self.pid) if self.proc.poll() is None else []
        kill_group(self.pid)
        for pid in kids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.wait_exit(2.0)
        wait_gone(kids, 1.0)
        self._close_fds()
        for cleanup in self.cleanups:
            cleanup()

    def quit(self, data: bytes, grace: float) -> None:
        """Ask politely, wait up to ``grace`` seconds, then kill the whole group anyway."""
        if self.alive():
            self.send(data, time.monotonic() + grace)
            self.wait_exit(grace)
        self.kill()

    def _close_fds(self) -> None:
        if self.closed:
            return
        self.closed = True
        for fd in (self.fd_in, self.fd_out):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.stderr.finish(1.0)

    def exit_detail(self) -> dict[str, object]:
        """Exit code or signal of a dead process, for a Fault's detail."""
        code = self.proc.poll()
        if code is None:
            return {}
        if code < 0:
            with contextlib.suppress(ValueError):
                return {"exit_code": code, "signal": signal.Signals(-code).name}
        return {"exit_code": code}


def _wait_ms(deadline: float | None) -> int:
    """Milliseconds to poll for: -1 forever, 0 when the deadline has passed."""
    if deadline is None:
        return -1
    left = deadline - time.monotonic()
    if left <= 0:
        return 0
    return max(1, int(left * 1000 + 0.999))


def _stat_fields(pid: str) -> list[bytes] | None:
    """state, ppid, pgrp, session of a process from /proc (None if it is gone)."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        stat = os.read(fd, 1024)
    except OSError:
        return None
    finally:
        os.close(fd)
    return stat[stat.rfind(b")") + 2 :].split(b" ", 4)[:4]


def is_stopped(pid: int) -> bool:
    """Whether the process is stopped (by SIGSTOP or another stop signal, or for a tracer)."""
    fields = _stat_fields(str(pid))
    return fields is not None and fields[0] in (b"T", b"t")


def session_members(sids: set[int]) -> list[int]:
    """Live pids whose session or process group is one of ``sids`` (one pass over /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat_fields(entry)
        if fields and fields[0] != b"Z" and (int(fields[2]) in sids or int(fields[3]) in sids):
            found.append(int(entry))
    return found


def descendants(pid: int) -> list[int]:
    """Children, grandchildren, ... of a live process (from /proc/PID/task/*/children)."""
    out: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{parent}/task/{tid}/children", "rb") as fh:
                    kids = [int(k) for k in fh.read().split()]
            except (OSError, ValueError):
                continue
            out.extend(kids)
            todo.extend(kids)
    return out


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError as exc:
        if exc.errno not in (errno.ESRCH, errno.EPERM):
            raise


def sweep_sessions(sids: set[int]) -> None:
    """SIGKILL everything left in the given sessions or process groups."""
    if not sids:
        return
    for sid in sids:
        kill_group(sid)
    members = session_members(sids)
    for pid in members:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    wait_gone(members, 1.0)


def wait_gone(pids: list[int], timeout: float) -> bool:
    """Wait (bounded) until SIGKILLed processes are really dead: a signal is delivered
    asynchronously, and "nothing left behind" must hold when the arena moves on."""
    end = time.monotonic() + timeout
    left = list(pids)
    while left:
        left = [p for p in left if (f := _stat_fields(str(p))) is not None and f[0] != b"Z"]
        if not left or time.monotonic() >= end:
            break
        time.sleep(0.001)
    return not left
