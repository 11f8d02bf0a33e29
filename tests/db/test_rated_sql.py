"""The leaderboard's reads as SQL text (``db/rated_sql.py``), run by SQLAlchemy on SQLite and
PostgreSQL and by the standard library's ``sqlite3`` (``db/sqlite_read.py``), against the ORM
queries of ``db/results.py`` on generated databases: the same rows, and the same leaderboard."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from bot_arena.arena.match.record import Termination
from bot_arena.arena.ratings.query import LeaderboardError, render_crosstable, render_leaderboard
from bot_arena.db import results
from bot_arena.db.rated_sql import RatedReads
from bot_arena.db.session import database_url, make_engine, session_factory, sqlite_path
from bot_arena.db.sqlite_read import open_reads, plain_file
from bot_arena.db.tournaments import get_tournament
from tests.arena.test_leaderboard_db import Filler, ref
from tests.db.dbtest import BACKENDS, example_database

# generated databases on both backends: about a second a test
pytestmark = pytest.mark.slow

BOTS = ["a", "b", "c", "d"]
FAULTS = [None, None, None, Termination.TIMEOUT, Termination.CRASH]

match = st.tuples(
    st.sampled_from(["coins", "coins", "nim"]),
    st.lists(st.sampled_from(BOTS), min_size=2, max_size=4),
    st.lists(st.integers(1, 3), min_size=4, max_size=4),
    st.sampled_from(FAULTS),
    st.booleans(),  # in the tournament
    st.booleans(),  # a second version of its first bot
)
histories = st.lists(match, min_size=1, max_size=14)
Played = tuple[str, list[str], list[int], Termination | None, bool, bool]


def fill(url: str, played: list[Played]) -> int:
    """The generated matches stored; the tournament's id."""
    filler = Filler(url)
    t = filler.tournament("coins")
    for game, names, ranks, fault, in_t, v2 in played:
        refs = [ref(n, "v2" if v2 and i == 0 else "") for i, n in enumerate(names)]
        seats = [(r, min(rank, len(refs))) for r, rank in zip(refs, ranks, strict=False)]
        worst = max(range(len(seats)), key=lambda i: seats[i][1])
        bad = (worst, fault) if fault is not None else None
        filler.match(game, seats, tournament=t if in_t else None, fault=bad)
    return t


@contextmanager
def plain(url: str) -> Iterator[RatedReads]:
    found = open_reads(url)
    assert found is not None, "a plain SQLite file at the newest revision takes the plain path"
    connection, reads = found
    try:
        yield reads
    finally:
        connection.close()


def orm_rows(session: Any, tournament: int | None, game: str | None) -> dict[str, Any]:
    faulted, bad = results.faulted_seats(session, tournament_id=tournament, game=game)
    return {
        "latest": results.latest_game(session),
        "played": [results.game_played(session, g) for g in ("coins", "nim", "chess")],
        "faulted": (faulted, bad),
        "pairs": sorted(
            results.pair_totals(session, tournament_id=tournament, game=game, leave_out=bad),
            key=repr,
        ),
        "seats": results.rated_seats(session, tournament_id=tournament, game=game),
        "multi": results.rated_seats(session, tournament_id=tournament, game=game, multi=True),
    }


def sql_rows(reads: RatedReads, tournament: int | None, game: str | None) -> dict[str, Any]:
    faulted, bad = reads.faulted_seats(tournament_id=tournament, game=game)
    return {
        "latest": reads.latest_game(),
        "played": [reads.game_played(g) for g in ("coins", "nim", "chess")],
        "faulted": (faulted, bad),
        "pairs": sorted(
            reads.pair_totals(tournament_id=tournament, game=game, leave_out=bad), key=repr
        ),
        "seats": reads.rated_seats(tournament_id=tournament, game=game),
        "multi": reads.rated_seats(tournament_id=tournament, game=game, multi=True),
    }


def shown(source: Any, tournament: int | None, game: str | None) -> str:
    """The leaderboard (JSON) and crosstable of a selection, or the error they give."""
    try:
        board = render_leaderboard(source, tournament_id=tournament, game=game, fmt="json")
        return board + render_crosstable(source, tournament_id=tournament, game=game)
    except LeaderboardError as err:
        return f"error: {err}"


def compare(url: str, tournament: int, sqlite: bool) -> None:
    engine = make_engine(url, read_only=True)
    try:
        with session_factory(engine)() as session:
            reads = results.reads_of(session)
            row = get_tournament(session, tournament)
            assert row is not None
            got = reads.tournament(tournament)
            assert got is not None and (got.id, got.name, got.game) == (row.id, row.name, row.game)
            assert reads.tournament(tournament + 1) is None
            for selection in [(None, None), (None, "coins"), (tournament, None), (None, "nim")]:
                expected = orm_rows(session, *selection)
                assert sql_rows(reads, *selection) == expected
                if sqlite:
                    with plain(url) as quick:
                        assert sql_rows(quick, *selection) == expected
                board = shown(session, *selection)
                assert not board.startswith("error") or "no matches of game" in board
                if sqlite:
                    with plain(url) as quick:
                        assert shown(quick, *selection) == board
    finally:
        engine.dispose()


