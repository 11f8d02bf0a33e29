"""``arena export -f json/jsonl`` builds each match's JSON from its stored values
(``formats.json_rows``); the text must be byte for byte what the record-based writer gives
(``strict_text`` of the record's dict), on both backends, for every field a record can hold:
faults with evidence, adjudication, search info of any JSON shape, forced moves, many seats,
any text; and a value that writer does not take (an older database's NaN, a malformed value)
leaves the chunk to the record-based writer."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from bot_arena.arena.formats.export import ExportNotes, _record_dict, export_text, strict_text
from bot_arena.arena.formats.json_rows import Canonical, match_json
from bot_arena.arena.match.botref import BotRef, sha256_text
from bot_arena.arena.match.record import Fault, MatchRecord, MoveRecord, SeatResult, Termination
from bot_arena.db.exported import ExportFilter, exported_matches, stored_chunks
from bot_arena.db.models import Base
from bot_arena.db.session import make_engine, session_factory
from bot_arena.db.store import save_match
from tests.db.dbtest import BACKENDS, database

# generated records stored and exported on both backends: about a second a test
pytestmark = pytest.mark.slow

TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=8)
FINITE = st.floats(allow_nan=False, allow_infinity=False)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | FINITE | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
OBJECT = st.dictionaries(TEXT, JSON, max_size=3)
TERMINATION = st.sampled_from(list(Termination))
FAULT = st.builds(Fault, TERMINATION, TEXT, st.dictionaries(TEXT.filter(str.isalpha), JSON))


@st.composite
def records(draw: st.DrawFn) -> tuple[MatchRecord, list[BotRef]]:
    seats = draw(st.integers(1, 4))
    names = draw(st.lists(TEXT.filter(str.strip), min_size=seats, max_size=seats, unique=True))
    refs = [BotRef(n, "builtin", n, None, sha256_text(n)) for n in names]
    started = draw(st.floats(0.0, 4e9))
    moves = draw(
        st.lists(
            st.builds(
                MoveRecord,
                st.integers(0, seats - 1),
                TEXT,
                st.floats(0.0, 1e9),
                st.none() | OBJECT,
                st.booleans(),
            ),
            max_size=6,
        )
    )
    record = MatchRecord(
        game=draw(TEXT),
        params=draw(OBJECT),
        start_position=draw(TEXT),
        seats=[
            SeatResult(
                n,
                draw(FINITE),
                draw(st.integers(1, seats)),
                draw(st.floats(0.0, 1.0)),
                draw(st.none() | FAULT),
                r.sha256,
            )
            for n, r in zip(names, refs, strict=True)
        ],
        moves=moves,
        termination=draw(TERMINATION),
        final_position=draw(TEXT),
        started=started,
        finished=started + draw(st.floats(0.0, 1e5)),
        time_control=draw(OBJECT),
        adjudication=draw(st.none() | OBJECT),
    )
    return record, refs


# The fixture's database opened once a test (by make_engine, as a command opens it) and kept
# for its examples' stores and exports: on PostgreSQL two new engines an example (each
# connecting and reading the server's settings) were a third of the test's CPU
_opened: dict[str, Engine] = {}


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path, ready=True) as address:
        _opened[address] = make_engine(address)
        try:
            yield address
        finally:
            _opened.pop(address).dispose()


@contextmanager
def opened(address: str) -> Iterator[Engine]:
    """The fixture's engine on ``address``, else one made for this use and disposed after it."""
    if address in _opened:
        yield _opened[address]
        return
    engine = make_engine(address)
    try:
        yield engine
    finally:
        engine.dispose()


def exported_both_ways(
    address: str,
    fmt: str,
    by_records: Callable[[Session, ExportFilter], str],
    by_rows: Callable[..., object | None],
) -> tuple[str, str, int]:
    """(the export's text in ``fmt``, the record-based writer's (``by_records``), matches the
    stored-rows writer (``by_rows``: None for a row it does not take) took)."""
    with opened(address) as engine, session_factory(engine)() as session:
        where = ExportFilter()
        fast = "".join(export_text(fmt, session, where, ExportNotes(), str))
        slow = by_records(session, where)
        canonical = Canonical()
        taken = sum(
            by_rows(row, chunk.seats[row[0]], chunk.moves[row[0]], canonical) is not None
            for chunk in stored_chunks(session, where)
            for row in chunk.matches
        )
    return fast, slow, taken


def both_ways(address: str) -> tuple[str, str, int]:
    """(the export's JSON Lines, the record-based writer's, matches the fast writer took)."""

    def by_records(session: Session, where: ExportFilter) -> str:
        return "".join(
            strict_text(_record_dict(m)) + "\n" for m in exported_matches(session, where)
        )

    return exported_both_ways(address, "jsonl", by_records, match_json)


