"""Admins' actions from the web (``arena/server/admin.py``): creating ladders, suspending and
reinstating users and a bot's ladder entrants, as JSON endpoints (an admin's token) and as
forms (an admin's session and its CSRF token). For each: what it stores, and that a
non-admin, a visitor, a form without its CSRF token, a bad or huge body change nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.server.conftest import Served, tls
from tests.server.test_server_pages import SIGNED_IN, signed_in


def read(served: Served, sql: str) -> list[tuple[Any, ...]]:
    import sqlite3

    with sqlite3.connect(f"file:{served.db}?mode=ro", uri=True, timeout=30) as conn:
        return conn.execute(sql).fetchall()


def ladders(served: Served) -> list[str]:
    return [row[0] for row in read(served, "SELECT name FROM ladders ORDER BY name")]


def suspended(served: Served, user: str) -> bool:
    return bool(read(served, f"SELECT suspended FROM users WHERE name = '{user}'")[0][0])


def entrant_states(served: Served, ladder: str) -> list[tuple[str, int]]:
    return read(
        served,
        "SELECT e.status, e.faults_in_row FROM ladder_entrants e JOIN ladders l "
        f"ON l.tournament_id = e.tournament_id WHERE l.name = '{ladder}' ORDER BY e.position",
    )


def api(served: Served, user: str | None, path: str, **kwargs: Any) -> httpx.Response:
    with served.client(user) as client:
        return client.post(path, **kwargs)


def error(answer: httpx.Response, status: int) -> str:
    assert answer.status_code == status, (answer.status_code, answer.text)
    message = answer.json()["error"]
    assert isinstance(message, str) and message
    return message


def test_an_admin_creates_a_ladder_by_json(served: Served) -> None:
    body = {"name": "json-ladder", "game": "connect4", "params": ["height=5"], "move_time": 0.5}
    answer = api(served, "admin", "/api/admin/ladders", json=body)
    assert answer.status_code == 201, answer.text
    assert answer.json()["ladder"]["name"] == "json-ladder"
    assert "json-ladder" in ladders(served)
    error(api(served, "admin", "/api/admin/ladders", json=body), 400)  # exists already


@pytest.mark.parametrize(
    ("user", "kwargs", "status"),
    [
        ("bob", {"json": {"name": "bobs-ladder", "game": "tictactoe"}}, 403),
        (None, {"json": {"name": "bobs-ladder", "game": "tictactoe"}}, 401),
        ("admin", {"json": {"name": "<b>x</b>", "game": "tictactoe"}}, 400),
        ("admin", {"json": {"name": "bobs-ladder", "game": "<script>"}}, 400),
        ("admin", {"content": b"not json", "headers": {"content-type": "application/json"}}, 400),
        ("admin", {"json": ["bobs-ladder", "tictactoe"]}, 400),
        ("admin", {"data": {"name": "bobs-ladder", "game": "tictactoe"}}, 400),
        ("admin", {"json": {"name": "bobs-ladder", "game": "tictactoe", "params": "rows=5"}}, 400),
        ("admin", {"json": {"name": "bobs-ladder", "game": "tictactoe", "move_time": -1}}, 400),
        (
            "admin",
            {
                "content": b'{"name": "bobs-ladder", "game": "tictactoe", "move_time": NaN}',
                "headers": {"content-type": "application/json"},
            },
            400,
        ),
        ("admin", {"json": {"name": "bobs-ladder", "game": "tictactoe", "x": "y" * 20000}}, 413),
    ],
    ids=[
        "non-admin", "no token", "markup name", "markup game", "not json", "an array",
        "a form", "params not a list", "negative move time", "NaN", "huge",
    ],
)  # fmt: skip
def test_a_ladder_refused_stores_nothing(
    served: Served, user: str | None, kwargs: dict[str, Any], status: int
) -> None:
    message = error(api(served, user, "/api/admin/ladders", **kwargs), status)
    assert "<" not in message or "&lt;" not in message
    assert "bobs-ladder" not in ladders(served) and "<b>x</b>" not in ladders(served)


def test_an_admin_suspends_and_reinstates_a_user_by_json(served: Served) -> None:
    with served.client("carol") as carol:
        assert carol.get("/api/me").status_code == 200
        answer = api(served, "admin", "/api/admin/users/carol/suspend")
        assert answer.status_code == 200 and answer.json()["user"]["suspended"] is True
        assert suspended(served, "carol")
        error(carol.get("/api/me"), 401)
        answer = api(served, "admin", "/api/admin/users/carol/unsuspend")
        assert answer.status_code == 200 and answer.json()["user"]["suspended"] is False
        assert carol.get("/api/me").status_code == 200


def test_user_suspension_refused(served: Served) -> None:
    error(api(served, "bob", "/api/admin/users/alice/suspend"), 403)
    error(api(served, None, "/api/admin/users/alice/suspend"), 401)
    error(api(served, "admin", "/api/admin/users/admin/suspend"), 400)  # not themselves
    error(api(served, "admin", "/api/admin/users/%3Cb%3Enobody/suspend"), 404)
    assert not suspended(served, "alice") and not suspended(served, "admin")


@pytest.fixture(scope="module")
def ladder(served: Served) -> Iterator[str]:
    """A ladder with the house's bot in it."""
    from bot_arena.arena.api.ladders import ladder_add, ladder_create

    ladder_create("bots-ladder", "tictactoe", db=str(served.db))
    ladder_add("bots-ladder", ["house"], db=str(served.db), sandbox="auto")
    yield "bots-ladder"


