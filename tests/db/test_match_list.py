"""``arena matches --limit N`` on a plain SQLite file reads the newest matches by ``sqlite3``
alone (``db/match_list.py``): on generated databases (statuses, void times, two and three
seats, moves, a tournament or none, a malformed JSON value now and then) it lists exactly what
the ORM's ``find_matches(last=N)`` lists, and it refuses (None: the ORM lists them, leaving out
and saying what is malformed) exactly when one of those N matches holds a malformed value."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy.orm import Session, sessionmaker

from bot_arena.db.match_list import listed, newest_matches
from bot_arena.db.pg_read import open_reads as open_pg_reads
from bot_arena.db.queries import find_matches, move_counts
from bot_arena.db.session import make_engine, session_factory
from bot_arena.db.sqlite_read import open_reads
from tests.db.dbtest import PG_ENV, database

NAMES = ["alpha", "beta", "gamma"]
BAD = {"params": "[]", "time_control": "nope", "adjudication": "[1]", "fault": "{", "files": "{}"}
VALID_JSON = {"params", "adjudication", "files"}  # the BAD values PostgreSQL's JSON takes


@dataclass
class Generated:
    tournament: int | None
    status: str
    names: list[str]
    done_ranks: list[int]
    plies: int
    bad: str | None  # the column given a malformed value (BAD), if any


@st.composite
def generated(draw: st.DrawFn) -> Generated:
    players = draw(st.sampled_from([2, 2, 3]))
    return Generated(
        draw(st.sampled_from([None, 1])),
        draw(st.sampled_from(["pending", "running", "done", "done", "void"])),
        draw(st.lists(st.sampled_from(NAMES), min_size=players, max_size=players)),
        draw(st.lists(st.integers(1, players), min_size=players, max_size=players)),
        draw(st.integers(0, 3)),
        draw(st.sampled_from([None] * 45 + sorted(BAD))),  # one match in ten malformed
    )


@pytest.fixture(scope="module")
def empty_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database at the newest revision with the three bots and a tournament (copied by each
    example)."""
    path = tmp_path_factory.mktemp("list") / "empty.db"
    make_engine(f"sqlite:///{path}").dispose()
    conn = sqlite3.connect(path)
    stamp = "2026-01-01 00:00:00.000000"
    for i, name in enumerate(NAMES, 1):
        conn.execute("INSERT INTO bots VALUES (?, ?, 0, ?)", (i, name, stamp))
        conn.execute(
            "INSERT INTO bot_versions (id, bot_id, kind, target, sha256, created)"
            " VALUES (?, ?, 'builtin', ?, ?, ?)",
            (i, i, name, f"{i:064x}", stamp),
        )
    conn.execute(
        "INSERT INTO tournaments (id, name, game, params, time_control, format, settings, seed,"
        " status, created, finished)"
        " VALUES (1, 't', 'tictactoe', '{}', '{}', 'round-robin', '{}', 1, 'done', ?, ?)",
        (stamp, stamp),
    )
    conn.commit()
    conn.close()
    return path


def fill(path: Path, matches: list[Generated]) -> None:
    conn = sqlite3.connect(path)
    fill_into(conn.execute, matches)
    conn.commit()
    conn.close()


def fill_into(execute: Callable[[str, tuple[Any, ...]], object], matches: list[Generated]) -> None:
    """The generated matches inserted by ``execute`` (a statement with ``?`` marks)."""
    for mid, m in enumerate(matches, 1):
        values: dict[str, Any] = {"params": "{}", "time_control": '{"move_time": 0.1}'}
        values["adjudication"] = '{"rule": "draw"}' if mid % 4 == 0 else None
        if m.bad in values:
            values[m.bad] = BAD[m.bad]
        done = m.status == "done"
        execute(
            "INSERT INTO matches (id, tournament_id, round, game, params, time_control, players,"
            " seed, opening, status, termination, fault_reason, started, finished, duration_s,"
            " void_reason, voided, adjudication) VALUES (?, ?, ?, 'tictactoe', ?, ?, ?, ?, '',"
            " ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                mid, m.tournament, mid % 3, values["params"], values["time_control"],
                len(m.names), mid, m.status, "normal" if done else None,
                "seat 1: timeout" if mid % 5 == 0 else None,
                f"2026-01-01 00:00:{mid % 60:02d}.000000",
                f"2026-01-01 00:01:{mid % 60:02d}.250000" if done else None,
                0.25 * mid if done else None,
                "replayed" if m.status == "void" else None,
                f"2026-02-01 10:00:{mid % 60:02d}.500000" if m.status == "void" else None,
                values["adjudication"],
            ),
        )  # fmt: skip
        for seat, (name, rank) in enumerate(zip(m.names, m.done_ranks, strict=True)):
            fault = BAD["fault"] if m.bad == "fault" and seat == 0 else None
            if fault is None and done and seat == 1 and mid % 5 == 0:
                fault = '{"termination": "timeout", "message": "late"}'
            execute(
                "INSERT INTO seats (match_id, players, seat, bot_version_id, utility, rank,"
                " score, fault) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    mid, len(m.names), seat, NAMES.index(name) + 1,
                    float(len(m.names) - rank) if done else None, rank if done else None,
                    1.0 / rank if done else None, fault,
                ),
            )  # fmt: skip
        for ply in range(m.plies):
            execute(
                "INSERT INTO moves (match_id, ply, seat, move, time_ms, forced)"
                " VALUES (?, ?, ?, ?, 1.5, FALSE)",
                (mid, ply, ply % len(m.names), str(ply)),
            )
    if any(m.bad == "files" for m in matches):  # a version's files: every match of gamma's
        execute("UPDATE bot_versions SET files = ? WHERE id = 3", (BAD["files"],))


