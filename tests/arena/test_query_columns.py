"""What a leaderboard takes from the pair totals' columns (``ratings/query.py``): the versions
in the order the rows first name them, looked through a chunk at a time and stopped once every
stored version is met, and the games of each sandbox level (issue 29), against the plain
passes over every row."""

from __future__ import annotations

from array import array
from itertools import chain
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot_arena.arena.ratings import query
from bot_arena.db.rated_sql import PairColumns

row = st.tuples(
    st.integers(1, 6),
    st.integers(1, 6),
    st.sampled_from([None, "confined", "partial", "off"]),
    st.integers(0, 5),
    st.integers(0, 5),
    st.integers(0, 5),
)


@given(
    rows=st.lists(row, max_size=30),
    chunk=st.sampled_from([1, 2, 3, 4096]),
    unseen=st.integers(0, 2),  # stored versions no row names
    one_level=st.booleans(),
)
def test_versions_and_level_games_are_every_rows(
    rows: list[tuple[Any, ...]], chunk: int, unseen: int, one_level: bool
) -> None:
    if one_level:
        rows = [(a, b, "confined", w, d, lost) for a, b, _, w, d, lost in rows]
    columns = PairColumns.of_rows(rows)
    named = set(chain.from_iterable((a, b) for a, b, *_ in rows))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(query, "MET_ROWS", chunk)
        met = query._versions_met(columns, len(named) + unseen)
    assert met == list(dict.fromkeys(chain.from_iterable((a, b) for a, b, *_ in rows)))
    sandbox: dict[str | None, int] = {"off": 7}  # adds to what is there
    query._columns(columns, {v: f"bot{v}" for v in named}, sandbox)
    expected: dict[str | None, int] = {"off": 7}
    for _, _, level, w, d, lost in rows:
        expected[level] = expected.get(level, 0) + w + d + lost
    assert sandbox == expected


def test_a_version_first_named_by_the_last_row_is_met() -> None:
    rows = [(1, 2, None, 1, 0, 0)] * 5 + [(2, 3, None, 0, 1, 0)]
    columns = PairColumns(*(array("q", c) for c in ((1,) * 5 + (2,), (2,) * 5 + (3,))),
                          array("q", [0] * 6), (None,),
                          *(array("q", [r[i] for r in rows]) for i in (3, 4, 5)))  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(query, "MET_ROWS", 2)
        assert query._versions_met(columns, 3) == [1, 2, 3]
