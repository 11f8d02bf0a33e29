"""The referee's side of the fork server (``bot_arena.arena.worker.forkserver_server``): Python
bot workers started by ``fork`` of a process that has already imported them, instead of a fresh
interpreter.

``ForkServer.spawn`` gives a ``ForkedChild`` and the referee's ends of the worker's three pipes;
``ForkedChild`` answers ``poll``/``wait``/``returncode`` like ``subprocess.Popen`` (the server
reaps the worker and reports its exit status), so a ``BotProcess`` treats both alike. Everything
else about a bot process stays the referee's: deadlines, the kill of its process group, the sweep
of its session.

One ForkServer serves one BotPool, from one thread.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

SERVER_START_S = 10.0  # how long the first spawn may wait for the server's imports
_MESSAGE = 1 << 16
SERVER_MODULE = "bot_arena.arena.worker.forkserver_server"  # started by name: no import of it here


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
                return ForkedChild(self, int(reply["pid"]))
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
    """A new fork server, or None where there is none (no pidfd: not Linux) or it cannot start
    (callers then start workers with ``exec``)."""
    if not hasattr(os, "pidfd_open"):
        return None
    try:
        return ForkServer(preload=preload, env=env)
    except OSError:
        return None


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
