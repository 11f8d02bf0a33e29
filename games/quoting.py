"""Quoting what a user or a stranger wrote back to them in an error: at most a short prefix.

An error line that echoes its input whole is as long as that input (a 5,000-character
position, a rank of 5,000 digits): it floods the terminal and hides the message. Every error
that quotes input goes through :func:`shown`.
"""

from __future__ import annotations

from typing import Any

SHOWN_CHARS = 60  # the longest prefix an error quotes


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``value`` quoted as ``repr`` quotes a string (a number as it is), cut to ``limit``
    characters with ``…`` and its length when it is longer: ``'4444…' (5000 characters)``."""
    if not isinstance(value, str):  # a number: unquoted
        text = _text(value)
        return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit] + '…'!r} ({len(value)} characters)"


def cut(value: Any, limit: int = 2 * SHOWN_CHARS) -> str:
    """``value`` as text, unquoted, cut to ``limit`` characters with ``…`` (a library's error
    message that may quote the input itself)."""
    text = value if isinstance(value, str) else _text(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _text(value: Any) -> str:
    try:
        return str(value)
    except ValueError:  # an int too long for str() (sys.set_int_max_str_digits)
        return f"<{type(value).__name__}>"
