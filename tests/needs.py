"""What a test needs from the machine, one rule for all of it: where a thing is missing, the
tests that need it skip, saying why; where CI says it must be there (``$ARENA_<KIND>_REQUIRED``,
set by ``.ci/run``), its absence fails them instead, so a green CI never hides a skipped layer.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

SANDBOX = "ARENA_SANDBOX_REQUIRED"  # every sandbox layer (cgroups, namespaces, Landlock, seccomp)
ENGINES = "ARENA_ENGINES_REQUIRED"  # stockfish and fairymax
BROWSER = "ARENA_BROWSER_REQUIRED"  # Playwright and Chromium
RAY = "ARENA_RAY_REQUIRED"  # Ray, for the cluster tests


def required(env: str) -> bool:
    """Whether ``$env`` says the thing must be there (set to anything but empty or ``0``)."""
    return os.environ.get(env, "") not in ("", "0")


def missing(env: str, reason: str) -> NoReturn:
    """The thing ``reason`` names is missing: skip (a whole module when called at its top), or
    fail where ``$env`` requires it."""
    if required(env):
        pytest.fail(f"{reason} ({env} is set)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def skip_unless(present: bool, env: str, reason: str) -> pytest.MarkDecorator:
    """A mark that skips a test when the thing is not ``present``; where ``$env`` requires it,
    its absence fails the module's collection at once instead."""
    if not present and required(env):
        pytest.fail(f"{reason} ({env} is set)", pytrace=False)
    return pytest.mark.skipif(not present, reason=reason)
