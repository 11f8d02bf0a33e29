"""The server's view of ladders (``api/ladder_views.py``), in process: the standings cache
fits once while nothing changes and again after every change that moves the standings (a
game stored, an entrant retired or added), so a read is never stale; many threads missing at
once fit once."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from bot_arena.arena.api import ladder_views
from bot_arena.arena.api.ladder_views import NoLadder, StandingsCache
from bot_arena.arena.api.ladders import ladder_create, ladder_retire, ladder_run
from tests.api.played_ladder import FIRST_LEGAL, played_ladder
from tests.db.dbtest import sqlite_copy


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Ladder ``club`` (tictactoe: random and first_legal) with 2 games played, made once a
    module: each test changes a copy of its own."""
    bots = ["random", str(FIRST_LEGAL)]
    return played_ladder(tmp_path_factory.mktemp("ladder-views"), bots, games=2, seed=5)


@pytest.fixture
def factory(played: Path, tmp_path: Path) -> Any:
    from bot_arena.db.session import make_engine, session_factory

    db = str(tmp_path / "arena.db")
    sqlite_copy(played, db)
    engine = make_engine(db, read_only=True)
    try:
        yield db, session_factory(engine)
    finally:
        engine.dispose()


def test_the_cache_fits_again_exactly_when_the_standings_can_change(factory: Any) -> None:
    db, sessions = factory
    cache = StandingsCache()

    def read() -> dict[str, Any]:
        with sessions() as session:
            row = ladder_views.find(session, "club")
            found = cache.get(session, row, ladder_views.standings)
            assert isinstance(found, dict)
            return found

    first = read()
    assert read() is first and cache.fits == 1  # nothing changed: no fit
    assert first["games"] == 2
    ladder_run("club", jobs=1, until_games=4, db=db)  # two games stored
    after_games = read()
    assert cache.fits == 2 and after_games["games"] == 4
    ladder_retire("club", "random", db=db)  # the field changed, no game
    retired = read()
    assert cache.fits == 3
    assert {s["name"]: s["status"] for s in retired["standings"]}["random"] == "retired"
    assert read() is retired and cache.fits == 3


def test_threads_that_miss_together_fit_once(factory: Any) -> None:
    _db, sessions = factory
    cache = StandingsCache()
    gate = threading.Barrier(8)
    answers: list[Any] = []

    def slow(session: Any, row: Any) -> object:
        return ladder_views.standings(session, row)

    def reader() -> None:
        with sessions() as session:
            row = ladder_views.find(session, "club")
            gate.wait()
            answers.append(cache.get(session, row, slow))

    threads = [threading.Thread(target=reader) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.fits == 1 and len(answers) == 8
    assert all(a is answers[0] for a in answers)


@pytest.mark.parametrize(
    "name", ["nowhere", "club ", " club", "CLUB", "<b>club</b>", "", "x" * 300]
)
def test_odd_names_are_no_ladder(factory: Any, name: str) -> None:
    _db, sessions = factory
    with sessions() as session, pytest.raises(NoLadder):
        ladder_views.find(session, name)


def test_recent_answers_are_handed_out_for_max_age_only(factory: Any) -> None:
    db, sessions = factory
    now = [100.0]
    cache = StandingsCache(max_age=0.25, clock=lambda: now[0])
    assert cache.recent("club") is None
    with sessions() as session:
        row = ladder_views.find(session, "club")
        first = cache.get(session, row, ladder_views.standings)
    assert cache.recent("club") is first and cache.recent("other") is None
    ladder_retire("club", "random", db=db)
    now[0] += 0.2
    assert cache.recent("club") is first  # within max_age: the answer the key was read for
    now[0] += 0.05
    assert cache.recent("club") is None  # past it: the next read checks the key again
    with sessions() as session:
        fresh = cache.get(session, row, ladder_views.standings)
    assert fresh is not first and cache.fits == 2


def test_a_change_made_here_is_read_at_once(factory: Any) -> None:
    """The server forgets a ladder's recent answer when it changes the ladder itself (an
    upload entered, an entrant suspended): its next read checks the key, within max_age."""
    db, sessions = factory
    now = [100.0]
    cache = StandingsCache(max_age=1.0, clock=lambda: now[0])
    with sessions() as session:
        row = ladder_views.find(session, "club")
        first = cache.get(session, row, ladder_views.standings)
    ladder_retire("club", "random", db=db)
    cache.forget("other")  # another ladder's change leaves this one's answer
    assert cache.recent("club") is first
    cache.forget("club")
    assert cache.recent("club") is None  # no time has passed: the key is read again
    with sessions() as session:
        fresh = cache.get(session, row, ladder_views.standings)
    assert fresh is not first and cache.fits == 2


def test_the_standings_carry_the_leaderboards_rows(factory: Any, tmp_path: Path) -> None:
    """``leaderboard`` is what ``arena leaderboard --tournament ID --json`` prints for the
    ladder (issue 31: the standings' rows as the leaderboard's); none before any game."""
    from tests.inprocess import run

    db, sessions = factory
    with sessions() as session:
        row = ladder_views.find(session, "club")
        view = ladder_views.standings(session, row)
    printed = run(
        "leaderboard", "--db", db, "--tournament", str(row.tournament_id), "--json", cwd=tmp_path
    )
    assert printed.returncode == 0, printed.stderr
    assert view["leaderboard"] == json.loads(printed.stdout) != []
    ladder_create("empty", "tictactoe", db=db)
    with sessions() as session:
        assert (
            ladder_views.standings(session, ladder_views.find(session, "empty"))["leaderboard"]
            == []
        )


def test_while_one_reader_reads_afresh_the_others_get_the_last_answer(factory: Any) -> None:
    """Under many readers only one goes to the database for a ladder at a time (the rest
    would queue on the connection pool: bench/serve.py measured 4 requests a second)."""
    _, sessions = factory
    now = [100.0]
    cache = StandingsCache(max_age=1.0, clock=lambda: now[0])
    assert cache.claim("club") is None  # nothing read yet: this reader reads
    with sessions() as session:
        first = cache.get(session, ladder_views.find(session, "club"), ladder_views.standings)
    cache.release("club")
    now[0] += 2.0  # past max_age
    assert cache.recent("club") is None
    assert cache.claim("club") is None  # this reader reads afresh ...
    assert cache.claim("club") is first  # ... the others answer with the last read meanwhile
    assert cache.claim("other") is None  # another ladder is claimed on its own
    cache.release("club")
    assert cache.claim("club") is None  # released: the next reader reads
