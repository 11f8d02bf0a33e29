"""The one exception a caller of the Python API catches for bad input."""

from __future__ import annotations


class ArenaError(ValueError):
    """Bad input (an unknown game, a bad option, a bot that cannot be read): the message is the
    one line the ``arena`` command prints after ``error:``. Nothing was stored or started."""
