"""``PairColumns.of_rows``: the pair totals' rows held as machine-integer columns, filled in
chunks from the cursor (issue 29), say exactly what the rows said, across chunk boundaries."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot_arena.db import rated_sql
from bot_arena.db.rated_sql import PairColumns

LEVELS = [None, "confined", "partial", "off"]

row = st.tuples(
    st.integers(1, 2**40),
    st.integers(1, 2**40),
    st.sampled_from(LEVELS),
    st.integers(0, 2**40),
    st.integers(0, 2**40),
    st.integers(0, 2**40),
)


def held(found: PairColumns) -> tuple[list[tuple[Any, ...]], tuple[str | None, ...]]:
    """The columns as rows, and the levels in their codes' order."""
    rows = zip(
        found.first,
        found.second,
        map(found.level_of, range(len(found.first))),
        found.wins,
        found.draws,
        found.losses,
        strict=True,
    )
    return list(rows), found.levels


def once(rows: list[tuple[Any, ...]]) -> Iterator[Sequence[Any]]:
    """The rows as a cursor gives them: an iterator, read once."""
    yield from rows


@given(chunk=st.sampled_from([1, 3, 4096]), rows=st.lists(row, max_size=20))
def test_the_columns_are_the_rows_transposed(chunk: int, rows: list[tuple[Any, ...]]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rated_sql, "CHUNK_ROWS", chunk)  # 1 and 3: many chunks, a partial last
        found = PairColumns.of_rows(once(rows))
    columns = (found.first, found.second, found.wins, found.draws, found.losses)
    assert all(isinstance(c, array) and c.typecode == "q" for c in columns)
    as_rows, levels = held(found)
    assert as_rows == rows
    assert list(levels) == list(dict.fromkeys(r[2] for r in rows))  # first seen first


def test_no_rows_make_empty_columns() -> None:
    found = PairColumns.of_rows(once([]))
    assert not found.first and not found.wins and found.levels == ()
