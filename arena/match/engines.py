"""Engine bots: programs that speak a chess protocol of their own (``uci:``, ``xboard:``) rather
than the arena's.

A spec is ``uci:<command line>`` (or ``xboard:``), the command line followed by the engine's
options in cutechess's spelling, ``option.NAME=VALUE`` (quoted when the name has spaces):

    uci:stockfish option.Threads=1 option.Hash=16 "option.Skill Level=3"

The options are part of the bot: two specs that differ only in an option are two bots (their
ratings are apart), and the version hashes them with the program (``versions.command``).

A ``name=NAME`` word (cutechess's ``name=``) names the bot: ``uci:stockfish name=sf8
"option.Skill Level=8"`` plays, is stored and is shown as ``sf8`` instead of its command line.
The name is no part of the command nor of the version (``without_name``).
"""

from __future__ import annotations

import shlex

from bot_arena.arena.match.botref import COMMAND, ENGINES, BotRef, BotSpecError
from bot_arena.games import keyvalue

OPTION_PREFIX = "option."
NAME_PREFIX = "name="


def split_engine(target: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The command line (argv) and the ``(name, value)`` options of an engine target."""
    try:
        words = keyvalue.shell_words(target)
    except ValueError as exc:
        raise BotSpecError(f"engine: cannot read the command line: {exc}") from None
    argv = [word for word in words if not word.startswith((OPTION_PREFIX, NAME_PREFIX))]
    try:
        named = keyvalue.pairs(
            w[len(OPTION_PREFIX) :] for w in words if w.startswith(OPTION_PREFIX)
        )
    except keyvalue.KeyValueError as exc:
        if exc.duplicate:
            raise BotSpecError(f"engine option {exc.key!r} is given twice") from None
        raise BotSpecError(
            f"engine option {OPTION_PREFIX + exc.word!r} is not option.NAME=VALUE"
        ) from None
    options = list(named.items())
    if not argv:
        raise BotSpecError("engine without a command line")
    return argv, options


def engine_command(ref: BotRef) -> str:
    """The command line that starts a ``cmd:``, ``uci:`` or ``xboard:`` bot's program (options
    left out)."""
    if ref.kind in ENGINES:
        return shlex.join(split_engine(ref.target)[0])
    if ref.kind == COMMAND:
        return ref.target
    raise ValueError(f"{ref.name} is not a program")


def without_name(typed: str) -> tuple[str | None, str]:
    """The ``name=NAME`` of an engine target (checked as a registered name is: ``check_name``)
    and the target without it; a target without one is returned as it was typed."""
    from bot_arena.arena.match.names import check_name

    try:
        words = keyvalue.shell_words(typed)
    except ValueError as exc:
        raise BotSpecError(f"engine: cannot read the command line: {exc}") from None
    names = [word[len(NAME_PREFIX) :] for word in words if word.startswith(NAME_PREFIX)]
    if not names:
        return None, typed
    if len(names) > 1:
        raise BotSpecError("engine name= is given twice")
    rest = [word for word in words if not word.startswith(NAME_PREFIX)]
    return check_name(names[0]), shlex.join(rest)
