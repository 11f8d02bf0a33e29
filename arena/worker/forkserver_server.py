"""``python -m bot_arena.arena.worker.forkserver_server FD [--preload MODULE]...``: starts bot
workers (and tournament jobs) by ``fork`` instead of ``exec``.

A fresh Python worker spends about 50 ms of CPU before it can load a bot: the interpreter's own
start-up and the imports of the worker, the game rules and the bot registry. This process pays
that once (it imports what a worker needs and then waits), and each worker is a ``fork`` of it:
a millisecond or two. It was itself started by ``exec`` with no descriptor but its socket, so a
worker inherits nothing from the arena (no database connection, no other bot's pipes).

The referee (``bot_arena.arena.transport.forkserver_client``) talks to it over one
``SOCK_SEQPACKET`` socket, one JSON message per packet:

- request ``{"argv": [...], "cwd": ..., "env": {...}}`` with three descriptors attached (the
  worker's stdin, stdout and stderr); answer ``{"pid": N}`` or ``{"error": text}``; with
  ``"entry": "launch"`` the fork runs ``arena.worker.launch`` instead (a ``cmd:`` bot: confined
  and limited in the fork, then exec'd);
- request ``{"kind": "spare", "plan": PLAN}`` without descriptors, and no answer: fork a *spare*,
  which confines itself as far as ``confine.prepare`` goes by the JSON ``PLAN`` (a confined bot's
  cgroup, namespaces, mounts, seccomp) and waits; a later worker request with ``"spare":`` that
  plan's working folder is handed to it (with its descriptors) instead of a new fork, and the
  answer is the spare's pid (a spare that died meanwhile: a new fork after all);
- request ``{"kind": "reset"}`` without descriptors: kill every process started (workers, jobs,
  spares), as the server's end would, and reap them; answer ``{"reset": N}``, N the number still
  running after a short wait (the client is done with the server, which may serve another
  client of the same process later);
- request ``{"kind": "job", "target": "module:function", ...}`` with two descriptors (a job's
  pipes from and to its client): the function, of a module preloaded with ``--preload``, runs in
  the fork with a channel of its own to this server, whose workers die when it closes;
- whenever a worker exits, ``{"exit": pid, "code": c}`` (``c`` as ``Popen.returncode``: the
  exit status, or minus the signal number). Workers are reaped here, as soon as they exit.

A worker starts its own session (its process group is its pid, as with ``start_new_session``),
takes the three descriptors as 0, 1 and 2, closes every other one, takes the request's working
folder and environment, and runs ``arena.worker``'s ``main`` exactly as the exec'd worker does
(resource limits, parent-death signal, protocol isolation, the bot). This process dies with the
arena (parent-death signal) and its workers die with it; it exits when the socket closes.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import Any

from bot_arena.arena.transport.sandbox.kernel import (
    PR_SET_CHILD_SUBREAPER,
    close_from,
    prctl,
    set_dumpable,
)
from bot_arena.arena.worker.__main__ import die_with_parent

MAX_MESSAGE = 1 << 20  # bytes of one request (the environment is the large part)
RESET_WAIT_S = 2.0  # how long a reset waits for the processes it killed to end
MakeRun = Callable[[dict[str, Any]], Callable[[], int]]  # what a worker request's process runs


def preload(extra: Sequence[str] = ()) -> Callable[[list[str]], int]:
    """Import what every worker needs before it loads its bot, and the ``extra`` modules (whose
    functions jobs run); return the worker's ``main``."""
    from bot_arena.arena.transport.sandbox import confine  # noqa: F401 - every confined fork
    from bot_arena.arena.worker import host, launch, loader  # noqa: F401 - a worker's, a ``cmd:`` bot's
    from bot_arena.arena.worker.__main__ import main
    from bot_arena.bots import registry as bot_registry
    from bot_arena.games import registry as game_registry

    # built-in modules only: a third-party plugin might start threads, and a process with
    # threads must not fork
    for module in (*game_registry.builtin_modules(), *bot_registry.builtin_modules(), *extra):
        import_module(module)
    return main


