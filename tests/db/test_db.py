"""The results database: migrations, SQLite settings, constraints, store round trips."""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, create_engine, func, insert, inspect, pool, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.schema import CreateIndex

from bot_arena.arena.match.botref import BotRef, sha256_text
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.record import Fault, MatchRecord, MoveRecord, SeatResult, Termination
from bot_arena.db.models import Base, Bot, BotVersion, Match, Move, Seat, Tournament
from bot_arena.db.session import (
    DatabaseOpenError,
    alembic_config,
    current_revision,
    database_url,
    head_revision,
    make_engine,
    session_factory,
)
from bot_arena.db.store import (
    bot_versions,
    complete_match,
    insert_schedule,
    list_bots,
    load_match,
    lookup_bot,
    record_of,
    register_bot_version,
    save_match,
    version_for,
    versions_for,
)
from tests.db.dbtest import (
    BACKENDS,
    PG_ENV,
    database,
    example_database,
    from_template,
    newest_ddl,
    schema_dump,
    schema_of,
)

TABLES = {"bots", "bot_versions", "tournaments", "tournament_entries", "matches", "seats", "moves"}


def make_record(scores: tuple[float, float] = (1.0, 0.0), plies: int = 3) -> MatchRecord:
    ranks = (1, 2) if scores[0] > scores[1] else (2, 1) if scores[1] > scores[0] else (1, 1)
    now = time.time()
    return MatchRecord(
        game="coins",
        params={"coins": 4, "max_take": 2, "players": 2},
        start_position="4@0",
        seats=[
            SeatResult("random", 1.0 if ranks[0] == 1 else -1.0, ranks[0], scores[0]),
            SeatResult(
                "random:seed=3",
                1.0 if ranks[1] == 1 else -1.0,
                ranks[1],
                scores[1],
                Fault(Termination.TIMEOUT, "answered late", {"overrun_ms": 12.5}),
            ),
        ],
        moves=[
            MoveRecord(i % 2, str(1 + i % 2), 0.5 + i, {"depth": i, "pv": ["1"]} if i else None)
            for i in range(plies)
        ],
        termination=Termination.TIMEOUT,
        final_position="0@1",
        started=now - 2.0,
        finished=now,
        time_control={"seats": [{"move_time": 1.0}, {"move_time": 1.0}]},
    )


REFS = [resolve("random"), resolve("random:seed=3")]


# --- migrations -----------------------------------------------------------------------------


@pytest.mark.new_schema  # its subject: the making of the database
def test_migration_creates_the_schema_and_reopening_is_idempotent(db_url: str) -> None:
    first = make_engine(db_url)
    assert current_revision(first) == head_revision() is not None
    assert set(inspect(first).get_table_names()) >= TABLES
    with session_factory(first).begin() as s:
        save_match(s, make_record(), REFS)
    first.dispose()
    again = make_engine(db_url)  # a second open runs the migrations again: nothing to do
    assert current_revision(again) == head_revision()
    with session_factory(again)() as s:
        assert s.scalar(select(func.count()).select_from(Match)) == 1
    again.dispose()


def test_a_template_copy_is_what_the_migrations_make(tmp_path: Path) -> None:
    """The tests' SQLite template (``dbtest.from_template``) holds the schema, revision and
    settings that migrating a fresh file gives, and no row."""

    def described(path: Path) -> list[Any]:
        conn = sqlite3.connect(path)
        try:
            # a table that a migration rebuilt lists its constraints in an order that can
            # differ from one migration run to the next (Alembic's batch mode): compared as
            # the set of its definition's lines
            found: list[Any] = [
                (*row[:4], sorted(line.strip().rstrip(",") for line in (row[4] or "").split("\n")))
                for row in conn.execute("SELECT * FROM sqlite_master ORDER BY name")
            ]
            found += list(conn.execute("SELECT * FROM alembic_version"))
            for pragma in ("journal_mode", "user_version", "application_id", "page_size"):
                found += list(conn.execute(f"PRAGMA {pragma}"))
            for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
                if table != "alembic_version":
                    found.append(
                        (table, conn.execute(f'SELECT count(*) FROM "{table}"').fetchone())
                    )
            return found
        finally:
            conn.close()

    make_engine(f"sqlite:///{tmp_path / 'fresh.db'}").dispose()
    copy = from_template(f"sqlite:///{tmp_path / 'copy.db'}")
    assert copy == f"sqlite:///{tmp_path / 'copy.db'}"
    assert described(tmp_path / "copy.db") == described(tmp_path / "fresh.db")


