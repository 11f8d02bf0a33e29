"""Resource limits are in force in the bot's own process, with either launcher."""

from __future__ import annotations

import resource
import subprocess
import sys

import pytest

from bot_arena.arena.transport.limits import ResourceLimits
from bot_arena.arena.transport.process import BotProcess, ReadStatus

LIMITS = ResourceLimits(memory_mb=300, open_files=64, cpu_s=2.5)
PROBE = (
    "import resource as r\n"
    "print(r.getrlimit(r.RLIMIT_AS)[0], r.getrlimit(r.RLIMIT_NOFILE)[0], "
    "r.getrlimit(r.RLIMIT_CPU)[0])\n"
)
EXPECTED = f"{300 * 1024 * 1024} 64 3"


def test_shell_prefix_sets_the_limits_then_execs() -> None:
    proc = BotProcess([*LIMITS.shell_prefix(), sys.executable, "-c", PROBE])
    status, line = proc.read_line(None)
    proc.kill()
    assert status is ReadStatus.LINE and line.decode() == EXPECTED


def test_python_launcher_sets_the_limits_then_execs() -> None:
    argv = [sys.executable, "-m", "bot_arena.arena.worker.launch", *LIMITS.argv(), "--"]
    out = subprocess.run([*argv, sys.executable, "-c", PROBE], capture_output=True, timeout=60)
    assert out.stdout.decode().strip() == EXPECTED


def test_limits_never_raise_an_existing_cap() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    code = (
        "import resource as r\n"
        "from bot_arena.arena.transport import limits\n"
        "r.setrlimit(r.RLIMIT_NOFILE, (32, 32))\n"
        "limits.apply(None, 256, None)\n"
        "print(r.getrlimit(r.RLIMIT_NOFILE))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert out.stdout.decode().strip() == "(32, 32)"
    assert resource.getrlimit(resource.RLIMIT_NOFILE) == (soft, hard)  # the arena's own untouched


@pytest.mark.parametrize(
    "bad", [{"memory_mb": 8}, {"cpu_s": 0}, {"open_files": 3}, {"startup_s": 0}]
)
def test_bad_limits_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        ResourceLimits(**bad)  # type: ignore[arg-type]
