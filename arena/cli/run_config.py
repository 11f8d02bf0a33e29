"""``--config run.toml``: a whole run's options in a file (cutechess's and fastchess's
``-config``), read before the command line's, which win over it.

The file is TOML whose keys are the command's long option names without their dashes (``bot``,
``clock``, ``move-time``, ``openings``, ``draw-adjudicate``, ...; ``_`` for ``-`` works too) and
whose values are what the option takes: a list for an option given once per bot (``bot``,
``clock``, ``move-time``). Every key becomes the option's default (click's ``default_map``), so an
option on the command line replaces the file's value whole (``--bot X`` replaces the file's list of
bots); relative paths are read from the current folder, as on the command line. An unknown key, a
value of the wrong shape, or a file that is not TOML is one line, exit 2, before anything runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from bot_arena.arena.cli.common import fail
from bot_arena.games import files
from bot_arena.games.quoting import shown

CONFIG = files.FileKind("--config", "ARENA_MAX_CONFIG_MB", 1)
_SCALARS = (str, int, float, bool)
PATH_CHARS = 200  # of the file's path quoted in an error


def load_config(ctx: Any, param: Any, value: Path | None) -> Path | None:
    """The ``--config`` option's callback (eager: it runs before the other options are read):
    the file's settings as the command's defaults. ``ctx`` and ``param`` are click's (typer
    vendors click privately, so they are typed ``Any`` here)."""
    if value is None or ctx.resilient_parsing:
        return value
    import tomllib  # only for a run that names a file (issue 32's start-up)

    try:
        data = tomllib.loads(files.read_text(value, CONFIG))
    except files.FileRefused as exc:
        fail(str(exc))
    except tomllib.TOMLDecodeError as exc:
        fail(f"--config {shown(str(value), PATH_CHARS)} is not TOML: {exc}")
    ctx.default_map = {**(ctx.default_map or {}), **settings(ctx.command, data, str(value))}
    return value


def settings(command: Any, data: dict[str, Any], path: str) -> dict[str, Any]:
    """``data`` (a TOML file's table) as defaults of ``command``'s options, by parameter name."""
    options = {
        flag[2:]: p
        for p in command.params
        if p.param_type_name == "option" and p.name != "config"
        for flag in p.opts
        if flag.startswith("--")
    }
    out: dict[str, Any] = {}
    where = f"--config {shown(path, PATH_CHARS)}"
    for key, value in data.items():
        option = options.get(key) or options.get(key.replace("_", "-"))
        if option is None or option.name is None:
            known = ", ".join(sorted(options))
            fail(f"{where}: unknown setting {shown(key)} (settings: {known})")
        if option.multiple:
            items = value if isinstance(value, list) else [value]
            if not all(isinstance(item, _SCALARS) for item in items):
                fail(f"{where}: {key} takes a list of values")
            out[option.name] = [str(item) for item in items]
        elif isinstance(value, _SCALARS):
            out[option.name] = value
        else:
            fail(f"{where}: {key} takes one value, not {type(value).__name__}")
    return out


ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="A TOML file of this command's options (bot, clock, openings, draw-adjudicate, ...: "
        "their long names); the command line's options win over it.",
        callback=load_config,
        is_eager=True,
    ),
]
