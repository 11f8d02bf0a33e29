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
from tests.browser import VIEWPORT, Confined, confine, confined_page
from tests.browser import PageLog as PageLog
from tests.browser import chromium_path as chromium_path

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


@pytest.fixture(scope="session")
def _shared_page() -> Iterator[list[Confined]]:
    """The one confined page the ``page`` fixture lends, once opened (at most one a process)."""
    held: list[Confined] = []
    try:
        yield held
    finally:
        for confined in held:
            confined.context.close()


@pytest.fixture
def page(
    browser: Any, _shared_page: list[Confined], request: pytest.FixtureRequest
) -> Iterator[tuple[Any, PageLog]]:
    """A page with no network (every request that is not a file is refused) and a log of this
    test's own, on a new document: each test goes to its own file.

    The page is the process's one, lent test after test: a new context and page cost Chromium
    a renderer and a tab's own WebUI renderer, about 0.4 CPU-s a test (10 new pages against 10
    documents in one page: 7.8 against 4.1 CPU-s, launch included), where a page that goes to
    another file keeps its renderer. Between tests it goes to about:blank, so what the last
    document says as it goes is in its own test's log, and gets its window's size back; a test
    that fails has its page closed, and the next one gets a fresh one. A test that changes the
    page itself (Playwright's clock, an init script) takes ``fresh_page``."""
    if not _shared_page:
        _shared_page.append(confine(browser, ("file:",)))
    confined = _shared_page[0]
    confined.log = PageLog()
    failed = request.session.testsfailed
    try:
        yield confined.page, confined.log
    finally:
        reusable = request.session.testsfailed == failed
        if reusable:
            try:
                confined.page.goto("about:blank")
                if confined.page.viewport_size != VIEWPORT:  # a test made the window its size
                    confined.page.set_viewport_size(VIEWPORT)
            except Exception:  # whatever broke the page, the next test gets a new one
                reusable = False
        if not reusable:
            _shared_page.clear()
            confined.context.close()


@pytest.fixture
def fresh_page(browser: Any) -> Iterator[tuple[Any, PageLog]]:
    """A page of its own with no network, for a test that changes the page (its clock)."""
    context, page, log = confined_page(browser, ("file:",))
    try:
        yield page, log
    finally:
        context.close()
