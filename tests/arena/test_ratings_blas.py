"""The ML fit runs its linear algebra on one BLAS thread and gives the count back after
(``arena/ratings/blas.py``, issue 29: spinning BLAS threads on a loaded machine)."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from bot_arena.arena.ratings import GameResult, blas, fit_ml
from bot_arena.arena.ratings.blas import one_blas_thread


def _blas_threads() -> list[int]:
    return [int(lib["num_threads"]) for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_a_call_runs_on_one_blas_thread_and_the_count_comes_back() -> None:
    np.linalg.solve(np.eye(2), np.ones(2))  # numpy's BLAS is loaded
    before = _blas_threads()
    assert before, "numpy loaded no BLAS library that threadpoolctl sees"
    seen: list[list[int]] = []

    @one_blas_thread
    def fit(x: int, *, y: int) -> int:
        seen.append(_blas_threads())
        return x + y

    assert fit(2, y=3) == 5
    assert seen == [[1] * len(before)]
    assert _blas_threads() == before


def test_fit_ml_solves_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    np.linalg.solve(np.eye(2), np.ones(2))
    before = _blas_threads()
    solve = np.linalg.solve
    seen: list[list[int]] = []

    def watched(a: Any, b: Any) -> Any:
        seen.append(_blas_threads())
        return solve(a, b)

    monkeypatch.setattr(np.linalg, "solve", watched)
    games = [GameResult(("a", "b"), (1, 2)), GameResult(("b", "a"), (1, 1))]
    table = fit_ml([*games, GameResult(("b", "c"), (1, 2)), GameResult(("c", "a"), (1, 2))])
    assert {row.bot for row in table.rows} == {"a", "b", "c"}
    assert seen and all(threads == [1] * len(before) for threads in seen)
    assert _blas_threads() == before


def test_the_libraries_are_found_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding the BLAS libraries walks every loaded shared library: done at the first fit,
    not at each."""
    import threadpoolctl

    before = _blas_threads()
    made: list[object] = []

    class Counted(threadpoolctl.ThreadpoolController):
        def __init__(self) -> None:
            made.append(self)
            super().__init__()

    @one_blas_thread
    def fit() -> None:
        pass

    blas._blas.cache_clear()
    try:
        with monkeypatch.context() as patched:
            patched.setattr(threadpoolctl, "ThreadpoolController", Counted)
            for _ in range(3):
                fit()
            assert len(made) == 1
    finally:
        blas._blas.cache_clear()  # the next fit's is made again, not the counted one
    assert _blas_threads() == before


def test_a_fit_in_another_thread_after_one_here_runs_on_one_thread() -> None:
    """The libraries found at the first fit serve the fits of other threads too (OpenBLAS
    lets only one thread set its count at a time: a limit taken and not left as a context
    kept that thread in control, and a later fit elsewhere ran on every thread)."""
    np.linalg.solve(np.eye(2), np.ones(2))
    before = _blas_threads()

    @one_blas_thread
    def fit() -> list[int]:
        return _blas_threads()

    assert fit() == [1] * len(before)
    seen: list[list[int]] = []
    thread = threading.Thread(target=lambda: seen.append(fit()))
    thread.start()
    thread.join(timeout=60)
    assert seen == [[1] * len(before)]
    assert _blas_threads() == before
