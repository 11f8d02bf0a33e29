"""Why a bot failed, in a few lines: what ``arena bots add`` prints under a failed validation
and what the server answers with it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot_arena.arena.match.text import shown

if TYPE_CHECKING:
    from bot_arena.arena.match.record import Fault

_FRAME = re.compile(r'^\s*File ".*", line \d+')  # a traceback's frame: file and line
_CARETS = re.compile(r"^\s*[\^~]+\s*$")  # the marks under a traceback's source line
EVIDENCE_LINES = 4


def fault_evidence(fault: Fault) -> list[str]:
    """Why a bot failed, in at most ``EVIDENCE_LINES`` lines, from the stderr its fault
    carries (a Python bot's worker writes the traceback of what the bot raised there): from the
    innermost frame of the last traceback (file and line, the source line, the exception),
    else the last lines. The text is the bot's own, so it is cut to size and its control
    characters (terminal escapes) are replaced."""
    from bot_arena.arena.transport.protocol import truncate

    tail = [
        line.rstrip()
        for line in str(fault.detail.get("stderr_tail") or "").splitlines()
        if line.strip() and not _CARETS.match(line)
    ]
    frames = [i for i, line in enumerate(tail) if _FRAME.match(line)]
    if frames:
        lines = tail[frames[-1] :]
    else:
        lines = [f"stderr: {line}" for line in tail[-(EVIDENCE_LINES - 1) :]]
    return [shown(truncate(line).expandtabs(4)) for line in lines[:EVIDENCE_LINES]]
