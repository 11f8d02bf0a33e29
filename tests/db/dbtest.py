"""Test databases: a fresh SQLite file, or a fresh schema on the PostgreSQL server named by
``$ARENA_TEST_PG_URL`` (skipped when it is not set), so tests never see each other's rows."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url

PG_ENV = "ARENA_TEST_PG_URL"
BACKENDS = [
    "sqlite",
    pytest.param(
        "postgresql",
        marks=pytest.mark.skipif(not os.environ.get(PG_ENV), reason=f"{PG_ENV} is not set"),
    ),
]


@contextmanager
def database(kind: str, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database of ``kind``, removed afterwards (PostgreSQL: a schema)."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'arena.db'}"
        return
    base = os.environ[PG_ENV]
    schema = f"t_{uuid.uuid4().hex[:16]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
        url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        admin.dispose()