@pytest.mark.parametrize("kind", BACKENDS)
def test_each_example_database_is_empty_at_the_newest_revision(kind: str) -> None:
    """``dbtest.example_database`` (one a hypothesis example) gives what a new database gives:
    the newest revision, no row, ids from 1; on PostgreSQL the same schema emptied each time,
    whatever the example before left in it."""
    for _ in range(2):
        with example_database(kind) as url:
            engine = make_engine(url)
            try:
                assert current_revision(engine) == head_revision()
                with session_factory(engine).begin() as session:
                    for table in sorted(TABLES):
                        assert session.execute(text(f"SELECT count(*) FROM {table}")).scalar() == 0
                    tournament = Tournament(name="t", game="coins", format="round-robin", seed=1)
                    session.add(tournament)
                    session.flush()
                    assert tournament.id == 1
                    save_match(session, make_record(), REFS, tournament.id)
            finally:
                engine.dispose()


@pytest.mark.postgres
@pytest.mark.skipif(not os.environ.get(PG_ENV), reason=f"{PG_ENV} is not set")
def test_a_ready_postgresql_schema_is_what_the_migrations_make(tmp_path: Path) -> None:
    """``dbtest.database(..., ready=True)`` (a schema made from the DDL captured once a
    process) holds what migrating a new schema makes: the same DDL, the same objects and
    constraints in the catalog, the same version row and no other row; and ids from 1."""
    dump = shutil.which("pg_dump")
    if dump is None or newest_ddl(os.environ[PG_ENV]) is None:
        pytest.skip("no pg_dump that can dump this server: ready schemas are migrated ones")

    def described(url: str) -> list[Any]:
        engine = create_engine(url, poolclass=pool.NullPool)
        try:
            with engine.connect() as conn:
                found: list[Any] = [
                    tuple(row)
                    for row in conn.exec_driver_sql(
                        "SELECT relname, relkind, relpersistence, reloptions::text "
                        "FROM pg_class WHERE relnamespace = current_schema()::regnamespace "
                        "ORDER BY relname"
                    )
                ]
                found += [
                    tuple(row)
                    for row in conn.exec_driver_sql(
                        "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
                        "FROM pg_constraint WHERE connamespace = current_schema()::regnamespace "
                        "ORDER BY 1, 2"
                    )
                ]
                found += [
                    tuple(row)
                    for row in conn.exec_driver_sql(
                        "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) "
                        "FROM pg_index JOIN pg_class ON pg_class.oid = indexrelid "
                        "WHERE relnamespace = current_schema()::regnamespace ORDER BY 1"
                    )
                ]
                found += list(conn.exec_driver_sql("SELECT * FROM alembic_version"))
                for (table,) in conn.exec_driver_sql(
                    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                    "ORDER BY tablename"
                ):
                    if table != "alembic_version":
                        count = conn.exec_driver_sql(f'SELECT count(*) FROM "{table}"').scalar()
                        found.append((table, count))
            named = f"{schema_of(url)}."  # index definitions name their schema
            return [
                tuple(v.replace(named, "") if isinstance(v, str) else v for v in row)
                for row in found
            ]
        finally:
            engine.dispose()

    with (
        database("postgresql", tmp_path) as migrated,
        database("postgresql", tmp_path, ready=True) as ready,
    ):
        make_engine(migrated).dispose()
        assert schema_dump(dump, ready) == schema_dump(dump, migrated)
        assert described(ready) == described(migrated)
        engine = make_engine(ready)
        try:
            assert current_revision(engine) == head_revision()
            with session_factory(engine).begin() as session:
                tournament = Tournament(name="t", game="coins", format="round-robin", seed=1)
                session.add(tournament)
                session.flush()
                assert tournament.id == 1
        finally:
            engine.dispose()


