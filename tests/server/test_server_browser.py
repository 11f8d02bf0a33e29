"""A user in a real browser (Debian's chromium through Playwright, no network beyond the
server): signs in, uploads a bot through the form, lands on its page, opens a game and steps
through its replay."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import PageLog
from tests.server.conftest import GOOD_BOT, PASSWORD, Served


@pytest.fixture
def site(browser: Any, served: Served) -> Iterator[tuple[Any, PageLog]]:
    """A fresh page that may reach the server and nothing else."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    log = PageLog()

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith((served.url + "/", "data:", "blob:", "about:")):
            request_route.continue_()
            return
        log.requests.append(url)
        request_route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("console", lambda m: log.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: log.errors.append(f"uncaught: {exc}"))
    try:
        yield page, log
    finally:
        context.close()


def test_sign_in_upload_and_watch_a_replay(site: tuple[Any, PageLog], served: Served) -> None:
    page, log = site
    page.goto(f"{served.url}/signin")
    page.fill("input[name=name]", "carol")
    page.fill("input[name=password]", PASSWORD)
    page.click("#signin")
    page.wait_for_url(f"{served.url}/my")
    page.fill("input[name=name]", "carols-browser-bot")
    page.select_option("select[name=game]", "tictactoe")
    page.set_input_files("input[name=file]", str(GOOD_BOT))
    page.click("#upload")
    page.wait_for_url(f"{served.url}/bots/*", timeout=120_000)
    assert page.text_content("#bot-name") == "carols-browser-bot"
    assert page.text_content("#owner") == "carol"
    assert "def choose_move" in (page.text_content("details.source pre") or "")

    page.goto(f"{served.url}/bots/{served.hostile}")
    page.click("table.games a >> nth=0")
    page.wait_for_selector("#replay[data-ply]")
    assert page.get_attribute("#replay", "data-ply") == "0"
    page.click("#replay .replay-next")
    assert page.get_attribute("#replay", "data-ply") == "1"
    page.click("#replay .replay-last")
    assert int(page.get_attribute("#replay", "data-ply") or 0) > 1
    assert log.errors == [] and log.requests == []
