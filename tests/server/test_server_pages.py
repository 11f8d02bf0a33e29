"""``arena serve``'s pages through a real server process: what a bot wrote (its exception,
its stderr) and what a user named is shown as text, the source and stderr only to the owner,
sign-in and every form behind a CSRF token, the session cookie's flags, registration closed
by default, only the listed static files served."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from tests.server.conftest import GOOD_BOT, PASSWORD, Served

# a real server process, and sign-ins (each a password hash): seconds a test
pytestmark = pytest.mark.slow

SIGNED_IN = re.compile(r'name="csrf" value="([^"]+)"')


@contextmanager
def signed_in(served: Served, user: str) -> Iterator[httpx.Client]:
    """A client signed in as ``user`` through the sign-in form."""
    with httpx.Client(base_url=served.url, timeout=120) as client:
        yield _sign_in(client, user)


def _sign_in(client: httpx.Client, user: str) -> httpx.Client:
    page = client.get("/signin")
    csrf = SIGNED_IN.search(page.text)
    assert csrf is not None
    answer = client.post(
        "/signin", data={"csrf": csrf.group(1), "name": user, "password": PASSWORD}
    )
    assert answer.status_code == 303, answer.text
    cookie = answer.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    return client


def test_the_sign_in_needs_its_csrf_token_and_the_right_password(served: Served) -> None:
    with httpx.Client(base_url=served.url) as client:
        client.get("/signin")
        forged = client.post(
            "/signin", data={"csrf": "x" * 43, "name": "bob", "password": PASSWORD}
        )
        assert forged.status_code == 403
        assert "arena_session" not in forged.headers.get("set-cookie", "")
        token = SIGNED_IN.search(client.get("/signin").text)
        assert token is not None
        wrong = client.post(
            "/signin", data={"csrf": token.group(1), "name": "bob", "password": "nope-nope"}
        )
        assert wrong.status_code == 401 and "wrong name or password" in wrong.text
    with signed_in(served, "bob") as bob:
        assert "signed in as <b>bob</b>" in bob.get("/my").text


def test_a_form_without_the_sessions_csrf_token_stores_nothing(served: Served) -> None:
    with signed_in(served, "bob") as bob:
        answer = bob.post(
            "/upload",
            data={"name": "bobs-forged", "game": "tictactoe", "csrf": "not-the-token"},
            files={"file": ("b.py", GOOD_BOT.read_bytes())},
        )
        assert answer.status_code == 403
        signout = bob.post("/signout", data={"csrf": "not-the-token"})
        assert signout.status_code == 403
        assert "signed in as" in bob.get("/my").text
    conn = sqlite3.connect(f"file:{served.db}?mode=ro", uri=True)
    try:
        assert conn.execute("SELECT 1 FROM bots WHERE name = 'bobs-forged'").fetchone() is None
    finally:
        conn.close()


def test_what_a_bot_wrote_is_text_and_its_stderr_only_its_owners(served: Served) -> None:
    path = f"/bots/{served.hostile}"
    with httpx.Client(base_url=served.url) as anyone:
        public = anyone.get(path).text
    with signed_in(served, "bob") as bob:
        other = bob.get(path).text
    with signed_in(served, "alice") as alice:
        own = alice.get(path).text
    for page in (public, other, own):
        assert "<img src=x" not in page and "<script>alert" not in page
        assert "&lt;img src=x onerror=alert(1)&gt;" in page  # the exception, as text
    assert "&lt;script&gt;alert(" in own  # the stderr, as text, to its owner
    for page in (public, other):
        assert "in bold" not in page and "choose_move" not in page  # neither stderr nor source
    assert "def choose_move" in own


def test_a_game_page_carries_its_game_as_data_and_the_replay_viewer(served: Served) -> None:
    with httpx.Client(base_url=served.url) as client:
        bot = client.get(f"/api/bots/{served.hostile}").json()
        faulted = bot["faults"][0]["match"]
        page = client.get(f"/matches/{faulted}").text
        assert '<script type="application/json" id="game-data">' in page
        assert '<script src="/static/replay.js"></script>' in page
        assert "<img src=x" not in page and "<script>alert" not in page
        assert client.get("/static/replay.js").status_code == 200
        assert client.get("/static/match.js").headers["content-type"].startswith("text/javascript")
        for path in ("/static/..%2Fapp.py", "/static/app.py", "/matches/999999", "/bots/999999"):
            assert client.get(path).status_code == 404


def test_registration_is_closed_unless_opened(served: Served) -> None:
    with httpx.Client(base_url=served.url) as client:
        assert client.get("/register").status_code == 404
        assert client.post("/register", data={"name": "mallory"}).status_code == 404
        assert 'href="/register"' not in client.get("/").text


def test_the_home_page_lists_bots_with_their_owners(served: Served) -> None:
    with httpx.Client(base_url=served.url) as client:
        page = client.get("/").text
    assert f'<a href="/bots/{served.hostile}">hostile</a></td><td>alice</td>' in page
    assert "house</a></td><td>(house)</td>" in page


def test_sign_in_attempts_are_limited_per_name(served: Served) -> None:
    """Each attempt checks a password hash: past the limit (20 an hour a name), 429 without
    checking, whatever the password; another name is not held back."""
    with httpx.Client(base_url=served.url, timeout=120) as client:
        token = SIGNED_IN.search(client.get("/signin").text)
        assert token is not None
        codes = [
            client.post(
                "/signin", data={"csrf": token.group(1), "name": "zed", "password": "guess-guess"}
            ).status_code
            for _ in range(21)
        ]
        assert codes == [401] * 20 + [429], codes
    with signed_in(served, "bob") as bob:
        assert "signed in as" in bob.get("/my").text
