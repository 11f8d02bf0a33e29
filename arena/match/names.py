"""What a bot may be called.

A name the user chooses (``arena bots add --name``) becomes a key typed on command lines
(``--bot NAME``) and a cell in every table and export, so it is kept plain: 1 to ``MAX_NAME``
characters, letters and digits (any script) and ``_ - . + @``, starting with a letter, a digit or
``_`` (never ``= + - @``, which a spreadsheet reads as a formula, nor ``.``); no spaces, no
controls, no ``:`` (specs use it), no ``/`` (paths), not ending in ``.py``.

A name the arena derives from a file or folder name (``my-bot.py`` plays as ``my-bot``) keeps
the file's name, since that is how its owner knows it: any character a file name may hold is
shown as text where it is printed (``text.shown``) and made inert in CSV (``text.csv_cell``),
except what cannot be shown on a line at all, control and format characters: such a file is
refused with a message to rename it, as is a name of blanks only.
"""

from __future__ import annotations

from bot_arena.arena.match.botref import BotSpecError
from bot_arena.arena.match.text import shown

MAX_NAME = 64
_PUNCTUATION = frozenset("_-.+@")


class BotNameError(BotSpecError):
    """A name that breaks the rule (one-line message; a spec error, so every command that
    resolves specs reports it as one)."""


def check_name(name: str) -> str:
    """``name`` (without surrounding blanks) when a user may register a bot under it, else a
    ``BotNameError`` saying what is wrong."""
    name = name.strip()
    if not name:
        raise BotNameError("a bot name cannot be empty")
    if len(name) > MAX_NAME:
        raise BotNameError(f"bot name {name[:20]!r}...: at most {MAX_NAME} characters")
    what = f"bot name {name!r}"  # repr writes controls and bidi characters as escapes
    bad = sorted({ch for ch in name if not (ch.isalnum() or ch in _PUNCTUATION)})
    if bad:
        listed = " ".join(repr(ch) for ch in bad)
        raise BotNameError(f"{what}: {listed} not allowed (use letters, digits and _ - . + @)")
    if not (name[0].isalnum() or name[0] == "_"):
        raise BotNameError(f"{what}: start it with a letter, a digit or _")
    if name.endswith(".py"):
        raise BotNameError(f"{what}: a name cannot end in .py (it would read as a file)")
    return name


def check_derived(name: str, source: str) -> str:
    """``name``, derived from the file or folder ``source``, when it can be shown on a line;
    else a ``BotNameError`` asking to rename the file."""
    if not name.strip():
        raise BotNameError(f"bot {source!r}: its name is blank: rename the file")
    if shown(name) != name:
        raise BotNameError(
            f"bot {source!r}: its name holds control or format characters: rename the file"
        )
    return name
