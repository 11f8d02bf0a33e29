"""The engineering bar as tests: ruff (lint and format) and mypy --strict stay clean.

Both tools run through this interpreter (``python -m ruff``, ``python -m mypy``), so they are
found in a virtual environment that is not activated.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("arena", "bots", "games", "db")  # installed as bot_arena.<folder>


def _run(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=280)


def test_ruff_lint_and_format_are_clean() -> None:
    pytest.importorskip("ruff", reason="ruff is not installed (the test extra)")
    lint = _run(sys.executable, "-m", "ruff", "check", ".")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = _run(sys.executable, "-m", "ruff", "format", "--check", ".")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_mypy_strict_is_clean(tmp_path: Path) -> None:
    """mypy cannot follow the editable install's package mapping (an import hook), so it checks
    a ``bot_arena`` folder of symlinks to the four source folders: the same files, under the
    names they are imported by."""
    pytest.importorskip("mypy", reason="mypy is not installed (the test extra)")
    namespace = tmp_path / "src" / "bot_arena"
    namespace.mkdir(parents=True)
    for folder in PACKAGES:
        (namespace / folder).symlink_to(ROOT / folder, target_is_directory=True)
    argv = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")]
    argv += ["--cache-dir", str(tmp_path / "cache")]
    for folder in PACKAGES:
        argv += ["-p", f"bot_arena.{folder}"]
    done = _run(*argv, cwd=namespace.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues found" in done.stdout
