"""``arena tournament list`` reads its rows as SQL text (``db/tournament_list.py``), by the
standard library's ``sqlite3`` or psycopg on a plain database and through a session otherwise:
on both backends both ways list exactly what the stored ``Tournament`` objects say (counted here
in Python from the ORM's objects, not by SQL), and each tournament's liveness read from a listed
row is the one read from its object. A malformed stored value is one line naming its column,
never a traceback, whichever way the database is read."""

from __future__ import annotations

import socket
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select, text
from sqlalchemy.orm import Session, sessionmaker
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.arena.tournament.liveness import LEASE_S, interrupted
from bot_arena.db.decode import StoredDataError
from bot_arena.db.models import Bot, BotVersion, Entry, Match, Tournament
from bot_arena.db.pg_read import open_reads as open_pg_reads
from bot_arena.db.results import reads_of
from bot_arena.db.session import make_engine, session_factory
from bot_arena.db.sqlite_read import open_reads as open_sqlite_reads
from bot_arena.db.tournament_list import ListedTournament, listed_tournaments
from tests.arena.arena_helpers import dead_pid

NOW = datetime(2026, 6, 1, 12, 0, 0, 654321, tzinfo=UTC)


def store_field(session: Session) -> None:
    """Five tournaments whose list differs in every column: statuses, void and pending matches,
    a field with no match, none at all, names (none, quotes, non-ASCII), nested params, and the
    runner entries of a run that finished, of a dead one here, of one elsewhere beating and of
    one elsewhere whose lease ran out, and none recorded."""
    bots = [Bot(name=n) for n in ("a", "b", "c")]
    session.add_all(bots)
    versions = [
        BotVersion(bot=b, kind="builtin", target=b.name, sha256=f"{i:064x}")
        for i, b in enumerate(bots)
    ]
    session.add_all(versions)
    here = socket.gethostname()
    specs: list[dict[str, Any]] = [
        {"name": None, "status": "done", "matches": ["done", "done", "void"], "runner": None},
        {
            "name": 'cup "ü" ✓',
            "status": "running",
            "matches": ["done", "pending", "running", "void", "void"],
            "runner": {"host": here, "pid": dead_pid()},
            "beat": NOW,
        },
        {
            "name": "far",
            "status": "running",
            "matches": ["pending"],
            "runner": {"host": "another-machine", "pid": 7},
            "beat": NOW - timedelta(seconds=LEASE_S - 1),
        },
        {
            "name": "far, gone",
            "status": "running",
            "matches": [],
            "runner": {"host": "another-machine", "pid": 7},
            "beat": NOW - timedelta(seconds=LEASE_S + 1),
        },
        {"name": "empty", "status": "running", "matches": [], "runner": None, "bots": 0},
    ]
    for i, spec in enumerate(specs):
        done = spec["status"] == "done"
        tournament = Tournament(
            name=spec["name"],
            game="nim",
            params={"piles": "3,4,5", "deep": {"list": [1, 2.5, None]}, "i": i},
            format="gauntlet" if i % 2 else "round-robin",
            settings={"runner": spec["runner"]} if spec["runner"] else {"other": i},
            seed=2**40 + i,  # a BIGINT
            status=spec["status"],
            created=NOW - timedelta(days=i, microseconds=i * 1111),
            finished=NOW if done else None,
            heartbeat=spec.get("beat"),
        )
        tournament.entries = [
            Entry(position=p, spec=v.target, version=v)
            for p, v in enumerate(versions[: spec.get("bots", 2 + i % 2)])
        ]
        session.add(tournament)
        session.flush()
        for status in spec["matches"]:
            session.add(
                Match(
                    tournament_id=tournament.id,
                    game="nim",
                    params={},
                    time_control={},
                    players=2,
                    status=status,
                    termination="normal" if status == "done" else None,
                    finished=NOW if status == "done" else None,
                    void_reason="annulled" if status == "void" else None,
                )
            )