def test_models_and_migrations_agree(engine: Engine) -> None:
    """What `alembic check` does: autogenerate finds no difference."""
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(ctx, Base.metadata) == []


def test_the_models_partial_index_is_the_migrations_on_each_backend(engine: Engine) -> None:
    """0015's ``ix_seats_faulted`` as the models make it for the engine's backend is partial, and
    its condition is the one the database holds (PostgreSQL's given by ``declare_postgresql``
    once an engine is made, not in the ``Index``: that would load the dialect on SQLite)."""
    index = next(ix for ix in Seat.__table__.indexes if ix.name == "ix_seats_faulted")
    made = str(CreateIndex(index).compile(dialect=engine.dialect))
    assert made.endswith("WHERE fault IS NOT NULL"), made
    held = {ix["name"]: ix for ix in inspect(engine).get_indexes("seats")}["ix_seats_faulted"]
    where = held.get("dialect_options", {}).get(f"{engine.dialect.name}_where")
    assert where is not None and "fault IS NOT NULL" in str(where), held


@pytest.mark.new_schema  # its subject: the making of the database
def test_alembic_check_passes(db_url: str) -> None:
    """`alembic check` itself, through the shipped environment script."""
    eng = make_engine(db_url)
    eng.dispose()
    cfg = alembic_config()
    cfg.set_main_option("sqlalchemy.url", db_url.replace("%", "%%"))
    command.check(cfg)  # raises AutogenerateDiffsDetected on any difference


def test_alembic_writes_to_the_stdout_of_the_call() -> None:
    """Not to the ``sys.stdout`` of when alembic was first imported (Config's default): in a test
    worker that may be an earlier in-process command's captured stream, closed since (alembic
    check then failed with 'I/O operation on closed file' whenever such a command ran first)."""
    importlib.import_module("alembic.config")  # imported before, as by any earlier command
    with contextlib.redirect_stdout(io.StringIO()) as now:
        assert alembic_config().stdout is now


def test_an_empty_sqlite_file_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    path.touch()  # an existing, empty file (as sqlite3 leaves after a bare connect)
    eng = make_engine(f"sqlite:///{path}")
    assert current_revision(eng) == head_revision()
    eng.dispose()


def test_sqlite_settings(tmp_path: Path) -> None:
    eng = make_engine(f"sqlite:///{tmp_path / 'a.db'}")
    with eng.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 60000
    eng.dispose()


def test_database_url_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_DB", raising=False)
    assert database_url(None) == "sqlite:///arena.db"
    monkeypatch.setenv("ARENA_DB", "sqlite:///env.db")
    assert database_url(None) == "sqlite:///env.db"
    assert database_url("sqlite:///flag.db") == "sqlite:///flag.db"


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda p: "nosuchdriver://x/y", "invalid database URL"),
        (lambda p: f"sqlite:///{p / 'missing' / 'dir' / 'a.db'}", "cannot open database"),
        (lambda p: f"sqlite:///{_garbage(p)}", "not a database"),
    ],
)
def test_unopenable_databases_raise_one_line(tmp_path: Path, make: Any, fragment: str) -> None:
    with pytest.raises(DatabaseOpenError) as err:
        make_engine(make(tmp_path))
    assert fragment in str(err.value) and "\n" not in str(err.value)


def _garbage(folder: Path) -> Path:
    path = folder / "garbage.db"
    path.write_bytes(b"this is not a database file, just text " * 100)
    return path


# --- constraints ----------------------------------------------------------------------------


def _pending_match(s: Session, players: int = 2) -> tuple[Match, list[int]]:
    versions = [
        register_bot_version(
            s, f"bot{i}", BotRef(f"bot{i}", "builtin", "random", None, sha256_text(f"bot{i}"))
        )[0].id
        for i in range(players)
    ]
    match = Match(game="coins", params={}, players=players, status="pending")
    s.add(match)
    s.flush()
    return match, versions