def emptied(url: str) -> None:
    """Every row of the fixture's database deleted (its schema kept), for a hypothesis example
    of its own: the examples of a test once piled up in one database, so each example exported
    every match of the ones before it too (about 80 on average, against the 1 to 4 it drew: well
    under one chunk of ``EXPORT_CHUNK``, so no shape that one example lacks), two thirds of this
    file's CPU."""
    with opened(url) as engine, engine.begin() as conn:
        # DELETE, not PostgreSQL's TRUNCATE: a few rows, and a TRUNCATE makes every table's
        # files anew (it took the server more wall time than the exports it saved)
        for table in reversed(Base.metadata.sorted_tables):
            conn.execute(table.delete())


def store_all(url: str, matches: list[tuple[MatchRecord, list[BotRef]]]) -> int:
    """Store ``matches``; how many matches the database held before."""
    with opened(url) as engine, session_factory(engine).begin() as session:
        before = sum(1 for _ in exported_matches(session, ExportFilter()))
        for record, refs in matches:
            save_match(session, record, refs)
    return before


@settings(
    max_examples=40,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(records(), min_size=1, max_size=4), st.booleans())
def test_the_rows_json_is_the_records_byte_for_byte(
    url: str, matches: list[tuple[MatchRecord, list[BotRef]]], in_tournament: bool
) -> None:
    emptied(url)
    before = store_all(url, matches)
    fast, slow, taken = both_ways(url)
    assert fast == slow
    assert taken == before + len(matches)  # every match of Bot Arena's shape took the fast way


def test_a_stored_negative_zero_reads_as_zero_either_way(url: str) -> None:
    """PostgreSQL keeps -0.0 (SQLite stores it as 0); the record reads ``utility or 0.0``, so
    the rows writer must write 0.0 too (CI found this on PostgreSQL)."""
    refs = [BotRef(n, "builtin", n, None, sha256_text(n)) for n in ("a", "b")]
    seats = [SeatResult("a", -0.0, 1, 0.5, None, refs[0].sha256), SeatResult("b", 0.0, 1, 0.5)]
    record = MatchRecord("tictactoe", {}, "", seats, [], Termination.NORMAL, "x", 1.0, 2.0)
    engine = make_engine(url)
    try:
        with session_factory(engine).begin() as session:
            save_match(session, record, refs)
    finally:
        engine.dispose()
    fast, slow, taken = both_ways(url)
    assert fast == slow and taken == 1
    assert '"utility": 0.0' in fast and '"utility": -0.0' not in fast


def one_match(address: str) -> None:
    refs = [BotRef(n, "builtin", n, None, sha256_text(n)) for n in ("a", "b")]
    record = MatchRecord(
        "tictactoe",
        {},
        "",
        [SeatResult("a", 1.0, 1, 1.0, None, refs[0].sha256), SeatResult("b", -1.0, 2, 0.0)],
        [MoveRecord(0, "4", 1.5, {"depth": 3}), MoveRecord(1, "0", 2.5, None)],
        Termination.NORMAL,
        "x",
        1_700_000_000.25,
        1_700_000_001.5,
    )
    engine = make_engine(address)
    with session_factory(engine).begin() as session:
        for _ in range(3):
            save_match(session, record, refs)
    engine.dispose()


@pytest.mark.parametrize(
    ("change", "taken"),
    [
        ('UPDATE moves SET info = \'{"score": NaN, "depth": 2}\' WHERE match_id = 2', 3),
        ("UPDATE moves SET time_ms = 'slow' WHERE match_id = 2 AND ply = 1", 2),
        ("UPDATE matches SET started = '2024-05-01 10:00:00' WHERE id = 2", 2),
        ("UPDATE seats SET utility = NULL, rank = NULL, score = NULL WHERE match_id = 2", 3),
        ("UPDATE seats SET fault = '{}' WHERE match_id = 2", 3),
        ("UPDATE moves SET forced = 1 WHERE match_id = 2", 3),
    ],
)
def test_what_the_rows_writer_does_not_take_is_written_from_the_records(
    tmp_path: Path, change: str, taken: int
) -> None:
    address = f"sqlite:///{tmp_path / 'arena.db'}"
    one_match(address)
    with sqlite3.connect(tmp_path / "arena.db") as conn:
        conn.execute(change)
    fast, slow, took = both_ways(address)
    assert fast == slow and fast.count("\n") == 3
    assert took == taken


def test_an_older_databases_nan_is_null_either_way(tmp_path: Path) -> None:
    address = f"sqlite:///{tmp_path / 'arena.db'}"
    one_match(address)
    with sqlite3.connect(tmp_path / "arena.db") as conn:
        conn.execute("UPDATE moves SET info = '{\"score\": NaN}' WHERE match_id = 1 AND ply = 0")
    fast, _, _ = both_ways(address)
    assert '"info": {"score": null}' in fast.splitlines()[0]
