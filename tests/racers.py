"""Two processes released at the same instant, round after round: the harness of the tests
that show a claim is atomic (``tests/arena/test_ladder_runner_claim.py``,
``tests/arena/test_resume_runner_claim.py``).

Each racer runs ``source`` with ``argv`` and, for each round, prints ``ready``, waits for a
``go`` line on its stdin (the barrier: both are waiting, both are let go at once) and prints
what it got. No sleep: the racers say when they are ready."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence


def line(proc: subprocess.Popen[str]) -> str:
    """The process's next line (its stderr shown if it ended instead)."""
    assert proc.stdout is not None
    text = proc.stdout.readline().strip()
    assert text, f"racer {proc.pid} ended: {proc.stderr.read() if proc.stderr else ''}"
    return text


def race(
    source: str,
    argv: Sequence[str],
    rounds: Sequence[int],
    check: Callable[[int, list[str], list[int]], None],
) -> None:
    """Two racers over ``rounds``; after each round ``check(round, answers, pids)`` (the two
    racers' lines and their pids, in the same order); both must end with exit 0."""
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
            p.wait(timeout=60)
    assert [p.returncode for p in racers] == [0, 0]
