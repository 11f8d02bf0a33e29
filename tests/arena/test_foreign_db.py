"""A database file someone sent is data, not code (issue 27), through the real command line.

Each hostile file is a real arena database (a short ``arena play`` or tournament) that the test
then changes with sqlite3: a trigger, a view, a table defined otherwise, malformed JSON. Every
refusal is one line and exit 2, within a bounded time, with nothing of the file's run (its
trigger's log stays empty) and nothing written where nothing should be (the file's bytes and
mtime)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from bot_arena.db.sqlite_open import newest_script
from tests.arena.test_db_errors import one_line, run

pytestmark = pytest.mark.slow

TIMEOUT = 120  # seconds a test may take: every command here ends quickly, or it is a bug


def arena_db(folder: Path, games: int = 0) -> Path:
    """A real arena database: one ``arena play`` (or a tournament of ``games``)."""
    db = folder / "their.db"
    if games:
        args = ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1"]
        args += ["--games", str(games), "--jobs", "1"]
    else:
        args = ["play", "tictactoe", "--no-show", "--seed", "1"]
    proc = run(*args, "--db", str(db), cwd=folder)
    assert proc.returncode == 0, proc.stderr
    return db


def sql(db: Path, script: str) -> None:
    conn = sqlite3.connect(db)
    try:
        conn.executescript(script)
        conn.commit()
    finally:
        conn.close()


def query(db: Path, text: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return list(conn.execute(text))
    finally:
        conn.close()


def state(db: Path) -> tuple[bytes, int]:
    """What must not change: the file's bytes and its mtime."""
    return db.read_bytes(), db.stat().st_mtime_ns


LOGGED = "CREATE TABLE log(what TEXT);"
READS = (
    ["leaderboard"],
    ["crosstable"],
    ["matches"],
    ["replay", "1"],
    ["export", "--format", "json"],
    ["tournament", "list"],
    ["bots", "list"],
    ["db", "check"],
)


@pytest.mark.timeout(TIMEOUT * 3)
def test_a_trigger_on_seats_is_refused_by_name_and_never_runs(tmp_path: Path) -> None:
    db = arena_db(tmp_path)
    sql(
        db,
        LOGGED + "CREATE TRIGGER lie AFTER INSERT ON seats BEGIN "
        "INSERT INTO log VALUES ('ran'); UPDATE seats SET rank = 1, score = 0.5; END;",
    )
    before = state(db)
    line = one_line(run("play", "tictactoe", "--no-show", "--db", str(db), cwd=tmp_path))
    assert "is not an arena database" in line and "trigger 'lie'" in line, line
    for args in (*READS, ["db", "upgrade"], ["report", "-o", str(tmp_path / "r.html")]):
        line = one_line(run(*args, "--db", str(db), cwd=tmp_path))
        assert "trigger 'lie'" in line, (args, line)
    assert query(db, "SELECT count(*) FROM log") == [(0,)]
    assert query(db, "SELECT count(*) FROM matches") == [(1,)]
    assert state(db) == before
    assert not (tmp_path / "r.html").exists()


@pytest.mark.timeout(TIMEOUT)
def test_a_trigger_on_the_schema_version_never_runs_on_a_read_or_an_upgrade(
    tmp_path: Path,
) -> None:
    """An older revision with a trigger on alembic_version: the migration would fire it."""
    db = arena_db(tmp_path)
    sql(
        db,
        LOGGED + "UPDATE alembic_version SET version_num = '0008';"
        "CREATE TRIGGER bump AFTER UPDATE ON alembic_version BEGIN "
        "INSERT INTO log VALUES ('ran'); END;",
    )
    before = state(db)
    for args in (["leaderboard"], ["db", "upgrade"], ["play", "tictactoe", "--no-show"]):
        line = one_line(run(*args, "--db", str(db), cwd=tmp_path))
        assert "trigger 'bump'" in line, line
    assert query(db, "SELECT count(*) FROM log") == [(0,)]
    assert state(db) == before


