"""Each Typer app's click command built once a process, for every ``CliRunner.invoke``.

``typer.testing.CliRunner.invoke`` rebuilds the click command from the app at every call: for
the ``arena`` app, about 45 ms of CPU from the type hints of every command's function, more
than most commands the suite runs in-process take (hundreds of calls across the suite, through
each test file's own ``CliRunner``). The app does not change once built, so its command is
built at its first invocation and kept with a reference to the app (so the app's ``id`` cannot
be reused by another app while it is cached).
"""

from __future__ import annotations

from typing import Any

import typer.main
import typer.testing

_built: dict[int, tuple[typer.Typer, Any]] = {}


def click_command(app: typer.Typer) -> Any:
    """``typer.main.get_command(app)``, built once for each app."""
    found = _built.get(id(app))
    if found is None or found[0] is not app:
        found = (app, typer.main.get_command(app))
        _built[id(app)] = found
    return found[1]


def install() -> None:
    """Every ``CliRunner.invoke`` of this process takes its app's command from the cache."""
    typer.testing._get_command = click_command  # type: ignore[attr-defined]
