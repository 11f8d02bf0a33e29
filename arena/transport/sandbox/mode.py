"""What the user asks for (``--sandbox auto|on|off``, ``ARENA_SANDBOX``) and what a match ran
under (the level stored with each match)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

ENV_VAR = "ARENA_SANDBOX"


class Mode(StrEnum):
    """``auto``: confine with what the machine offers; ``on``: refuse to run less than fully
    confined; ``off``: bots run as the arena's user with its files, network and processes."""

    AUTO = "auto"
    ON = "on"
    OFF = "off"


# what a match ran under (stored per match): every layer, some layers, none
CONFINED = "confined"
PARTIAL = "partial"
UNCONFINED = "off"
LEVELS = (CONFINED, PARTIAL, UNCONFINED)


class SandboxUnavailable(RuntimeError):
    """``--sandbox on`` on a machine that cannot confine bots fully (the message says what is
    missing, in one line)."""


def parse_mode(value: str | None) -> Mode:
    """``value``, or else ``$ARENA_SANDBOX``, or else ``auto``; ValueError (one line) on a
    word that is not a mode."""
    if value is None:
        value = os.environ.get(ENV_VAR) or Mode.AUTO.value
    try:
        return Mode(value.strip().lower())
    except ValueError:
        words = "|".join(m.value for m in Mode)
        raise ValueError(f"sandbox mode must be {words}, not {value!r}") from None


@dataclass(frozen=True)
class SandboxSettings:
    """How a pool confines its bots: the mode, paths every bot may read besides what it needs
    to run (``--allow-read PATH``: an opening book), and paths one bot may read (``--allow-read
    NAME=PATH``: an engine's network file), as (bot name, path) pairs."""

    mode: Mode = Mode.AUTO
    allow_read: tuple[str, ...] = ()
    allow_read_for: tuple[tuple[str, str], ...] = ()

    def readable(self, bot: str) -> tuple[str, ...]:
        """What ``--allow-read`` lets the bot named ``bot`` read."""
        return (*self.allow_read, *(path for name, path in self.allow_read_for if name == bot))

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode.value,
            "allow_read": list(self.allow_read),
            "allow_read_for": [list(pair) for pair in self.allow_read_for],
        }

    @classmethod
    def from_dict(cls, data: Any) -> SandboxSettings:
        """The inverse of ``to_dict`` (ValueError on anything else)."""
        keys = {"mode", "allow_read", "allow_read_for"}
        if not isinstance(data, dict) or set(data) != keys:
            raise ValueError("sandbox: not an object with exactly mode, allow_read, allow_read_for")
        paths, pairs = data["allow_read"], data["allow_read_for"]
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise ValueError("sandbox: allow_read is not a list of paths")
        if not isinstance(pairs, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
            for p in pairs
        ):
            raise ValueError("sandbox: allow_read_for is not a list of [bot, path] pairs")
        return cls(parse_mode(str(data["mode"])), tuple(paths), tuple((n, p) for n, p in pairs))
