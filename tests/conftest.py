"""Shared fixtures for the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def shared_data_dir() -> Path | None:
    """The shared data folder: ``$ARENA_DATA``, else ``../shared/data`` next to the repo."""
    env = os.environ.get("ARENA_DATA")
    folder = Path(env) if env else REPO_ROOT.parent / "shared" / "data"
    return folder if folder.is_dir() else None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The data folder (textbook trees, Connect Four benchmark sets); skips when it is absent."""
    folder = shared_data_dir()
    if folder is None:
        where = os.environ.get("ARENA_DATA") or str(REPO_ROOT.parent / "shared" / "data")
        pytest.skip(f"shared data folder not found at {where} (set ARENA_DATA to use it)")
    return folder
