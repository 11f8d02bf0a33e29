"""Two processes released at the same instant, round after round: the harness of the tests
that show a claim is atomic (``tests/arena/test_ladder_runner_claim.py``,
``tests/arena/test_resume_runner_claim.py``).

Each racer runs ``source`` with ``argv`` and, for each round, prints ``ready``, waits for a
``go`` line on its stdin (the barrier: both are waiting, both are let go at once) and prints
what it got. No sleep: the racers say when they are ready.

With ``preload``, the two racers are forks of one interpreter that imported those modules
first (what the racers import before they race, about a second of CPU each under load):
still two processes with pids, pipes and exit statuses of their own, and the command line of
an interpreter running ``source`` (``python -c LAUNCHER SOURCE ARGV``), so each still sees
the other by its ``/proc`` command line as it saw an exec'd racer."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import IO, Protocol


class _Racer(Protocol):
    """What the harness uses of a racer: ``subprocess.Popen``'s pipes and pid."""

    @property
    def stdin(self) -> IO[str] | None: ...
    @property
    def stdout(self) -> IO[str] | None: ...
    @property
    def stderr(self) -> IO[str] | None: ...
    @property
    def pid(self) -> int: ...


def line(proc: _Racer) -> str:
    """The process's next line (its stderr shown if it ended instead)."""
    assert proc.stdout is not None
    text = proc.stdout.readline().strip()
    assert text, f"racer {proc.pid} ended: {proc.stderr.read() if proc.stderr else ''}"
    return text


# The launcher: imports the modules named in $RACER_PRELOAD, then forks one racer per three
# descriptors in $RACER_FDS (its stdin, stdout and stderr), each running the source (argv[1])
# with the rest of argv; it prints each racer's pid, then each one's exit status, in order.
LAUNCHER = """
import importlib, os, sys, traceback
for name in os.environ.pop("RACER_PRELOAD").split():
    importlib.import_module(name)
fds = [int(fd) for fd in os.environ.pop("RACER_FDS").split()]
source, argv = sys.argv[1], sys.argv[2:]
pids = []
for stdin, stdout, stderr in zip(fds[::3], fds[1::3], fds[2::3]):
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.dup2(stdin, 0)
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        for fd in fds:
            os.close(fd)
        sys.argv = ["-c", *argv]
        code = 0
        try:
            exec(compile(source, "<string>", "exec"), {"__name__": "__main__"})
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    pids.append(pid)
for fd in fds:
    os.close(fd)
print(*pids, flush=True)
print(*(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids), flush=True)
"""


class _Forked:
    """A racer forked by the launcher: its pid and this end of its pipes (descriptors),
    closed by :func:`race`."""

    def __init__(self, pid: int, stdin: int, stdout: int, stderr: int) -> None:
        self.pid = pid
        self.stdin: IO[str] | None = os.fdopen(stdin, "w", encoding="utf-8")
        self.stdout: IO[str] | None = os.fdopen(stdout, encoding="utf-8")
        self.stderr: IO[str] | None = os.fdopen(stderr, encoding="utf-8")


def _launch(
    source: str, argv: Sequence[str], preload: Sequence[str]
) -> tuple[subprocess.Popen[str], list[_Forked]]:
    """The launcher and its two racers, forked once it imported ``preload``."""
    pipes = [(os.pipe(), os.pipe(), os.pipe()) for _ in range(2)]  # a racer's stdin, out, err
    theirs = [fd for (r, _w), (_r, w), (_re, we) in pipes for fd in (r, w, we)]
    env = {
        **os.environ,
        "RACER_PRELOAD": " ".join(preload),
        "RACER_FDS": " ".join(map(str, theirs)),
    }
    launcher = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, source, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        pass_fds=theirs,
        env=env,
    )
    for fd in theirs:
        os.close(fd)
    assert launcher.stdout is not None
    pids = [int(pid) for pid in launcher.stdout.readline().split()]
    assert len(pids) == 2, f"launcher: {launcher.stderr.read() if launcher.stderr else ''}"
    racers = [
        _Forked(pid, w, r, re_)
        for pid, ((_r, w), (r, _w), (re_, _we)) in zip(pids, pipes, strict=True)
    ]
    return launcher, racers


def race(
    source: str,
    argv: Sequence[str],
    rounds: Sequence[int],
    check: Callable[[int, list[str], list[int]], None],
    *,
    preload: Sequence[str] | None = None,
) -> None:
    """Two racers over ``rounds``; after each round ``check(round, answers, pids)`` (the two
    racers' lines and their pids, in the same order); both must end with exit 0. ``preload``:
    the racers are forks of one interpreter that imported these modules (see the module's
    docstring); None: each is an interpreter of its own."""
    racers: Sequence[_Racer]
    launcher = None
    if preload is None:
        racers = [
            subprocess.Popen(
                [sys.executable, "-c", source, *argv],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
    else:
        launcher, racers = _launch(source, argv, preload)
    try:
        for number in rounds:
            assert [line(p) for p in racers] == ["ready", "ready"]
            for p in racers:
                assert p.stdin is not None
                p.stdin.write("go\n")
                p.stdin.flush()
            check(number, [line(p) for p in racers], [p.pid for p in racers])
    finally:
        for p in racers:
            if p.stdin is not None:
                p.stdin.close()
        if launcher is None:
            codes = []
            for p in racers:
                assert isinstance(p, subprocess.Popen)
                codes.append(p.wait(timeout=60))
        else:
            assert launcher.stdout is not None
            codes = [int(code) for code in launcher.stdout.readline().split()]
            launcher.wait(timeout=60)
            for p in racers:
                assert p.stdout is not None and p.stderr is not None
                p.stdout.close()
                p.stderr.close()
    assert codes == [0, 0]