@pytest.mark.parametrize(
    "bad",
    [
        {"rank": 3},  # rank beyond the number of players
        {"rank": 0},
        {"score": 1.5},
        {"score": -0.1},
        {"seat": 2},  # seat index beyond the players
        {"rank": 1},  # a result half filled in (no score, no utility)
    ],
)
def test_seat_constraints(factory: sessionmaker[Session], bad: dict[str, Any]) -> None:
    with pytest.raises(IntegrityError), factory.begin() as s:
        match, versions = _pending_match(s)
        row: dict[str, Any] = {"seat": 0, "rank": None, "score": None, "utility": None}
        if "rank" in bad and len(bad) == 1 and bad["rank"] in (0, 3):
            row.update(score=0.5, utility=0.0)
        if "score" in bad:
            row.update(rank=1, utility=0.0)
        row.update(bad)
        s.add(Seat(match_id=match.id, players=2, bot_version_id=versions[0], **row))
        s.flush()
    with factory() as s:
        assert s.scalar(select(func.count()).select_from(Seat)) == 0  # rolled back: nothing


def test_one_row_per_seat_and_per_ply(factory: sessionmaker[Session]) -> None:
    with pytest.raises(IntegrityError), factory.begin() as s:
        match, versions = _pending_match(s)
        s.add_all(Seat(match_id=match.id, players=2, seat=0, bot_version_id=v) for v in versions)
        s.flush()
    with pytest.raises(IntegrityError), factory.begin() as s:
        match, _ = _pending_match(s)
        s.execute(
            insert(Move),
            [
                {
                    "match_id": match.id,
                    "ply": 0,
                    "seat": 0,
                    "move": "1",
                    "time_ms": 1.0,
                    "forced": False,
                }
            ]
            * 2,
        )


def test_seat_players_must_match_its_match(factory: sessionmaker[Session]) -> None:
    """The composite foreign key: a seat cannot claim a different player count (and so a
    larger rank range) than its match."""
    with pytest.raises(IntegrityError), factory.begin() as s:
        match, versions = _pending_match(s)
        s.add(Seat(match_id=match.id, players=3, seat=2, bot_version_id=versions[0]))
        s.flush()


def test_a_done_match_needs_a_termination(factory: sessionmaker[Session]) -> None:
    with pytest.raises(IntegrityError), factory.begin() as s:
        match, _ = _pending_match(s)
        match.status = "done"
        s.flush()


def test_unique_bot_version_and_foreign_keys(factory: sessionmaker[Session]) -> None:
    with pytest.raises(IntegrityError), factory.begin() as s:
        bot = Bot(name="x")
        s.add(bot)
        s.flush()
        for _ in range(2):
            s.add(BotVersion(bot_id=bot.id, kind="builtin", target="random", sha256="a" * 64))
        s.flush()
    with pytest.raises(IntegrityError), factory.begin() as s:
        match, _ = _pending_match(s)
        s.add(Seat(match_id=match.id, players=2, seat=0, bot_version_id=999_999))
        s.flush()


# --- store ----------------------------------------------------------------------------------


def test_save_and_load_round_trip(factory: sessionmaker[Session]) -> None:
    record = make_record()
    with factory.begin() as s:
        match_id = save_match(s, record, REFS)
    with factory() as s:
        loaded = load_match(s, match_id)
        assert loaded is not None
        again = record_of(loaded)
    want, got = record.to_dict(), again.to_dict()
    for key in ("started", "finished", "duration_s"):
        assert got.pop(key) == pytest.approx(want.pop(key), abs=1e-5)
    for seat, ref in zip(want["seats"], REFS, strict=True):
        seat["version"] = ref.sha256
    assert got == want