VOID = Generated(None, "void", ["alpha", "beta"], [1, 2], 1, None)
FILTERS = st.fixed_dictionaries(
    {
        "tournament_id": st.sampled_from([None, 1, 2]),
        "bot": st.sampled_from([None, *NAMES, "nobody"]),
        "status": st.sampled_from([None, "done", "void", "pending"]),
    }
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(generated(), max_size=14), FILTERS, st.integers(1, 16))
@example(  # a void match listed (its time), a tournament's and a three-seat match
    [VOID, Generated(1, "done", ["gamma", "alpha", "beta"], [2, 1, 3], 2, None)],
    {"tournament_id": None, "bot": None, "status": None},
    5,
)
def test_the_plain_list_is_the_orms(
    empty_db: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    matches: list[Generated],
    where: dict[str, Any],
    last: int,
) -> None:
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "arena.db"  # a new file each example
    shutil.copyfile(empty_db, path)
    fill(path, matches)
    capsys.readouterr()
    engine = make_engine(f"sqlite:///{path}", read_only=True)
    try:
        with session_factory(engine)() as session:
            found = find_matches(session, **where, last=last)
            plies = move_counts(session, [m.id for m in found])
            orm = [listed(m, plies.get(m.id, 0)) for m in found]
    finally:
        engine.dispose()
    left_out = "left out" in capsys.readouterr().err
    opened = open_reads(str(path))
    assert opened is not None
    try:
        reads = opened[1]
        plain = newest_matches(
            reads.rows, reads.json_text, where["tournament_id"], where["bot"], where["status"], last
        )
    finally:
        opened[0].close()
    if plain is None:
        assert left_out  # refused only what the ORM leaves out
    else:
        assert not left_out
        assert plain == orm


def test_the_command_takes_the_plain_way_without_sqlalchemy(empty_db: Path, tmp_path: Path) -> None:
    """The same JSON both ways (``ARENA_DB_TIMEOUT`` set: the usual open), and the plain way
    loads no SQLAlchemy (its start-up is most of the command's time)."""
    path = tmp_path / "arena.db"
    shutil.copyfile(empty_db, path)
    fill(path, [Generated(1, s, ["alpha", "beta"], [1, 2], 2, None) for s in ["done", "void"] * 3])
    probe = (
        "import sys, runpy; sys.argv = ['arena', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('bot_arena.arena.cli.app', run_name='__main__')\n"
        "finally:\n    print('sqlalchemy' in sys.modules, file=sys.stderr)\n"
    )
    args = ["matches", "--limit", "4", "--json", "--db", str(path)]
    env = {k: v for k, v in os.environ.items() if k != "ARENA_DB_TIMEOUT"}
    plain = subprocess.run(
        [sys.executable, "-c", probe, *args], capture_output=True, text=True, env=env
    )
    usual = subprocess.run(
        [sys.executable, "-c", probe, *args],
        capture_output=True,
        text=True,
        env={**env, "ARENA_DB_TIMEOUT": "5"},
    )
    assert plain.stderr.strip().splitlines()[-1] == "False", plain.stderr
    assert usual.stderr.strip().splitlines()[-1] == "True", usual.stderr
    rows = json.loads(plain.stdout)
    assert rows == json.loads(usual.stdout)
    assert [r["match"] for r in rows] == [3, 4, 5, 6]
    assert rows[1]["voided"] == "2026-02-01T10:00:04+00:00" and rows[0]["result"] == "1-0"
    assert rows[0]["plies"] == 2 and rows[0]["duration_s"] == 0.75


