"""``db/sqlite_play.py``: ``arena play``'s match stored in a plain SQLite file through
``sqlite3`` alone writes the rows ``db.store.save_match`` writes (every column as SQLite stores
it), takes only the plain case, and leaves SQLAlchemy unloaded."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot_arena.arena.match.botref import BotRef, sha256_text
from bot_arena.arena.match.record import MatchRecord
from bot_arena.db import sqlite_play
from bot_arena.db.session import make_engine, session_factory
from bot_arena.db.sqlite_play import PlainStore, open_plain_store
from bot_arena.db.store import save_match
from tests.db.written_records import written_record

WRITTEN = ("bots", "bot_versions", "matches", "seats", "moves", "pair_totals", "seat_totals")
# the rows of MATCHES: pair totals for the two-player matches, seat totals for a tournament's
COUNTS = [4, 5, 4, 9, 14, 3, 0]
CREATED = re.compile(r"'\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}'")  # SQLAlchemy's DATETIME text


def _record(names: list[str], plies: int, *, shift: float, **extra: Any) -> MatchRecord:
    return written_record(
        names,
        plies,
        tc={"move_time": 0.5, "margin": 0.05},
        params={"coins": 4, "nested": {"a": [1, 2.5, None]}, "text": "ü"},
        shift=shift,
        **extra,
    )


def _ref(name: str, version: str, files: tuple[tuple[str, str], ...] = ()) -> BotRef:
    return BotRef(name, "module", f"{name}.py", version, sha256_text(version), files=files)


# each match: its bots (name, source) and record; bots met again, a new version of one, three
# seats, an adjudicated match without a start position, each sandbox level and None
B = _ref("b", "vb", (("helper.py", "X = 1\n"),))  # a bot with a helper module
ADJUDICATED = {"rule": "draw", "scores": [0.5, -1e300]}
MATCHES: list[tuple[list[BotRef], MatchRecord, str | None]] = [
    ([_ref("a", "va"), B], _record(["a", "b"], 5, shift=0), "confined"),
    ([B, _ref("a", "va")], _record(["b", "a"], 0, shift=3), "off"),
    ([_ref("a", "va2"), _ref("c", "vc"), B], _record(["a", "c", "b"], 7, shift=6), "partial"),
    (
        [_ref("c", "vc"), _ref("d", "vd")],
        _record(["c", "d"], 2, shift=9, start_position=None, adjudication=ADJUDICATED),
        None,
    ),
]


def _rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the written tables as SQLite stores it (``quote()`` of each column tells
    text from numbers and reals from integers), the times rows were made masked once they
    are found in SQLAlchemy's text."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    with sqlite3.connect(path) as conn:
        for table in WRITTEN:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            quoted = ", ".join(f"quote({c})" for c in columns)
            rows = []
            for row in conn.execute(f"SELECT {quoted} FROM {table} ORDER BY id"):
                values = list(row)
                if "created" in columns:
                    made = values[columns.index("created")]
                    assert CREATED.fullmatch(made), (table, made)
                    values[columns.index("created")] = "<created>"
                rows.append(tuple(values))
            out[table] = rows
    return out


def _fresh(path: Path) -> str:
    url = f"sqlite:///{path}"
    make_engine(url).dispose()  # made at the newest revision
    return url


def test_a_match_is_stored_as_save_match_stores_it(tmp_path: Path) -> None:
    orm_url, plain_url = _fresh(tmp_path / "orm.db"), _fresh(tmp_path / "plain.db")
    engine = make_engine(orm_url)
    try:
        factory = session_factory(engine)
        for refs, record, level in MATCHES:
            with factory.begin() as session:
                save_match(session, record, refs, sandbox=level)
    finally:
        engine.dispose()
    ids = []
    for refs, record, level in MATCHES:  # a store a match, as `arena play` opens one
        store = open_plain_store(plain_url)
        assert store is not None
        try:
            ids.append(store.save(record, refs, sandbox=level))
        finally:
            store.close()
    assert ids == [1, 2, 3, 4]
    orm, plain = _rows(tmp_path / "orm.db"), _rows(tmp_path / "plain.db")
    assert [len(orm[t]) for t in WRITTEN] == COUNTS  # every table written
    for table in WRITTEN:
        assert plain[table] == orm[table], table


def test_a_failed_write_leaves_nothing(tmp_path: Path) -> None:
    """A match refused by a constraint (a sandbox level not in the schema's list, checked
    after its bots and versions were inserted): the transaction is rolled back whole, no bot,
    version, match, seat or move of it left."""
    url = _fresh(tmp_path / "plain.db")
    store = open_plain_store(url)
    assert store is not None
    refs, record, _ = MATCHES[0]
    with pytest.raises(sqlite3.IntegrityError):
        store.save(record, refs, sandbox="nowhere")  # ck_matches_sandbox
    assert all(not rows for rows in _rows(tmp_path / "plain.db").values())
    # the connection is left with no transaction open: the next match is stored as the first
    assert store.save(record, refs, sandbox="confined") == 1
    store.close()
    assert [len(rows) for rows in _rows(tmp_path / "plain.db").values()] == [2, 2, 1, 2, 5, 1, 0]


def test_only_the_plain_case_is_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = _fresh(tmp_path / "arena.db")
    store = open_plain_store(url)
    assert isinstance(store, PlainStore)
    store.close()
    assert open_plain_store(str(tmp_path / "arena.db")) is not None  # --db FILE
    for other in (
        f"sqlite:///{tmp_path / 'missing.db'}",  # made by the usual open, at the newest revision
        f"sqlite:///{tmp_path / 'arena.db'}?timeout=3",
        "sqlite:///:memory:",
        "postgresql+psycopg://postgres@127.0.0.1:1/test",
    ):
        assert open_plain_store(other) is None, other
    assert not (tmp_path / "missing.db").exists()
    (tmp_path / "empty.db").touch()  # as sqlite3.connect leaves a name it is given
    assert open_plain_store(str(tmp_path / "empty.db")) is None
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE matches (id INTEGER)")
    assert open_plain_store(str(foreign)) is None  # the usual open says why
    older = tmp_path / "older.db"
    older.write_bytes((tmp_path / "arena.db").read_bytes())
    with sqlite3.connect(older) as conn:  # as the usual open would migrate it: not ours to do
        conn.execute("UPDATE alembic_version SET version_num = '0001'")
    assert open_plain_store(str(older)) is None
    with monkeypatch.context() as patch:  # a newer script than the file's revision: migrated
        patch.setattr(sqlite_play, "newest_script", lambda: "9999")
        assert open_plain_store(url) is None
    monkeypatch.setenv("ARENA_DB_TIMEOUT", "0.3")  # the usual open reads it
    assert open_plain_store(url) is None


def test_arena_play_stores_its_match_without_sqlalchemy(tmp_path: Path) -> None:
    """A fresh ``arena play`` into an existing database: the match is stored, and SQLAlchemy
    was never imported (the test's subject is what the process loads)."""
    url = _fresh(tmp_path / "arena.db")
    seen = tmp_path / "loaded.txt"
    code = (
        "import sys; from bot_arena.arena.cli.app import main; "
        "sys.argv = ['arena', *sys.argv[1:]]\n"
        "try:\n    main()\n"
        f"finally:\n    open({str(seen)!r}, 'w').write(str('sqlalchemy' in sys.modules))"
    )
    args = ["play", "tictactoe", "--bot", "random", "--bot", "random:seed=1", "--seed", "2"]
    done = subprocess.run(
        [sys.executable, "-c", code, *args, "--no-show", "--db", url],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("saved as match 1"), done.stdout
    assert seen.read_text() == "False"
    rows = _rows(tmp_path / "arena.db")
    assert [r[3] for r in rows["matches"]] == ["'tictactoe'"] and len(rows["seats"]) == 2
