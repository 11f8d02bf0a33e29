"""``arena ARGS`` run inside the test's own process, for tests whose subject is what a command
does and prints, not the process it runs in.

A fresh ``arena`` process spends one to two seconds of CPU on Python's start-up and the
imports of the CLI, SQLAlchemy and numpy; the suite started hundreds of them. :func:`run`
calls the same typer app that ``main()`` calls, so a refusal takes the same path (the command
group's ``ArenaError``/database handling, ``fail``: ``error: ...`` on stderr, exit 2), and it
answers as ``subprocess.run(..., capture_output=True)`` does: a ``CompletedProcess`` with the
exit code and the bytes (or text) of stdout and stderr. What a process would not carry from
one command to the next is reset around each call: the working folder, the whole environment,
the SIGTERM/SIGINT handlers, the command's record of the databases it opened, and the
database connections it left open (collected, as a process's exit closes them: a collection
of what the command made only, the objects that were there before it frozen out of it, since a
full collection of a test worker's heap took 0.1 s of CPU a command, more than most commands).
The app's click command is built once a process (tests/click_cache.py: typer builds it again at
every ``invoke``, 30 ms a command, from the type hints of every command's function). Output that
the arena's child processes write straight to the inherited descriptors 1 and 2 is captured
too, after what the command wrote.

Keep a real process where the process is the subject: signals, ``kill -9``, exit codes of
``main()`` itself, a run as another user, the import path of ``python -m`` (a user's module in
the working folder), start-up time and the modules a command imports, the README's commands.
A command that raises is exit 1 with the traceback on stderr, as the interpreter would print it.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import subprocess
import tempfile
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from unittest import mock

import typer.testing
from typer.testing import CliRunner

from bot_arena.arena.cli import common
from bot_arena.arena.cli.app import app
from tests.click_cache import click_command

PROG = "python -m bot_arena.arena.cli.app"  # what the command names itself in usage lines
_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextlib.contextmanager
def _descriptors_captured() -> Iterator[list[bytes]]:
    """Descriptors 1 and 2 redirected to files for the block; yields a list that holds, after
    it, what was written to each (by child processes that inherited them)."""
    found: list[bytes] = []
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        saved = [os.dup(1), os.dup(2)]
        try:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            yield found
        finally:
            for fd, copy in zip((1, 2), saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)
            for file in (out, err):
                file.seek(0)
                found.append(file.read())


def run(
    *args: str,
    cwd: Path | str,
    env: Mapping[str, str] | None = None,
    text: bool = True,
    input: str | bytes | None = None,
    **_: Any,
) -> subprocess.CompletedProcess[Any]:
    """``arena ARGS`` in ``cwd`` with ``env`` added to the environment, in this process: what
    ``subprocess.run([arena, *ARGS], cwd=cwd, env={**os.environ, **env}, input=input,
    capture_output=True, text=text)`` answers (``input``: the command's standard input, empty
    when not given). Other keywords of that call (``timeout``) are accepted and left to
    pytest-timeout."""
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_handlers = [signal.getsignal(s) for s in _SIGNALS]
    common._opened.clear()
    gc.freeze()  # what exists now is left out of the collection after the command
    try:
        os.environ.update(env or {})
        os.chdir(cwd)
        with (
            _descriptors_captured() as inherited,
            mock.patch.object(typer.testing, "_get_command", click_command),
        ):
            result = CliRunner().invoke(app, list(args), input=input, prog_name=PROG)
        stdout, stderr = result.stdout_bytes, result.stderr_bytes
        code = result.exit_code
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            assert result.exc_info is not None
            stderr += "".join(traceback.format_exception(*result.exc_info)).encode()  # exit 1
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for sig, handler in zip(_SIGNALS, saved_handlers, strict=True):
            if handler is not None:  # None: set outside Python, left as it is
                signal.signal(sig, handler)
        common._opened.clear()
        gc.collect()  # the command's engines and their connections, closed as at exit
        gc.unfreeze()
    stdout += inherited[0]
    stderr += inherited[1]
    if text:  # decoded with universal newlines, as subprocess's text mode does
        out, err = (b.decode().replace("\r\n", "\n").replace("\r", "\n") for b in (stdout, stderr))
        return subprocess.CompletedProcess(list(args), code, out, err)
    return subprocess.CompletedProcess(list(args), code, stdout, stderr)
