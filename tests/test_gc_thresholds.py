"""The collector's thresholds of ``tests/conftest.py`` are those of the process running the
tests (a pytest-xdist worker under ``-n``, not only the controller that configures it)."""

from __future__ import annotations

import gc

from tests.conftest import GC_THRESHOLDS


def test_the_tests_run_with_the_suites_collector_thresholds() -> None:
    assert gc.get_threshold() == GC_THRESHOLDS
    assert min(GC_THRESHOLDS[1:]) > 10  # the older generations collected less often
