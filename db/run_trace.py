"""The runner's entry in a tournament's settings, read without SQLAlchemy: what ``tournament
list`` needs to tell a live run from an interrupted one, whether it read the tournament through
the ORM or as plain rows (``db/tournament_list.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol

RUNNER = "runner"  # settings key: the process playing the tournament ({"host", "pid"})


class RunTrace(Protocol):
    """What a tournament keeps of the process playing it: a stored ``Tournament`` or a listed
    one alike."""

    @property
    def status(self) -> str: ...

    @property
    def settings(self) -> Mapping[str, Any]: ...

    @property
    def heartbeat(self) -> datetime | None: ...


def recorded_runner(tournament: RunTrace) -> tuple[str, int] | None:
    """(host, pid) of the process that noted it is playing the tournament, if any (it may have
    died since without clearing its entry)."""
    runner = tournament.settings.get(RUNNER)
    if not isinstance(runner, dict):
        return None
    host, pid = runner.get("host"), runner.get("pid")
    if not isinstance(host, str) or not isinstance(pid, int):
        return None
    return host, pid
