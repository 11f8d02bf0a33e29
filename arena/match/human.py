"""The ``human`` seat: a person at the terminal, in the arena's own process.

The board, the time left and the legal moves are shown once per move, bad input is asked again;
``resign`` or ``quit`` gives the game up (a loss, as any fault). There is no time limit unless
one is given, and then the limit is enforced while waiting for the line (``select`` on stdin).
"""

from __future__ import annotations

import select
import sys
import time
from typing import Any, TextIO

from bot_arena.arena.match import faults
from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.record import Fault
from bot_arena.arena.match.seat import Reply
from bot_arena.arena.transport.protocol import MoveRequest
from bot_arena.games.base import Game, GameError

#: What a person may type instead of a move, and the message of the fault it is recorded as.
GIVE_UP = {"resign": "resigned", "quit": "quit the game"}


class HumanSeat:
    """A ``Seat`` with no process of its own: never kept for another game, nothing to kill."""

    def __init__(self, ref: BotRef, stdin: TextIO | None = None, out: TextIO | None = None) -> None:
        self.ref = ref
        self.stdin = stdin or sys.stdin
        self.out = out or sys.stderr
        self.games = 0

    @property
    def pid(self) -> None:
        return None

    def alive(self) -> bool:
        return False  # a person is asked afresh for every match

    def kill(self) -> None:
        pass

    def start(self, message: dict[str, Any]) -> None:
        self.seat = int(message["seat"])

    def advance_start(self, deadline: float, game: Game[Any, Any]) -> Fault | None:
        return None

    def finish_start(self, deadline: float, game: Game[Any, Any]) -> Fault | None:
        self.games += 1
        return None

    def _readline(self, deadline: float | None) -> str | None:
        """A line from the terminal, or None at the deadline or end of input."""
        if deadline is not None:
            try:
                ready, _, _ = select.select(
                    [self.stdin], [], [], max(0.0, deadline - time.monotonic())
                )
            except (ValueError, OSError, TypeError):
                ready = [self.stdin]  # not selectable (tests): read directly
            if not ready:
                return None
        line = self.stdin.readline()
        return line if line else None

    def ask(
        self,
        game: Game[Any, Any],
        state: Any,
        request: MoveRequest,
        hard_limit: float | None,
    ) -> Reply:
        sent = time.monotonic()
        deadline = None if hard_limit is None else sent + hard_limit
        self._show(game, state, request)
        while True:
            print("> ", end="", file=self.out, flush=True)
            line = self._readline(deadline)
            elapsed = time.monotonic() - sent
            if line is None:
                return Reply(elapsed, fault=self._missing(deadline, elapsed, request))
            text = line.strip()
            try:
                move = game.move_from_text(state, text)
            except GameError as exc:
                command = text.lower()
                if command in GIVE_UP:  # only when not a move: a game may name a move so
                    return Reply(elapsed, fault=faults.gave_up(GIVE_UP[command], command))
                print(f"{exc}; legal: {' '.join(request.legal)}", file=self.out)
                continue
            return Reply(elapsed, game.format_move(move))

    def _show(self, game: Game[Any, Any], state: Any, request: MoveRequest) -> None:
        """Once per move: the board, the time left for the move (when limited) and what may
        be typed."""
        left = "" if request.deadline is None else f", {request.deadline:.1f}s left"
        legal = " ".join(request.legal)
        print(game.render(state), file=self.out)
        print(f"seat {self.seat}, your move{left}; legal: {legal}; or resign, quit", file=self.out)

    def _missing(self, deadline: float | None, elapsed: float, request: MoveRequest) -> Fault:
        """The fault of a line that never came: out of time, or the terminal closed."""
        if deadline is not None and time.monotonic() >= deadline:
            return faults.no_answer(elapsed, request.deadline or 0.0, "no move in time")
        return faults.crash("the terminal closed (end of input)", exit_code=None)

    def ask_quit(self, deadline: float) -> None:
        pass

    def finish_quit(self, deadline: float) -> None:
        pass
