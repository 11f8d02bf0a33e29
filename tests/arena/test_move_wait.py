"""The one stall rule (``seat.MoveWait``) as both seat kinds follow it: a Python bot's seat
(``ProcessSeat``) and an engine's (``EngineSeat``, which reads many lines per move). A referee
that stood still during a move gives a missing answer the limit again once, never twice, and
charges an answer that came at most the move's limit.

The processes are scripted stand-ins (no process, no real stop): ``pauses.stood_still`` is
patched to say the arena stood still during every wait. The real stop of a real referee is in
test_referee_pauses.py."""

from __future__ import annotations

import pytest

from bot_arena import games
from bot_arena.arena.match import seat as seat_module
from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.engine import EngineSeat
from bot_arena.arena.match.record import Termination
from bot_arena.arena.match.seat import MoveWait, ProcessSeat, Reply
from bot_arena.arena.transport import protocol
from bot_arena.arena.transport.process import ReadStatus

LIMIT = 5.0  # the hard limit: never waited for, the script answers at once
ANSWER = b'{"type": "move", "id": 1, "move": "4"}'


class Script:
    """A bot process that answers ``read_line`` from a list (then times out, at most ten times:
    a seat that waited on and on fails the test instead of hanging it)."""

    def __init__(self, lines: list[tuple[ReadStatus, bytes]]) -> None:
        self.lines = lines
        self.deadlines: list[float | None] = []
        self.stderr = self

    def read_line(self, deadline: float | None) -> tuple[ReadStatus, bytes]:
        self.deadlines.append(deadline)
        assert len(self.deadlines) <= 10, "the seat waits on and on"
        return self.lines.pop(0) if self.lines else (ReadStatus.TIMEOUT, b"")

    def unsolicited(self) -> bytes:
        return b""

    def send(self, data: bytes, deadline: float | None) -> bool:
        return True

    def alive(self) -> bool:
        return True

    def kill(self) -> None:
        pass

    def tail(self) -> str:
        return ""


class Engine(EngineSeat):
    def move_request(self, request: protocol.MoveRequest) -> str:
        return "go\n"

    def read_answer(self, raw: bytes) -> Reply | None:
        return Reply(0.0, raw.split()[1].decode()) if raw.startswith(b"bestmove") else None


def seat(kind: str, script: Script) -> ProcessSeat:
    ref = BotRef("x", "builtin", "x")
    cls = Engine if kind == "engine" else ProcessSeat
    return cls(ref, script)  # type: ignore[arg-type]


def request(deadline: float | None = 0.001) -> protocol.MoveRequest:
    return protocol.MoveRequest(1, b"{}\n", {"4": 4}, deadline)


def ask(kind: str, script: Script, deadline: float | None = 0.001) -> Reply:
    return seat(kind, script).ask(games.get("tictactoe"), None, request(deadline), LIMIT)


@pytest.fixture
def stood_still(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seat_module.pauses, "stood_still", lambda since: True)


@pytest.mark.parametrize("kind", ["python", "engine"])
def test_without_a_stop_the_limit_is_waited_for_once(kind: str) -> None:
    script = Script([])
    reply = ask(kind, script)
    assert reply.fault is not None and reply.fault.termination is Termination.TIMEOUT
    assert len(script.deadlines) == 1


@pytest.mark.parametrize("kind", ["python", "engine"])
def test_after_a_stop_a_missing_answer_gets_the_limit_again_once(
    kind: str, stood_still: None
) -> None:
    script = Script([])
    reply = ask(kind, script)
    assert reply.fault is not None and reply.fault.termination is Termination.TIMEOUT
    first, second = script.deadlines  # two waits, not more
    assert first is not None and second is not None and second > first


@pytest.mark.parametrize("kind", ["python", "engine"])
def test_an_answer_after_a_stop_is_charged_at_most_the_limit(kind: str, stood_still: None) -> None:
    line = b"bestmove 4" if kind == "engine" else ANSWER
    script = Script([(ReadStatus.TIMEOUT, b""), (ReadStatus.LINE, line)])
    reply = ask(kind, script, deadline=0.0)
    assert reply.fault is None and reply.move == "4" and reply.elapsed == 0.0


def test_the_rule_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    stopped = False
    monkeypatch.setattr(seat_module.pauses, "stood_still", lambda since: stopped)
    wait = MoveWait(LIMIT)
    assert not wait.extend() and wait.charged(request(0.0)) >= 0.0
    stopped = True
    first = wait.deadline
    assert wait.extend() and wait.deadline is not None and first is not None
    assert wait.deadline >= first and not wait.extend()
    assert wait.charged(request(0.0)) == 0.0 and wait.charged(request(None)) > 0.0
    assert not MoveWait(None).extend()  # no limit: nothing to give again