def test_completing_a_pending_match_replaces_leftovers(factory: sessionmaker[Session]) -> None:
    """A match left 'running' by a crash is stored once when replayed: stale moves go."""
    with factory.begin() as s:
        match, versions = _pending_match(s)
        s.add_all(
            Seat(match_id=match.id, players=2, seat=i, bot_version_id=v)
            for i, v in enumerate(versions)
        )
        match.status = "running"
        s.add(Move(match_id=match.id, ply=7, seat=0, move="stale", time_ms=1.0))
        match_id = match.id
    record = make_record(scores=(0.5, 0.5), plies=2)
    with factory.begin() as s:
        assert save_match(s, record, REFS, match_id=match_id) == match_id
    with factory() as s:
        moves = s.scalars(select(Move.move).where(Move.match_id == match_id).order_by(Move.ply))
        assert list(moves) == ["1", "2"]
        assert s.scalar(select(func.count()).select_from(Match)) == 1
        seats = list(s.scalars(select(Seat).where(Seat.match_id == match_id).order_by(Seat.seat)))
        assert [(x.rank, x.score) for x in seats] == [(1, 0.5), (1, 0.5)]
        assert s.get(Match, match_id).status == "done"  # type: ignore[union-attr]


def test_a_failing_write_leaves_nothing(factory: sessionmaker[Session]) -> None:
    bad = make_record()
    bad.seats[0].score = 2.0  # violates the score CHECK when the seats are flushed
    with pytest.raises(IntegrityError), factory.begin() as s:
        save_match(s, make_record(), REFS)
        save_match(s, bad, REFS)
    with factory() as s:
        for model in (Match, Seat, Move, Bot):
            assert s.scalar(select(func.count()).select_from(model)) == 0


def test_bot_registration_versions_and_lookup(factory: sessionmaker[Session]) -> None:
    v1 = BotRef("mine.py", "module", "/x/mine.py", "print(1)", sha256_text("print(1)"))
    v2 = BotRef("mine.py", "module", "/x/mine.py", "print(2)", sha256_text("print(2)"))
    with factory.begin() as s:
        assert register_bot_version(s, "mine", v1)[1] is True
        assert register_bot_version(s, "mine", v1)[1] is False
        assert register_bot_version(s, "mine", v2)[1] is True
        save_match(s, make_record(), REFS)  # records the built-ins as unregistered bots
    with factory() as s:
        found = lookup_bot(s, "mine")
        assert found is not None and found.sha256 == v2.sha256 and found.source == "print(2)"
        assert found.name == "mine"
        assert [v.sha256 for v in bot_versions(s, "mine")] == [v1.sha256, v2.sha256]
        assert lookup_bot(s, "random") is None  # played, but never registered
        assert [b.name for b in list_bots(s)] == ["mine"]
        everyone = [b.name for b in list_bots(s, include_unregistered=True)]
        assert everyone == ["mine", "random", "random:seed=3"]


def test_sqlite_integrity_after_writes(tmp_path: Path) -> None:
    eng = make_engine(f"sqlite:///{tmp_path / 'i.db'}")
    with session_factory(eng).begin() as s:
        for _ in range(5):
            save_match(s, make_record(), REFS)
    with eng.connect() as conn:
        assert conn.execute(text("PRAGMA integrity_check")).scalar() == "ok"
        assert list(conn.execute(text("PRAGMA foreign_key_check"))) == []
    eng.dispose()


