"""What the seats of chess engines share (``uci``, ``xboard``): a move asked as lines of the
engine's protocol and answered by lines until the one that names the move, on the arena's own
pipes, deadlines and fault classes (``ProcessSeat``); a start that waits for a word.

A subclass says how a move is asked (``move_request``) and reads each line of the answer
(``read_answer``: the Reply once the move, or a resignation, has come; None to read on), and
names its protocol's opening words (``greeting``: UCI's ``uci``). Those are sent once a
process: by its first start, or ahead of it (``greet``) when the pool starts the process before
its first game (``BotPool.prestart``), so that the engine loads and answers while the run gets
ready and the first start finds the answer waiting.
"""

from __future__ import annotations

import time

from bot_arena.arena.match import faults
from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.record import Fault
from bot_arena.arena.match.seat import MoveWait, ProcessSeat, Reply
from bot_arena.arena.transport import protocol
from bot_arena.arena.transport.process import BotProcess, ReadStatus

MAX_START_LINES = 1000  # lines (option names) kept of what an engine says before it is ready
MAX_START_LINE = 1000  # characters kept of each of them (an option's name is in its start)
# lines read past between two moves (late info), and their bytes: an engine that talks on and
# on is answered all the same, its talk read with the next move's answer, by that deadline
MAX_LATE_LINES = 1000
MAX_HEARD = 2000  # lines one reading ahead of a start takes (``_hear``: bounded, never waits)


class EngineSeat(ProcessSeat):
    """A process spoken to in an engine protocol; any fault leaves it killed."""

    request_without_facts = True  # a request is the moves so far and the clocks
    greeting = b""  # the protocol's opening words to a new process

    def __init__(self, ref: BotRef, process: BotProcess) -> None:
        super().__init__(ref, process)
        self.greeted = False  # whether ``greeting`` went to this process
        self.heard: list[str] = []  # lines read ahead of the first start (``_hear``)
        self.unheard: tuple[ReadStatus, bytes] | None = None  # what ended that reading

    def greet(self) -> None:
        """Send the greeting now, ahead of the first game (its start then sends it no more);
        nothing when it was sent. A greeting that cannot be written is found as at the start:
        ``send_ok`` false, the start's wait ends with the exit."""
        self._greet(time.monotonic() + 5.0)

    def _greet(self, deadline: float) -> None:
        """The greeting, once a process (a first start calls this: sent unless ``greet`` was)."""
        if not self.greeted:
            self.greeted = True
            self.send_ok = self.process.send(self.greeting, deadline)

    def move_request(self, request: protocol.MoveRequest) -> str:
        """The lines that ask for the move of ``request``."""
        raise NotImplementedError

    def read_answer(self, raw: bytes) -> Reply | None:
        """The answer once ``raw`` completes it (its ``elapsed`` is set by the caller)."""
        raise NotImplementedError

    def _before_request(self) -> Reply | None:
        """Read past the lines after the last move (late info), a bounded number."""
        process = self.process
        late = 0
        for _ in range(MAX_LATE_LINES):
            if late > protocol.MAX_LINE or not process.unsolicited():
                break
            status, raw = process.read_line(time.monotonic())
            if status is not ReadStatus.LINE:
                break
            late += len(raw) + 1
        return None

    def _request_bytes(self, request: protocol.MoveRequest) -> bytes:
        return self.move_request(request).encode()

    def _answer(self, wait: MoveWait, request: protocol.MoveRequest) -> Reply:
        """Lines read until the one that completes the answer, by ``wait``'s deadline."""
        process = self.process
        while True:
            status, raw = process.read_line(wait.deadline)
            if status is ReadStatus.LINE:
                answer = self.read_answer(raw)
                if answer is not None:
                    answer.elapsed = wait.charged(request)
                    return answer
                if wait.deadline is None or time.monotonic() < wait.deadline:
                    continue
                # a line is there whenever it is asked for: talk that goes on past the limit
                # is no answer either (read_line only says TIMEOUT when none is)
                status = ReadStatus.TIMEOUT
            if status is ReadStatus.TIMEOUT and wait.extend():
                continue  # the arena stood still while the engine thought (MoveWait's rule)
            break
        return self._unanswered(status, raw, wait.elapsed(), request, "line")

    def _hear(self, word: str) -> bool:
        """Read what the engine has said so far, without waiting (at most MAX_HEARD lines a
        call), keeping the lines as ``_wait_for`` does; whether the line ``word`` came (the
        lines before it are in ``heard``). Anything but a line (the output ended, a line too
        long) ends the reading ahead and is kept for ``_wait_for``, which then ends as it
        would have without it."""
        for _ in range(MAX_HEARD):
            if self.unheard is not None:
                return False
            status, raw = self.process.read_line(time.monotonic())  # poll(0): nothing waits
            if status is ReadStatus.TIMEOUT:
                return False
            if status is not ReadStatus.LINE:
                self.unheard = (status, raw)
                return False
            if _kept_until(raw, word, self.heard):
                return True
        return False

    def _wait_for(self, word: str, deadline: float) -> list[str] | Fault:
        """The lines before the line ``word`` by ``deadline`` (the first MAX_START_LINES, each
        cut to MAX_START_LINE characters: an engine's talk before it is ready cannot fill the
        arena's memory), or the stall or bad output. The lines read ahead (``_hear``) come
        first, and what ended that reading is read again here."""
        lines, self.heard = self.heard, []
        while True:
            if self.unheard is not None:
                (status, raw), self.unheard = self.unheard, None
            else:
                status, raw = self.process.read_line(deadline)
            if status is ReadStatus.LINE:
                if _kept_until(raw, word, lines):
                    return lines
                if time.monotonic() < deadline:
                    continue
                status = ReadStatus.TIMEOUT  # talk that goes on past the start-up limit
            if status is ReadStatus.TIMEOUT:
                return self._no_handshake(deadline, word)
            return self._start_failure(status, raw, word)

    def _start_failure(self, status: ReadStatus, raw: bytes, what: str) -> Fault:
        """The fault of a start that ended before ``what``: a line too long, or the exit."""
        if status is ReadStatus.TOO_LONG:
            message = f"line longer than {protocol.MAX_LINE} bytes before {what}"
            return faults.bad_output(message, _text(raw), **self._evidence())
        return faults.stall(f"no {what}: {self._exit_message()}", "exited", **self._evidence())


def _kept_until(raw: bytes, word: str, lines: list[str]) -> bool:
    """Whether the line ``raw`` is ``word``; else it is kept in ``lines`` (the first
    MAX_START_LINES, each cut to MAX_START_LINE characters): a start's one rule for its lines,
    read ahead or waited for."""
    line = raw.decode("utf-8", "replace").strip()
    if line == word:
        return True
    if len(lines) < MAX_START_LINES:
        lines.append(line[:MAX_START_LINE])
    return False


def _text(raw: bytes) -> str:
    return protocol.truncate(raw.decode("utf-8", "replace"))
