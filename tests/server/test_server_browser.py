"""A user in a real browser (Debian's chromium through Playwright, no network beyond the
server): signs in, uploads a bot through the form, lands on its page, opens a game and steps
through its replay."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import PageLog, confined_page
from tests.server.conftest import GOOD_BOT, PASSWORD, Served


@pytest.fixture
def site(browser: Any, served: Served) -> Iterator[tuple[Any, PageLog]]:
    """A fresh page that may reach the server and nothing else."""
    context, page, log = confined_page(browser, (served.url + "/",))
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


@pytest.fixture
def ladder_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A server that plays its ladder ``live`` (tictactoe: random, first_legal) itself.

    Stopped when its test ends, not with the module: the server plays its ladder without a
    pause for as long as it runs, and as a module's fixture it went on playing games nobody
    read through the tests after its one user (the poller's, which waits for three 2 s polls).

    Its web side runs at the players' priority (``--web-nice 0``): niced below them (the
    default), on a loaded machine each sign-in here took about 5 s; the priority itself is
    tests/server/test_server_ladders.py's subject."""
    from bot_arena.arena.api.ladders import ladder_add, ladder_create
    from tests.server.conftest import SERVER_ENV, fill, start

    folder = tmp_path_factory.mktemp("serve-live")
    db = folder / "arena.db"
    filled = fill(db)
    ladder_create("live", "tictactoe", db=str(db), seed=11)
    ladder_add("live", ["random", str(GOOD_BOT)], db=str(db))
    server = start(folder, db, "--jobs", "1", "--web-nice", "0", env=SERVER_ENV)
    server.tokens = filled.tokens
    try:
        yield server
    finally:
        server.stop()


def open_page(browser: Any, served: Served) -> tuple[Any, Any, PageLog]:
    """A fresh context and page that may reach ``served`` and nothing else."""
    return confined_page(browser, (served.url + "/",))


def sign_in(page: Any, served: Served, user: str) -> None:
    page.goto(f"{served.url}/signin")
    page.fill("input[name=name]", user)
    page.fill("input[name=password]", PASSWORD)
    page.click("#signin")
    page.wait_for_url(f"{served.url}/my")


LIVE_MS = 180_000  # the most the page may take to show the ladder's new games
POLL_MS = 2_000  # static/ladder.js: how long the page waits between two polls


def test_a_ladder_entry_through_the_form_with_live_standings(
    browser: Any, ladder_served: Served
) -> None:
    served = ladder_served
    context, page, log = open_page(browser, served)
    try:
        sign_in(page, served, "carol")
        page.click("nav a[href='/ladders']")
        page.click("table.ladders a >> text=live")
        page.wait_for_url(f"{served.url}/ladders/live")
        page.fill("input[name=name]", "carols-ladder-bot")
        page.set_input_files("input[name=file]", str(GOOD_BOT))
        page.click("#upload")
        page.wait_for_url(f"{served.url}/ladders/live", timeout=120_000)
        row = "#standings tr[data-bot='carols-ladder-bot']"
        page.wait_for_selector(row)
        assert page.text_content(f"{row} td:nth-child(4)") == "carol"
        assert page.text_content("#my-bots").strip() == "carols-ladder-bot"
        # the page follows the games as they are stored, without a reload
        page.evaluate("window.loaded_once = true")
        games = f"{row} td.games"
        # functions, not strings: a string predicate is eval'd in the page, which the CSP refuses
        at_least = "([sel, n]) => Number(document.querySelector(sel).textContent) >= n"
        page.wait_for_function(at_least, arg=[games, 2], timeout=LIVE_MS)
        elo = page.text_content(f"{row} td.elo")
        seen = int(page.text_content(games) or 0)
        moved = (
            "([sel, n, cell, before]) => Number(document.querySelector(sel).textContent) > n"
            " && document.querySelector(cell).textContent !== before"
        )
        page.wait_for_function(moved, arg=[games, seen, f"{row} td.elo", elo], timeout=LIVE_MS)
        assert page.evaluate("window.loaded_once") is True  # the same page: never reloaded
        # one of its games, stepped through
        page.click(f"{row} td a")
        page.wait_for_selector("#bot-name")
        bot_url = page.url
        assert "def choose_move" in (page.text_content("details.source pre") or "")
        page.click("table.games a >> nth=-1")  # the oldest listed: played
        page.wait_for_selector("#replay[data-ply]")
        page.click("#replay .replay-next")
        assert page.get_attribute("#replay", "data-ply") == "1"
        page.click("#replay .replay-last")
        assert int(page.get_attribute("#replay", "data-ply") or 0) > 1
        assert log.errors == [] and log.requests == []
    finally:
        context.close()
    # another user sees the bot and its games, never its source
    context, page, log = open_page(browser, served)
    try:
        sign_in(page, served, "bob")
        page.goto(bot_url)
        assert page.text_content("#owner") == "carol"
        assert page.query_selector("details.source") is None
        assert "def choose_move" not in page.content()
        assert log.errors == [] and log.requests == []
    finally:
        context.close()


def test_the_pages_poller_sends_the_tag_it_holds_and_gets_304(browser: Any, served: Served) -> None:
    """A browser without EventSource polls the standings (every 2 s): the first poll gets the
    JSON and its ETag, the next ones send that tag (``If-None-Match``) and, as nothing was
    stored meanwhile (this server plays no ladder), get 304 while the table stays shown.

    The page's clock is Playwright's: its 2 s waits between polls pass when the test moves
    that clock on, not in real time (three polls took at least 6 s of waiting); the requests,
    the server's answers and the page's handling of them stay real."""
    from bot_arena.arena.api.ladders import ladder_add, ladder_create

    ladder_create("still", "tictactoe", db=str(served.db), seed=2)
    ladder_add("still", ["random", "random:seed=3"], db=str(served.db))
    context, page, log = open_page(browser, served)
    polls: list[tuple[int, str | None, str | None]] = []  # status, tag sent, tag given

    def seen(response: Any) -> None:
        if response.url.endswith("/api/ladders/still/standings"):
            sent = response.request.header_value("if-none-match")
            polls.append((response.status, sent, response.header_value("etag")))

    try:
        context.add_init_script("delete window.EventSource;")  # the page falls back to polls
        page.clock.install()  # before the page loads: its first wait is on this clock too
        page.on("response", seen)
        page.goto(f"{served.url}/ladders/still")
        page.wait_for_selector("#standings tr[data-bot='random']")
        deadline = time.monotonic() + LIVE_MS / 1000
        while len(polls) < 3:
            assert time.monotonic() < deadline, polls
            # the page's 2 s wait, passed: its next poll goes out (unless the last one's
            # answer is still coming: the page waits only once it has it, so a poll is never
            # skipped or doubled, only sent on a later turn of this loop)
            page.clock.run_for(POLL_MS)
            page.wait_for_timeout(50)  # real time, for the request and its answer
        assert (page.text_content("#refreshed") or "").startswith("refreshed "), "no poll shown"
        assert page.query_selector("#standings tr[data-bot='random']") is not None
        assert log.errors == [] and log.requests == []
    finally:
        context.close()
    (status, sent, tag), *later = polls
    assert status == 200 and sent is None and tag, polls
    assert later == [(304, tag, tag)] * len(later), polls