@pytest.mark.timeout(TIMEOUT)
def test_an_endless_trigger_and_view_are_never_run(tmp_path: Path) -> None:
    db = arena_db(tmp_path)
    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
    sql(
        db,
        f"CREATE TRIGGER spin AFTER UPDATE ON alembic_version BEGIN {endless}; END;"
        f"CREATE VIEW forever AS {endless};",
    )
    before = state(db)
    for args in (["leaderboard"], ["db", "upgrade"], ["play", "tictactoe", "--no-show"]):
        line = one_line(run(*args, "--db", str(db), cwd=tmp_path, timeout=TIMEOUT / 4))
        assert "is not an arena database" in line and "nothing in it was run" in line, line
    assert state(db) == before


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize(
    ("change", "named"),
    [
        ("ALTER TABLE bots ADD COLUMN evil INTEGER DEFAULT 7", "table 'bots'"),
        ("CREATE INDEX ix_odd ON moves (abs(time_ms) * 2)", "index 'ix_odd'"),
        ("CREATE TABLE extra (x INTEGER)", "table 'extra'"),
        ("DROP INDEX ix_seats_bot_version", "index 'ix_seats_bot_version' is missing"),
    ],
)
def test_a_table_or_index_that_is_not_ours_is_foreign(
    tmp_path: Path, change: str, named: str
) -> None:
    db = arena_db(tmp_path)
    sql(db, change)
    before = state(db)
    for args in (["leaderboard"], ["play", "tictactoe", "--no-show"]):
        line = one_line(run(*args, "--db", str(db), cwd=tmp_path))
        assert "is not an arena database" in line and named in line, line
    assert state(db) == before


@pytest.mark.timeout(TIMEOUT * 2)
def test_reads_never_migrate_and_open_read_only(tmp_path: Path) -> None:
    """An older schema: reads refuse it with the advice to upgrade and leave the file as it is
    (in rollback-journal mode, so an open for writing would turn it to WAL); ``arena db
    upgrade`` brings it up to date, and then reads work."""
    db = arena_db(tmp_path)
    from bot_arena.db.session import downgrade, make_engine

    engine = make_engine(f"sqlite:///{db}")
    downgrade(engine, "0008")
    engine.dispose()
    sql(db, "PRAGMA journal_mode = DELETE")
    before = state(db)
    for args in READS:
        line = one_line(run(*args, "--db", str(db), cwd=tmp_path))
        assert "older schema (revision 0008)" in line, (args, line)
        assert line.endswith(f"bring it up to date with: arena db upgrade --db sqlite:///{db}")
    assert state(db) == before
    upgraded = run("db", "upgrade", "--db", str(db), cwd=tmp_path)
    assert upgraded.returncode == 0 and f"revision {newest_script()} (latest)" in upgraded.stdout
    sql(db, "PRAGMA journal_mode = DELETE")
    before = state(db)
    listed = run("matches", "--json", "--db", str(db), cwd=tmp_path)
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 1, listed.stderr
    assert state(db) == before


@pytest.mark.timeout(TIMEOUT)
def test_a_read_of_a_wal_database_writes_nothing(tmp_path: Path) -> None:
    """A WAL database with a commit not yet checkpointed into the file: a read opens it
    read-only, beside another process that has it open and alone (a connection that could
    write would checkpoint the WAL into the file as it closes), and the database file's bytes
    and mtime stay as they were."""
    db = arena_db(tmp_path)
    alone = tmp_path / "alone"
    alone.mkdir()
    holder = sqlite3.connect(db)
    try:
        holder.execute("PRAGMA wal_autocheckpoint = 0")
        holder.execute("INSERT INTO bots (name, registered, created) VALUES ('x', 0, '2026-01-01')")
        holder.commit()  # a commit left in the WAL, not yet in the file
        assert Path(f"{db}-wal").stat().st_size > 0 and Path(f"{db}-shm").exists()
        for suffix in ("", "-wal", "-shm"):  # the same files, with nobody holding them
            shutil.copy(f"{db}{suffix}", alone / f"their.db{suffix}")
        for path in (db, alone / "their.db"):
            before = state(path)
            listed = run("bots", "list", "--json", "--db", str(path), cwd=tmp_path)
            assert listed.returncode == 0, listed.stderr
            assert [b["name"] for b in json.loads(listed.stdout)] == [], listed.stdout
            shown = run("matches", "--json", "--db", str(path), cwd=tmp_path)
            assert shown.returncode == 0 and len(json.loads(shown.stdout)) == 1, shown.stderr
            assert state(path) == before, path
    finally:
        holder.close()


