"""What the loops of one tournament run share: its plan, the matches still in line, its outcome
and its output (``runner.py`` makes it; ``serial_loop.py``, ``worker_loop.py`` and
``recovery.py`` work on it)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot_arena.arena.tournament.job import Job, Plan
from bot_arena.arena.tournament.progress import Progress
from bot_arena.games.base import Game


@dataclass
class Outcome:
    tournament_id: int
    total: int
    done: int  # done matches in the database at the end
    played: int  # stored in this run
    failed: list[str] = field(default_factory=list)  # arena errors (matches left to resume)
    interrupted: bool = False
    unmade: bool = False  # its format has matches still to make (a Swiss round, a knockout tie)

    @property
    def finished(self) -> bool:
        return self.done == self.total and not self.unmade


@dataclass
class RunState:
    """One run in progress: ``todo`` holds the matches not sent anywhere yet, in order."""

    plan: Plan
    game: Game[Any, Any]
    todo: deque[Job]
    out: Outcome
    progress: Progress
    #: Called before matches leave ``todo`` to be played (a ladder reads its field again and
    #: drops the matches of entrants that no longer play: ``tournament/ladder_runner.py``).
    gate: Callable[[], None] | None = None
    #: The most matches a worker holds (None: as its pace asks). A ladder's workers hold the
    #: match they play and no other, so none waits in a worker for a bot retired meanwhile.
    most_queued: int | None = None

    def take(self, count: int) -> list[Job]:
        """Up to ``count`` matches from the line, to be played now (after the gate)."""
        if count <= 0 or not self.todo:
            return []
        if self.gate is not None:
            self.gate()
        return [self.todo.popleft() for _ in range(min(count, len(self.todo)))]

    def fail(self, text: str) -> None:
        """A match left to resume: noted in the outcome and said in the run's output."""
        self.out.failed.append(text)
        self.progress.message(text)