def _detach(server: int, worker: bool) -> None:
    """The first steps of a forked process: it dies with the server (and exits at once if the
    server already died), leads a session of its own; a bot's process may be read through
    /proc again (and a confined one may write its own /proc/self/uid_map)."""
    die_with_parent()
    if os.getppid() != server:  # the server died before the request took effect
        os._exit(1)
    os.setsid()
    if worker:  # a bot's process holds nothing of the arena's
        set_dumpable(True)


def _become(
    request: dict[str, Any], fds: list[int], run: Callable[[], int], server: int | None
) -> None:
    """Turn the forked process into the requested one and run it; never returns. ``fds`` become
    0, 1, 2 (a worker's stdin, stdout, stderr) or 3, 4, 5 (a job's pipes and its channel).
    ``server``: the server's pid, for a fresh fork (None: a spare, detached already)."""
    code = 1
    try:
        if server is not None:
            _detach(server, request["kind"] == "worker")
        first = 0 if request["kind"] == "worker" else 3
        moved = [os.dup(fd) for fd in fds]  # out of the way of the targets first
        for target, fd in enumerate(moved):
            os.dup2(fd, first + target)
        close_from(first + len(fds))  # however high (as a confined keeper and init do)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        code = run()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # the worker reports a bot's own errors itself; this is the rest
        traceback.print_exc()
    finally:
        try:
            atexit._run_exitfuncs()  # as a process that returns from main would
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _spare(plan_json: str, sock: socket.socket, server: int, make_run: MakeRun) -> None:
    """A spare (forked, never returns): confined as far as ``confine.prepare`` goes, then it
    waits for the worker request it is handed (with its three descriptors) and becomes that
    worker. Exits when the server closes the socket unused."""
    from bot_arena.arena.transport.sandbox import confine

    try:
        _detach(server, True)
        confine.close_all_but(sock.fileno())
        confine.prepare(confine.Plan.from_json(plan_json))
        data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, 3)
        sock.close()
        request = json.loads(data) if data else {}
        if request.get("kind") != "worker" or len(fds) != 3:
            os._exit(1)
    except BaseException:  # no stderr here to tell (closed): the pool starts a fresh fork
        os._exit(1)
    _become(request, fds, make_run(request), None)


