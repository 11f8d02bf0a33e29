"""``arena report`` loads numpy with one BLAS thread (a busy machine's second thread spins)
and leaves the environment as it found it, so nothing the process starts inherits the
setting. Threads are counted in /proc (OpenBLAS starts its threads when numpy loads)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import os, sys
from bot_arena.arena.cli import report_cmd
assert "numpy" not in sys.modules, "numpy loaded before the report command runs"
report_cmd._one_blas_thread()
print(os.environ.get("OPENBLAS_NUM_THREADS"), len(os.listdir("/proc/self/task")))
"""


def probe(env: dict[str, str]) -> tuple[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True
    )
    setting, threads = done.stdout.split()
    return setting, int(threads)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="threads counted in /proc")
def test_the_report_loads_numpy_with_one_blas_thread_and_restores_the_environment() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS",)}
    assert probe(env) == ("None", 1)
    env["OPENBLAS_NUM_THREADS"] = "2"  # the user's setting is kept
    setting, threads = probe(env)
    assert setting == "2"
    assert threads == (2 if (os.cpu_count() or 1) > 1 else 1)
