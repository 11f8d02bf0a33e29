"""The run's modules compiled once, split between processes, before the pytest workers start.

Every pytest-xdist worker collects every test file, and on a fresh clone (as CI and a
newcomer run) each found no bytecode: both workers parsed, assertion-rewrote and compiled all
the same 200 test modules side by side (about 9 s of CPU each on this 2-core machine, 70% of
collecting) and then the sources they import. Here the controller does that once before the
workers start, the files split between as many forked processes as there are workers, and each
worker then reads what was written. The bytecode is what the workers would have written
themselves: pytest's own rewriting (its hash-checked ``.pyc`` beside pytest's tag) for the test
modules, and ``compileall``'s (as an import writes) for the rest.

pytest has no public call for "rewrite this file": this uses ``_pytest.assertion.rewrite``'s
``_rewrite_test``/``_read_pyc``/``_write_pyc`` (stable since pytest 6.2, and 9.x is what runs
here). Should they change, nothing breaks: the step is skipped and each worker compiles as
before.
"""

from __future__ import annotations

import compileall
import fnmatch
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

#: the source folders the test processes import (the installed package's modules)
SOURCES = ("arena", "bots", "games", "db")


def run_paths(config: pytest.Config) -> list[Path]:
    """The files and folders this run collects (the arguments, else ``testpaths``), no ids."""
    here = Path(config.invocation_params.dir)
    return [here / arg.partition("::")[0] for arg in config.args]


def python_files(paths: Iterable[Path]) -> list[Path]:
    """Every ``.py`` file under ``paths`` (a file is itself), each once, in a stable order."""
    found: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found.update(p for p in path.rglob("*.py") if "__pycache__" not in p.parts)
        elif path.suffix == ".py" and path.is_file():
            found.add(path)
    return sorted(found)


def is_rewritten(path: Path, patterns: Sequence[str]) -> bool:
    """Whether pytest's import hook rewrites this file's asserts (``_should_rewrite``'s rule for
    a test run's own files: every ``conftest.py`` and each match of ``python_files``)."""
    return path.name == "conftest.py" or any(fnmatch.fnmatch(path.name, p) for p in patterns)


class Rewriter:
    """pytest's own rewrite, read and write of a test module's cached code."""

    def __init__(self, config: pytest.Config) -> None:
        from _pytest.assertion import assertstate_key, rewrite

        self.config = config
        self.module = rewrite
        self.state = config.stash[assertstate_key]

    def cached(self, path: Path) -> Path:
        """Where pytest keeps ``path``'s rewritten code."""
        return Path(self.module.get_cache_dir(path)) / (path.name[:-3] + self.module.PYC_TAIL)

    def rewrite(self, path: Path) -> None:
        """Rewrite and cache ``path`` unless its cached code is current."""
        pyc = self.cached(path)
        if self.module._read_pyc(path, pyc) is not None:
            return
        pyc.parent.mkdir(parents=True, exist_ok=True)
        source_hash, code = self.module._rewrite_test(path, self.config)
        self.module._write_pyc(self.state, code, source_hash, pyc)


def rewriter(config: pytest.Config) -> Rewriter | None:
    """pytest's rewriting, or None if its private names have changed (the step is skipped)."""
    try:
        found = Rewriter(config)
        for name in ("get_cache_dir", "PYC_TAIL", "_read_pyc", "_rewrite_test", "_write_pyc"):
            getattr(found.module, name)
    except (ImportError, AttributeError, KeyError):
        return None
    return found


def compile_share(rewriting: Rewriter, files: Sequence[Path], patterns: Sequence[str]) -> None:
    """Compile ``files`` (one process's share): rewritten test modules and plain modules. A file
    that does not compile is left to the worker that imports it, which reports it."""
    for path in files:
        try:
            if is_rewritten(path, patterns):
                rewriting.rewrite(path)
            else:
                compileall.compile_file(str(path), quiet=2)
        except Exception:  # a file that does not compile: its worker's import reports it
            continue


def shares(files: Sequence[Path], count: int) -> list[list[Path]]:
    """``files`` in ``count`` shares of about equal bytes (largest first, each to the lightest)."""
    parts: list[list[Path]] = [[] for _ in range(count)]
    weights = [0] * count
    sizes = {path: path.stat().st_size for path in files}
    for path in sorted(files, key=sizes.__getitem__, reverse=True):
        lightest = weights.index(min(weights))
        parts[lightest].append(path)
        weights[lightest] += sizes[path]
    return parts


def precompile(config: pytest.Config) -> None:
    """In the controller of a ``-n N`` run (N >= 2), compile what the workers will import, in
    N forked processes; elsewhere (a worker, ``-n 0``, no bytecode written) do nothing."""
    if hasattr(config, "workerinput") or sys.dont_write_bytecode:
        return
    workers = config.getoption("numprocesses", None)
    if not isinstance(workers, int) or workers < 2 or config.getoption("assertmode") != "rewrite":
        return
    rewriting = rewriter(config)
    if rewriting is None:
        return
    root = Path(str(config.rootpath))
    files = python_files([*run_paths(config), *(root / name for name in SOURCES)])
    patterns = list(config.getini("python_files"))
    children = []
    for share in shares(files, workers):
        pid = os.fork()
        if pid == 0:  # the share's process: compile, then leave at once (no pytest teardown)
            try:
                compile_share(rewriting, share, patterns)
            finally:
                os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
