"""The value types of a finished match: how it ended, each seat's result, and the move log.

A match record is what the referee produces, what the database stores, what ``arena play --json``
prints and what ratings read. Every way a match can end is a Termination with a reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class RecordError(ValueError):
    """Data that is not a well-formed record (``from_dict`` of a value type below)."""


def _get(data: Any, key: str, kind: type | tuple[type, ...], what: str) -> Any:
    """``data[key]`` when ``data`` is a dict and the value is of ``kind`` (bools are not
    numbers), else RecordError."""
    if not isinstance(data, dict):
        raise RecordError(f"{what} is not an object")
    value = data.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _kinds(kind)):
        raise RecordError(f"{what}: {key!r} is missing or of the wrong type")
    return value


def _optional(data: Any, key: str, kind: type, what: str, default: Any = None) -> Any:
    """``data[key]`` of ``kind``, or ``default`` when absent (null too, where the default is
    None); RecordError otherwise."""
    value = data.get(key, default) if isinstance(data, dict) else default
    if value is None and default is None:
        return None
    if not isinstance(value, kind):
        names = {str: "a string", dict: "an object", bool: "a boolean"}
        raise RecordError(f"{what}: {key!r} is not {names.get(kind, kind.__name__)}")
    return value


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _number(data: Any, key: str, what: str) -> float:
    value = float(_get(data, key, (int, float), what))
    if not math.isfinite(value):
        raise RecordError(f"{what}: {key!r} is not a finite number")
    return value


def _termination(value: Any, what: str) -> Termination:
    try:
        return Termination(value)
    except ValueError:
        raise RecordError(f"{what}: unknown termination {str(value)[:40]!r}") from None


class Termination(StrEnum):
    NORMAL = "normal"  # the game reached a terminal state
    TIMEOUT = "timeout"  # a bot answered after its limit + margin, or never
    CRASH = "crash"  # the bot process died or the bot raised
    ILLEGAL_MOVE = "illegal_move"  # a well-formed move that is not legal in the position
    BAD_OUTPUT = "bad_output"  # an answer the arena cannot parse
    STALL = "stall"  # no handshake within the start-up limit
    RESIGN = "resign"  # a person gave the game up (``resign``, ``quit``): a loss, not a fault
    ADJUDICATED = "adjudicated"  # ended by an adjudication rule (``MatchRecord.adjudication``)


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
        """The inverse of ``to_dict`` (RecordError on data that is not a fault)."""
        if not isinstance(data, dict):
            raise RecordError("fault is not an object")
        rest = {k: v for k, v in data.items() if k not in ("termination", "message")}
        termination = _termination(data.get("termination"), "fault")
        return cls(termination, str(data.get("message", "")), rest)


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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SeatResult:
        """The inverse of ``to_dict`` (RecordError on data that is not a seat's result)."""
        what = "seat"
        fault = _optional(data, "fault", dict, what)
        return cls(
            bot=_get(data, "bot", str, what),
            utility=_number(data, "utility", what),
            rank=_get(data, "rank", int, what),
            score=_number(data, "score", what),
            fault=None if fault is None else Fault.from_dict(fault),
            version=_optional(data, "version", str, what),
        )


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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MoveRecord:
        """The inverse of ``to_dict`` (RecordError on data that is not a move). A record has a
        move per ply and the runner decodes every record a job sends, so the usual shape (what
        ``to_dict`` writes, read back by ``json``) is checked in one expression; anything else
        takes the field-by-field checks, which accept and refuse exactly as before."""
        if type(data) is dict:
            seat, move, spent = data.get("seat"), data.get("move"), data.get("time_ms")
            info, forced = data.get("info"), data.get("forced", False)
            if (
                type(seat) is int
                and type(move) is str
                and type(spent) is float
                and spent - spent == 0.0  # finite (JSON reads 1e999 as infinity)
                and (info is None or type(info) is dict)
                and type(forced) is bool
            ):
                return cls(seat, move, spent, info, forced)
        what = "move"
        return cls(
            seat=_get(data, "seat", int, what),
            move=_get(data, "move", str, what),
            time_ms=_number(data, "time_ms", what),
            info=_optional(data, "info", dict, what),
            forced=_optional(data, "forced", bool, what, False),
        )


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
    # the verdict of an adjudication rule (``adjudication.Adjudicator.after``), with termination
    # ``adjudicated``; None for a game that ended otherwise
    adjudication: dict[str, Any] | None = None

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
            **({"adjudication": self.adjudication} if self.adjudication is not None else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MatchRecord:
        """The inverse of ``to_dict`` (``duration_s`` is derived, so ignored). Checks every
        field's type (RecordError otherwise), not that the match could have been played so:
        that is ``verify.check_record``."""
        what = "record"
        return cls(
            game=_get(data, "game", str, what),
            params=_get(data, "params", dict, what),
            start_position=_get(data, "start_position", str, what),
            seats=[SeatResult.from_dict(s) for s in _get(data, "seats", list, what)],
            moves=[MoveRecord.from_dict(m) for m in _get(data, "moves", list, what)],
            termination=_termination(data.get("termination"), what),
            final_position=_get(data, "final_position", str, what),
            started=_number(data, "started", what),
            finished=_number(data, "finished", what),
            time_control=_get(data, "time_control", dict, what),
            adjudication=_optional(data, "adjudication", dict, what),
        )
