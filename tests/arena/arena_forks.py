"""``arena ARGS`` as processes forked from one server that has started Python, imported what a
command imports and probed the sandbox once, several at a time, each looking from outside like
``python -P -m bot_arena.arena.cli.app ARGS``: its ``/proc/PID/cmdline`` and
``/proc/PID/environ`` say what the real command's would.

For the hostile-bot tests (tests/arena/test_sandbox_attacks.py), which start dozens of
``arena play`` runs and judge what their bots could do to them: a fresh ``arena`` spends about
0.2 s of CPU on Python's start-up, the imports of the CLI and the match layer, and the sandbox's
probe (a second fresh interpreter) before it starts a bot. A fork of :class:`Server` runs the
same ``main()`` of the same modules, so its bots are started, confined and refereed exactly
as a fresh one's: each command's pool still starts its own fork server (an exec'd clean
interpreter) and its bots are forks of that. What differs is how the process came to be (its
parent is the server, not the test) and that the probe's answer (which layers this machine
offers, ``support.probe``) was found once, by the server, and inherited.

What a bot may look at of the arena's process is made the real command's: the fork writes the
command line ``python -P -m bot_arena.arena.cli.app ARGS`` over its own (the argument area of
its memory, which ``/proc/PID/cmdline`` reads; the server is started with a long argument to
make room, and the rest is zeros) and its environment, as ``NAME=value`` strings, over its
environment area (``/proc/PID/environ``; the server's environment has a padding variable
to make room). The server's own command line is overwritten at its start with ``arena-forks``:
no bot takes it for an arena (hostile_lib's ``ancestors`` climbs the chain of processes whose
command line names ``bot_arena``).

A command is started held: it waits, before ``main()``, for a line on its stdin (a pipe of the
server's), which :meth:`Forked.go` sends; its pid is known before that, as with the shell
wrapper a real run starts under (``read -r _; exec "$@"``). Its stdout and stderr go to the
files it is given. The server reaps each command and reports its exit status (as
``Popen.returncode`` gives it); answers are read by a thread of the client.

The requests and answers are lines of JSON on the server's stdin and stdout.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import importlib.util
import json
import os
import queue
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

CLI = "bot_arena.arena.cli.app"
#: what a real ``arena`` command line starts with (the test's ``ARENA``)
COMMAND = (sys.executable, "-P", "-m", CLI)
#: what the server imports before its first fork: the CLI (every command's module: ``build()``)
#: and what ``play`` imports when it runs (the match layer, the stores)
PRELOAD = (
    CLI,
    "bot_arena.arena.api.checks",
    "bot_arena.arena.api.sandbox",
    "bot_arena.arena.match.botspec",
    "bot_arena.arena.match.pool",
    "bot_arena.arena.match.xboard",
    "bot_arena.db.session",
    "bot_arena.db.sqlite_play",
    "bot_arena.db.store",
    "sqlalchemy",
)
ROOM = 16 << 10  # bytes of command line and of environment a fork may take
PAD = "ARENA_FORKS_PAD"
SERVER_NAME = b"arena-forks"


class Forked:
    """A command started by :meth:`Server.start`: what the tests use of a ``subprocess.Popen``
    (its pid, ``poll``, ``wait``, ``kill``) and ``go``, which lets it run."""

    def __init__(self, server: Server, pid: int) -> None:
        self._server = server
        self.pid = pid
        self.returncode: int | None = None
        self._ended = threading.Event()

    def _exited(self, code: int) -> None:
        self.returncode = code
        self._ended.set()

    def go(self) -> None:
        """Let the command run (it reads a line on its stdin, which then ends)."""
        self._server._send({"go": self.pid})

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(str(self.pid), timeout or 0.0)
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:  # as Popen: never a signal to a pid already reaped
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


class Server:
    """One forking server, started by the constructor and stopped by :meth:`close` (which
    kills the commands still running)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        """``env``: the server's environment (the commands get their own)."""
        self._proc = subprocess.Popen(
            [sys.executable, "-P", str(Path(__file__).resolve()), "x" * ROOM],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**env, PAD: "x" * ROOM},
        )
        self._write = threading.Lock()  # one request line at a time
        self._start = threading.Lock()  # one start request (and its answer) at a time
        self._started: queue.Queue[Forked | str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _send(self, request: dict[str, Any]) -> None:
        assert self._proc.stdin is not None
        with self._write:
            self._proc.stdin.write(json.dumps(request).encode() + b"\n")
            self._proc.stdin.flush()

    def _read(self) -> None:
        """The answers: a started command's pid (for :meth:`start`), a command's exit."""
        assert self._proc.stdout is not None
        running: dict[int, Forked] = {}
        for line in self._proc.stdout:
            answer = json.loads(line)
            if "pid" in answer:
                forked = running[int(answer["pid"])] = Forked(self, int(answer["pid"]))
                self._started.put(forked)
            else:
                running.pop(int(answer["exit"]))._exited(int(answer["code"]))
        for forked in running.values():  # killed by the server as it ended
            forked._exited(-signal.SIGKILL)
        self._started.put("the forking server ended")

    def start(
        self,
        args: Sequence[str],
        *,
        cwd: Path | str,
        env: Mapping[str, str],
        stdout: Path,
        stderr: Path,
    ) -> Forked:
        """``arena ARGS`` forked, held until :meth:`Forked.go`, in ``cwd`` with exactly the
        environment ``env``, its stdout and stderr into the files given."""
        request = {
            "args": list(args),
            "cwd": str(cwd),
            "env": dict(env),
            "stdout": str(stdout),
            "stderr": str(stderr),
        }
        with self._start:
            self._send(request)
            forked = self._started.get()
        if isinstance(forked, str):
            raise RuntimeError(forked)
        return forked

    def close(self) -> None:
        """Stop the server; a command still running is killed."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.close()
        self._proc.wait()
        self._reader.join()
        self._proc.stdout.close()


# --- the server's side: runs in its own interpreter ----------------------------------------------
def _areas() -> tuple[tuple[int, int], tuple[int, int]]:
    """(start, end) of this process's argument area and of its environment area (fields 48 to
    51 of ``/proc/self/stat``)."""
    with open("/proc/self/stat", "rb") as fh:
        stat = fh.read()
    fields = [int(f) for f in stat[stat.rfind(b")") + 2 :].split()[45:49]]
    return (fields[0], fields[1]), (fields[2], fields[3])


def _overwrite(area: tuple[int, int], strings: Sequence[bytes]) -> None:
    """The strings, each followed by a zero byte, written over ``area``, then zeros to its end."""
    data = b"".join(s + b"\0" for s in strings)
    size = area[1] - area[0]
    if len(data) > size:
        raise ValueError(f"{len(data)} bytes do not fit in an area of {size}")
    ctypes.memmove(area[0], data + b"\0" * (size - len(data)), size)


def _command(request: dict[str, Any], gate: int, ready: int) -> None:
    """In the fork: become the command (closing ``ready`` once it looks like it from outside),
    wait for the go, run it, and exit with its status."""
    from bot_arena.arena.cli import app

    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.dup2(gate, 0)
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        os.closerange(3, ready)  # only 0, 1 and 2, as subprocess leaves a command
        os.closerange(ready + 1, 1 << 16)
        os.chdir(request["cwd"])
        os.environ.clear()  # the C library's strings are its own copies from here on
        os.environ.update(request["env"])
        args = [str(a) for a in request["args"]]
        arg_area, env_area = _areas()
        _overwrite(arg_area, [os.fsencode(a) for a in (*COMMAND, *args)])
        _overwrite(env_area, [os.fsencode(f"{k}={v}") for k, v in request["env"].items()])
        # what ``python -m bot_arena.arena.cli.app`` sets, from which click names the program
        sys.argv = [str(app.__file__), *args]
        sys.modules["__main__"].__package__ = "bot_arena.arena.cli"
        os.close(ready)
        while os.read(0, 1) not in (b"\n", b""):  # the go, as the wrapper's `read -r _`
            pass
        code = _forked_cli().status_of(app.main)
        # what the interpreter does at exit: non-daemon threads joined, then the exit functions
        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
    finally:
        _forked_cli().end_fork(code)


@functools.cache
def _forked_cli() -> ModuleType:
    """``tests/forked_cli.py``, whose ends of a fork (a program's status, the streams flushed,
    ``os._exit``) this server's forks share: loaded by its path, since the server runs as a
    script with no ``tests`` package on its path (``-P``). Loaded before the first fork."""
    path = Path(__file__).resolve().parents[1] / "forked_cli.py"
    spec = importlib.util.spec_from_file_location("forked_cli", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _serve(requests: int, answers: int) -> None:
    """Read requests on descriptor ``requests`` until it ends; answer on ``answers``."""
    from importlib import import_module

    _overwrite(_areas()[0], [SERVER_NAME])
    _forked_cli()
    for name in PRELOAD:
        import_module(name)
    from bot_arena.arena.cli.app import build
    from bot_arena.arena.transport.sandbox import support

    build()  # every command's module imported
    support.probe()  # once: every fork has the answer
    threads = os.listdir("/proc/self/task")
    assert len(threads) == 1, f"a process with threads must not fork: {threads}"

    wakeup_r, wakeup_w = os.pipe()
    os.set_blocking(wakeup_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # its wake-up byte ends the select
    signal.set_wakeup_fd(wakeup_w)
    running: set[int] = set()
    gates: dict[int, int] = {}  # pid -> the writing end of its stdin, until the go

    def answer(message: dict[str, Any]) -> None:
        data = json.dumps(message).encode() + b"\n"
        while data:
            data = data[os.write(answers, data) :]

    def reap() -> None:
        while running:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
            running.discard(pid)
            if pid in gates:
                os.close(gates.pop(pid))
            answer({"exit": pid, "code": os.waitstatus_to_exitcode(status)})

    pending = b""
    while True:
        readable = select.select([requests, wakeup_r], [], [])[0]
        if wakeup_r in readable:
            os.read(wakeup_r, 4096)
            reap()
        if requests not in readable:
            continue
        chunk = os.read(requests, 1 << 16)
        if not chunk:
            break
        pending += chunk
        while b"\n" in pending:
            line, _, pending = pending.partition(b"\n")
            request = json.loads(line)
            if "go" in request:
                gate = gates.pop(int(request["go"]), None)
                if gate is not None:
                    with contextlib.suppress(BrokenPipeError):
                        os.write(gate, b"go\n")
                    os.close(gate)
                continue
            gate_r, gate_w = os.pipe()
            ready_r, ready_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                _command(request, gate_r, ready_w)
            os.close(gate_r)
            os.close(ready_w)
            os.read(ready_r, 1)  # end of file once the fork looks like the command
            os.close(ready_r)
            gates[pid] = gate_w
            running.add(pid)
            answer({"pid": pid})
    # the client is gone: so are the commands it left running
    for pid in running:
        os.kill(pid, signal.SIGKILL)
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    with contextlib.suppress(ChildProcessError):
        while True:
            os.wait()


if __name__ == "__main__":
    _serve(0, os.dup(1))
