"""The engineering bar as tests: ruff (lint and format) and mypy --strict stay clean."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=280)


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed (the test extra)")
def test_ruff_lint_and_format_are_clean() -> None:
    lint = _run("ruff", "check", ".")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = _run("ruff", "format", "--check", ".")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_mypy_strict_is_clean(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is not installed (the test extra)")
    done = _run(
        sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path), "arena", "bots", "games", "db"
    )
    assert done.returncode == 0, done.stdout + done.stderr
