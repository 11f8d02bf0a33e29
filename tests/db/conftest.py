from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.db.dbtest import BACKENDS, database


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as url:
        yield url