def _group_alive(pgid: int) -> bool:
    """Whether process group ``pgid`` still has a member (a zombie not reaped yet counts)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):  # a channel whose client is gone
        sock.send(json.dumps(message).encode())


class Server:
    """The request loop: one poll over the channels and the children's pidfds."""

    def __init__(
        self,
        sock: socket.socket,
        worker_main: Callable[[list[str]], int],
        job_modules: Sequence[str] = (),
    ) -> None:
        self.main_channel = sock
        self.worker_main = worker_main
        self.job_modules = frozenset(job_modules)  # a job runs a function of one of these
        self.poller = select.poll()
        self.channels: dict[int, socket.socket] = {}
        self.children: dict[int, tuple[int, int]] = {}  # pidfd -> (pid, channel fd)
        self.spares: dict[str, tuple[int, socket.socket]] = {}  # key -> (pid, its socket)
        self._add_channel(sock)

    def _add_channel(self, sock: socket.socket) -> None:
        self.channels[sock.fileno()] = sock
        self.poller.register(sock.fileno(), select.POLLIN)

    def _drop_channel(self, fd: int) -> None:
        """A client is gone (a job that exited or died): its workers go with it."""
        sock = self.channels.pop(fd)
        self.poller.unregister(fd)
        for pidfd, (pid, channel) in self.children.items():
            if channel == fd:
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
                self.children[pidfd] = (pid, -1)  # its exit goes unreported (fd may be reused)
        sock.close()

    def serve(self) -> None:
        """Answer requests and report exits until the main channel closes."""
        while True:
            for fd, _ in self.poller.poll():
                if fd in self.children:
                    self._reap(fd)
                elif fd in self.channels and not self._request(self.channels[fd]):
                    if self.channels[fd] is self.main_channel:
                        return
                    self._drop_channel(fd)

    def _reap(self, pidfd: int) -> None:
        pid, channel = self.children.pop(pidfd)
        self.poller.unregister(pidfd)
        os.close(pidfd)
        for key, (spare, sock) in list(self.spares.items()):
            if spare == pid:  # died unused (its unit killed, say): no worker goes there
                sock.close()
                del self.spares[key]
        _, status = os.waitpid(pid, 0)
        if channel in self.channels:
            _send(self.channels[channel], {"exit": pid, "code": os.waitstatus_to_exitcode(status)})
        self._reap_orphans()

    def _reap_orphans(self) -> None:
        """Reap exited processes that are not this server's own children (orphans it adopted
        as subreaper), up to the first of its own, which its pidfd reports."""
        own = {pid for pid, _ in self.children.values()}
        while True:
            try:
                found = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if found is None or found.si_pid in own:
                return
            with contextlib.suppress(ChildProcessError):
                os.waitpid(found.si_pid, 0)

    def _worker_run(self, request: dict[str, Any]) -> Callable[[], int]:
        """What a worker request's process runs."""
        argv = [str(a) for a in request["argv"]]
        if request.get("entry") == "launch":

            def launch() -> int:  # a ``cmd:`` bot: confined and limited here, then exec'd
                from bot_arena.arena.worker.launch import main as launch_main

                launch_main(argv)
                return 127

            return launch

        def worker() -> int:
            sys.argv = ["bot_arena.arena.worker", *argv]
            return self.worker_main(argv)

        return worker

    def _request(self, sock: socket.socket) -> bool:
        """Serve one request from ``sock``; False when the client has closed it."""
        try:
            data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, 3)
        except OSError:
            return False
        if not data:
            for received in fds:
                os.close(received)
            return False
        job_end: socket.socket | None = None
        server_end: socket.socket | None = None
        try:
            request = json.loads(data)
            kind = request.get("kind")
            if kind == "spare" and not fds:
                with contextlib.suppress(OSError, ValueError, KeyError):  # no answer: no spare
                    self._start_spare(str(request["plan"]), sock.fileno())
                return True
            if kind == "reset" and not fds:
                self._reset(sock)
                return True
            if kind not in ("worker", "job") or len(fds) != (3 if kind == "worker" else 2):
                raise ValueError(f"bad request: {kind!r} with {len(fds)} descriptors")
            if kind == "worker":
                spare = self._hand_to_spare(request, fds)
                if spare is not None:
                    _send(sock, {"pid": spare})
                    return True
            run: Callable[[], int]
            if kind == "worker":
                run = self._worker_run(request)
            else:  # a job (a tournament's): its pipes, and a channel of its own for its workers
                run = self._job(str(request.get("target", "")))
                job_end, server_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                fds = [*fds, job_end.fileno()]
                self._add_channel(server_end)
            sys.stdout.flush()
            sys.stderr.flush()
            server = os.getpid()
            pid = os.fork()
            if pid == 0:
                _become(request, fds, run, server)
            pidfd = os.pidfd_open(pid)
        except (OSError, ValueError, KeyError) as exc:
            if server_end is not None:
                self._drop_channel(server_end.fileno())
            _send(sock, {"error": f"{type(exc).__name__}: {exc}"})
            return True
        finally:
            for received in fds[:3] if job_end is None else fds[:2]:
                os.close(received)
            if job_end is not None:
                job_end.close()
        self.children[pidfd] = (pid, sock.fileno())
        self.poller.register(pidfd, select.POLLIN)
        _send(sock, {"pid": pid})
        return True

    def _start_spare(self, plan_json: str, channel: int) -> None:
        """Fork a spare for a confined worker to come, prepared by ``plan_json`` (its working
        folder names it). No answer: a spare that fails is never handed a worker, and one the
        client never asks for dies with the client's channel."""
        key = json.loads(plan_json)["work"]
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            server = os.getpid()
            pid = os.fork()
            if pid == 0:
                ours.close()
                _spare(plan_json, theirs, server, self._worker_run)
            pidfd = os.pidfd_open(pid)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.children[pidfd] = (pid, channel)
        self.poller.register(pidfd, select.POLLIN)
        self.spares[key] = (pid, ours)

    def _reset(self, sock: socket.socket) -> None:
        """The client is done with this server, which may serve another later: kill every
        process it started, with its process group (each worker's and job's, and the spares
        no worker was handed, with what a spare's confinement started), as its end would have,
        and reap them (each child reported as any child's exit, an orphan of theirs reaped
        here, the subreaper); answer with how many groups still hold a process after
        ``RESET_WAIT_S`` (the client keeps the server only when none does)."""
        groups = [pid for pid, _ in self.children.values()]
        for pgid in groups:
            with contextlib.suppress(OSError):
                os.killpg(pgid, signal.SIGKILL)
        for _, spare in self.spares.values():
            spare.close()
        self.spares.clear()
        end = time.monotonic() + RESET_WAIT_S
        for pidfd in list(self.children):
            waiting = select.poll()
            waiting.register(pidfd, select.POLLIN)
            if waiting.poll(max(0, int((end - time.monotonic()) * 1000))):
                self._reap(pidfd)
        left = [pgid for pgid in groups if _group_alive(pgid)]
        while left and time.monotonic() < end:
            time.sleep(0.001)  # the kernel is still tearing the killed processes down
            self._reap_orphans()
            left = [pgid for pgid in left if _group_alive(pgid)]
        _send(sock, {"reset": len(self.children) + len(left)})

    def _hand_to_spare(self, request: dict[str, Any], fds: list[int]) -> int | None:
        """Hand a worker request to the spare prepared for it (its ``spare`` key), which
        becomes that worker: its pid, or None (no such spare, or it died: fork afresh)."""
        found = self.spares.pop(str(request.get("spare")), None)
        if found is None:
            return None
        pid, sock = found
        try:
            socket.send_fds(sock, [json.dumps(request).encode()], fds)
        except OSError:
            return None
        finally:
            sock.close()
        return pid

    def _job(self, target: str) -> Callable[[], int]:
        """What a job runs: ``module:function`` of a preloaded module, called with its fds (3, 4:
        its pipes from and to its client; 5: its own channel to this server)."""
        module, _, function = target.partition(":")
        if module not in self.job_modules:
            raise ValueError(f"job target {target!r} is not in a preloaded module")
        entry: Callable[[int, int, int], int] | None = getattr(sys.modules[module], function, None)
        if not callable(entry):
            raise ValueError(f"job target {target!r} names no function")
        return lambda: entry(3, 4, 5)


def main(argv: list[str]) -> None:
    """``FD [--preload MODULE]...``"""
    die_with_parent()
    # No process may read this one's memory or descriptors through /proc (nor ptrace it):
    # every bot is a fork of it. Jobs inherit this; a bot's own process gets it back (below).
    with contextlib.suppress(OSError):
        set_dumpable(False)
        # orphans come here, not to the system's init: a confined bot's init when its keeper
        # is killed, and whatever its namespace held (reaped in ``_reap_orphans``)
        prctl(PR_SET_CHILD_SUBREAPER, 1)
    sock = socket.socket(fileno=int(argv[0]))
    extra = [argv[i + 1] for i in range(1, len(argv) - 1) if argv[i] == "--preload"]
    Server(sock, preload(extra), extra).serve()


if __name__ == "__main__":
    main(sys.argv[1:])