@pytest.mark.parametrize("kind", BACKENDS)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(played=histories, malformed=st.booleans())
def test_sql_reads_give_the_orm_rows(kind: str, played: list[Played], malformed: bool) -> None:
    with example_database(kind) as url:
        t = fill(url, played)
        if malformed:  # a fault that is not an object: its match is left out, and said
            engine = make_engine(url)
            with engine.begin() as conn:
                conn.execute(
                    text("UPDATE seats SET fault = '[1]' WHERE id = (SELECT MIN(id) FROM seats)")
                )
            engine.dispose()
        compare(url, t, kind == "sqlite")


def test_a_malformed_fault_is_said_once_by_either_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    fill(url, [("coins", ["a", "b"], [1, 2, 0, 0], Termination.TIMEOUT, False, False)])
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE seats SET fault = 'not json' WHERE fault IS NOT NULL"))
    engine.dispose()
    with session_factory(make_engine(url, read_only=True))() as session:
        expected = render_leaderboard(session)
    orm_said = capsys.readouterr().err
    with plain(url) as quick:
        assert render_leaderboard(quick) == expected
    assert capsys.readouterr().err == orm_said
    assert orm_said.count("warning: match 1 left out: seats.fault: a stored value is not JSON") == 1


urls = st.one_of(
    st.text(max_size=30),
    st.builds(lambda s: "sqlite:///" + s, st.text(max_size=30)),
    st.builds(lambda s: "sqlite:////tmp/" + s, st.text(max_size=30)),
    st.sampled_from(["sqlite://", "sqlite:///:memory:", "postgresql://u@h/d", "a.db?mode=ro"]),
)


@settings(max_examples=300, deadline=None)
@given(url=urls)
@example(url="sqlite:///a%20b.db")  # SQLAlchemy reads "a b.db"
@example(url="sqlite:///a.db?mode=ro")
@example(url="sqlite:///")
def test_a_plain_file_is_the_file_sqlalchemy_reads(url: str) -> None:
    found = plain_file(url or None)
    if found is not None:
        assert found == sqlite_path(database_url(url or None))


def test_what_is_not_plain_takes_the_usual_path(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    assert open_reads(str(db)) is None  # not there: the usual open says so
    fill(f"sqlite:///{db}", [("coins", ["a", "b"], [1, 2, 0, 0], None, False, False)])
    found = open_reads(str(db))
    assert found is not None
    found[0].close()
    assert open_reads(f"sqlite:///{db}?mode=ro") is None
    engine = make_engine(f"sqlite:///{db}")
    with engine.begin() as conn:  # an older revision: arena db upgrade is the advice
        conn.execute(text("UPDATE alembic_version SET version_num = '0009'"))
    engine.dispose()
    assert open_reads(str(db)) is None


def test_the_leaderboard_loads_no_sqlalchemy(tmp_path: Path) -> None:
    """What the plain path is for: ``arena leaderboard`` on a SQLite file reads it without
    importing SQLAlchemy (a third of its start-up, issue 28)."""
    db = tmp_path / "arena.db"
    fill(f"sqlite:///{db}", [("coins", ["a", "b"], [1, 2, 0, 0], None, False, False)])
    probe = (
        "import sys\n"
        "from bot_arena.arena.cli.app import main\n"
        "sys.argv = ['arena', 'leaderboard', '--db', sys.argv[1]]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'sqlalchemy')\n"
        "print('sqlalchemy:', len(loaded))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "ARENA_DB"}
    done = subprocess.run(
        [sys.executable, "-c", probe, str(db)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Leaderboard, game coins, 1 matches")
    assert done.stdout.rstrip().endswith("sqlalchemy: 0")


def test_faulted_seats_are_read_from_their_partial_index(tmp_path: Path) -> None:
    """On SQLite, whose planner has no statistics, the faulted seats' query walks the partial
    index of faulted seats (migration 0015) and looks each match up by its key, rather than
    reading every done match's seats (issue 29: 0.75 s -> 0.05 s of CPU at 1M matches)."""
    from bot_arena.db.rated_sql import FAULTED, _selection

    engine = make_engine(f"sqlite:///{tmp_path / 'plan.db'}")
    try:
        with engine.connect() as conn:
            for tournament, game in ((None, None), (1, None), (None, "coins"), (1, "coins")):
                where, params = _selection(tournament, game)
                plan = [
                    str(row[-1])
                    for row in conn.exec_driver_sql(
                        "EXPLAIN QUERY PLAN " + FAULTED.format(where=where), params
                    )
                ]
                assert plan[0] == "SCAN s USING INDEX ix_seats_faulted", plan
                assert plan[1].startswith("SEARCH m USING INTEGER PRIMARY KEY"), plan
    finally:
        engine.dispose()
