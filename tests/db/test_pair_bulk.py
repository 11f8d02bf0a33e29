"""The pair totals read in bulk (``rated_sql.BULK_FROM`` rows and more: each column one text
of numbers, ``PairColumns.of_texts``) against the same rows read a tuple at a time
(``PairColumns.of_rows``), on SQLite (``sqlite3`` and SQLAlchemy) and PostgreSQL (psycopg and
SQLAlchemy): the same columns, in the same order, the levels coded alike (issue 29)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import insert

from bot_arena.db import rated_sql, results
from bot_arena.db.models import Bot, BotVersion, PairTotal, Tournament
from bot_arena.db.pg_read import open_reads as open_pg_reads
from bot_arena.db.rated_sql import PairColumns, RatedReads
from bot_arena.db.session import make_engine, session_factory
from bot_arena.db.sqlite_read import open_reads
from tests.db.dbtest import BACKENDS, example_database
from tests.db.test_pair_columns import LEVELS, held, row

VERSIONS = 6


def texts(rows: list[tuple[Any, ...]], code: Callable[[str | None], int]) -> list[str]:
    """``BULK_ROWS``' texts of ``rows`` (the level coded by ``code``)."""
    coded = [(a, b, code(level), w, d, lost) for a, b, level, w, d, lost in rows]
    return [",".join(str(r[c]) for r in coded) for c in range(6)]


def known(level: str | None) -> int:
    return LEVELS.index(level)  # what BULK_ROWS' CASE gives: 0 NULL, then LEVELS' order


@settings(deadline=None)  # the first example loads numpy
@given(rows=st.lists(row, max_size=20))
def test_the_texts_give_the_columns_the_rows_give(rows: list[tuple[Any, ...]]) -> None:
    bulk = PairColumns.of_texts(len(rows), texts(rows, known))
    assert bulk is not None
    assert held(bulk) == held(PairColumns.of_rows(rows))  # levels first seen first, too


def test_texts_that_do_not_hold_the_rows_give_none() -> None:
    rows = [(1, 2, "confined", 3, 0, 1), (2, 1, None, 0, 1, 0)]
    good = texts(rows, known)
    assert PairColumns.of_texts(3, good) is None  # a number short
    assert PairColumns.of_texts(2, good[:5]) is None  # a column short
    assert PairColumns.of_texts(2, texts(rows, lambda level: -1 if level else 0)) is None


# -- on databases ----------------------------------------------------------------------------

stored = st.dictionaries(
    st.tuples(
        st.sampled_from([None, 1, 2]),  # tournament (None: outside one)
        st.sampled_from(["coins", "nim"]),
        st.integers(1, VERSIONS),
        st.integers(1, VERSIONS),
        st.sampled_from([*LEVELS, "legacy"]),  # "legacy": a level the bulk read does not know
    ),
    st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)),  # zeros: left out
    max_size=40,
)
Stored = dict[tuple[int | None, str, int, int, str | None], tuple[int, int, int]]


def fill(url: str, totals: Stored) -> None:
    """Bots, versions, two tournaments and the ``totals`` rows of ``pair_totals`` as given."""
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(
                insert(Bot), [{"id": i, "name": f"bot{i}"} for i in range(1, VERSIONS + 1)]
            )
            conn.execute(
                insert(BotVersion),
                [
                    {"id": i, "bot_id": i, "kind": "builtin", "target": f"bot{i}",
                     "sha256": f"{i:064x}"}
                    for i in range(1, VERSIONS + 1)
                ],
            )  # fmt: skip
            conn.execute(
                insert(Tournament),
                [
                    {"id": t, "name": "t", "game": "coins", "format": "round-robin", "seed": 1}
                    for t in (1, 2)
                ],
            )
            for (t, game, a, b, level), (w, d, lost) in totals.items():
                conn.execute(
                    insert(PairTotal),
                    {"tournament_id": t, "game": game, "first_version_id": a,
                     "second_version_id": b, "sandbox": level, "wins": w, "draws": d,
                     "losses": lost},
                )  # fmt: skip
    finally:
        engine.dispose()


@contextmanager
def every_reads(url: str, kind: str) -> Iterator[list[RatedReads]]:
    """The reads of each way in: the driver alone (``sqlite3``, psycopg) and SQLAlchemy's."""
    opened = open_reads(url) if kind == "sqlite" else open_pg_reads(url)
    assert opened is not None
    engine = make_engine(url, read_only=True)
    try:
        with session_factory(engine)() as session:
            yield [opened[1], results.reads_of(session)]
    finally:
        opened[0].close()
        engine.dispose()


SELECTIONS = [(None, None), (None, "coins"), (None, "nim"), (1, None), (2, "coins")]


@pytest.mark.slow  # generated databases on both backends
@pytest.mark.parametrize("kind", BACKENDS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(totals=stored)
def test_bulk_reads_give_the_rows_columns(kind: str, totals: Stored) -> None:
    """Every selection (one scope, several, none) read in bulk and row by row: the same
    columns; only a level the bulk read does not know (or nothing to read) goes row by row."""
    with example_database(kind) as url:
        fill(url, totals)
        with every_reads(url, kind) as ways:
            for reads in ways:
                for tournament, game in SELECTIONS:
                    by_rows, in_bulk, row_reads = both_ways(reads, tournament, game)
                    assert held(in_bulk) == held(by_rows)
                    counting = [
                        key
                        for key, counts in totals.items()
                        if (tournament is None or key[0] == tournament)
                        and (game is None or key[1] == game)
                        and sum(counts) > 0
                    ]
                    unknown = any(key[4] == "legacy" for key in counting)
                    assert bool(row_reads) == (unknown or not counting)


def both_ways(
    reads: RatedReads, tournament: int | None, game: str | None
) -> tuple[PairColumns, PairColumns, int]:
    """The selection's columns read row by row, then in bulk, and how many times the bulk
    read fell back on ``of_rows``."""
    row_reads = []
    by_rows = PairColumns.of_rows

    def counted(rows: Any) -> PairColumns:
        row_reads.append(1)
        return by_rows(rows)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rated_sql, "BULK_FROM", 10**9)
        one = reads.pair_columns(tournament_id=tournament, game=game)
        patch.setattr(rated_sql, "BULK_FROM", 0)
        patch.setattr(PairColumns, "of_rows", counted)
        other = reads.pair_columns(tournament_id=tournament, game=game)
    return one, other, len(row_reads)
