"""Is a SQLite file's schema exactly Bot Arena's? A database is data, not code.

A SQLite file carries SQL of its own in its schema: triggers run on our inserts, views run
when read, and a table's DEFAULT, CHECK and generated columns are expressions evaluated on
writes. A file someone sent is opened only once its schema (``sqlite_master``) is found to be
exactly the one our migrations build for its revision: every object by type, name and table,
each ``CREATE`` statement compared once normalised (the whitespace, the quotes around the
table's name and the order of a table's columns and constraints vary between a database
migrated step by step and one rebuilt by a downgrade; nothing else does). Anything else is
*foreign* and named in the refusal; nothing of it is run, since reading ``sqlite_master`` runs
no SQL of the file's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

Key = tuple[str, ...]
Schema = Counter[Key]

# tables SQLite itself makes (ANALYZE, PRAGMA optimize), with the SQL it gives them
_SQLITE_OWN = {
    ("table", "sqlite_stat1", "sqlite_stat1", "CREATE TABLE sqlite_stat1(tbl,idx,stat)"),
    (
        "table",
        "sqlite_stat4",
        "sqlite_stat4",
        "CREATE TABLE sqlite_stat4(tbl,idx,neq,nlt,ndlt,sample)",
    ),
}
SHOWN = 40  # characters of a foreign object's name quoted in a message


def _split(body: str) -> list[str]:
    """``body`` cut at the commas outside parentheses and quotes."""
    items, depth, quote, start = [], 0, "", 0
    for i, c in enumerate(body):
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"`[":
            quote = "]" if c == "[" else c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    items.append(body[start:])
    return items


def _space(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def normal(kind: str, name: str, table: str, sql: str | None) -> Key:
    """An object of ``sqlite_master`` as compared: a table's columns and constraints as a sorted
    tuple, other SQL with its whitespace collapsed."""
    if kind == "index" and sql is None and name.startswith("sqlite_autoindex_"):
        # made by a UNIQUE constraint, numbered in the order of the table's constraints
        return (kind, "sqlite_autoindex", table)
    if sql is None:
        return (kind, name, table, "")
    if (kind, name, table, sql) in _SQLITE_OWN:
        return (kind, name, table, sql)
    if kind == "table" and "(" in sql and ")" in sql:
        head, _, rest = sql.partition("(")
        body, _, tail = rest.rpartition(")")
        items = sorted(_space(item) for item in _split(body))
        return (kind, name, table, _space(head).replace('"', ""), *items, "|", _space(tail))
    return (kind, name, table, _space(sql).replace('"', ""))


def schema_of(rows: Iterable[tuple[str, str, str, str | None]]) -> Schema:
    """The comparable schema of ``sqlite_master``'s (type, name, tbl_name, sql) rows."""
    return Counter(normal(*row) for row in rows)


def shown(name: str) -> str:
    cut = "".join(c if c.isprintable() else "?" for c in name[:SHOWN])
    return repr(cut + ("…" if len(name) > SHOWN else ""))


def first_difference(actual: Schema, expected: Schema) -> str | None:
    """What makes ``actual`` not ``expected`` (one phrase), or None when they are the same.
    SQLite's own statistics tables may be there or not."""
    extra = actual - expected
    for key in sorted(extra):
        kind, name, table = key[:3]
        if key[3:4] and (kind, name, table, key[3]) in _SQLITE_OWN:
            continue
        if kind in ("table", "index") and any(k[:3] == key[:3] for k in expected):
            return f"its {kind} {shown(name)} is not defined as Bot Arena defines it"
        if name == "sqlite_autoindex":
            return f"table {shown(table)} has a unique index Bot Arena does not make"
        return f"its {kind} {shown(name)} (on {shown(table)}) is not Bot Arena's"
    missing = expected - actual
    for key in sorted(missing):
        kind, name, table = key[:3]
        what = f"a unique index of table {shown(table)}" if name == "sqlite_autoindex" else None
        return f"{what or f'its {kind} {shown(name)}'} is missing"
    return None
