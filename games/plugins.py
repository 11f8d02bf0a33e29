"""Named plugins: a built-in table plus the package entry points of one group.

Games (``arena.games``) and bots (``arena.bots``) are found the same way. Reading the installed
packages' metadata costs tens of milliseconds, which every bot process would pay at start-up, so
it happens only when a name is not built in, or when everything is listed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def entry_points(group: str) -> list[Any]:
    """The entry points of ``group`` (``importlib.metadata`` is imported only here)."""
    from importlib import metadata

    return list(metadata.entry_points(group=group))


def all_targets(builtin: Mapping[str, str], group: str) -> dict[str, str]:
    """Every name: built-in ones first (they win a clash), then the entry points."""
    found = dict(builtin)
    for ep in entry_points(group):
        found.setdefault(ep.name, ep.value)
    return found


def find_target(name: str, builtin: Mapping[str, str], group: str) -> str | None:
    """``module:attr`` for ``name``, or None when nothing by that name is installed."""
    if name in builtin:
        return builtin[name]
    for ep in entry_points(group):
        if ep.name == name:
            return str(ep.value)
    return None