def test_sqlite_fast_schedule_writes_what_the_core_path_writes(tmp_path: Path) -> None:
    eng = make_engine(f"sqlite:///{tmp_path / 'schedule.db'}")
    factory = session_factory(eng)
    params, tc = {"rows": 4, "nested": {"a": [1, 2]}}, {"move_time": 0.5, "margin": 0.05}
    created = []
    for fast in (True, False):
        with factory.begin() as s:
            versions = _pending_match(s, players=3)[1]
            tournament = Tournament(
                game="coins", params={}, time_control={}, format="round-robin", settings={}, seed=1
            )
            s.add(tournament)
            s.flush()
            schedule = [
                (r, 1000 + r, "1 2" if r % 2 else "", "3" if r == 2 else None, versions[r % 3 :])
                for r in range(3)
            ]
            ids = insert_schedule(s, tournament.id, "coins", params, tc, 3, schedule, fast=fast)
            assert len(ids) == 3 and ids == sorted(ids)
            created.append((tournament.id, ids))
    with eng.connect() as conn:

        def rows(tid: int, ids: list[int]) -> list[tuple[Any, ...]]:
            matches = conn.exec_driver_sql(
                "SELECT id, round, game, params, typeof(params), time_control, players, seed,"
                " opening, start_position, status, final_position, termination, started"
                " FROM matches WHERE tournament_id = ? ORDER BY id",
                (tid,),
            )
            out = []
            for match_id, *rest in matches:
                assert match_id == ids[len(out)]  # ids returned in schedule order
                seats = conn.exec_driver_sql(
                    "SELECT seat, players, bot_version_id, rank FROM seats"
                    " WHERE match_id = ? ORDER BY seat",
                    (match_id,),
                )
                out.append((*rest, [tuple(r) for r in seats]))
            return out

        fast_rows, core_rows = (rows(tid, ids) for tid, ids in created)
        assert fast_rows == core_rows
        assert [len(r[-1]) for r in fast_rows] == [3, 2, 1]
    eng.dispose()


def test_sqlite_fast_path_writes_what_the_core_path_writes(tmp_path: Path) -> None:
    eng = make_engine(f"sqlite:///{tmp_path / 'fast.db'}")
    factory = session_factory(eng)
    record = make_record(plies=5)
    ids = []
    for fast in (True, False):
        with factory.begin() as s:
            match, versions = _pending_match(s)
            s.add_all(
                Seat(match_id=match.id, players=2, seat=i, bot_version_id=v)
                for i, v in enumerate(versions)
            )
            s.add(Move(match_id=match.id, ply=9, seat=0, move="stale", time_ms=1.0))
            s.flush()
            assert complete_match(s, match.id, record, versions, fast=fast)
            assert not complete_match(s, match.id, record, versions, fast=fast)  # done already
            ids.append(match.id)
    with eng.connect() as conn:

        def rows(sql: str, mid: int) -> list[tuple[Any, ...]]:
            return [tuple(r) for r in conn.exec_driver_sql(sql, (mid,))]

        for sql in (
            "SELECT typeof(started), * FROM matches WHERE id = ?",
            "SELECT seat, utility, rank, score, fault, typeof(fault) FROM seats"
            " WHERE match_id = ? ORDER BY seat",
            "SELECT ply, seat, move, time_ms, info, typeof(info), forced FROM moves"
            " WHERE match_id = ? ORDER BY ply",
        ):
            fast_rows, core_rows = rows(sql, ids[0]), rows(sql, ids[1])
            if sql.startswith("SELECT typeof(started), *"):
                fast_rows = [r[:1] + r[2:] for r in fast_rows]  # without the id
                core_rows = [r[:1] + r[2:] for r in core_rows]
            assert fast_rows == core_rows
    with factory() as s:
        loaded = [load_match(s, mid) for mid in ids]
        a, b = (record_of(m).to_dict() for m in loaded if m is not None)
    assert a == b and [m["move"] for m in a["moves"]] == ["1", "2", "1", "2", "1"]
    eng.dispose()


def test_versions_for_finds_or_adds_each_version_once(factory: sessionmaker[Session]) -> None:
    def ref(name: str, source: str) -> BotRef:
        return BotRef(name, "module", f"{name}.py", source, sha256_text(source))

    with factory.begin() as s:
        stored = register_bot_version(s, "old", ref("old", "v1"))[0].id
    field = [ref("old", "v1"), ref("new", "n1"), ref("changed", "c1")]
    with factory.begin() as s:
        register_bot_version(s, "changed", ref("changed", "c0"))  # another version is stored
        first = [v.id for v in versions_for(s, field)]
    with factory.begin() as s:
        again = [v.id for v in versions_for(s, field)]
        one_by_one = [version_for(s, r).id for r in field]
        rows = s.execute(select(Bot.name, BotVersion.sha256).join(BotVersion.bot)).all()
    assert first[0] == stored and first == again == one_by_one
    assert sorted(rows) == sorted(
        [(r.name, r.sha256) for r in field] + [("changed", sha256_text("c0"))]
    )
