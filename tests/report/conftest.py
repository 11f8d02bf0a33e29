"""A real headless Chromium for the report's tests, and the folder their screenshots go to.

The browser is Debian's ``chromium`` driven through Playwright's Python package with the system
executable (Playwright never downloads a browser here). Tests that need it skip, saying why, when
either is missing, unless ``ARENA_BROWSER_REQUIRED=1`` (CI), where a missing browser fails them.
Chromium runs with no network: every request that leaves the page is refused and recorded, so a
report that reaches for a script, font or image outside itself fails its test.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests import needs

REPO_ROOT = Path(__file__).resolve().parents[2]
BROWSER_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
#: Flags for a headless Chromium on a machine with no network (as root, no GPU).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def output_dir() -> Path:
    """Where tests leave screenshots and reports to look at: ``$ARENA_TEST_OUTPUT`` or
    ``test-output/`` in the repository."""
    folder = Path(os.environ.get("ARENA_TEST_OUTPUT") or REPO_ROOT / "test-output")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def test_output() -> Path:
    return output_dir()


def chromium_path() -> str | None:
    for candidate in BROWSER_CANDIDATES:
        if os.path.exists(candidate):
            return candidate
    return shutil.which("chromium")


@dataclass
class PageLog:
    """What a page said while it was open: console errors, uncaught exceptions, requests out."""

    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        needs.missing(needs.BROWSER, "the browser tests need Playwright: pip install playwright")
    executable = chromium_path()
    if executable is None:
        needs.missing(needs.BROWSER, "the browser tests need Chromium: apt-get install chromium")
    with sync_playwright() as play:
        chromium = play.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[tuple[Any, PageLog]]:
    """A fresh page with no network (every request that is not the file itself is refused)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    log = PageLog()

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith(("file:", "data:", "blob:", "about:")):
            request_route.continue_()
            return
        log.requests.append(url)
        request_route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on(
        "console",
        lambda message: log.errors.append(message.text) if message.type == "error" else None,
    )
    page.on("pageerror", lambda exc: log.errors.append(f"uncaught: {exc}"))
    try:
        yield page, log
    finally:
        context.close()
