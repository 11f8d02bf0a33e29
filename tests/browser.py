"""Debian's Chromium driven through Playwright, one per test process: the ``browser`` fixture
(registered by ``tests/conftest.py``, so the report's and the server's browser tests share one
Playwright: a second ``sync_playwright()`` in the same process fails), the flags it runs with,
and ``PageLog``, what a page said while it was open."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests import needs

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
