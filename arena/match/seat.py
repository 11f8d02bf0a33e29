"""Seats: what the pool and the referee need of whoever plays a seat (``Seat``), and the seat
played by a bot process (``ProcessSeat``): the handshake and one move, each turned into an
answer or a classified Fault (built by ``faults``, the evidence in ``Fault.detail``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from bot_arena.arena.match import faults
from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.record import Fault
from bot_arena.arena.transport import pauses, protocol
from bot_arena.arena.transport.process import BotProcess, ReadStatus
from bot_arena.arena.transport.protocol import BotFailure, MoveAnswer, ProtocolError, Ready
from bot_arena.games.base import Game


@dataclass(slots=True)
class Reply:
    """A move answer (``move`` text) or a ``fault``, with the time the arena measured."""

    elapsed: float
    move: str = ""
    info: dict[str, Any] | None = None
    fault: Fault | None = None
    # the search info still to be read from what the bot said (``info`` is None until then),
    # for the referee to read once the next request is on its way (``settle``)
    unread: Callable[[], dict[str, Any] | None] | None = None

    def settle(self) -> dict[str, Any] | None:
        """``info``, read now when it was left to be read later."""
        if self.unread is not None:
            self.info, self.unread = self.unread(), None
        return self.info


class Seat(Protocol):
    """Whoever plays a seat. The pool starts it (``start`` then ``finish_start``), the referee
    asks it for moves, the pool keeps it for the next game while it is ``alive`` and ends it
    with ``kill`` (after a fault) or ``close``."""

    ref: BotRef
    games: int  # games started on this seat (0: the next start is its first)

    @property
    def pid(self) -> int | None:
        """The process playing (None: not a process of its own)."""
        ...

    def start(self, message: dict[str, Any]) -> None: ...

    def advance_start(self, deadline: float, game: Game[Any, Any]) -> Fault | None:
        """The middle of a start that needs one answer before it can say more (a UCI
        engine's options follow its ``uciok``): the pool calls it for every seat before
        ``finish_start`` for any, so the seats' last round trips overlap. None when done or
        nothing to do; a fault ends the start as ``finish_start``'s would."""
        ...

    def finish_start(self, deadline: float, game: Game[Any, Any]) -> Fault | None: ...

    def ask(
        self,
        game: Game[Any, Any],
        state: Any,
        request: protocol.MoveRequest,
        hard_limit: float | None,
    ) -> Reply: ...

    def alive(self) -> bool: ...

    def kill(self) -> None: ...

    def ask_quit(self, deadline: float) -> None:
        """Ask it to leave (the first half of a bounded, parallel goodbye)."""
        ...

    def finish_quit(self, deadline: float) -> None:
        """Wait for it to leave until ``deadline``, then make sure it is gone."""
        ...


class MoveWait:
    """One move's wait for its answer, and the one rule for a referee that stood still during
    it (``transport.pauses``: stopped by SIGSTOP or Ctrl-Z, or starved of the CPU), which every
    seat kind (a Python bot's, an engine's) follows:

    - the stop is not the bot's time: an answer that came is charged at most the move's limit;
    - an answer still missing when the wait runs out gets the whole limit again, from the
      resume, **once**. Once and not on every stop: the heartbeat cannot tell a stop from a
      starved CPU, and a bot that can starve the arena (an unconfined one, or one on a loaded
      machine) would otherwise buy a fresh limit again and again; once bounds every wait at
      twice the limit.
    """

    def __init__(self, hard_limit: float | None) -> None:
        self.hard_limit = hard_limit
        self.resumed = pauses.stalls()
        self.sent = time.monotonic()
        self.deadline = None if hard_limit is None else self.sent + hard_limit
        self.extended = False

    def extend(self) -> bool:
        """After the wait ran out: whether the answer gets the limit again (the deadline moved
        to a whole limit from now), the first time the arena is found to have stood still."""
        if self.extended or self.hard_limit is None or not pauses.stood_still(self.resumed):
            return False
        self.extended = True
        self.deadline = time.monotonic() + self.hard_limit
        return True

    def elapsed(self) -> float:
        """The time since the request was sent."""
        return time.monotonic() - self.sent

    def charged(self, request: protocol.MoveRequest) -> float:
        """The time an answer is charged: ``elapsed``, at most the move's limit when the arena
        stood still during the move."""
        elapsed = self.elapsed()
        if request.deadline is not None and (self.extended or pauses.stood_still(self.resumed)):
            return min(elapsed, request.deadline)
        return elapsed


class ProcessSeat:
    """Talks to one BotProcess; any fault leaves the process killed."""

    # whether a move request is made without the position's facts (its legal moves, its text):
    # the referee then sends it first and works those out while the bot thinks (``referee``)
    request_without_facts = False

    def __init__(self, ref: BotRef, process: BotProcess) -> None:
        self.ref = ref
        self.process = process
        self.games = 0  # games started on this process
        self.send_ok = True
        self.bot_name: str | None = None

    # --- evidence ------------------------------------------------------------------------------
    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.alive()

    def kill(self) -> None:
        self.process.kill()

    def _evidence(self) -> dict[str, Any]:
        """Kill the process and return what it left: the exit status, kept only when it ended
        on its own (a status caused by the arena's SIGKILL says nothing), and its stderr."""
        self._settle()
        evidence = self.process.exit_detail()
        self.process.kill()
        evidence["stderr_tail"] = self.process.stderr.tail()
        return evidence

    def _settle(self) -> None:
        """A process that closed its output is probably exiting: give it a moment to."""
        if self.process.proc.poll() is None and (self.process.eof or not self.send_ok):
            self.process.wait_exit(1.0)

    def _exit_message(self) -> str:
        self._settle()
        code = self.process.proc.returncode
        if code is None:
            return "the bot process closed its output"
        if code < 0:
            return f"the bot process was killed by signal {-code}"
        return f"the bot process exited with code {code}"

    # --- handshake -----------------------------------------------------------------------------
    def start(self, message: dict[str, Any]) -> None:
        """Send hello/new_game now; ``finish_start`` collects the answer."""
        self.sent = time.monotonic()
        self.send_ok = self.process.send(protocol.encode(message), self.sent + 5.0)

    def advance_start(self, deadline: float, game: Game[Any, Any]) -> Fault | None:
        return None  # one round trip: the hello and its ready

    def finish_start(self, deadline: float, game: Game[Any, Any]) -> Fault | None:
        """Wait for ``ready`` until ``deadline``; any failure is a stall (or bad output)."""
        # read even when the hello could not be written: a worker that failed to load has
        # said why on its stdout before it exited
        status, raw = self.process.read_line(deadline)
        if status is ReadStatus.TIMEOUT:
            return self._no_handshake(deadline, "handshake")
        if status is ReadStatus.EOF:
            message = f"no handshake: {self._exit_message()}"
            return faults.stall(message, "exited", **self._evidence())
        if status is ReadStatus.TOO_LONG:
            return faults.bad_output("handshake line too long", _text(raw), **self._evidence())
        try:
            answer = protocol.decode_answer(raw)
        except ProtocolError as exc:
            return faults.bad_output(f"bad handshake: {exc}", exc.text, **self._evidence())
        if isinstance(answer, BotFailure):
            return faults.stall(
                f"bot failed to start: {_last_line(answer.message)}",
                answer.phase or "start",
                exception=answer.exception,
                **self._evidence(),
            )
        if not isinstance(answer, Ready):
            return faults.bad_output("expected a ready answer", _text(raw), **self._evidence())
        self.bot_name = answer.name
        self.games += 1
        return None

    def _no_handshake(self, deadline: float, what: str) -> Fault:
        """The stall of a process that did not answer its start (``what``: the answer it owed)
        by ``deadline``; the process is killed. The time it had is said to a hundredth of a
        second: the pool sets one deadline after starting every seat, so a seat had its
        start-up limit plus the milliseconds the starts took ("3.002s" for a 3 s limit)."""
        limit = round(deadline - self.sent, 2)
        self.process.kill()
        return faults.stall(
            f"no {what} within the start-up limit ({limit:g}s)",
            "no handshake",
            startup_s=limit,
            stderr_tail=self.process.stderr.tail(),
        )

    # --- one move ------------------------------------------------------------------------------
    def ask(
        self,
        game: Game[Any, Any],
        state: Any,
        request: protocol.MoveRequest,
        hard_limit: float | None,
    ) -> Reply:
        """One move, for every seat kind: ``post`` then ``collect``."""
        posted = self.post(request, hard_limit)
        if isinstance(posted, Reply):
            return posted
        return self.collect(posted, request)

    def post(self, request: protocol.MoveRequest, hard_limit: float | None) -> MoveWait | Reply:
        """The first half of ``ask``: what came since the last answer is dealt with
        (``_before_request``), then the request (``_request_bytes``) is sent. The MoveWait its
        answer is to be read under (``collect``), or the Reply of a fault found on the way."""
        refused = self._before_request()
        if refused is not None:
            return refused
        data = self._request_bytes(request)
        wait = MoveWait(hard_limit)
        unsent = self._send(data, wait, request)
        if unsent is not None:
            return unsent
        return wait

    def collect(self, wait: MoveWait, request: protocol.MoveRequest) -> Reply:
        """The second half of ``ask``: the answer to the request ``post`` sent, read (and its
        time measured) under ``wait``."""
        return self._answer(wait, request)

    def _before_request(self) -> Reply | None:
        """A line nobody asked for would be taken for the next answer: refuse it."""
        stray = self.process.unsolicited()
        if not stray:
            return None
        fault = faults.bad_output("output without a request", _text(stray), **self._evidence())
        return Reply(0.0, fault=fault)

    def _request_bytes(self, request: protocol.MoveRequest) -> bytes:
        return request.line

    def _answer(self, wait: MoveWait, request: protocol.MoveRequest) -> Reply:
        """The answer line, read by ``wait``'s deadline, judged."""
        process = self.process
        status, raw = process.read_line(wait.deadline)
        if status is ReadStatus.TIMEOUT and wait.extend():
            status, raw = process.read_line(wait.deadline)
        elapsed = wait.charged(request) if status is ReadStatus.LINE else wait.elapsed()
        if status is ReadStatus.LINE:
            try:
                answer = protocol.decode_answer(raw, request.id)
            except ProtocolError as exc:
                message = f"unparseable answer: {exc}"
                return Reply(
                    elapsed, fault=faults.bad_output(message, exc.text, **self._evidence())
                )
            if isinstance(answer, MoveAnswer):
                return Reply(elapsed, answer.move, answer.info)
            if isinstance(answer, BotFailure) and answer.phase == "answer":
                # the worker's word for a value its game cannot write as a move (the message
                # quotes the value the bot returned): bad output, as a text that does not parse
                text = answer.message
                fault = faults.bad_output(text, text, **self._evidence())
                return Reply(elapsed, fault=fault)
            if isinstance(answer, BotFailure):
                message = f"the bot raised {_last_line(answer.exception or answer.message)}"
                fault = faults.crash(message, exception=answer.exception, **self._evidence())
                return Reply(elapsed, fault=fault)
            fault = faults.bad_output("expected a move answer", _text(raw), **self._evidence())
            return Reply(elapsed, fault=fault)
        return self._unanswered(status, raw, elapsed, request, "answer line")

    def _unanswered(
        self,
        status: ReadStatus,
        raw: bytes,
        elapsed: float,
        request: protocol.MoveRequest,
        line: str,
    ) -> Reply:
        """The fault of a wait that ended without an answer: the time ran out, a ``line`` too
        long came, or the process closed its output."""
        if status is ReadStatus.TIMEOUT:
            return Reply(elapsed, fault=self._timeout(elapsed, request))
        if status is ReadStatus.TOO_LONG:
            message = f"{line} longer than {protocol.MAX_LINE} bytes"
            return Reply(elapsed, fault=faults.bad_output(message, _text(raw), **self._evidence()))
        return Reply(elapsed, fault=self._crashed())

    def _send(self, data: bytes, wait: MoveWait, request: protocol.MoveRequest) -> Reply | None:
        """Write a move request; the timeout or crash when it cannot be written, else None."""
        process = self.process
        deadline = wait.deadline
        if process.send(data, deadline):
            return None
        elapsed = wait.elapsed()
        if process.alive() and deadline is not None and time.monotonic() >= deadline:
            return Reply(elapsed, fault=self._timeout(elapsed, request))
        self.send_ok = False
        return Reply(elapsed, fault=self._crashed())

    def _crashed(self) -> Fault:
        message = self._exit_message()
        return faults.crash(message, **self._evidence())

    def _timeout(self, elapsed: float, request: protocol.MoveRequest) -> Fault:
        self.process.kill()
        limit = request.deadline or 0.0
        return faults.no_answer(
            elapsed,
            limit,
            f"no answer within {limit:g}s (+ margin): killed",
            answered=False,
            stderr_tail=self.process.stderr.tail(),
        )

    def ask_quit(self, deadline: float) -> None:
        self.process.send(protocol.encode(protocol.QUIT), deadline)

    def finish_quit(self, deadline: float) -> None:
        self.process.wait_exit(max(0.0, deadline - time.monotonic()))
        self.process.kill()


def _text(raw: bytes) -> str:
    return protocol.truncate(raw.decode("utf-8", "replace"))


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else text