@pytest.fixture(scope="module")
def pg_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PostgreSQL schema at the newest revision with the three bots and a tournament (each
    example empties its matches)."""
    if not os.environ.get(PG_ENV):
        pytest.skip(f"{PG_ENV} is not set")
    with database("postgresql", tmp_path_factory.mktemp("pg")) as url:
        make_engine(url).dispose()
        with _pg(url) as conn:
            stamp = "2026-01-01 00:00:00"
            for i, name in enumerate(NAMES, 1):
                conn.execute("INSERT INTO bots VALUES (%s, %s, FALSE, %s)", (i, name, stamp))
                conn.execute(
                    "INSERT INTO bot_versions (id, bot_id, kind, target, sha256, created)"
                    " VALUES (%s, %s, 'builtin', %s, %s, %s)",
                    (i, i, name, f"{i:064x}", stamp),
                )
            conn.execute(
                "INSERT INTO tournaments (id, name, game, params, time_control, format,"
                " settings, seed, status, created, finished) VALUES (1, 't', 'tictactoe', '{}',"
                " '{}', 'round-robin', '{}', 1, 'done', %s, %s)",
                (stamp, stamp),
            )
        yield url


@pytest.fixture(scope="module")
def pg_orm(pg_url: str) -> Iterator[sessionmaker[Session]]:
    """The ORM's reads of the PostgreSQL schema: one read-only engine for every example (the
    ORM is the reference here; opening an engine, its revision checked, took about 25 ms an
    example). Each example's session sees what was filled before it."""
    engine = make_engine(pg_url, read_only=True)
    try:
        yield session_factory(engine)
    finally:
        engine.dispose()


@contextmanager
def _pg(url: str) -> Iterator[Any]:
    import psycopg

    from bot_arena.db.pg_read import libpq_uri

    uri = libpq_uri(url)
    assert uri is not None
    with psycopg.connect(uri, autocommit=True) as conn:
        yield conn


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(generated(), max_size=14), FILTERS, st.integers(1, 16))
@example(
    [VOID, Generated(1, "done", ["gamma", "alpha", "beta"], [2, 1, 3], 2, None)],
    {"tournament_id": None, "bot": None, "status": None},
    5,
)
def test_the_plain_list_on_postgresql_is_the_orms(
    pg_url: str,
    pg_orm: sessionmaker[Session],
    capsys: pytest.CaptureFixture[str],
    matches: list[Generated],
    where: dict[str, Any],
    last: int,
) -> None:
    """``pg_read.open_reads`` (psycopg alone) lists what the ORM lists on PostgreSQL, whose
    JSON columns refuse text that is not JSON (those values are left out here)."""
    kept = [m if m.bad in VALID_JSON else dataclasses.replace(m, bad=None) for m in matches]
    with _pg(pg_url) as conn:
        for table in ("moves", "seats", "matches"):
            conn.execute(f"DELETE FROM {table}")
        conn.execute("UPDATE bot_versions SET files = NULL")
        fill_into(lambda sql, params: conn.execute(sql.replace("?", "%s"), params), kept)
    capsys.readouterr()
    with pg_orm() as session:
        found = find_matches(session, **where, last=last)
        plies = move_counts(session, [m.id for m in found])
        orm = [listed(m, plies.get(m.id, 0)) for m in found]
    left_out = "left out" in capsys.readouterr().err
    opened = open_pg_reads(pg_url)
    assert opened is not None
    try:
        reads = opened[1]
        plain = newest_matches(
            reads.rows, reads.json_text, where["tournament_id"], where["bot"], where["status"], last
        )
    finally:
        opened[0].close()
    if plain is None:
        assert left_out
    else:
        assert not left_out
        assert plain == orm


def test_postgresql_takes_the_plain_way_only_at_the_newest_revision(pg_url: str) -> None:
    """An older revision, another driver or a parameter libpq does not know: None, and the
    usual open (SQLAlchemy) says what it says."""
    from bot_arena.db.sqlite_open import newest_script

    assert open_pg_reads(pg_url.replace("+psycopg", "")) is None  # psycopg2's URL
    assert open_pg_reads(pg_url + "&no_such_parameter=1") is None
    with _pg(pg_url) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0001'")
        try:
            assert open_pg_reads(pg_url) is None
        finally:
            conn.execute("UPDATE alembic_version SET version_num = %s", (newest_script(),))
    opened = open_pg_reads(pg_url)
    assert opened is not None
    opened[0].close()


def test_a_postgresql_failure_in_the_plain_way_is_one_line(pg_url: str) -> None:
    """A psycopg error met while the plain way reads (a server gone, say) ends the command with
    one line and exit 2, as SQLAlchemy's errors do, never a traceback."""
    probe = (
        "import sys, runpy, psycopg\n"
        "import bot_arena.db.match_list as listing\n"
        "def gone(*args, **kwargs):\n"
        "    raise psycopg.OperationalError('server closed the connection unexpectedly')\n"
        "listing.newest_matches = gone\n"
        "sys.argv = ['arena', *sys.argv[1:]]\n"
        "runpy.run_module('bot_arena.arena.cli.app', run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "matches", "--limit", "3", "--db", pg_url],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "server closed the connection" in lines[0]
