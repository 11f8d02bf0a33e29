"""Every fault a seat can be charged with, built in one place with its evidence.

The seats (a bot process, a person at the terminal), the pool (a process that cannot start) and
the referee (late, unparseable or illegal answers) all describe faults through these functions,
so a kind of fault carries the same evidence keys wherever it was found: ``overrun_ms`` and
``limit_s`` for time, ``answer`` for output, ``move`` and ``position`` for an illegal move,
``reason`` for a stall or a person giving up, plus what the caller adds (``stderr_tail``,
``exit_code``, ...).
"""

from __future__ import annotations

from typing import Any

from bot_arena.arena.match.record import Fault, Termination
from bot_arena.arena.transport.protocol import truncate

MAX_MESSAGE = 500  # characters of a fault's message (it quotes a bot's words at times)
MAX_EVIDENCE = 2000  # characters of each text of its evidence (as the stderr tail keeps)


def _fault(termination: Termination, message: str, evidence: dict[str, Any]) -> Fault:
    """Every fault is made here, its message and the texts of its evidence cut to size
    whoever supplied them: a bot's words reach them through the errors that quote its answer
    (an answer's id, its type), its stderr, an engine's list of options."""
    detail = {key: _capped(value) for key, value in evidence.items()}
    return Fault(termination, truncate(message, MAX_MESSAGE), detail)


def _capped(value: Any) -> Any:
    if isinstance(value, str):
        return truncate(value, MAX_EVIDENCE)
    if isinstance(value, list):
        return [_capped(item) for item in value]
    return value


def _overrun(elapsed: float, limit: float) -> dict[str, float]:
    return {"overrun_ms": round((elapsed - limit) * 1000, 3), "limit_s": limit}


def no_answer(elapsed: float, limit: float, message: str, **evidence: Any) -> Fault:
    """No answer before the hard deadline (the limit + margin)."""
    return _fault(Termination.TIMEOUT, message, {**_overrun(elapsed, limit), **evidence})


def late(elapsed: float, limit: float) -> Fault:
    """An answer that came after the limit + margin (``Clock.overrun`` said so): lost on time."""
    return _fault(
        Termination.TIMEOUT,
        f"answered after {elapsed:.3f}s, limit {limit:g}s",
        {**_overrun(elapsed, limit), "answered": True},
    )


def stall(message: str, reason: str, **evidence: Any) -> Fault:
    """The bot never became ready: it could not start, said it failed, or did not answer the
    handshake within the start-up limit."""
    return _fault(Termination.STALL, message, {"reason": reason, **evidence})


def crash(message: str, **evidence: Any) -> Fault:
    """The bot's process died, or the bot raised while choosing a move."""
    return _fault(Termination.CRASH, message, evidence)


def gave_up(message: str, command: str) -> Fault:
    """A person at the terminal typed ``command`` (``resign``, ``quit``) instead of a move: a
    loss, recorded as a resignation (``reason`` keeps what was typed). The ratings count it as
    any loss, not as a fault of the seat's program."""
    return _fault(Termination.RESIGN, message, {"reason": command})


def bad_output(message: str, answer: str, **evidence: Any) -> Fault:
    """An answer the arena cannot read; ``answer`` is what it said, already cut to size by the
    reader (``protocol.truncate``: the protocol's errors carry it so)."""
    return _fault(Termination.BAD_OUTPUT, message, {"answer": answer, **evidence})


def illegal_move(text: str, position: str) -> Fault:
    """A well-formed move that is not legal in ``position``."""
    return _fault(
        Termination.ILLEGAL_MOVE,
        f"illegal move {truncate(text, 40)!r}",
        {"move": truncate(text), "position": position},
    )
