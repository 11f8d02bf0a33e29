"""Reading the JSON columns back: one decoder for every stored JSON value.

A database file may come from someone else, so what a JSON column holds is checked like any
input: text that is not JSON (or nested beyond Python's recursion limit) and a value of the
wrong shape (a list where an object belongs) raise :class:`StoredDataError`, one line, instead
of a ``JSONDecodeError`` deep in a command. Every JSON column of ``models`` is a
:class:`StoredJSON`, so the ORM and plain ``select`` alike decode through :func:`decode`.

Readers that summarise many matches select a column through :func:`lenient` instead: a
malformed value comes back as a :class:`Malformed` marker, and the reader skips that match and
says so (:func:`warn_skipped`) rather than refusing the whole table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sqlalchemy import JSON, ColumnElement, Dialect, type_coerce
from sqlalchemy.orm import Session
from sqlalchemy.types import TypeDecorator

from bot_arena.db.decode import Malformed as Malformed
from bot_arena.db.decode import StoredDataError as StoredDataError
from bot_arena.db.decode import decode as decode
from bot_arena.db.decode import decode_as
from bot_arena.db.decode import malformed_matches as malformed_matches
from bot_arena.db.decode import warn_skipped as warn_skipped

T = TypeVar("T")


class StoredJSON(TypeDecorator[Any]):
    """A JSON column whose values are read through :func:`decode` (``shape``: dict or list;
    ``none_as_null``: SQL NULL for None, and None is then a valid value)."""

    impl = JSON
    cache_ok = True

    def __init__(
        self, shape: type = dict, *, what: str = "", none_as_null: bool = False, lax: bool = False
    ):
        super().__init__(none_as_null=none_as_null)
        self.shape = shape
        self.what = what
        self.nullable = none_as_null
        self.lax = lax

    def result_processor(self, dialect: Dialect, coltype: Any) -> Any:
        text = dialect.name == "sqlite"  # other drivers parse JSON themselves
        shape, nullable, lax, what = self.shape, self.nullable, self.lax, self.what

        def process(value: Any) -> Any:
            try:
                return decode_as(what, value, shape, nullable=nullable, text=text)
            except StoredDataError as err:
                if lax:
                    return Malformed(str(err))
                raise

        return process


def lenient(column: Any) -> ColumnElement[Any]:
    """``column`` (a StoredJSON column) read with a :class:`Malformed` marker in place of a
    malformed value, for readers that skip a bad match instead of failing."""
    kind: StoredJSON = column.type
    lax = StoredJSON(kind.shape, what=kind.what, none_as_null=kind.nullable, lax=True)
    return type_coerce(column, lax)


def at_match(err: Exception, match_id: int) -> StoredDataError:
    """``err`` (met reading a stored match) as a StoredDataError naming the match."""
    return StoredDataError(f"match {match_id}: {err}")


def load_each(
    session: Session, ids: Sequence[int], load: Callable[[Sequence[int]], list[T]]
) -> list[T]:
    """``load(ids)``; when a malformed value stops it, each half of ``ids`` again, down to the
    ids that fail alone, which are left out (and said, :func:`warn_skipped`): a listing goes on
    without the bad matches. Halving finds one bad match among n in about 2 log2(n) loads,
    where loading each id alone took n + 1 (each with its seats, versions and bots: a page of
    a thousand matches read a thousand times). ``load`` gives its matches in the order of
    ``ids``, so the halves' join is the order the whole would have had."""
    try:
        return load(ids)
    except StoredDataError as err:
        session.rollback()
        if len(ids) == 1:
            warn_skipped(ids[0], err)
            return []
    half = len(ids) // 2
    return load_each(session, ids[:half], load) + load_each(session, ids[half:], load)
