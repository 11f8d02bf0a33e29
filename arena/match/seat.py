"""A seat played by a bot process: the handshake and one move, each turned into an answer or a
classified Fault (the evidence goes into ``Fault.detail``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.record import Fault, Termination
from bot_arena.arena.transport import protocol
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


class ProcessSeat:
    """Talks to one BotProcess; any fault leaves the process killed."""

    human = False

    def __init__(self, ref: BotRef, process: BotProcess) -> None:
        self.ref = ref
        self.process = process
        self.games = 0  # games started on this process
        self.send_ok = True
        self.bot_name: str | None = None

    # --- evidence ------------------------------------------------------------------------------
    def _died(self, termination: Termination, message: str, **detail: Any) -> Fault:
        """Kill the process and build a fault; the exit status is kept only when the process
        ended on its own (a status caused by the arena's SIGKILL says nothing)."""
        self._settle()
        detail.update(self.process.exit_detail())
        self.process.kill()
        detail["stderr_tail"] = self.process.stderr.tail()
        return Fault(termination, message, detail)

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

    def finish_start(self, deadline: float, game: Game[Any, Any]) -> Fault | None:
        """Wait for ``ready`` until ``deadline``; any failure is a stall (or bad output)."""
        # read even when the hello could not be written: a worker that failed to load has
        # said why on its stdout before it exited
        status, raw = self.process.read_line(deadline)
        if status is ReadStatus.TIMEOUT:
            limit = round(deadline - self.sent, 3)
            self.process.kill()
            return Fault(
                Termination.STALL,
                f"no handshake within the start-up limit ({limit:g}s)",
                {
                    "reason": "no handshake",
                    "startup_s": limit,
                    "stderr_tail": self.process.stderr.tail(),
                },
            )
        if status is ReadStatus.EOF:
            return self._died(
                Termination.STALL, f"no handshake: {self._exit_message()}", reason="exited"
            )
        if status is ReadStatus.TOO_LONG:
            return self._died(Termination.BAD_OUTPUT, "handshake line too long", answer=_text(raw))
        try:
            answer = protocol.decode_answer(raw)
        except ProtocolError as exc:
            return self._died(Termination.BAD_OUTPUT, f"bad handshake: {exc}", answer=exc.text)
        if isinstance(answer, BotFailure):
            return self._died(
                Termination.STALL,
                f"bot failed to start: {_last_line(answer.message)}",
                reason=answer.phase or "start",
                exception=answer.exception,
            )
        if not isinstance(answer, Ready):
            return self._died(Termination.BAD_OUTPUT, "expected a ready answer", answer=_text(raw))
        self.bot_name = answer.name
        self.games += 1
        return None

    # --- one move ------------------------------------------------------------------------------
    def ask(
        self,
        game: Game[Any, Any],
        state: Any,
        request: protocol.MoveRequest,
        hard_limit: float | None,
    ) -> Reply:
        process = self.process
        stray = process.unsolicited()
        if stray:  # a line nobody asked for would be taken for the next answer: refuse it
            return Reply(
                0.0,
                fault=self._died(
                    Termination.BAD_OUTPUT, "output without a request", answer=_text(stray)
                ),
            )
        sent = time.monotonic()
        deadline = None if hard_limit is None else sent + hard_limit
        if not process.send(request.line, deadline):
            elapsed = time.monotonic() - sent
            if process.alive() and deadline is not None and time.monotonic() >= deadline:
                return Reply(elapsed, fault=self._timeout(elapsed, request))
            self.send_ok = False
            return Reply(elapsed, fault=self._died(Termination.CRASH, self._exit_message()))
        status, raw = process.read_line(deadline)
        elapsed = time.monotonic() - sent
        if status is ReadStatus.LINE:
            try:
                answer = protocol.decode_answer(raw, request.id)
            except ProtocolError as exc:
                return Reply(
                    elapsed,
                    fault=self._died(
                        Termination.BAD_OUTPUT, f"unparseable answer: {exc}", answer=exc.text
                    ),
                )
            if isinstance(answer, MoveAnswer):
                return Reply(elapsed, answer.move, answer.info)
            if isinstance(answer, BotFailure):
                return Reply(
                    elapsed,
                    fault=self._died(
                        Termination.CRASH,
                        f"the bot raised {_last_line(answer.exception or answer.message)}",
                        exception=answer.exception,
                    ),
                )
            return Reply(
                elapsed,
                fault=self._died(
                    Termination.BAD_OUTPUT, "expected a move answer", answer=_text(raw)
                ),
            )
        if status is ReadStatus.TIMEOUT:
            return Reply(elapsed, fault=self._timeout(elapsed, request))
        if status is ReadStatus.TOO_LONG:
            return Reply(
                elapsed,
                fault=self._died(
                    Termination.BAD_OUTPUT,
                    f"answer line longer than {protocol.MAX_LINE} bytes",
                    answer=_text(raw),
                ),
            )
        return Reply(elapsed, fault=self._died(Termination.CRASH, self._exit_message()))

    def _timeout(self, elapsed: float, request: protocol.MoveRequest) -> Fault:
        self.process.kill()
        limit = request.deadline or 0.0
        return Fault(
            Termination.TIMEOUT,
            f"no answer within {limit:g}s (+ margin): killed",
            {
                "overrun_ms": round((elapsed - limit) * 1000, 3),
                "limit_s": limit,
                "answered": False,
                "stderr_tail": self.process.stderr.tail(),
            },
        )

    def late(self, elapsed: float, limit: float) -> Fault:
        """An answer that came after limit + margin: lost on time (the process is replaced)."""
        self.process.kill()
        return Fault(
            Termination.TIMEOUT,
            f"answered after {elapsed:.3f}s, limit {limit:g}s",
            {"overrun_ms": round((elapsed - limit) * 1000, 3), "limit_s": limit, "answered": True},
        )

    def close(self) -> None:
        self.process.quit(protocol.encode(protocol.QUIT), 0.5)


def _text(raw: bytes) -> str:
    return protocol.truncate(raw.decode("utf-8", "replace"))


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else text
