"""Stored JSON values checked as input, without SQLAlchemy: the decoder that ``stored.py``'s
column type and the plain-SQL readers (``rated_sql.py``, on the stdlib's ``sqlite3``) share,
and the markers and messages of a malformed value (see ``stored.py``)."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

SHOWN = 40  # characters of a malformed value quoted in a message


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


def decode_as(what: str, value: Any, shape: type, *, nullable: bool, text: bool) -> Any:
    """:func:`decode`, its error naming the column ``what`` (``tournaments.params``), as the
    ORM's column type says it (``stored.StoredJSON``); no name: the error as it is."""
    try:
        return decode(value, shape, nullable=nullable, text=text)
    except StoredDataError as err:
        raise StoredDataError(f"{what}: {err}" if what else str(err)) from None


def instant(value: Any, what: str) -> datetime | None:
    """A stored timestamp as an aware UTC datetime: Bot Arena stores naive UTC, which SQLite's
    driver gives as ISO text and PostgreSQL's as a naive datetime. Anything else (text that is
    no timestamp, one with a zone, another type) is a StoredDataError naming the column
    ``what``."""
    if value is None:
        return None
    found = value
    if type(value) is str:
        with contextlib.suppress(ValueError):
            found = datetime.fromisoformat(value)
    if type(found) is not datetime or found.tzinfo is not None:
        shown = value if isinstance(value, str) else type(value).__name__
        raise StoredDataError(f"{what}: a stored value is not a timestamp: {_quote(shown)}")
    return found.replace(tzinfo=UTC)


_KINDS: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}


def _kind(value: object) -> str:
    return _KINDS.get(type(value), "a scalar")


def warn_skipped(match_id: int, reason: object) -> None:
    """Say on stderr that a match is left out of a summary because of a malformed value (the
    db layer's one message to the user: a summary goes on without the match)."""
    print(f"warning: match {match_id} left out: {reason}", file=sys.stderr)


def malformed_matches(values: Iterable[tuple[int, object]]) -> set[int]:
    """The matches with a malformed value among (match id, value) pairs read through
    :func:`lenient`, each said once (:func:`warn_skipped`): a summary leaves them out."""
    bad: set[int] = set()
    for match_id, value in values:
        if isinstance(value, Malformed) and match_id not in bad:
            bad.add(match_id)
            warn_skipped(match_id, value.reason)
    return bad
