"""A real headless Chromium for the report's tests, and the folder their screenshots go to.

The browser is Debian's ``chromium`` driven through Playwright's Python package with the system
executable (Playwright never downloads a browser here). Tests that need it skip, saying why, when
either is missing, unless ``ARENA_BROWSER_REQUIRED=1`` (CI), where a missing browser fails them.
Chromium runs with no network: every request that leaves the page is refused and recorded, so a
report that reaches for a script, font or image outside itself fails its test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import CHROMIUM_ARGS as CHROMIUM_ARGS
from tests.browser import PageLog as PageLog
from tests.browser import chromium_path as chromium_path
from tests.browser import confined_page

REPO_ROOT = Path(__file__).resolve().parents[2]


def output_dir() -> Path:
    """Where tests leave screenshots and reports to look at: ``$ARENA_TEST_OUTPUT`` or
    ``test-output/`` in the repository."""
    folder = Path(os.environ.get("ARENA_TEST_OUTPUT") or REPO_ROOT / "test-output")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def test_output() -> Path:
    return output_dir()


@pytest.fixture
def page(browser: Any) -> Iterator[tuple[Any, PageLog]]:
    """A fresh page with no network (every request that is not the file itself is refused)."""
    context, page, log = confined_page(browser, ("file:",))
    try:
        yield page, log
    finally:
        context.close()
