"""Shared fixtures for the whole suite, and the markers given by what a test uses.

A run may be split between processes (``pytest -n 2``, pytest-xdist): each worker gets a bundle
cache of its own and, with ``$ARENA_TEST_PG_URL``, a PostgreSQL database of its own.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
PYCACHE = REPO_ROOT / ".pytest_cache" / "pycache"


def keep_bytecode() -> None:
    """Compile each module once, not once per process, even under ``PYTHONDONTWRITEBYTECODE``.

    With it set (as on the shared machines), every pytest worker rewrote and compiled all 105
    test modules at collection (about 5 s of CPU each on a quiet machine, two thirds of
    collecting) and every ``arena`` the tests start compiled the CLI and database modules again.
    The bytecode goes under ``.pytest_cache/pycache`` (Python's ``pycache_prefix``), never beside
    the sources, and this run's child processes inherit the setting. Called before any test
    module or ``tests.*`` helper is imported."""
    if not sys.dont_write_bytecode:
        return
    prefix = sys.pycache_prefix or str(PYCACHE)
    sys.dont_write_bytecode = False
    sys.pycache_prefix = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix


keep_bytecode()

#: scrypt's N for every hash this run makes, in this process and in the servers and commands it
#: starts (``$ARENA_SCRYPT_N``, read at each hash): the server tests sign in and check tokens
#: hundreds of times and at OWASP's N=2^14 each hash took about 0.2 s of CPU. What the tests
#: check (a wrong password or token refused, the same work for a name that does not exist)
#: does not depend on N; ``tests/api/test_passwords.py`` checks the default without it.
os.environ.setdefault("ARENA_SCRYPT_N", "1024")

from tests import click_cache  # noqa: E402  (after keep_bytecode)
from tests.browser import browser as browser  # noqa: E402  (one Playwright a process)
from tests.db.dbtest import PG_ENV, worker_url  # noqa: E402  (after keep_bytecode)
from tests.precompile import precompile  # noqa: E402
from tests.quick_tier import MEASURED_SLOW  # noqa: E402

click_cache.install()  # every CliRunner.invoke builds its app's click command once a process


def shared_data_dir() -> Path | None:
    """The shared data folder: ``$ARENA_DATA``, else ``../shared/data`` next to the repo."""
    env = os.environ.get("ARENA_DATA")
    folder = Path(env) if env else REPO_ROOT.parent / "shared" / "data"
    return folder if folder.is_dir() else None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The data folder (textbook trees, Connect Four benchmark sets); skips when it is absent."""
    folder = shared_data_dir()
    if folder is None:
        where = os.environ.get("ARENA_DATA") or str(REPO_ROOT.parent / "shared" / "data")
        pytest.skip(f"shared data folder not found at {where} (set ARENA_DATA to use it)")
    return folder


@pytest.fixture(scope="session", autouse=True)
def own_bundle_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Archives are unpacked into a cache of this run's (and worker's) own, never the user's
    ``/tmp/arena-bundles-UID`` that other runs share: a test that counts bundles sees its own."""
    from bot_arena.arena.match import bundles

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(bundles.ROOT_ENV, str(tmp_path_factory.mktemp("bundles")))
        yield


@pytest.fixture(scope="session", autouse=True)
def own_postgres_database() -> Iterator[None]:
    """Under ``pytest -n``, each worker's tests use a database of their own on the server."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    base = os.environ.get(PG_ENV)
    if not worker or not base:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(PG_ENV, worker_url(base, worker))
        yield


