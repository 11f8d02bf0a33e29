"""Engine bots: programs that speak a chess protocol of their own (``uci:``, ``xboard:``) rather
than the arena's.

A spec is ``uci:<command line>`` (or ``xboard:``), the command line followed by the engine's
options in cutechess's spelling, ``option.NAME=VALUE`` (quoted when the name has spaces):

    uci:stockfish option.Threads=1 option.Hash=16 "option.Skill Level=3"

The options are part of the bot: two specs that differ only in an option are two bots (their
ratings are apart), and the version hashes them with the program (``versions.command``).
"""

from __future__ import annotations

import shlex

from bot_arena.arena.match.botref import COMMAND, ENGINES, BotRef, BotSpecError

OPTION_PREFIX = "option."


def split_engine(target: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The command line (argv) and the ``(name, value)`` options of an engine target."""
    try:
        words = shlex.split(target)
    except ValueError as exc:
        raise BotSpecError(f"engine: cannot read the command line: {exc}") from None
    argv: list[str] = []
    options: list[tuple[str, str]] = []
    for word in words:
        if word.startswith(OPTION_PREFIX):
            name, eq, value = word[len(OPTION_PREFIX) :].partition("=")
            if not eq or not name.strip():
                raise BotSpecError(f"engine option {word!r} is not option.NAME=VALUE")
            options.append((name.strip(), value.strip()))
        else:
            argv.append(word)
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
