"""``arena export -f csv`` builds each row from the stored values (``formats.csv_stored``): the
text must be byte for byte what the record-based writer (``export.csv_rows``) gives, on both
backends, for generated matches of every field (any text, many seats, faults, missing times);
and a chunk holding a value that writer does not take is written from the records."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy.orm import Session

from bot_arena.arena.formats.csv_stored import csv_cells
from bot_arena.arena.formats.export import _chunked, csv_rows
from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.record import MatchRecord
from bot_arena.db.exported import ExportFilter, exported_matches
from tests.arena.test_export_json_rows import (
    emptied,
    exported_both_ways,
    one_match,
    records,
    store_all,
)
from tests.arena.test_export_json_rows import url as url  # the fixture: both backends


def both_ways(address: str) -> tuple[str, str, int]:
    """(the export's CSV, the record-based writer's, matches the stored-rows writer took)."""

    def by_records(session: Session, where: ExportFilter) -> str:
        return "".join(_chunked(csv_rows(exported_matches(session, where))))

    return exported_both_ways(address, "csv", by_records, csv_cells)


@settings(
    max_examples=40,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(records(), min_size=1, max_size=4))
def test_the_rows_csv_is_the_records_byte_for_byte(
    url: str, matches: list[tuple[MatchRecord, list[BotRef]]]
) -> None:
    emptied(url)  # each example's matches alone (see emptied)
    before = store_all(url, matches)
    fast, slow, taken = both_ways(url)
    assert fast == slow
    assert fast.count("\n") >= before + len(matches) + 1  # the header and a row a match at least
    assert taken == before + len(matches)  # every match of Bot Arena's shape took the fast way


@pytest.mark.parametrize(
    ("change", "taken"),
    [
        ("UPDATE moves SET time_ms = 'slow' WHERE match_id = 2 AND ply = 1", 2),
        ("UPDATE matches SET started = '2024-05-01 10:00:00' WHERE id = 2", 2),
        ("UPDATE matches SET params = '[]' WHERE id = 2", 2),
        ("UPDATE seats SET utility = NULL, rank = NULL, score = NULL WHERE match_id = 2", 3),
        ("UPDATE matches SET started = NULL WHERE id = 2", 3),
    ],
)
def test_what_the_rows_writer_does_not_take_is_written_from_the_records(
    tmp_path: Path, change: str, taken: int, capsys: pytest.CaptureFixture[str]
) -> None:
    address = f"sqlite:///{tmp_path / 'arena.db'}"
    one_match(address)
    with sqlite3.connect(tmp_path / "arena.db") as conn:
        conn.execute(change)
    fast, slow, took = both_ways(address)
    assert fast == slow
    assert took == taken
    if "params" in change:  # malformed: left out and said, as every listing does
        assert fast.count("\n") == 3 and "match 2" in capsys.readouterr().err
    else:
        assert fast.count("\n") == 4