def test_an_admin_suspends_and_reinstates_a_bot_by_json(served: Served, ladder: str) -> None:
    base = f"/api/admin/ladders/{ladder}/bots/house"
    error(api(served, "bob", base + "/suspend"), 403)
    error(api(served, None, base + "/suspend"), 401)
    assert entrant_states(served, ladder) == [("active", 0)]
    answer = api(served, "admin", base + "/suspend")
    assert answer.status_code == 200, answer.text
    assert answer.json()["entrants"] == [{"name": "house", "status": "suspended"}]
    assert entrant_states(served, ladder) == [("suspended", 0)]
    error(api(served, "admin", base + "/suspend"), 400)  # nothing left to suspend
    error(api(served, "bob", base + "/unsuspend"), 403)
    assert entrant_states(served, ladder) == [("suspended", 0)]
    import sqlite3

    with sqlite3.connect(served.db, timeout=30) as conn:  # as if suspended for its faults
        conn.execute("UPDATE ladder_entrants SET faults_in_row = 5")
    assert api(served, "admin", base + "/unsuspend").status_code == 200
    assert entrant_states(served, ladder) == [("active", 0)]
    error(api(served, "admin", f"/api/admin/ladders/{ladder}/bots/%3Cb%3E/suspend"), 400)
    error(api(served, "admin", "/api/admin/ladders/no-such/bots/house/suspend"), 400)


def _csrf(client: httpx.Client) -> str:
    found = SIGNED_IN.search(client.get("/my").text)
    assert found is not None
    return found.group(1)


def test_the_admin_page_is_for_admins(served: Served) -> None:
    with httpx.Client(base_url=served.url, timeout=60, verify=tls()) as visitor:
        assert visitor.get("/admin").status_code == 401
    with signed_in(served, "bob") as bob:
        assert bob.get("/admin").status_code == 403
        assert 'href="/admin"' not in bob.get("/my").text
    with signed_in(served, "admin") as admin:
        page = admin.get("/admin")
        assert page.status_code == 200
        assert 'action="/admin/ladders"' in page.text and 'action="/admin/users"' in page.text


def test_the_forms_act_for_an_admin_with_the_csrf_token(served: Served, ladder: str) -> None:
    with signed_in(served, "admin") as admin:
        token = _csrf(admin)
        form = {"csrf": token, "name": "form-ladder", "game": "tictactoe", "move_time": "0.3"}
        page = admin.post("/admin/ladders", data=form)
        assert page.status_code == 200 and "ladder created" in page.text
        assert "form-ladder" in ladders(served)
        page = admin.post("/admin/users", data={"csrf": token, "name": "erin", "action": "suspend"})
        assert page.status_code == 200 and suspended(served, "erin")
        admin.post("/admin/users", data={"csrf": token, "name": "erin", "action": "unsuspend"})
        assert not suspended(served, "erin")
        form = {"csrf": token, "ladder": ladder, "bot": "house", "action": "suspend"}
        assert admin.post("/admin/entrants", data=form).status_code == 200
        assert entrant_states(served, ladder) == [("suspended", 0)]
        form["action"] = "unsuspend"
        assert admin.post("/admin/entrants", data=form).status_code == 200
        assert entrant_states(served, ladder) == [("active", 0)]
        bad = {"csrf": token, "name": "<b>bold</b>", "game": "tictactoe"}
        page = admin.post("/admin/ladders", data=bad)
        assert (
            page.status_code == 400 and "&lt;b&gt;bold" in page.text and "<b>bold" not in page.text
        )


ACTIONS = [
    ("/admin/ladders", {"name": "forged-ladder", "game": "tictactoe"}),
    ("/admin/users", {"name": "alice", "action": "suspend"}),
    ("/admin/entrants", {"ladder": "bots-ladder", "bot": "house", "action": "suspend"}),
]


def _unchanged(served: Served) -> None:
    assert "forged-ladder" not in ladders(served)
    assert not suspended(served, "alice")
    assert entrant_states(served, "bots-ladder") == [("active", 0)]


@pytest.mark.parametrize(("path", "form"), ACTIONS, ids=["ladder", "user", "entrant"])
def test_forms_refused_change_nothing(
    served: Served, ladder: str, path: str, form: dict[str, str]
) -> None:
    with signed_in(served, "admin") as admin:
        token = _csrf(admin)
        assert admin.post(path, data=form).status_code == 403  # no CSRF field
        assert admin.post(path, data=form | {"csrf": "x" * 43}).status_code == 403
        huge = form | {"csrf": token, "pad": "x" * 20000}
        assert admin.post(path, data=huge).status_code == 413
    with signed_in(served, "bob") as bob:
        page = bob.post(path, data=form | {"csrf": _csrf(bob)})  # bob's own valid token
        assert page.status_code == 403 and re.search("only an admin", page.text)
    with httpx.Client(base_url=served.url, timeout=60, verify=tls()) as visitor:
        assert visitor.post(path, data=form).status_code == 401
    _unchanged(served)