def expected(session: Session) -> list[dict[str, Any]]:
    """The list as the stored objects say it, counted in Python."""
    out = []
    for t in sorted(session.scalars(select(Tournament)), key=lambda t: -t.id):
        statuses = [m.status for m in session.scalars(select(Match)) if m.tournament_id == t.id]
        out.append(
            {
                "id": t.id,
                "name": t.name,
                "game": t.game,
                "params": t.params,
                "format": t.format,
                "bots": len(t.entries),
                "done": statuses.count("done"),
                "total": len([s for s in statuses if s != "void"]),
                "void": statuses.count("void"),
                "status": t.status,
                "seed": t.seed,
                "created": t.created.replace(microsecond=0).isoformat(),
                "finished": t.finished.replace(microsecond=0).isoformat() if t.finished else None,
            }
        )
    return out


def plain_list(url: str) -> list[ListedTournament]:
    """The list read the plain way (``sqlite3`` or psycopg alone), which ``url`` must allow."""
    opened = open_sqlite_reads(url) or open_pg_reads(url)
    assert opened is not None, "the plain way was refused"
    connection, reads = opened
    try:
        return listed_tournaments(reads.rows, reads.json_text)
    finally:
        connection.close()


def session_list(factory: sessionmaker[Session]) -> list[ListedTournament]:
    with factory() as session:
        reads = reads_of(session)
        return listed_tournaments(reads.rows, reads.json_text)


def test_the_list_is_what_the_tournaments_say(
    db_url: str, engine: Engine, factory: sessionmaker[Session]
) -> None:
    with factory.begin() as session:
        store_field(session)
    with factory() as session:
        want = expected(session)
        objects = {t.id: t for t in session.scalars(select(Tournament))}
        alive = {tid: interrupted(t, NOW) for tid, t in sorted(objects.items())}
    assert [row["status"] for row in want] == ["running"] * 4 + ["done"]
    assert list(alive.values()) == [False, True, False, True, True]  # by id: every case met
    for listed in (plain_list(db_url), session_list(factory)):
        assert [t.row for t in listed] == want
        assert {t.row["id"]: interrupted(t, NOW) for t in listed} == alive
        assert all(t.status == t.row["status"] for t in listed)


def test_a_stored_value_of_the_wrong_shape_is_named(
    db_url: str, engine: Engine, factory: sessionmaker[Session]
) -> None:
    """A JSON column holding a list where an object belongs (either backend takes it)."""
    with factory.begin() as session:
        store_field(session)
    for column in ("params", "settings"):
        with engine.begin() as conn:
            conn.execute(text(f"UPDATE tournaments SET {column} = '[1]' WHERE id = 2"))
        with pytest.raises(StoredDataError, match=f"^tournaments.{column}: .* a list"):
            plain_list(db_url)
        with pytest.raises(StoredDataError, match=f"^tournaments.{column}: .* a list"):
            session_list(factory)
        with engine.begin() as conn:
            conn.execute(text(f"UPDATE tournaments SET {column} = '{{}}' WHERE id = 2"))


SQLITE_BAD = [
    ("params", "'{oops'", "not JSON: '{oops'"),
    ("settings", "x'00ff'", "a bytes|not JSON"),
    ("created", "'yesterday'", "not a timestamp: 'yesterday'"),
    ("finished", "'2026-01-01T00:00:00+02:00'", "not a timestamp"),  # we store naive UTC
    ("heartbeat", "12", "not a timestamp: 'int'"),
]


@pytest.mark.parametrize(("column", "value", "said"), SQLITE_BAD)
def test_a_malformed_sqlite_value_is_one_line(
    tmp_path: Path, column: str, value: str, said: str
) -> None:
    """SQLite keeps whatever a file's author wrote: text that is not JSON, a timestamp that is
    none, a number. The command says which column, in one line, exit 2, the plain way and the
    usual one (``$ARENA_DB_TIMEOUT`` set: the plain way is not taken) alike."""
    path = tmp_path / "arena.db"
    engine = make_engine(f"sqlite:///{path}")
    with session_factory(engine).begin() as session:
        store_field(session)
    engine.dispose()
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE tournaments SET {column} = {value} WHERE id = 1")
    runner = CliRunner()
    for env in ({}, {"ARENA_DB_TIMEOUT": "5"}):
        result = runner.invoke(app, ["tournament", "list", "--db", str(path)], env=env)
        assert result.exit_code == 2, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: database ")
        assert f"tournaments.{column}: " in lines[0]
        assert any(part in lines[0] for part in said.split("|"))
