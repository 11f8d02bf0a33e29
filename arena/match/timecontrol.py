"""Time controls: a fixed time per move, a Fischer game clock, or both, for one seat.

``TimeControl`` is the rule; ``Clock`` is one seat's running state of it during a match. The
arena enforces ``limit + margin``: the bot is told ``limit`` (its deadline), the margin is grace
for pipe and scheduling latency that the bot never sees.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot_arena.arena.transport.protocol import encode_json

DEFAULT_MARGIN = 0.05

_CLOCK = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(?:\+\s*(\d+(?:\.\d*)?|\.\d+))?\s*$")


class TimeControlError(ValueError):
    """A malformed time control (one line, for the command line)."""


def _fmt(seconds: float) -> str:
    return f"{seconds:g}"


@dataclass(frozen=True)
class TimeControl:
    """``move_time`` caps every move; ``base``/``increment`` is a game clock (Fischer).

    With both, a move may take the smaller of the move time and the time left on the clock.
    Neither means no limit (only a human seat should play that way). ``depth`` and ``nodes``
    limit an engine's search as well (UCI's ``go depth``/``go nodes``, cutechess's ``tc=inf
    depth=N``); they bound no time, so the arena's limits above still apply.
    """

    move_time: float | None = None
    base: float | None = None
    increment: float = 0.0
    margin: float = DEFAULT_MARGIN
    depth: int | None = None
    nodes: int | None = None

    def __post_init__(self) -> None:
        for what, value in (
            ("move time", self.move_time),
            ("clock base", self.base),
            ("clock increment", self.increment),
            ("margin", self.margin),
        ):  # nan, inf: no clock can count them, and the stored time control is strict JSON
            if value is not None and not math.isfinite(value):
                raise TimeControlError(f"{what} must be a finite number of seconds, not {value}")
        if self.move_time is not None and not self.move_time > 0:
            raise TimeControlError(f"move time must be > 0 seconds, not {self.move_time}")
        if self.base is not None and not self.base > 0:
            raise TimeControlError(f"clock base must be > 0 seconds, not {self.base}")
        if self.increment < 0:
            raise TimeControlError(f"clock increment must be >= 0, not {self.increment}")
        if self.margin < 0:
            raise TimeControlError(f"margin must be >= 0 seconds, not {self.margin}")
        for what, value in (("depth", self.depth), ("nodes", self.nodes)):
            if value is not None and value < 1:
                raise TimeControlError(f"{what} must be >= 1, not {value}")

    @classmethod
    def parse(
        cls,
        move_time: float | None,
        clock: str | None,
        margin: float = DEFAULT_MARGIN,
        depth: int | None = None,
        nodes: int | None = None,
    ) -> TimeControl:
        """From ``--move-time S`` and ``--clock BASE+INC`` (``"60+0.5"``, ``"300"``), with the
        search limits ``--depth``/``--nodes``."""
        base: float | None = None
        increment = 0.0
        if clock is not None:
            m = _CLOCK.match(clock)
            if not m:
                raise TimeControlError(f"clock {clock!r} is not BASE or BASE+INC in seconds")
            base = float(m.group(1))
            increment = float(m.group(2)) if m.group(2) else 0.0
        return cls(move_time, base, increment, margin, depth, nodes)

    @property
    def unlimited(self) -> bool:
        return self.move_time is None and self.base is None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "move_time": self.move_time,
            "base": self.base,
            "increment": self.increment,
            "margin": self.margin,
        }
        if self.depth is not None:  # only when set: records stored before them read the same
            out["depth"] = self.depth
        if self.nodes is not None:
            out["nodes"] = self.nodes
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TimeControl:
        return cls(
            move_time=d.get("move_time"),
            base=d.get("base"),
            increment=float(d.get("increment") or 0.0),
            margin=float(d.get("margin", DEFAULT_MARGIN)),
            depth=None if d.get("depth") is None else int(d["depth"]),
            nodes=None if d.get("nodes") is None else int(d["nodes"]),
        )

    def describe(self) -> str:
        parts = []
        if self.move_time is not None:
            parts.append(f"move {_fmt(self.move_time)}s")
        if self.base is not None:
            parts.append(f"{_fmt(self.base)}+{_fmt(self.increment)}")
        if self.depth is not None:
            parts.append(f"depth {self.depth}")
        if self.nodes is not None:
            parts.append(f"nodes {self.nodes}")
        return " ".join(parts) or "unlimited"

    def clock(self) -> Clock:
        return Clock(self)


def per_seat(
    time_control: TimeControl | Sequence[TimeControl], seats: int
) -> tuple[TimeControl, ...]:
    """One time control per seat: a single one is shared, a sequence must match the seats."""
    if isinstance(time_control, TimeControl):
        return (time_control,) * seats
    tcs = tuple(time_control)
    if len(tcs) != seats:
        raise TimeControlError(f"{len(tcs)} time controls for {seats} seats")
    return tcs


def seats_dict(tcs: Sequence[TimeControl]) -> dict[str, Any]:
    """What a MatchRecord stores: ``{"seats": [tc, ...]}``."""
    return {"seats": [tc.to_dict() for tc in tcs]}


_START_JSON: dict[TimeControl, str] = {}  # Clock.request_json() before the first move, by rule


class Clock:
    """One seat's clock during a match (seconds; the referee feeds it measured durations)."""

    __slots__ = ("_json", "_json_remaining", "remaining", "tc")

    def __init__(self, tc: TimeControl) -> None:
        self.tc = tc
        self.remaining: float | None = tc.base
        self._json = ""  # request() as JSON while remaining == _json_remaining
        self._json_remaining: float | None = None

    def limit(self) -> float | None:
        """Seconds the next move may take (what the bot is told), ``None`` for no limit."""
        mt, rem = self.tc.move_time, self.remaining
        if rem is None:
            return mt
        return rem if mt is None else min(mt, rem)

    def hard_limit(self) -> float | None:
        """When the arena gives up on the bot: the limit plus the margin."""
        lim = self.limit()
        return None if lim is None else lim + self.tc.margin

    def request(self) -> dict[str, Any]:
        """The clock as sent in a move request (``deadline`` = seconds from receipt)."""
        return {
            "move_time": self.tc.move_time,
            "remaining": self.remaining,
            "increment": self.tc.increment,
            "deadline": self.limit(),
        }

    def request_json(self) -> str:
        """``request()`` as compact JSON text, encoded again only after the clock has changed
        (with a fixed move time alone it never does)."""
        if not self._json or self._json_remaining != self.remaining:
            remaining = self.remaining
            if remaining == self.tc.base:  # every game starts here: shared across games
                key = self.tc
                text = _START_JSON.get(key)
                if text is None:
                    if len(_START_JSON) >= 256:
                        _START_JSON.clear()
                    text = _START_JSON[key] = encode_json(self.request())
            else:
                text = encode_json(self.request())
            self._json, self._json_remaining = text, remaining
        return self._json

    def overrun(self, elapsed: float) -> float | None:
        """Seconds past the limit when ``elapsed`` is a loss on time, else ``None``."""
        lim = self.limit()
        if lim is None or elapsed <= lim + self.tc.margin:
            return None
        return elapsed - lim

    def spend(self, elapsed: float) -> None:
        """Charge a move that was in time; the Fischer increment comes after the move."""
        if self.remaining is not None:
            self.remaining = max(0.0, self.remaining - elapsed) + self.tc.increment
