"""The ``human`` seat: a person at the terminal, in the arena's own process.

The board and the legal moves are shown, bad input is asked again; there is no time limit unless
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
        legal = list(request.legal)
        print(game.render(state), file=self.out)
        print(f"seat {self.seat}, your move; legal: {' '.join(legal)}", file=self.out)
        while True:
            print("> ", end="", file=self.out, flush=True)
            line = self._readline(deadline)
            elapsed = time.monotonic() - sent
            if line is None:
                if deadline is not None and time.monotonic() >= deadline:
                    limit = request.deadline or 0.0
                    return Reply(elapsed, fault=faults.no_answer(elapsed, limit, "no move in time"))
                closed = faults.crash("the terminal closed (end of input)", exit_code=None)
                return Reply(elapsed, fault=closed)
            text = line.strip()
            try:
                move = game.move_from_text(state, text)
            except GameError as exc:
                print(f"{exc}; legal: {' '.join(legal)}", file=self.out)
                continue
            return Reply(elapsed, game.format_move(move))

    def ask_quit(self, deadline: float) -> None:
        pass

    def finish_quit(self, deadline: float) -> None:
        pass
