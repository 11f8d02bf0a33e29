"""``arena ARGS`` as a process of its own, forked from a server that has already started up.

For tests whose subject is a command's process (its exit code, what it prints, the memory it
may use) but not Python's start-up: a fresh ``arena`` spends 0.2 to 0.4 s of CPU starting the
interpreter and importing the CLI, its command modules and SQLAlchemy before it reads a
single argument, and a suite of refusals started dozens of them. :class:`Server` starts one
clean interpreter (``python -P``, this file as its script: nothing of the test process, no
thread) that imports all that once, and reads the sandbox's probe once (each command that
starts bots ran a fresh interpreter for it); each :meth:`Server.run` forks it, and the fork becomes
the command: its own pid, the working folder, environment and resource limits it was given,
stdin ``/dev/null``, stdout and stderr into files, then ``main()`` as ``python -m
bot_arena.arena.cli.app`` runs it, its exit status the one the interpreter would give
(``SystemExit``'s code; an uncaught exception: the traceback and 1). The server reaps it and
answers with its status, so the caller gets what ``subprocess.run(..., capture_output=True)``
gives.

:meth:`Server.start` starts one and returns at once (a ``Popen``-like handle: the pid, ``poll``,
``wait``, signals), the command in a session of its own with stdout and stderr into one log:
for runs a test kills and resumes. A fork's command line is the server's, not ``arena``'s: a
test whose subject is how another process tells a live ``arena`` (its ``/proc`` command line)
starts real ones.

:meth:`Server.script` runs a Python script instead, as ``python SCRIPT`` in its folder would
(the README's examples): a server made with ``scripts=True`` is started as such a script is
(no ``-P``: the same ``sys.flags``, which ``multiprocessing`` passes on), its own folder taken
off ``sys.path`` before it imports anything, nothing of the CLI imported; the fork puts the
script's folder first on ``sys.path``, sets ``sys.argv`` to the script's name, runs it as the
module ``__main__`` with a script's globals, then the ``atexit`` functions, as the interpreter's
end does.

The requests and answers are lines of JSON on the server's stdin and stdout (the fork's pid,
then its status); one command runs at a time.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

#: what the server imports before its first fork (the command modules with it: ``build()``)
PRELOAD = ("bot_arena.arena.cli.app", "sqlalchemy", "bot_arena.db.session")
#: what the tests' ``arena`` commands import before they work, beyond PRELOAD: a tournament's
#: and a ladder's run and resume, a game played, the refusals' checks, ``arena serve`` and what
#: it answers with; imported once by :func:`commands`' server instead of by each command (one
#: list: each test file had a server and a list of its own, each a fresh interpreter's imports).
#: Imports only: nothing of them runs, no thread starts.
COMMAND_MODULES = (
    "bot_arena.arena.api.checks",
    "bot_arena.arena.api.cluster",
    "bot_arena.arena.api.formats",
    "bot_arena.arena.api.ladders",
    "bot_arena.arena.api.new_run",
    "bot_arena.arena.api.passwords",
    "bot_arena.arena.api.pgn_out",
    "bot_arena.arena.api.resume",
    "bot_arena.arena.api.runner_setup",
    "bot_arena.arena.api.sandbox",
    "bot_arena.arena.api.spec",
    "bot_arena.arena.api.submit",
    "bot_arena.arena.api.validation",
    "bot_arena.arena.cli.option_sets",
    "bot_arena.arena.cli.rating_cmd",
    "bot_arena.arena.cli.run_config",
    "bot_arena.arena.cli.serve_cmd",
    "bot_arena.arena.formats.results_file",
    "bot_arena.arena.match.botspec",
    "bot_arena.arena.match.confinement",
    "bot_arena.arena.match.pool",
    "bot_arena.arena.ratings.query",
    "bot_arena.arena.ratings.render",
    "bot_arena.arena.server.admin",
    "bot_arena.arena.server.app",
    "bot_arena.arena.server.pages",
    "bot_arena.arena.server.scratch",
    "bot_arena.arena.server.settings",
    "bot_arena.arena.tournament.create",
    "bot_arena.arena.tournament.dynamic",
    "bot_arena.arena.tournament.field",
    "bot_arena.arena.tournament.incidents",
    "bot_arena.arena.tournament.job_handle",
    "bot_arena.arena.tournament.ladder_runner",
    "bot_arena.arena.tournament.runner",
    "bot_arena.arena.tournament.serial_loop",
    "bot_arena.arena.tournament.summary",
    "bot_arena.arena.transport.sandbox.support",
    "bot_arena.bots.trace",
    "bot_arena.db.accounts",
    "bot_arena.db.ladders",
    "bot_arena.db.models",
    "bot_arena.db.queries",
    "bot_arena.db.results",
    "bot_arena.db.sqlite_play",
    "bot_arena.db.store",
    "bot_arena.db.tournaments",
    "bot_arena.games.files",
    # what ``arena serve`` stands on, and the protocol modules uvicorn picks when it starts
    "sqlalchemy.dialects.sqlite",
    "starlette.applications",
    "python_multipart",
    "jinja2",
    "uvicorn.main",
    "uvicorn.protocols.http.httptools_impl",
    "uvicorn.loops.uvloop",
    "uvloop",
    "anyio.streams.memory",
    "anyio.streams.stapled",
    "anyio.streams.tls",
    "anyio._core._sockets",
)


class Forked:
    """A command started by :meth:`Server.start` and still running: what the tests use of a
    ``subprocess.Popen`` (its pid, ``poll``, ``wait``, ``send_signal``, ``kill``)."""

    def __init__(self, server: Server, pid: int) -> None:
        self._server = server
        self.pid = pid
        self.returncode: int | None = None

    def _ended(self, deadline: float | None) -> int | None:
        if self.returncode is None:
            ended = self._server._answer(deadline)
            if ended is not None:
                self.returncode = int(ended["code"])
                self._server._running = None
        return self.returncode

    def poll(self) -> int | None:
        return self._ended(time.monotonic())

    def wait(self, timeout: float | None = None) -> int:
        code = self._ended(None if timeout is None else time.monotonic() + timeout)
        if code is None:
            raise subprocess.TimeoutExpired(str(self.pid), timeout or 0.0)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:  # as Popen: never a signal to a pid already reaped
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Server:
    """One forking server, started on first use and stopped by :meth:`close`."""

    def __init__(self, preload: Sequence[str] = (), *, scripts: bool = False) -> None:
        """``preload``: modules the server imports too, beyond PRELOAD (what the commands
        it will run import before they work, so that no fork imports them again); ``scripts``:
        a server of :meth:`script` only, which imports ``preload`` alone (not PRELOAD)."""
        self._preload = tuple(preload)
        self._scripts = scripts
        self._proc: subprocess.Popen[bytes] | None = None
        self._pending = b""
        self._running: Forked | None = None

    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            if self._scripts:  # started as ``python SCRIPT`` is, flags and all
                command = [sys.executable, str(Path(__file__).resolve()), SCRIPTS]
            else:
                command = [sys.executable, "-P", str(Path(__file__).resolve())]
            self._proc = subprocess.Popen(
                [*command, *self._preload],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
            )
            self._pending = b""
        return self._proc

    def _answer(self, deadline: float | None) -> dict[str, Any] | None:
        """The server's next line of JSON, or None once ``deadline`` (monotonic) passed."""
        proc = self._started()
        assert proc.stdout is not None
        while b"\n" not in self._pending:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([proc.stdout], [], [], left)[0]:
                return None
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                raise RuntimeError(f"the forking server died (exit {proc.wait()})")
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def idle(self) -> bool:
        """Whether no command of :meth:`start` is running (one that has ended is reaped here,
        as ``poll`` does), so that another may start."""
        return self._running is None or self._running.poll() is not None

    def start(
        self,
        args: list[str],
        *,
        cwd: Path | str,
        env: Mapping[str, str],
        log: Path,
        stderr: Path | None = None,
        session: bool = True,
    ) -> Forked:
        """``arena ARGS`` started in a session of its own (as ``Popen(...,
        start_new_session=True)``; ``session=False``: in the server's, as a plain ``Popen``
        leaves it in the caller's), its stdout and stderr both into ``log`` (``stderr``: its
        stderr opened there instead, a file or a terminal such as a pseudo-terminal's
        ``os.ttyname``); the server runs nothing else until it has ended (``wait``/``poll``
        told so)."""
        assert self._running is None, "one command at a time"
        proc = self._started()
        assert proc.stdin is not None
        request = {
            "args": args,
            "cwd": str(cwd),
            "env": dict(env),
            "memory": None,
            "stdout": str(log),
            "stderr": None if stderr is None else str(stderr),  # None: onto stdout
            "session": session,
        }
        proc.stdin.write(json.dumps(request).encode() + b"\n")
        started = self._answer(None)
        assert started is not None
        self._running = Forked(self, int(started["pid"]))
        return self._running

    def script(
        self, path: Path, *, env: Mapping[str, str], timeout: float | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``python NAME`` in the folder of the script ``path`` (NAME its file name), with
        exactly the environment ``env``: its exit code, stdout and stderr as text, as
        ``subprocess.run(..., capture_output=True, text=True)`` gives them (a server made with
        ``scripts=True``)."""
        assert self._scripts, "a server of scripts: Server(scripts=True)"
        return self.run([path.name], cwd=path.parent, env=env, timeout=timeout)

    def run(
        self,
        args: list[str],
        *,
        cwd: Path | str,
        env: Mapping[str, str],
        memory_bytes: int | None = None,
        timeout: float | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """``arena ARGS`` in ``cwd`` with exactly the environment ``env`` (and at most
        ``memory_bytes`` of address space): its exit code, stdout and stderr as text. Past
        ``timeout`` seconds the command is killed and ``subprocess.TimeoutExpired`` raised, as
        ``subprocess.run`` does."""
        assert self._running is None, "one command at a time"
        proc = self._started()
        assert proc.stdin is not None
        with tempfile.TemporaryDirectory(prefix="arena-fork-") as folder:
            out, err = Path(folder) / "stdout", Path(folder) / "stderr"
            request = {
                "args": args,
                "cwd": str(cwd),
                "env": dict(env),
                "memory": memory_bytes,
                "stdout": str(out),
                "stderr": str(err),
            }
            proc.stdin.write(json.dumps(request).encode() + b"\n")
            started = self._answer(None)
            assert started is not None
            deadline = None if timeout is None else time.monotonic() + timeout
            ended = self._answer(deadline)
            if ended is None:
                os.kill(int(started["pid"]), signal.SIGKILL)
                self._answer(None)
                raise subprocess.TimeoutExpired(args, timeout or 0.0)
            texts = [
                path.read_bytes().decode().replace("\r\n", "\n").replace("\r", "\n")
                for path in (out, err)
            ]
        return subprocess.CompletedProcess(args, int(ended["code"]), texts[0], texts[1])

    def end_running(self) -> None:
        """Kill the command of :meth:`start` still running, if any, and wait for its end (its
        bots and servers die with it: their parent-death signal); the server stays."""
        if self._running is not None:
            self._running.kill()
            self._running.wait()

    def close(self) -> None:
        self.end_running()
        if self._proc is not None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            self._proc.wait()
            self._proc = None


_commands: Server | None = None


def commands() -> Server:
    """This test process's server of ``arena`` commands (:data:`COMMAND_MODULES` preloaded),
    started on first use, stopped by :func:`close_commands` (at the end of the test session);
    a command a test left running is for that test to end (:meth:`Server.end_running`)."""
    global _commands
    if _commands is None:
        _commands = Server(preload=COMMAND_MODULES)
    return _commands


def close_commands() -> None:
    """Stop :func:`commands`' server, if it was started (a command still running: killed)."""
    global _commands
    if _commands is not None:
        _commands.close()
        _commands = None


# --- the server's side: runs in its own interpreter ----------------------------------------------
#: the server's first argument when it runs scripts (``Server(scripts=True)``)
SCRIPTS = "--scripts"


def _exit_code(exc: SystemExit) -> int:
    """The status the interpreter gives a ``SystemExit`` (a message: printed, then 1)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


def status_of(run: Callable[[], object]) -> int:
    """``run()``'s exit status as the interpreter gives a program's: 0, a ``SystemExit``'s
    status, or 1 with the traceback printed for any other exception."""
    import traceback

    try:
        run()
    except SystemExit as exc:
        return _exit_code(exc)
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def end_fork(code: int) -> NoReturn:
    """End a fork with ``code``: the standard streams flushed, nothing of its parent's run
    (no exit function, no ``finally`` of the server's loop)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed or broken: nothing to keep
            stream.flush()
    os._exit(code)


def _command(request: dict[str, Any]) -> None:
    """In the fork: become the command, run it, and exit with its status."""
    import resource

    code = 1
    try:
        if request.get("session"):
            os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            if path is None:  # stderr onto stdout
                os.dup2(1, fd)
                continue
            # a terminal given (a pseudo-terminal) never becomes the command's controlling one
            opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOCTTY, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        # only 0, 1 and 2, as subprocess leaves a command; closing the server's end of the
        # start pipe tells it the command is in its own session with its output opened (a
        # pseudo-terminal's end the caller then closes is held)
        os.closerange(3, 1 << 16)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        if request["memory"] is not None:
            cap = int(request["memory"])
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        if request.get("script"):
            code = status_of(lambda: _script(request["args"][0]))
            atexit._run_exitfuncs()  # the interpreter's end: its atexit functions
        else:
            code = status_of(lambda: _main(request["args"]))
    finally:
        end_fork(code)


def _main(args: list[str]) -> None:
    """``python -m bot_arena.arena.cli.app ARGS``."""
    from bot_arena.arena.cli import app

    # what ``python -m bot_arena.arena.cli.app`` sets, from which click names the program in
    # its usage lines
    sys.argv = [str(app.__file__), *args]
    sys.modules["__main__"].__package__ = "bot_arena.arena.cli"
    app.main()


def _script(name: str) -> None:
    """``python NAME`` in the current folder: the folder first on ``sys.path``, ``sys.argv``
    the name, the file run as the module ``__main__`` with the globals the interpreter gives
    a script (``__file__`` its absolute path, a source loader, no spec, no package)."""
    import builtins
    import types
    from importlib.machinery import SourceFileLoader

    path = os.path.abspath(name)
    sys.path.insert(0, os.path.dirname(path))
    sys.argv = [name]
    main = types.ModuleType("__main__")
    loader = SourceFileLoader("__main__", path)
    main.__dict__.update(
        __file__=path, __cached__=None, __loader__=loader, __spec__=None, __package__=None
    )
    main.__dict__.update({"__annotations__": {}, "__builtins__": builtins})
    sys.modules["__main__"] = main
    exec(compile(loader.get_data(path), path, "exec"), main.__dict__)


def _serve(requests: IO[str], answers: IO[str], extra: Sequence[str]) -> None:
    from importlib import import_module

    scripts = list(extra[:1]) == [SCRIPTS]
    for name in extra[1:] if scripts else (*PRELOAD, *extra):
        import_module(name)
    if not scripts:
        from bot_arena.arena.cli.app import build
        from bot_arena.arena.transport.sandbox import support

        build()  # every command's module imported
        # the sandbox's probe answered once, here (the machine's answer: the same for every
        # fork), where each command that starts bots ran a fresh interpreter for it, ~0.08 s
        support.probe()
    for line in requests:
        request = json.loads(line)
        request["script"] = scripts
        sys.stdout.flush()
        sys.stderr.flush()
        begun, begin = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(begun)
            _command(request)
        os.close(begin)
        os.read(begun, 1)  # end of file once the fork closed its descriptors (after setsid)
        os.close(begun)
        answers.write(json.dumps({"pid": pid}) + "\n")
        answers.flush()
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        answers.write(json.dumps({"code": code}) + "\n")
        answers.flush()


if __name__ == "__main__":
    if sys.argv[1:2] == [SCRIPTS]:
        del sys.path[0]  # this file's folder (tests/), which ``-P`` leaves out otherwise
    # the answers go on a copy of stdout; the forks' descriptor 1 is their own file
    _serve(sys.stdin, os.fdopen(os.dup(1), "w"), sys.argv[1:])
