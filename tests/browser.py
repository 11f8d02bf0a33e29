"""Debian's Chromium driven through Playwright, one per test process: the ``browser`` fixture
(registered by ``tests/conftest.py``, so the report's and the server's browser tests share one
Playwright: a second ``sync_playwright()`` in the same process fails), the flags it runs with,
``PageLog``, what a page said while it was open, and ``confine``/``confined_page``, a page
that may reach only what its test names."""

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
#: Every confined page's window.
VIEWPORT = {"width": 1280, "height": 900}


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


@dataclass
class Confined:
    """A context and its page, confined as ``confined_page`` says, whose refused requests,
    console errors and uncaught exceptions go to ``log``: whichever log is there when they
    happen, so one page can serve test after test, each with a log of its own."""

    context: Any
    page: Any
    log: PageLog


def confine(browser: Any, allowed: tuple[str, ...]) -> Confined:
    """A fresh context and page whose requests go through only to URLs starting with one of
    ``allowed`` (and the page's own data:, blob: and about: URLs); every other request is
    refused and recorded in the log, with console errors and uncaught exceptions. The caller
    closes the context."""
    context = browser.new_context(viewport=dict(VIEWPORT))
    prefixes = (*allowed, "data:", "blob:", "about:")
    confined = Confined(context, None, PageLog())

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith(prefixes):
            request_route.continue_()
            return
        confined.log.requests.append(url)
        request_route.abort()

    def console(message: Any) -> None:
        if message.type == "error":
            confined.log.errors.append(message.text)

    context.route("**/*", route)
    confined.page = context.new_page()
    confined.page.on("console", console)
    confined.page.on("pageerror", lambda exc: confined.log.errors.append(f"uncaught: {exc}"))
    return confined


def confined_page(browser: Any, allowed: tuple[str, ...]) -> tuple[Any, Any, PageLog]:
    """``confine``'s context, page and log, for a test that has them to itself."""
    confined = confine(browser, allowed)
    return confined.context, confined.page, confined.log


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
