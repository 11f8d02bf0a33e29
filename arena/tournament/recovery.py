"""What a run does when a worker or a match fails, so that every match is played once or left
to resume.

- A match whose job process (or fork server) went down while it was in play is an incident
  (``incidents.py``): played again first in line, then its bots' trial games find the one to
  charge, else it is left to resume.
- A job process that died, was found stopped or sent anything but a reply (``JobFailed``): it
  is killed and replaced, the matches it had been sent and not started go back in line, and the
  one in play is an incident. A failure outside a game counts against MAX_WORKER_RESTARTS
  (one inside a game is bounded by the incident rules instead).
- A Ray actor that is gone (``WorkerLost``) took its node or its process with it, which no
  game can do: the matches of every batch it had not answered go back in line, each at most
  MAX_LOSSES times, and nobody is charged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from bot_arena.arena.tournament.incidents import Incidents
from bot_arena.arena.tournament.job import Job
from bot_arena.arena.tournament.job_handle import JobFailed, JobHandle
from bot_arena.arena.tournament.run_state import RunState

if TYPE_CHECKING:
    from bot_arena.arena.tournament.ray_executor import RayWorker

    Worker = JobHandle | RayWorker
else:
    Worker = JobHandle

MAX_WORKER_RESTARTS = 4
MAX_LOSSES = 3  # times a match may go back in line because its Ray node went away


class Recovery:
    """One run's failures: its incidents, its workers' restarts and its lost matches."""

    def __init__(
        self,
        state: RunState,
        incidents: Incidents,
        *,
        restart: Callable[[], Worker] | None = None,
        lost: Callable[[], None] = lambda: None,
    ) -> None:
        """``restart``: a new worker, started, in place of a failed one (None: a run without
        workers); ``lost``: called after a Ray actor is gone (it raises ClusterGone when no
        node is left)."""
        self.state = state
        self.incidents = incidents
        self._restart = restart
        self._lost = lost
        self.restarts = 0  # workers replaced after failing outside a game
        self._losses: dict[int, int] = {}  # match id -> times its Ray node went away

    def incident(self, job: Job, what: str) -> None:
        """A match's incident: what to play next for it goes first in line."""
        again = self.incidents.happened(job, what)
        if again is not None:
            self.state.todo.appendleft(again)
        else:
            self.state.out.failed.append(f"match {job.match_id}: {what}; left to resume")

    def worker_failed(self, worker: Worker, exc: JobFailed, workers: list[Worker]) -> Worker | None:
        """``worker`` failed (``exc``): it is ended and left out of ``workers``; its matches
        go back in line or are incidents. The worker started in its place, if any (added to
        ``workers``)."""
        todo = self.state.todo
        queued = list(worker.queue)
        in_play, unplayed = (queued[0], queued[1:]) if queued else (None, [])
        worker.queue.clear()
        worker.abandon()  # it may be stuck or hostile: do not wait for its games
        workers.remove(worker)
        todo.extendleft(reversed(unplayed))  # sent ahead, never started
        if in_play is not None:
            self.incident(in_play, f"{worker.label} {exc}")
        if self._restart is None or not todo:
            return None
        if in_play is None and self.restarts >= MAX_WORKER_RESTARTS:
            return None
        self.restarts += in_play is None
        fresh = self._restart()
        workers.append(fresh)
        return fresh

    def worker_lost(self, worker: Worker, exc: JobFailed, workers: list[Worker]) -> None:
        """A Ray actor is gone (``exc``): the matches it had go back in line, nobody charged."""
        lost = list(worker.queue)
        worker.queue.clear()
        worker.abandon()
        workers.remove(worker)
        self.state.progress.message(f"{worker.label} {exc}; {len(lost)} matches back in line")
        self.state.todo.extendleft(reversed(self._back_in_line(lost)))
        self._lost()

    def _back_in_line(self, jobs: list[Job]) -> list[Job]:
        """The matches of a lost worker to play again: each at most MAX_LOSSES times (a match
        that keeps taking its node down is left to resume)."""
        again = []
        for job in jobs:
            self._losses[job.match_id] = self._losses.get(job.match_id, 0) + 1
            if self._losses[job.match_id] <= MAX_LOSSES:
                again.append(job)
            else:
                self.state.fail(
                    f"match {job.match_id}: lost with its node {MAX_LOSSES} times; to resume"
                )
        return again
