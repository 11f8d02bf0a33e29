"""The referee's side of the fork server (``bot_arena.arena.worker.forkserver_server``): Python
bot workers started by ``fork`` of a process that has already imported them, instead of a fresh
interpreter.

``ForkServer.spawn`` gives a ``ForkedChild`` and the referee's ends of the worker's three pipes;
``ForkedChild`` answers ``poll``/``wait``/``returncode`` like ``subprocess.Popen`` (the server
reaps the worker and reports its exit status), so a ``BotProcess`` treats both alike. Everything
else about a bot process stays the referee's: deadlines, the kill of its process group, the sweep
of its session.

One ForkServer serves one BotPool, from one thread. A pool (or run) that is done with its own
server gives it back (``release``) rather than ending it: the thread's next pool of the same kind
(same preloaded modules, same environment) takes it up (``start_forkserver``) instead of paying
for a fresh interpreter's imports again, about 0.1 s of CPU, as multiprocessing's forkserver
lives on between pools. Only the thread that started a server reuses it: the server dies with
that thread (parent-death signal). Kept servers end when the process exits.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

SERVER_START_S = 10.0  # how long the first spawn may wait for the server's imports
_MESSAGE = 1 << 16
SERVER_MODULE = "bot_arena.arena.worker.forkserver_server"  # started by name: no import of it here
KEPT_MAX = 4  # idle servers kept for reuse in one process (each holds ~25 MB), at most one per kind


class ForkServerError(OSError):
    """The fork server is gone or answered nonsense (the pool falls back to ``exec``)."""


class ForkServer:
    """A running ``bot_arena.arena.worker.forkserver_server`` process and the socket to it."""

    def __init__(
        self,
        *,
        channel: int | None = None,
        preload: Sequence[str] = (),
        env: dict[str, str] | None = None,
    ) -> None:
        """Start a server; or, with ``channel`` (a socket descriptor a server gave this process),
        talk to that one. ``preload``: modules the server imports before its first fork besides
        the worker's (those whose functions ``spawn_job`` may run). ``env``: the server's own
        environment (default this process's): every fork's memory holds a copy of it, whatever
        environment the fork is then given, so a server for confined bots gets a clean one."""
        self.process: subprocess.Popen[bytes] | None = None
        self.env = env  # the server's environment as started (None: this process's)
        self.kind = _kind(preload, env)  # which later pools may take it up (``release``)
        self.exits: dict[int, int] = {}  # exit codes reported and not asked for yet
        self.closed = False
        self.broken = False  # the server died or broke the protocol: every worker died with it
        if channel is not None:
            self.sock = socket.socket(fileno=channel)
        else:
            self.sock = self._launch(preload, env)
        # registered once: a bot's liveness check polls the socket without waiting
        self._poller = select.poll()
        self._poller.register(self.sock.fileno(), select.POLLIN)

    def _launch(self, preload: Sequence[str], env: dict[str, str] | None) -> socket.socket:
        """Start the server process; returns this side's socket."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        argv = [sys.executable, "-P", "-m", SERVER_MODULE, str(theirs.fileno())]
        for module in preload:
            argv += ["--preload", module]
        try:
            self.process = subprocess.Popen(
                argv,
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # no Ctrl-C from the terminal: the referee decides
                env=env,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return ours

    # --- messages ------------------------------------------------------------------------------
    def _receive(self, timeout: float | None) -> dict[str, Any] | None:
        """The next message within ``timeout`` seconds (None: none came); an exit report is
        recorded on the way."""
        if self.closed or self.broken:
            raise ForkServerError("the fork server is gone")
        wait = -1 if timeout is None else max(0, int(timeout * 1000 + 0.999))
        if not self._poller.poll(wait):
            return None
        try:
            data = self.sock.recv(_MESSAGE)
        except OSError as exc:
            self.broken = True
            raise ForkServerError(f"fork server: {exc}") from None
        if not data:
            self.broken = True
            raise ForkServerError("the fork server is gone")
        message: dict[str, Any] = json.loads(data)
        if "exit" in message:
            self.exits[int(message["exit"])] = int(message["code"])
        return message

    def spawn(
        self,
        argv: list[str],
        env: dict[str, str] | None = None,
        *,
        launch: bool = False,
        spare: str | None = None,
    ) -> tuple[ForkedChild, int, int, int]:
        """Start a worker with ``python -m arena.worker ARGV``'s behaviour (with ``launch``:
        ``arena.worker.launch``'s, a command); returns the child and the referee's ends of its
        stdin (write), stdout (read) and stderr (read). ``spare``: the key of a spare made by
        ``stock_spare`` for this worker (the server forks afresh when it has none by it)."""
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        try:
            request: dict[str, Any] = {
                "kind": "worker",
                "argv": argv,
                "entry": "launch" if launch else "worker",
            }
            if spare is not None:
                request["spare"] = spare
            child = self._start(request, [stdin_r, stdout_w, stderr_w], env)
        except BaseException:
            for fd in (stdin_w, stdout_r, stderr_r):
                os.close(fd)
            raise
        return child, stdin_w, stdout_r, stderr_r

    def stock_spare(self, plan_json: str) -> None:
        """Have the server fork a spare: a process confined as far as ``confine.prepare`` goes
        by ``plan_json`` (a ``confine.Plan`` without the bot's part), which a later ``spawn``
        with ``spare=`` the plan's working folder turns into that worker. Sent without waiting:
        the spare prepares while this process goes on."""
        if self.closed or self.broken:
            raise ForkServerError("the fork server is gone")
        try:
            self.sock.send(json.dumps({"kind": "spare", "plan": plan_json}).encode())
        except OSError as exc:
            self.broken = True
            raise ForkServerError(f"fork server: {exc}") from None

    def spawn_job(
        self, target: str, read_fd: int, write_fd: int, env: dict[str, str] | None = None
    ) -> ForkedChild:
        """Start a job process that runs ``target`` (``module:function``, the module one of this
        server's ``preload``) as ``function(3, 4, 5)``: fds 3 and 4 are ``read_fd`` and
        ``write_fd`` (both closed here), 5 a channel of its own to this server, through which
        it starts its bots (they die with the job)."""
        return self._start({"kind": "job", "target": target}, [read_fd, write_fd], env)

    def _start(
        self, request: dict[str, Any], fds: list[int], env: dict[str, str] | None
    ) -> ForkedChild:
        """Send a request with ``fds`` (closed here, sent or not) and wait for the new pid."""
        request["cwd"] = os.getcwd()
        request["env"] = dict(os.environ if env is None else env)
        try:
            if self.closed or self.broken:
                raise ForkServerError("the fork server is gone")
            try:
                socket.send_fds(self.sock, [json.dumps(request).encode()], fds)
            except OSError as exc:
                self.broken = True
                raise ForkServerError(f"fork server: {exc}") from None
        finally:
            for fd in fds:
                os.close(fd)
        deadline = time.monotonic() + SERVER_START_S
        while True:
            reply = self._receive(deadline - time.monotonic())
            if reply is None:
                raise ForkServerError("the fork server did not answer")
            if "pid" in reply:
                pid = int(reply["pid"])
                # a report for this pid read earlier was of an earlier process of a released
                # server's last user (reaped before the pid could be given again)
                self.exits.pop(pid, None)
                return ForkedChild(self, pid)
            if "error" in reply:
                raise ForkServerError(f"fork server: {reply['error']}")

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        """``pid``'s exit code once the server reported it, waiting up to ``timeout`` seconds
        (0: just look; None: forever). ForkServerError when the server is gone (and with it
        the worker: its parent-death signal)."""
        end = None if timeout is None else time.monotonic() + timeout
        while pid not in self.exits:
            left = None if end is None else max(0.0, end - time.monotonic())
            if self._receive(left) is None:
                return None
        return self.exits.pop(pid)

    def reusable(self) -> bool:
        """Whether a later pool could take this server up: one this process started, that
        has not broken or been closed and still runs."""
        return (
            not self.closed
            and not self.broken
            and self.process is not None
            and self.process.poll() is None
        )

    def release(self) -> None:
        """Done with the server: keep it for this thread's next pool of the same kind
        (``start_forkserver``), once every process it started is killed and gone, as its end
        would have left them; or close it (broken, not this process's own, a process of its
        would not end, or a server of its kind is kept already; see ``_keep``)."""
        if self.closed:
            return
        if self.reusable() and _keep(self):
            if self._reset():
                return
            _unkeep(self)
        self.close()

    def _reset(self) -> bool:
        """Have the server kill and reap every process it started; True once it says none
        is left (bounded wait: False otherwise, and when it is gone)."""
        try:
            self.sock.send(json.dumps({"kind": "reset"}).encode())
            end = time.monotonic() + SERVER_START_S
            while True:
                reply = self._receive(end - time.monotonic())
                if reply is None:
                    return False
                if "reset" in reply:
                    return bool(reply["reset"] == 0)
        except (OSError, ForkServerError):
            self.broken = True
            return False

    def close(self, timeout: float = 2.0) -> None:
        """End the server: it exits when its socket closes (workers still running die with it:
        the pool has killed its bots by then)."""
        if self.closed:
            return
        self.closed = True
        self.sock.close()
        if self.process is not None and wait_for_exit(self.process, timeout) is None:
            self.process.kill()
            self.process.wait()


def start_forkserver(
    preload: Sequence[str] = (), env: dict[str, str] | None = None
) -> ForkServer | None:
    """A fork server of this kind (``preload``, ``env``): one this thread released before and
    that still runs, else a new one; None where there is none (no pidfd: not Linux) or it
    cannot start (callers then start workers with ``exec``). The caller ends its use with
    ``release`` (or ``close``)."""
    if not hasattr(os, "pidfd_open"):
        return None
    kept = _take(_kind(preload, env))
    if kept is not None:
        return kept
    try:
        return ForkServer(preload=preload, env=env)
    except OSError:
        return None


#: Variables that change while a process runs and that nothing reads as it starts: left out of
#: a server's kind. pytest sets ``PYTEST_CURRENT_TEST`` to each test's name in turn, so a server
#: of this process's environment was of a new kind at every test and never taken up again (in
#: a run of the suite, about 80 servers started for one kind each). A worker is given the
#: environment as it is when it starts (``_start``), so it still sees the variable's value then.
NOT_READ_AT_START = ("PYTEST_CURRENT_TEST",)


def _kind(preload: Sequence[str], env: dict[str, str] | None) -> tuple[object, ...]:
    """What a server was started with that a worker forked from it inherits: its preloaded
    modules and its environment (this process's, as it is now, when ``env`` is None: its
    ``PYTHONPATH`` made the server's ``sys.path``), but ``NOT_READ_AT_START``."""
    items = (os.environ if env is None else env).items()
    return (tuple(preload), tuple(sorted(i for i in items if i[0] not in NOT_READ_AT_START)))


class _Kept(threading.local):
    """This thread's idle servers (a server dies with the thread that started it)."""

    def __init__(self) -> None:
        self.servers: list[ForkServer] = []


_kept = _Kept()
_kept_lock = threading.Lock()
_kept_count = 0  # idle servers in all threads


def _keep(server: ForkServer) -> bool:
    """Keep ``server`` idle for this thread; False when it may not be kept (one of its kind is
    kept already, or ``KEPT_MAX`` are and none of them is this thread's).

    With ``KEPT_MAX`` kept, the one of this thread's idle longest is ended to make room: the
    kind given back last is the likeliest asked for next. Refusing instead kept the first four
    kinds a process met for good, and every later kind paid for a fresh server each time (in
    one full test run 82 starts of the same kind, while four kinds never asked for again sat
    idle)."""
    global _kept_count
    ended = None
    with _kept_lock:
        if any(s.kind == server.kind for s in _kept.servers):
            return False
        if _kept_count >= KEPT_MAX:
            if not _kept.servers:
                return False
            ended = _kept.servers.pop(0)  # kept in the order given back: the oldest first
            _kept_count -= 1
        _kept.servers.append(server)
        _kept_count += 1
    if ended is not None:
        ended.close()
    return True


def _unkeep(server: ForkServer) -> None:
    global _kept_count
    with _kept_lock:
        if server in _kept.servers:
            _kept.servers.remove(server)
            _kept_count -= 1


def _take(kind: tuple[object, ...]) -> ForkServer | None:
    """This thread's idle server of ``kind`` that still runs (one that died idle is closed)."""
    for server in [s for s in _kept.servers if s.kind == kind]:
        _unkeep(server)
        if server.reusable():
            server.exits.clear()  # its last user's bots' exits
            return server
        server.close()
    return None


def kept_servers() -> list[ForkServer]:
    """This thread's idle servers (tests: a released server is kept, not leaked)."""
    return list(_kept.servers)


def close_kept() -> None:
    """End this thread's idle servers (at exit; or to see a pool leave no process behind)."""
    for server in kept_servers():
        _unkeep(server)
        server.close()


def _forget_kept() -> None:
    """In a forked child: the parent's idle servers are not the child's to use (their sockets
    are copies of the parent's), and its count starts at nothing."""
    global _kept, _kept_lock, _kept_count
    for server in _kept.servers:
        server.closed = True
        with contextlib.suppress(OSError):
            server.sock.close()
    _kept, _kept_lock, _kept_count = _Kept(), threading.Lock(), 0


atexit.register(close_kept)
os.register_at_fork(after_in_child=_forget_kept)


class ForkedChild:
    """A worker started by the fork server, with the part of ``Popen``'s interface the referee
    uses."""

    def __init__(self, server: ForkServer, pid: int) -> None:
        self.server = server
        self.pid = pid
        self.returncode: int | None = None

    def _ask(self, timeout: float | None) -> int | None:
        if self.returncode is None:
            try:
                self.returncode = self.server.exit_code(self.pid, timeout)
            except ForkServerError:  # the server is gone: its workers died with it
                self.returncode = -signal.SIGKILL
        return self.returncode

    def poll(self) -> int | None:
        return self._ask(0)

    def send_signal(self, sig: int) -> None:
        """Signal the child unless it is known to have exited (and been reaped)."""
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        code = self._ask(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(["bot_arena.arena.worker"], timeout or 0.0)
        return code


def wait_for_exit(process: subprocess.Popen[bytes] | ForkedChild, timeout: float) -> int | None:
    """The exit status within ``timeout`` seconds, None while the process still runs.

    A child of this process is waited for on a pidfd (Linux), which wakes at the exit itself:
    ``Popen.wait`` sleeps in doubling steps (1, 2, 4, 8 ms...) and would find a process up to
    twice as late as it died (a bot killed on time, delaying the match that goes on; a job or a
    server at the end of a run). A fork server's child is waited for on the server's socket."""
    if isinstance(process, subprocess.Popen) and process.returncode is None:
        end = time.monotonic() + timeout
        if hasattr(os, "pidfd_open"):
            try:
                fd = os.pidfd_open(process.pid)  # not reaped yet, so the pid is still its own
            except OSError:
                fd = -1
            if fd >= 0:
                try:
                    poller = select.poll()
                    poller.register(fd, select.POLLIN)
                    poller.poll(max(0, int(timeout * 1000 + 0.999)))
                finally:
                    os.close(fd)
        timeout = max(0.0, end - time.monotonic())
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        return None
