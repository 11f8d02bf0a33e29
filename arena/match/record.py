"""The value types of a finished match: how it ended, each seat's result, and the move log.

A match record is what the referee produces, what the database stores, what ``arena play --json``
prints and what ratings read. Every way a match can end is a Termination with a reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Termination(StrEnum):
    NORMAL = "normal"  # the game reached a terminal state
    TIMEOUT = "timeout"  # a bot answered after its limit + margin, or never
    CRASH = "crash"  # the bot process died or the bot raised
    ILLEGAL_MOVE = "illegal_move"  # a well-formed move that is not legal in the position
    BAD_OUTPUT = "bad_output"  # an answer the arena cannot parse
    STALL = "stall"  # no handshake within the start-up limit


@dataclass(slots=True)
class Fault:
    """What one seat did wrong. ``detail`` carries the evidence (overrun_ms, exit_code,
    stderr_tail, move, position, ...)."""

    termination: Termination
    message: str
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"termination": self.termination.value, "message": self.message, **self.detail}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Fault:
        rest = {k: v for k, v in data.items() if k not in ("termination", "message")}
        return cls(Termination(data["termination"]), str(data.get("message", "")), rest)


@dataclass(slots=True)
class SeatResult:
    bot: str  # the bot's display name (spec, path or registered name)
    utility: float
    rank: int  # 1 = best; ties share the better rank
    score: float  # share of the points in [0, 1]
    fault: Fault | None = None
    version: str | None = None  # SHA-256 of the bot's source or spec, when known

    def to_dict(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "version": self.version,
            "utility": self.utility,
            "rank": self.rank,
            "score": self.score,
            "fault": self.fault.to_dict() if self.fault else None,
        }


@dataclass(slots=True)
class MoveRecord:
    seat: int
    move: str  # move text in the game's notation
    time_ms: float  # measured by the arena, request sent to answer received
    info: dict[str, Any] | None = None  # the bot's search info, as it reported it
    forced: bool = False  # made by the arena's stand-in random player after a fault

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seat": self.seat, "move": self.move, "time_ms": self.time_ms}
        out["info"] = self.info
        if self.forced:
            out["forced"] = True
        return out


@dataclass(slots=True)
class MatchRecord:
    game: str
    params: dict[str, Any]
    start_position: str  # position text the match started from
    seats: list[SeatResult]
    moves: list[MoveRecord]
    termination: Termination
    final_position: str
    started: float  # wall-clock seconds since the epoch
    finished: float
    time_control: dict[str, Any] = field(default_factory=dict)

    @property
    def duration_s(self) -> float:
        return self.finished - self.started

    def winner(self) -> int | None:
        """The single best seat, or None on a shared first place."""
        firsts = [i for i, s in enumerate(self.seats) if s.rank == 1]
        return firsts[0] if len(firsts) == 1 else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "params": self.params,
            "start_position": self.start_position,
            "final_position": self.final_position,
            "termination": self.termination.value,
            "time_control": self.time_control,
            "seats": [s.to_dict() for s in self.seats],
            "moves": [m.to_dict() for m in self.moves],
            "started": self.started,
            "finished": self.finished,
            "duration_s": round(self.duration_s, 6),
        }
