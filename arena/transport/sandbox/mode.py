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
    """How a pool confines its bots: the mode, and paths every bot may read besides what it
    needs to run (``--allow-read``: an engine's network file, an opening book)."""

    mode: Mode = Mode.AUTO
    allow_read: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode.value, "allow_read": list(self.allow_read)}

    @classmethod
    def from_dict(cls, data: Any) -> SandboxSettings:
        """The inverse of ``to_dict`` (ValueError on anything else)."""
        if not isinstance(data, dict) or set(data) != {"mode", "allow_read"}:
            raise ValueError("sandbox: not an object with exactly mode and allow_read")
        paths = data["allow_read"]
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise ValueError("sandbox: allow_read is not a list of paths")
        return cls(parse_mode(str(data["mode"])), tuple(paths))
