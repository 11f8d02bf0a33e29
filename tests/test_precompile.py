"""The controller's compile step (``tests/precompile.py``): a test module's code is cached as
pytest's own import reads it back, asserts rewritten; the files are shared out evenly, each
once."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests import precompile

SAMPLE = "def test_sample():\n    seen = [1, 2]\n    assert seen == [1, 3]\n"


def test_a_test_module_is_cached_as_pytests_import_reads_it(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    from _pytest.assertion import rewrite

    path = tmp_path / "test_sample.py"
    path.write_text(SAMPLE, encoding="utf-8")
    rewriting = precompile.rewriter(pytestconfig)
    assert rewriting is not None, "pytest's rewriting names are gone: the step is skipped"
    rewriting.rewrite(path)
    code = rewrite._read_pyc(path, rewriting.cached(path))
    assert code is not None  # what the import hook finds, current for this source
    namespace: dict[str, object] = {}
    exec(code, namespace)
    with pytest.raises(AssertionError) as failed:
        namespace["test_sample"]()  # type: ignore[operator]
    assert "[1, 2] == [1, 3]" in str(failed.value)  # rewritten: the values are explained
    path.write_text(SAMPLE.replace("[1, 3]", "[1, 4]"), encoding="utf-8")
    assert rewrite._read_pyc(path, rewriting.cached(path)) is None  # stale once edited
    rewriting.rewrite(path)
    assert rewrite._read_pyc(path, rewriting.cached(path)) is not None


def test_a_plain_module_is_compiled_where_an_import_looks(tmp_path: Path) -> None:
    path = tmp_path / "helper.py"
    path.write_text("VALUE = 1\n", encoding="utf-8")
    precompile.compile_share(None, [path], ["test_*.py"])  # type: ignore[arg-type]
    assert Path(importlib.util.cache_from_source(str(path))).is_file()


def test_which_files_are_rewritten() -> None:
    patterns = ["test_*.py", "*_test.py"]
    for name in ("conftest.py", "test_x.py", "x_test.py"):
        assert precompile.is_rewritten(Path("tests") / name, patterns)
    for name in ("helpers.py", "testing.py", "x_tests.py"):
        assert not precompile.is_rewritten(Path("tests") / name, patterns)


def test_every_file_goes_to_one_share_and_the_shares_weigh_about_the_same(
    tmp_path: Path,
) -> None:
    sizes = [9000, 7000, 5000, 4000, 3000, 2000, 1000, 500]
    files = []
    for i, size in enumerate(sizes):
        path = tmp_path / f"m{i}.py"
        path.write_text("#" * size, encoding="utf-8")
        files.append(path)
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "stale.py").write_text("#", encoding="utf-8")
    found = precompile.python_files([tmp_path, files[0]])
    assert found == sorted(files)  # each once, nothing under __pycache__
    parts = precompile.shares(found, 2)
    assert sorted(p for part in parts for p in part) == sorted(files)
    weights = [sum(p.stat().st_size for p in part) for part in parts]
    assert abs(weights[0] - weights[1]) <= max(sizes)
    assert abs(weights[0] - weights[1]) == 500  # largest first, each to the lightest