@pytest.mark.timeout(TIMEOUT * 3)
def test_malformed_json_names_the_match_or_leaves_it_out_with_a_warning(tmp_path: Path) -> None:
    db = arena_db(tmp_path, games=3)
    sql(
        db,
        "UPDATE seats SET fault = '{bad' WHERE match_id = 1 AND seat = 0;"
        "UPDATE moves SET info = '[1, 2]' WHERE match_id = 2 AND ply = 0;"
        "UPDATE moves SET info = '" + "[" * 100_000 + "' WHERE match_id = 3 AND ply = 1;",
    )
    for match, what in ((1, "seats.fault"), (2, "moves.info"), (3, "moves.info")):
        for flag in ([], ["--json"]):
            line = one_line(run("replay", str(match), *flag, "--db", str(db), cwd=tmp_path))
            assert f"match {match}: {what}: " in line and len(line) < 300, line
    sql(db, "UPDATE moves SET info = NULL WHERE match_id = 3")  # one good match left
    out = tmp_path / "report.html"
    for args in (
        ["leaderboard"],
        ["crosstable"],
        ["matches"],
        ["export", "--format", "json"],
        ["export", "--format", "csv"],
        ["export", "--format", "pgn"],
        ["tournament", "show", "1"],
        ["report", "-o", str(out)],
    ):
        done = run(*args, "--db", str(db), cwd=tmp_path)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr
        warned = [line for line in done.stderr.splitlines() if line.startswith("warning: match")]
        assert any("match 1 left out: seats.fault" in w for w in warned), (args, done.stderr)
    exported = run("export", "--format", "json", "--db", str(db), cwd=tmp_path)
    assert [m["match"] for m in json.loads(exported.stdout)] == [3]


@pytest.mark.timeout(TIMEOUT)
def test_a_json_value_of_the_wrong_shape_is_one_line(tmp_path: Path) -> None:
    db = arena_db(tmp_path)
    sql(db, "UPDATE matches SET params = '[]'")
    line = one_line(run("replay", "1", "--db", str(db), cwd=tmp_path))
    assert "match 1: matches.params: a stored JSON value is a list, not an object" in line, line
    escape = "\\u001b[2J"  # a terminal's clear-screen, written as JSON escapes it
    sql(
        db,
        "UPDATE matches SET params = '{}';"
        f'UPDATE seats SET fault = \'{{"termination": "{escape}nope"}}\' WHERE seat = 0',
    )
    line = one_line(run("replay", "1", "--db", str(db), cwd=tmp_path))
    assert line.startswith(f"error: database sqlite:///{db}: match 1: fault: unknown"), line
    assert "\x1b" not in line, line


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("sqlite:///file:e.db?mode=memory&uri=true", "take no parameters here (mode, uri)"),
        ("sqlite:///e.db?mode=ro", "take no parameters here (mode)"),
        ("sqlite:///e.db?timeout=1", "take no parameters here (timeout)"),
        ("sqlite://", "is in memory"),
        ("sqlite:///:memory:", "is in memory"),
    ],
)
def test_database_urls_that_would_lose_results_or_be_ignored(
    tmp_path: Path, url: str, said: str
) -> None:
    line = one_line(run("play", "tictactoe", "--no-show", "--db", url, cwd=tmp_path))
    assert said in line, line
    assert list(tmp_path.iterdir()) == []  # nothing stored anywhere


@pytest.mark.timeout(TIMEOUT)
def test_a_read_only_parameter_is_refused_for_reads_too(tmp_path: Path) -> None:
    db = arena_db(tmp_path)
    before = state(db)
    line = one_line(run("leaderboard", "--db", f"sqlite:///{db}?mode=ro", cwd=tmp_path))
    assert "take no parameters here (mode)" in line, line
    assert state(db) == before


@pytest.mark.timeout(TIMEOUT)
def test_a_file_that_is_no_database_gets_no_advice_to_run_tools_on_it(tmp_path: Path) -> None:
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n" * 20)
    before = state(secret)
    for args in (["leaderboard"], ["play", "tictactoe", "--no-show"], ["db", "upgrade"]):
        line = one_line(run(*args, "--db", f"sqlite:///{secret}", cwd=tmp_path))
        assert line.endswith("is not an arena database (file is not a database)"), line
        assert "sqlite3" not in line and ".recover" not in line
    assert state(secret) == before


@pytest.mark.timeout(TIMEOUT)
def test_a_long_url_is_quoted_short(tmp_path: Path) -> None:
    url = "sqlite:///x.db?" + "&".join(f"p{i}=1" for i in range(2000))
    line = one_line(run("leaderboard", "--db", url, cwd=tmp_path))
    assert len(line) < 400 and "…" in line, line[:500]
