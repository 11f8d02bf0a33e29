"""``find_matches(last=n)`` (what ``arena matches --limit n`` lists) reads pages from the newest
id down: the same matches as the whole list's last n, on SQLite and PostgreSQL, without
loading the rest, a malformed match left out and its place filled from the next page."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.db.models import Match
from bot_arena.db.queries import find_matches
from bot_arena.db.session import make_engine, session_factory
from tests.arena.test_leaderboard_db import Filler, ref
from tests.db.dbtest import BACKENDS, database

FILTERS = [
    {},
    {"tournament_id": "t"},
    {"bot": "gamma"},
    {"status": "done"},
    {"bot": "alpha", "tournament_id": "t"},
]


def fill(url: str) -> int:
    """24 matches, every third outside the tournament and with gamma; match 22 malformed."""
    filler = Filler(url)
    a, b, c = ref("alpha"), ref("beta"), ref("gamma")
    t = filler.tournament("coins")
    for i in range(24):
        if i % 3 == 2:
            filler.match("coins", [(c, 1), (a, 2)])
        else:
            filler.match("coins", [(a, 1 + i % 2), (b, 2 - i % 2)], tournament=t)
    with filler.sessions.begin() as session:
        session.execute(text("UPDATE matches SET params = '[]' WHERE id = 22"))
    return t


@pytest.fixture(scope="module", params=BACKENDS)
def filled(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, int]]:
    """A database of :func:`fill`'s matches and its tournament's id, filled once a module on
    each backend: the tests only read it."""
    with database(request.param, tmp_path_factory.mktemp("pages"), ready=True) as url:
        yield url, fill(url)


def loaded(session: Session) -> int:
    return sum(isinstance(o, Match) for o in session.identity_map.values())


@pytest.mark.parametrize("chosen", FILTERS)
def test_pages_are_the_whole_lists_slice(
    filled: tuple[str, int], chosen: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db_url, t = filled
    where = {k: (t if v == "t" else v) for k, v in chosen.items()}
    sessions = session_factory(make_engine(db_url, read_only=True))
    with sessions() as session:
        whole = [m.id for m in find_matches(session, **where)]  # type: ignore[arg-type]
    assert 22 not in whole and len(whole) >= 7
    for n in (1, 2, 3, 5, len(whole) - 1, len(whole), len(whole) + 4):
        with sessions() as session:
            page = find_matches(session, **where, last=n)  # type: ignore[arg-type]
            assert [m.id for m in page] == whole[-n:]
            assert loaded(session) == len(page)  # nothing older was read
    if chosen.get("bot") != "gamma":  # match 22 is alpha's and beta's
        assert "match 22 left out" in capsys.readouterr().err


def test_the_cli_lists_the_last_n(filled: tuple[str, int]) -> None:
    db_url, _ = filled
    run = CliRunner().invoke(app, ["matches", "--limit", "3", "--json", "--db", db_url])
    assert run.exit_code == 0, run.output
    assert [row["match"] for row in json.loads(run.stdout)] == [21, 23, 24]