# The test files that take longest, longest first. Under ``--dist loadfile`` each worker takes
# the next file in collection order as it finishes one (pyproject's ``--no-loadscope-reorder``:
# xdist's default hands out the files with the most tests first, and this order was ignored), so
# a long file collected late (the Ray cluster's) ran alone while the other worker idled; started
# first, the short files fill in around them and both workers end together. Only the order
# changes: a file missing here (or gone) runs after these, in its usual place. Ranked by each
# file's seconds (setup, call and teardown, which count the waits) in a quiet full run with
# every ``ARENA_*_REQUIRED`` and PostgreSQL on, with one change to the ranking: a file that
# mostly waits (on the Ray cluster, on start-up limits, on a stopped referee) is placed beside
# files that keep a core busy, not beside another that waits. The Ray cluster's (its daemons
# starting, nodes killed) runs first on one worker while the report's, the sandbox attacks' and
# the dynamic formats' real games run on the other; ``test_uci`` (engines that never answer, 9 of
# its 17 s spent waiting out limits) comes once the cluster's module has ended, where before it
# met the cluster's waits with its own and a core stood idle (7-10 CPU-s in the first 40 s).
LONGEST_FIRST = (
    "tests/arena/test_ray_cluster.py",
    "tests/report/test_report.py",
    "tests/arena/test_sandbox_attacks.py",
    "tests/arena/test_dynamic_formats.py",
    "tests/arena/test_tournament_crash.py",
    "tests/arena/test_uci.py",
    "tests/arena/test_ladder_cli.py",
    "tests/report/test_replay_browser.py",
    "tests/server/test_server_browser.py",
    "tests/arena/test_incidents.py",
    "tests/server/test_server_ladders.py",
    "tests/arena/test_time_managed_bots.py",
    "tests/api/test_front_door.py",
    "tests/arena/test_ratings_scale.py",
    "tests/arena/test_xboard.py",
    "tests/arena/test_crosstable_top.py",
    "tests/db/test_pair_totals.py",
    "tests/db/test_rated_sql.py",
    "tests/arena/test_resume_runner_claim.py",
    "tests/arena/test_bot_files.py",
    "tests/db/test_match_list.py",
    "tests/arena/test_engine_bounds.py",
    "tests/arena/test_db_errors.py",
    "tests/arena/test_sandbox_cli.py",
    "tests/arena/test_export_json_rows.py",
    "tests/arena/test_pgn_out.py",
    "tests/arena/test_export_csv_rows.py",
    "tests/db/test_db.py",
    "tests/arena/test_sprt_stats.py",
    "tests/arena/test_bounded_inputs.py",
    "tests/server/test_server_api.py",
    "tests/server/test_rate_limits.py",
    "tests/db/test_standings_totals.py",
    "tests/arena/test_tournament_cli.py",
)


def longest_first(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank)))


def pytest_unconfigure(config: pytest.Config) -> None:
    """The test process's server of ``arena`` commands stopped (``tests/forked_cli.py``)."""
    from tests.forked_cli import close_commands

    close_commands()


#: The cyclic garbage collector's thresholds in a test process (Python's are 700, 10, 10). A
#: worker holds millions of objects (every module of the arena, SQLAlchemy, hypothesis, numpy),
#: and the tests make cyclic garbage by the ten thousand (engines, sessions, hypothesis' data);
#: each full collection walked the whole heap, 100-400 ms, and a worker made about 260 of them
#: in a run: 11.5% of the workers' CPU (22.8 of 197.5 s) went to the collector. The young
#: generation is collected as often as by default, the older two a quarter as often (a young
#: generation of 10,000 cut the collector as much, but the rest of the workers' CPU rose by
#: about as much, 2.6 CPU-s in the mean of eight runs: its garbage is freed later, in colder
#: memory). Measured with a ``gc.callbacks`` timer on 1,116 tests, runs alternated ABBA in one
#: session: the collector 9.1 -> 5.2 CPU-s of the workers' 82.9 -> 79.4 (means of four).
#: Nothing waits on the collector: a test that needs a collection calls ``gc.collect()``
#: (tests/inprocess.py).
GC_THRESHOLDS = (700, 40, 40)


def pytest_configure(config: pytest.Config) -> None:
    """The collector's thresholds (:data:`GC_THRESHOLDS`); under ``-n``, the controller compiles
    the test modules (and sources) once, in as many processes as there are workers, before the
    workers start (``tests/precompile.py``)."""
    gc.set_threshold(*GC_THRESHOLDS)
    precompile(config)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Markers from what a test uses: ``browser`` for the fixtures that open Chromium,
    ``postgres`` for the PostgreSQL side of a parametrized database test; ``slow`` for the
    tests measured at half a second or more in the quick tier (``tests/quick_tier.py``); the
    longest files first."""
    longest_first(items)
    for item in items:
        if item.nodeid in MEASURED_SLOW:
            item.add_marker(pytest.mark.slow)
        fixtures = getattr(item, "fixturenames", ())
        if "browser" in fixtures or "page" in fixtures:
            item.add_marker(pytest.mark.browser)
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "postgresql" in callspec.params.values():
            item.add_marker(pytest.mark.postgres)
