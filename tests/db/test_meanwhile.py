"""``db/meanwhile.py``: modules imported on a thread of their own while a bulk read waits on
the database (issue 29), and the bulk read that starts it."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from bot_arena.db import rated_sql
from bot_arena.db.meanwhile import import_meanwhile
from tests.db.dbtest import BACKENDS, example_database
from tests.db.test_pair_bulk import every_reads, fill, held

FIT = ("bot_arena.arena.ratings.ml", "threadpoolctl")


@pytest.fixture
def modules(tmp_path: Path) -> Iterator[Path]:
    """A folder on ``sys.path`` for modules written by the test; they are forgotten after."""
    sys.path.insert(0, str(tmp_path))
    before = set(sys.modules)
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        for name in set(sys.modules) - before:
            if name.startswith("meanwhile_probe"):
                del sys.modules[name]


def test_the_modules_are_imported_on_another_thread(modules: Path) -> None:
    (modules / "meanwhile_probe_a.py").write_text(
        "import threading\nTHREAD = threading.current_thread()\n"
    )
    (modules / "meanwhile_probe_b.py").write_text("VALUE = 1\n")
    thread = import_meanwhile(["meanwhile_probe_a", "meanwhile_probe_b"])
    thread.join()
    import meanwhile_probe_a  # type: ignore[import-not-found]

    assert meanwhile_probe_a.THREAD is thread is not threading.current_thread()
    assert "meanwhile_probe_b" in sys.modules
    assert not thread.daemon  # a command that ends first waits for it, never mid-import


def test_a_module_that_fails_is_left_to_the_import_that_needs_it(
    modules: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (modules / "meanwhile_probe_broken.py").write_text("raise RuntimeError('broken')\n")
    (modules / "meanwhile_probe_after.py").write_text("VALUE = 2\n")
    escaped: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: escaped.append(args.exc_value))
    import_meanwhile(["meanwhile_probe_broken", "no_such_module_x", "meanwhile_probe_after"]).join()
    assert escaped == []  # nothing printed on the thread
    assert "meanwhile_probe_after" in sys.modules  # the rest still imported
    with pytest.raises(RuntimeError, match="broken"):
        import meanwhile_probe_broken  # type: ignore[import-not-found]  # noqa: F401


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_bulk_read_imports_numpy_and_the_callers_modules_meanwhile(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bulk read starts the imports (numpy, then what the caller named) before its
    statement, and gives the columns it gave before; a read row by row starts none."""
    started: list[tuple[str, ...]] = []
    real = rated_sql.import_meanwhile

    def recorded(names: Sequence[str]) -> threading.Thread:
        started.append(tuple(names))
        return real(names)

    monkeypatch.setattr(rated_sql, "import_meanwhile", recorded)
    totals = {(1, "coins", a, b, None): (a, b % 2, 1) for a in range(1, 5) for b in range(1, 5)}
    with example_database(kind) as url:
        fill(url, totals)
        with every_reads(url, kind) as ways:
            for reads in ways:
                started.clear()
                monkeypatch.setattr(rated_sql, "BULK_FROM", 10**9)
                by_rows = reads.pair_columns(game="coins", warm=FIT)
                assert started == []
                monkeypatch.setattr(rated_sql, "BULK_FROM", 0)
                in_bulk = reads.pair_columns(game="coins", warm=FIT)
                assert started == [("numpy", *FIT)]
                assert held(in_bulk) == held(by_rows)


def test_the_leaderboard_names_the_fit_as_what_it_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot_arena.arena.ratings import query

    assert query.FIT_MODULES == FIT
    asked: list[Sequence[str]] = []

    class Reads:
        def latest_game(self) -> str:
            return "coins"

        def faulted_seats(self, **_: object) -> tuple[list[object], set[int]]:
            return [], set()

        def pair_columns(self, *, warm: Sequence[str] = (), **_: object) -> rated_sql.PairColumns:
            asked.append(warm)
            return rated_sql.PairColumns.of_rows(())

        def rated_seats(self, **_: object) -> list[object]:
            return []

        def versions(self) -> dict[int, tuple[str, str]]:
            return {}

    monkeypatch.setattr(query, "reads", lambda source: source)
    query.select_results(Reads(), totals=True, columnar=True)  # type: ignore[arg-type]
    assert asked == [FIT]
