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

import json
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import JSON, ColumnElement, Dialect, type_coerce
from sqlalchemy.orm import Session
from sqlalchemy.types import TypeDecorator

SHOWN = 40  # characters of a malformed value quoted in a message
T = TypeVar("T")


class StoredDataError(ValueError):
    """A stored value that is not what Bot Arena writes (one line for the user)."""


@dataclass(frozen=True, slots=True)
class Malformed:
    """What :func:`lenient` columns hold in place of a malformed value: why it is refused."""

    reason: str


def _quote(text: str) -> str:
    cut = text[:SHOWN]
    shown = "".join(c if c.isprintable() else "?" for c in cut)
    return repr(shown + ("…" if len(text) > SHOWN else ""))


def decode(value: Any, shape: type, *, nullable: bool, text: bool) -> Any:
    """``value`` as read from the driver (``text``: JSON text to parse, as SQLite gives it; else
    a value the driver already parsed, as PostgreSQL's does), checked to be a ``shape`` (dict or
    list) or, when ``nullable``, None. StoredDataError otherwise."""
    if value is None:
        if nullable:
            return None
        raise StoredDataError("a stored JSON value is missing")
    if text:
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        if not isinstance(value, str):
            raise StoredDataError(f"a stored JSON value is a {type(value).__name__}, not text")
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            raise StoredDataError(f"a stored value is not JSON: {_quote(value)}") from None
    if value is None and nullable:
        return None
    if not isinstance(value, shape):
        raise StoredDataError(
            f"a stored JSON value is {_kind(value)}, not {_kind(shape())}: "
            f"{_quote(json.dumps(value, default=str))}"
        )
    return value


_KINDS: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}


def _kind(value: object) -> str:
    return _KINDS.get(type(value), "a scalar")


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
                return decode(value, shape, nullable=nullable, text=text)
            except StoredDataError as err:
                reason = f"{what}: {err}" if what else str(err)
                if lax:
                    return Malformed(reason)
                raise StoredDataError(reason) from None

        return process


def lenient(column: Any) -> ColumnElement[Any]:
    """``column`` (a StoredJSON column) read with a :class:`Malformed` marker in place of a
    malformed value, for readers that skip a bad match instead of failing."""
    kind: StoredJSON = column.type
    lax = StoredJSON(kind.shape, what=kind.what, none_as_null=kind.nullable, lax=True)
    return type_coerce(column, lax)


def warn_skipped(match_id: int, reason: object) -> None:
    """Say on stderr that a match is left out of a summary because of a malformed value (the
    db layer's one message to the user: a summary goes on without the match)."""
    print(f"warning: match {match_id} left out: {reason}", file=sys.stderr)


def at_match(err: Exception, match_id: int) -> StoredDataError:
    """``err`` (met reading a stored match) as a StoredDataError naming the match."""
    return StoredDataError(f"match {match_id}: {err}")


def malformed_matches(values: Iterable[tuple[int, object]]) -> set[int]:
    """The matches with a malformed value among (match id, value) pairs read through
    :func:`lenient`, each said once (:func:`warn_skipped`): a summary leaves them out."""
    bad: set[int] = set()
    for match_id, value in values:
        if isinstance(value, Malformed) and match_id not in bad:
            bad.add(match_id)
            warn_skipped(match_id, value.reason)
    return bad


def load_each(
    session: Session, ids: Sequence[int], load: Callable[[Sequence[int]], list[T]]
) -> list[T]:
    """``load(ids)``; when a malformed value stops it, each id alone, leaving out (and saying,
    :func:`warn_skipped`) those that fail: a listing goes on without the bad matches."""
    try:
        return load(ids)
    except StoredDataError:
        session.rollback()
    out: list[T] = []
    for match_id in ids:
        try:
            out += load([match_id])
        except StoredDataError as err:
            session.rollback()
            warn_skipped(match_id, err)
    return out
