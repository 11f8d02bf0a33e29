"""The loop that feeds a run's workers, local job processes and Ray actors alike.

Each worker holds a queue of matches it was sent (as many as ``pacing`` says); the loop waits
for answers, takes them in the order the matches were sent (a record goes to the runner's check
and group commit, an incident or an arena error to their handling), sends each worker the next
matches, and stores the results when their group is due. A worker that fails is handed to
``recovery``. Only how a worker is waited for differs between the executors (``Waiter``).
"""

from __future__ import annotations

import math
import select
import time
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Protocol

from bot_arena.arena.match.record import MatchRecord
from bot_arena.arena.tournament.group_commit import GroupCommit
from bot_arena.arena.tournament.incidents import STOP_GRACE_S, WATCH_S
from bot_arena.arena.tournament.job import Job, Reply
from bot_arena.arena.tournament.job_handle import JobFailed, JobHandle
from bot_arena.arena.tournament.pacing import Pacing
from bot_arena.arena.tournament.recovery import Recovery
from bot_arena.arena.tournament.run_state import RunState

if TYPE_CHECKING:
    from bot_arena.arena.tournament.ray_executor import RayExecutor, RayWorker

    Worker = JobHandle | RayWorker
else:
    Worker = JobHandle


class Storing(Protocol):
    """The runner's side of the loop: checking and storing results, and what a format makes."""

    commits: GroupCommit

    def accept(self, state: RunState, job: Job, record: MatchRecord) -> None:
        """Check ``record`` (a replay) and queue it for its group, or refuse it."""
        ...

    def store(self, state: RunState) -> bool:
        """Store what is ready, then queue what the format adds; True: the run must stop."""
        ...


class Waiter:
    """Waits for the workers with something to receive. Local jobs: one ``poll`` object,
    kept while the same pipes are awaited (building a selector for every wait cost more system
    calls than the wait itself); Ray actors: the executor's ``wait``."""

    def __init__(self, executor: RayExecutor | None = None) -> None:
        self.executor = executor
        self._poll: tuple[tuple[int, ...], select.poll] | None = None

    def __call__(self, workers: Sequence[Worker], timeout: float) -> AbstractSet[Worker]:
        """The workers with something to receive, waiting up to ``timeout`` for one."""
        if self.executor is not None:
            return set(self.executor.wait(workers, timeout))  # type: ignore[arg-type]
        by_fd = {w.inbox: w for w in workers}  # type: ignore[union-attr]
        fds = tuple(by_fd)
        if self._poll is None or self._poll[0] != fds:
            poller = select.poll()
            for fd in fds:
                poller.register(fd, select.POLLIN)  # hang-ups and errors are always reported
            self._poll = (fds, poller)
        if not fds:
            time.sleep(timeout)
            return set()
        return {by_fd[fd] for fd, _ in self._poll[1].poll(math.ceil(timeout * 1000))}


class WorkerLoop:
    """Plays ``state.todo`` on workers until every match is answered or the run must stop."""

    def __init__(
        self,
        state: RunState,
        storing: Storing,
        recovery: Recovery,
        wait: Waiter,
        grow: Callable[[list[Worker]], None] = lambda workers: None,
    ) -> None:
        """``grow``: called once a loop, it may add workers (a Ray node that joined)."""
        self.state = state
        self.storing = storing
        self.commits = storing.commits
        self.recovery = recovery
        self.wait = wait
        self.grow = grow
        self.pacing = Pacing()

    def run(self, workers: list[Worker]) -> None:
        """Feed ``workers`` (started) until nothing is left to play; they are stopped at the
        end, terminated when the run is interrupted."""
        from bot_arena.arena.tournament.ray_executor import WorkerLost

        todo = self.state.todo

        def busy() -> list[Worker]:  # the workers something is awaited from
            return [w for w in workers if w.queue or not w.ready]

        try:
            for w in workers:
                self.refill(w)
            self.commits.flush_marks()
            while any(w.queue for w in workers) or (todo and busy()):
                waiting = busy()
                # now and then (WATCH_S): is a job stopped?
                ready = self.wait(waiting, max(0.0, min(WATCH_S, self.commits.wait_left())))
                for w in waiting:
                    try:
                        w.watch(STOP_GRACE_S)
                        self._take(w, w.receive() if w in ready else [])
                        self.refill(w)
                    except WorkerLost as exc:  # its Ray node went away: nobody's doing
                        self.recovery.worker_lost(w, exc, workers)
                    except JobFailed as exc:
                        fresh = self.recovery.worker_failed(w, exc, workers)
                        if fresh is not None:
                            self.refill(fresh)
                self.grow(workers)
                self.commits.collect()
                if self.commits.due() and self._store(workers, stop=True):
                    return
                if not any(w.queue for w in workers) and self._store(workers, stop=False):
                    return
            if todo:
                ids = [j.match_id for j in todo]
                self.state.fail(f"matches {ids} left to resume: jobs kept failing")
        except BaseException:
            for w in workers:  # interrupted: do not wait for the games in progress
                w.terminate()
            raise
        finally:
            for w in workers:  # all at once: their bots close in parallel
                w.ask_stop()
            for w in workers:
                w.stop()

    def _take(self, worker: Worker, replies: list[Reply]) -> None:
        """``worker``'s answers, each for the oldest match it was sent (else it failed)."""
        if replies:
            self.pacing.answered(worker, len(replies))
        for kind, match_id, payload in replies:
            if not worker.queue or worker.queue[0].match_id != match_id:
                raise JobFailed(f"answered for match {match_id} out of turn")
            job = worker.queue.popleft()
            if kind == "ok":
                self.storing.accept(self.state, job, payload)  # type: ignore[arg-type]
            elif kind == "incident":
                self.recovery.incident(job, str(payload))
            else:
                self.state.fail(f"match {match_id}: arena error: {payload}")

    def _store(self, workers: list[Worker], *, stop: bool) -> bool:
        """Store what is ready; True when the run must stop (the games in play are stopped
        with ``stop``), else every worker gets the matches added meanwhile."""
        if self.storing.store(self.state):
            if stop:  # without waiting for them (a test that has decided)
                for w in workers:
                    w.terminate()
                    w.queue.clear()
            return True
        for w in workers:
            self.refill(w)
        return False

    def refill(self, worker: Worker) -> None:
        """Send ``worker`` matches from the line until it holds as many as its pace asks."""
        todo = self.state.todo
        if not (todo and worker.ready):
            return
        if not worker.queue:  # idle until now: its pace counts from this match on
            self.pacing.resumed(worker)
        depth = self.pacing.depth(worker)
        if self.state.most_queued is not None:
            depth = min(depth, self.state.most_queued)
        jobs = self.state.take(depth - len(worker.queue))
        for job in jobs:
            self.commits.claim(job)
        if jobs:
            worker.send_all(jobs, depth)
