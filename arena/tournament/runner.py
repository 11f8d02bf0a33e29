"""Playing a tournament (created by ``create.py``) with parallel jobs, and again after an
interruption.

Only the main process writes to the database. With ``jobs == 1`` it plays the matches itself
(one BotPool); otherwise each job is a process (``job.py``; the runner's side: ``job_handle.py``)
with its own BotPool (bot processes are reused between its games) that receives a match to play
on a pipe and sends back its MatchRecord. The main process stores the records that are ready
together (group commit: one transaction per group, at most GROUP_MAX results, none waiting more than
GROUP_WAIT_S), completing the matches' pending rows; each match is stored all-or-nothing with
its group, a match already done is never stored again, and one left ``running`` (or still
``pending``) by a crash is simply played again (its row is overwritten, so it is stored once).

Every pool of a run confines its bots as the run's SandboxSettings say, and each stored match
gets the sandbox level found by the runner itself: its own pool's with ``jobs == 1``, its own
probe with job processes (same settings, same machine), never a level a job sends.
"""

from __future__ import annotations

import dataclasses
import math
import os
import select
import time
from collections import deque
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection
from sqlalchemy.orm import Session, sessionmaker

from bot_arena import games
from bot_arena.arena.match.adjudication import Adjudication
from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.confinement import server_env
from bot_arena.arena.match.record import MatchRecord
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.match.verify import check_record
from bot_arena.arena.tournament.committer import Committer
from bot_arena.arena.tournament.create import load_tournament, this_host, tournament_book
from bot_arena.arena.tournament.directors import director_for, played
from bot_arena.arena.tournament.dynamic import Maker
from bot_arena.arena.tournament.incidents import STOP_GRACE_S, WATCH_S, Incidents
from bot_arena.arena.tournament.job import Job, Plan, play
from bot_arena.arena.tournament.job_handle import JobFailed, JobHandle, start_job_server
from bot_arena.arena.tournament.progress import Progress, Standings
from bot_arena.arena.transport.forkserver import (
    ForkServer,
    ForkServerError,
)
from bot_arena.arena.transport.limits import ResourceLimits
from bot_arena.arena.transport.sandbox import support
from bot_arena.arena.transport.sandbox.mode import UNCONFINED, SandboxSettings
from bot_arena.db import queries
from bot_arena.db import tournaments as stored
from bot_arena.db.models import Tournament
from bot_arena.db.store import versions_for
from bot_arena.db.writer import Completion, MatchWriter, writer_for
from bot_arena.games.base import Game

if TYPE_CHECKING:
    from bot_arena.arena.tournament.ray_executor import RayExecutor, RayWorker

    Worker = JobHandle | RayWorker
else:
    Worker = JobHandle

PREFETCH = 2  # matches queued per job at least, so a job never waits for the runner
# and as many more as make AHEAD_S of its work at its measured pace (a worker's ``ahead_s``)
MAX_DEPTH = 64  # matches queued per worker at most
PACE_WEIGHT = 0.2  # weight of the latest answers in a worker's pace (moving average)
GROUP_MAX = 64  # results stored in one transaction at most (group commit)
GROUP_WAIT_S = 0.05  # the longest a finished game waits for its group to be stored
GROUPS_IN_FLIGHT = 2  # groups handed to the writer thread and not stored yet, at most
MAX_WORKER_RESTARTS = 4
MAX_LOSSES = 3  # times a match may go back in line because its Ray node went away


# --- the writer thread's transactions (``committer``) --------------------------------------


Transaction = Callable[[Connection, MatchWriter], list[bool]]


def _marker(ids: list[int]) -> Transaction:
    """A transaction that marks the matches ``ids`` 'running'."""

    def mark(conn: Connection, writer: MatchWriter) -> list[bool]:
        writer.mark_running(ids)
        return []

    return mark


def _completer(marks: list[int], items: Sequence[Completion], sandbox: str | None) -> Transaction:
    """A group commit: the claims ``marks`` and the results ``items``, in one transaction."""

    def complete(conn: Connection, writer: MatchWriter) -> list[bool]:
        writer.mark_running(marks)
        return writer.complete_matches(items, sandbox=sandbox)

    return complete


# --- what a job needs ------------------------------------------------------------------------


def pending_jobs(session: Session, tournament: Tournament) -> list[Job]:
    """The matches not done yet, in schedule order, with their seats as field positions."""
    position = {e.version.bot.name: e.position for e in tournament.entries}
    return [
        Job(m.match_id, tuple(position[b] for b in m.bots), m.start_position, m.seed, m.running)
        for m in stored.open_matches(session, tournament.id)
    ]


# --- the runner (main process, the one writer) -----------------------------------------------


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


class Runner:
    def __init__(
        self,
        factory: sessionmaker[Session],
        tournament_id: int,
        refs: Sequence[BotRef],
        *,
        jobs: int = 1,
        limits: ResourceLimits | None = None,
        progress_stream: Any = None,
        tty: bool | None = None,
        forkserver: ForkServer | None = None,
        sandbox: SandboxSettings | None = None,
        executor: RayExecutor | None = None,
    ) -> None:
        """``forkserver``: one the caller started early (its imports overlap the creation of
        the tournament) and closes; by default the run starts and closes its own. ``limits``:
        the bots' resource limits (default: those the tournament was created with). ``sandbox``:
        how every pool of the run confines its bots (default: auto, nothing more to read);
        ``run`` raises SandboxUnavailable for ``on`` on a machine that cannot confine fully,
        before it writes anything or starts a bot. ``executor``: play on a Ray cluster's actors
        instead of local job processes (``ray_executor``; ``jobs`` then caps the actors, one
        per CPU the cluster offers by default)."""
        self.factory = factory
        self.tournament_id = tournament_id
        self.refs = tuple(refs)
        self.jobs = max(1, jobs)
        self.limits = limits  # None: the tournament's own (``_prepare``)
        self.sandbox = sandbox or SandboxSettings()
        self.sandbox_level: str | None = None  # what the bots run under, known when run starts
        self.progress_stream = progress_stream
        self.tty = tty
        self._to_mark: list[int] = []  # started since the last write
        # the writer thread (its own connection) and the groups handed to it, oldest first
        self._committer = Committer(factory.kw["bind"])
        self._groups: deque[tuple[Future[list[bool]], list[tuple[Job, MatchRecord]]]] = deque()
        self._ready: list[tuple[Job, MatchRecord]] = []  # played, not stored yet
        self._ready_since = 0.0  # monotonic time the oldest of them arrived
        self._group = 1  # group size that triggers a write: doubles up to GROUP_MAX
        self.version_ids: list[int] = []
        # time the runner's loop was held by the database: waiting for the writer thread, or
        # in its own transactions (a director's matches); and the writer thread's busy time
        self.db_seconds = 0.0
        self._paces: dict[Worker, tuple[float, float]] = {}  # seconds a match, last answer
        self._poll: tuple[tuple[int, ...], select.poll] | None = None  # for ``_wait``
        self._server = forkserver  # starts the job processes and every bot
        self._own_server = forkserver is None
        # a Swiss, knockout or SPRT: what adds its matches as the results come (``directors``)
        self.maker: Maker | None = None
        self.executor = executor
        self.actor_cap = jobs if jobs > 0 else None  # for Ray: at most this many actors
        self._losses: dict[int, int] = {}  # match id -> times its Ray node went away
        self._capacity_seen = 0.0  # when the cluster's CPUs were last read

    # ---- database side
    def _prepare(self) -> tuple[Plan, list[Job], Progress]:
        with self.factory.begin() as session:
            tournament = load_tournament(session, self.tournament_id)
            stored.record_runner(session, tournament, this_host(), os.getpid())
            self.version_ids = [v.id for v in versions_for(session, self.refs)]
            jobs = pending_jobs(session, tournament)
            counts = queries.status_counts(session, self.tournament_id)
            rows = queries.results(session, self.tournament_id)
            names = [r.name for r in self.refs]
            stored_limits = tournament.settings.get("limits")
            if self.limits is None:
                self.limits = (
                    ResourceLimits.from_dict(stored_limits) if stored_limits else ResourceLimits()
                )
            plan = Plan(
                tournament.game,
                dict(tournament.params),
                self.refs,
                TimeControl.from_dict(tournament.time_control),
                self.limits,
                sandbox=self.sandbox,
                time_controls=tuple(
                    TimeControl.from_dict(tc) for tc in tournament.settings.get("time_controls", [])
                ),
                adjudication=Adjudication.from_dict(tournament.settings.get("adjudication")),
            )
            if jobs:
                # after a forced resume with changed bots, the seats still to play point at
                # the versions that will play them (results name the exact version that played)
                stored.repoint_open_seats(session, tournament, self.version_ids)
                plan = dataclasses.replace(
                    plan, playing=tuple(sorted({i for job in jobs for i in job.seats}))
                )
            jobs = self._start_director(session, tournament, plan, names, jobs)
            if self.maker is not None:
                plan = dataclasses.replace(plan, playing=tuple(range(len(self.refs))))
                counts = queries.status_counts(session, self.tournament_id)
        standings = Standings(names)
        index = {n: i for i, n in enumerate(names)}
        for result in rows:
            for seat in result.seats:
                if seat.bot in index:
                    standings.add(index[seat.bot], seat.score)
        total = sum(counts.values()) - counts["void"]
        if self.maker is not None:
            total = max(total, self.maker.director.expected_total())
        progress = Progress(
            total, counts["done"], standings, stream=self.progress_stream, tty=self.tty
        )
        return plan, jobs, progress

    def _start_director(
        self,
        session: Session,
        tournament: Tournament,
        plan: Plan,
        names: list[str],
        jobs: list[Job],
    ) -> list[Job]:
        """For a format whose matches are made as it goes: its director, given the stored
        matches, and the jobs it adds now (stored in this transaction). A test that has already
        decided (an SPRT killed after its deciding write) plays nothing more."""
        director = director_for(tournament.format, names, tournament.settings, tournament.seed)
        if director is None:
            return jobs
        game = games.get(plan.game, **plan.params)
        self.maker = Maker(
            director,
            game,
            self.tournament_id,
            dict(tournament.settings),
            tournament.seed,
            dict(tournament.time_control),
            tournament_book(game, tournament),
        )
        director.load(played(session, tournament))
        if director.decided:
            return []
        conn = session.connection()
        return jobs + self.maker.make(conn, writer_for(conn), self.version_ids, self._ahead())

    def _ahead(self) -> int:
        """How many matches a director should keep waiting: every job's queue and one more."""
        return self.jobs * (PREFETCH + 1)

    def _advance(self, todo: deque[Job], progress: Progress) -> bool:
        """After a write: the director's news, and the matches it adds now (stored in one
        transaction, then queued). True when the run must stop: the test has decided."""
        if self.maker is None:
            return False
        director = self.maker.director
        line = director.report()
        if line is not None:
            progress.status(line)
        if director.decided:
            return True
        maker, ids, ahead = self.maker, self.version_ids, self._ahead()
        start = time.perf_counter()
        jobs = self._committer.call(lambda conn, writer: maker.make(conn, writer, ids, ahead))
        self.db_seconds += time.perf_counter() - start
        todo.extend(jobs)
        progress.total = max(progress.done + len(todo), director.expected_total())
        return False

    def _claim(self, job: Job) -> None:
        """Note that ``job`` starts: the next write marks it 'running', unless its result is
        stored by that same write (then it goes from 'pending' straight to 'done'). So the
        database shows as 'running' exactly the matches in play at each commit, and a fast game
        costs one row update, not two."""
        self._to_mark.append(job.match_id)

    def _take_marks(self, finishing: AbstractSet[int] = frozenset()) -> list[int]:
        """The claimed matches the next write marks 'running' (not those it completes)."""
        ids = [m for m in self._to_mark if m not in finishing]
        self._to_mark.clear()
        return ids

    def _flush_marks(self) -> None:
        if self._to_mark:
            ids = self._take_marks()
            self._groups.append((self._committer.submit(_marker(ids)), []))

    def _add(
        self,
        plan: Plan,
        game: Game[Any, Any],
        job: Job,
        record: MatchRecord,
        out: Outcome,
        progress: Progress,
    ) -> None:
        """Queue a result for the next group commit, once it has been checked by replaying it
        (``verify.check_record``). A record that fails is not stored: who forged it cannot be
        known (any bot that ran beside the job may have), so nobody is charged and the match is
        left to resume, reported like an arena error."""
        refs = [plan.refs[i] for i in job.seats]
        reason = check_record(game, record, refs, job.start_position, plan.adjudication)
        if reason is not None:
            text = (
                f"match {job.match_id}: record refused ({reason}); left to resume, nobody charged"
            )
            out.failed.append(text)
            progress.message(text)
            return
        if not self._ready:
            self._ready_since = time.monotonic()
        self._ready.append((job, record))

    def _due(self, next_wait: float = 0.0) -> bool:
        """Whether the queued results must be stored now: the group is full, or its oldest
        result would wait longer than GROUP_WAIT_S (``next_wait``: the expected wait for the
        next result). Groups start at one result and double, so a run shows progress (and
        stores its first games) at once."""
        if not self._ready:
            return False
        age = time.monotonic() - self._ready_since
        return len(self._ready) >= self._group or age + next_wait >= GROUP_WAIT_S

    def _store_ready(self, progress: Progress, out: Outcome, wait: bool = False) -> None:
        """Hand every queued result (and any claims) to the writer thread as one group: one
        transaction for each match's row, seats and moves. A crash before its commit leaves
        them all pending or running, to be played again. ``wait``: until every group handed
        over is stored (always with a director, which reads the results before adding
        matches); else only while more than GROUPS_IN_FLIGHT are (the loop keeps feeding the
        workers meanwhile)."""
        wait = wait or self.maker is not None
        if self._ready:
            batch = self._ready
            marks = self._take_marks({job.match_id for job, _ in batch})
            items = [
                (job.match_id, record, [self.version_ids[i] for i in job.seats], job.recovered)
                for job, record in batch
            ]
            task = _completer(marks, items, self.sandbox_level)
            self._groups.append((self._committer.submit(task), batch))
            self._ready = []
            self._group = min(GROUP_MAX, 2 * self._group)
        self._collect(progress, out, keep=0 if wait else GROUPS_IN_FLIGHT)

    def _collect(self, progress: Progress, out: Outcome, keep: int = GROUPS_IN_FLIGHT) -> None:
        """Take the outcome of the groups the writer thread has stored, oldest first, waiting
        while more than ``keep`` are not stored yet (that wait is the loop held by the
        database: ``db_seconds``)."""
        while self._groups:
            future, batch = self._groups[0]
            if not future.done():
                if len(self._groups) <= keep:
                    return
                start = time.perf_counter()
                future.result()
                self.db_seconds += time.perf_counter() - start
            self._groups.popleft()
            self._stored(batch, future.result(), progress, out)

    def _stored(
        self,
        batch: list[tuple[Job, MatchRecord]],
        done: list[bool],
        progress: Progress,
        out: Outcome,
    ) -> None:
        for (job, record), ok in zip(batch, done, strict=True):
            if ok:
                out.played += 1
                if self.maker is not None:
                    self.maker.director.result(job.match_id, [s.score for s in record.seats])
                self._report(progress, job, record)
            else:  # voided (or done) by someone else while it was being played
                progress.message(f"match {job.match_id}: not stored (no longer pending)")

    def _close_writes(self, progress: Progress, out: Outcome) -> None:
        """Wait for every group handed to the writer thread, take their outcome, end it."""
        try:
            self._collect(progress, out, keep=0)
        finally:
            self._groups.clear()
            self._committer.close()

    def _finish(self, outcome: Outcome) -> None:
        with self.factory.begin() as session:
            if self.maker is not None:
                director = self.maker.director
                if director.decided:  # the matches it no longer needs
                    stored.drop_open(session, self.tournament_id)
                outcome.unmade = not director.complete
            counts = queries.status_counts(session, self.tournament_id)
            outcome.done = counts["done"]
            outcome.total = sum(counts.values()) - counts["void"]
            stored.end_run(session, self.tournament_id, finished=outcome.finished)

    def _report(self, progress: Progress, job: Job, record: MatchRecord) -> None:
        faults = [
            f"match {job.match_id} seat {i} {s.bot}: {s.fault.termination.value}: {s.fault.message}"
            for i, s in enumerate(record.seats)
            if s.fault is not None
        ]
        progress.match_done([(job.seats[i], s.score) for i, s in enumerate(record.seats)], faults)

    # ---- playing
    def _new_workers(self, count: int) -> list[Worker]:
        if self.executor is not None:
            return list(self.executor.new_workers(count))
        if self._server is not None:
            try:
                env = server_env(self.sandbox_level or UNCONFINED)
                return [JobHandle(self._server, env) for _ in range(count)]
            except ForkServerError:
                self._close_server()
        return [JobHandle(None, server_env(self.sandbox_level or UNCONFINED)) for _ in range(count)]

    def _close_server(self) -> None:
        if self._server is not None and self._own_server:
            self._server.close()
        self._server = None

    def run(self) -> Outcome:
        # the level every result of this run is stored with (the runner's own probe; its own
        # pool's with --jobs 1); SandboxUnavailable here, before anything is written or started
        self.sandbox_level = support.level_for(self.sandbox.mode)[0]
        if self.executor is not None:
            return self._run_remote()
        if self._server is None and self._own_server:
            # its imports overlap the reading of the schedule
            self._server = start_job_server(server_env(self.sandbox_level))
        # without a fork server, job processes start first: they import while the schedule is read
        spare = self._new_workers(self.jobs) if self.jobs > 1 and self._server is None else []
        try:
            plan, jobs, progress = self._prepare()
            if self.jobs > 1 and self._server is not None and self._parallel(jobs):
                spare = self._new_workers(self._workers(jobs))
        except BaseException:
            for w in spare:
                w.stop(timeout=1.0)
            self._close_server()
            raise
        outcome = Outcome(self.tournament_id, progress.total, progress.done, 0)
        todo = deque(jobs)
        try:
            if self.jobs > 1 and self._parallel(todo):
                if len(spare) < self._workers(todo):
                    spare += self._new_workers(self._workers(todo) - len(spare))
                workers = [spare.pop().start(plan) for _ in range(self._workers(todo))]
                for w in spare:
                    w.stop(timeout=1.0)
                spare.clear()
                self._run_parallel(plan, todo, progress, outcome, workers)
            elif todo:
                for w in spare:
                    w.stop(timeout=1.0)
                spare.clear()
                self._run_local(plan, todo, progress, outcome)
        except KeyboardInterrupt:  # results not stored yet are played again by a resume
            outcome.interrupted = True
        finally:
            for w in spare:
                w.stop(timeout=1.0)
            self._close_server()
            try:  # the groups handed over are stored (a group is never cut short)
                self._close_writes(progress, outcome)
            finally:
                progress.close()
        self._finish(outcome)
        return outcome

    def _run_remote(self) -> Outcome:
        """``run`` on a Ray cluster: the same preparing, storing and finishing; the matches
        played by the executor's actors, never by this process."""
        from bot_arena.arena.tournament.ray_executor import START_LIMIT_S, ClusterError

        assert self.executor is not None
        failure: ClusterError | None = None
        # the actors first: Ray takes a third of a second to place one and start its process,
        # which overlaps the reading of the schedule (each then probes its node's sandbox)
        count = self.executor.capacity()
        if self.actor_cap is not None:
            count = min(count, self.actor_cap)
        early = self._new_workers(count) if count > 0 else []
        try:
            plan, jobs, progress = self._prepare()
        except BaseException:
            for w in early:
                w.terminate()
            raise
        outcome = Outcome(self.tournament_id, progress.total, progress.done, 0)
        todo = deque(jobs)
        workers: list[Worker] = []
        try:
            if not todo:
                for w in early:
                    w.terminate()
            else:
                workers = [w.start(plan) for w in early or self._new_workers(1)]
                for w in workers:  # the programs of the field exist on every node
                    w.started(START_LIMIT_S)  # type: ignore[union-attr]
                self._lower_level(workers)
                progress.message(
                    f"ray: {self.executor.nodes()} nodes, {len(workers)} actors, "
                    f"sandbox {self.sandbox_level}"
                )
                self._run_parallel(plan, todo, progress, outcome, workers)
        except KeyboardInterrupt:
            outcome.interrupted = True
        except ClusterError as exc:
            failure = exc
            self._store_ready(progress, outcome)  # what came back before it went is kept
        finally:
            for w in workers:
                w.terminate()
            try:
                self._close_writes(progress, outcome)
            finally:
                progress.close()
        self._finish(outcome)
        if failure is not None:
            raise failure
        return outcome

    def _lower_level(self, workers: Sequence[Worker]) -> None:
        """The level results are stored with: the lowest any actor's pool runs under (a node
        that cannot confine as well as this machine lowers it, never raises it)."""
        from bot_arena.arena.transport.sandbox.mode import LEVELS

        for w in workers:
            level = getattr(w, "sandbox_level", None)
            if level in LEVELS and LEVELS.index(level) > LEVELS.index(self.sandbox_level):
                self.sandbox_level = level

    def _grow(self, plan: Plan, workers: list[Worker], progress: Progress) -> None:
        """On Ray, now and then: a node that joined offers CPUs; start actors on them."""
        if self.executor is None or time.monotonic() - self._capacity_seen < 1.0:
            return
        self._capacity_seen = time.monotonic()
        self._lower_level(workers)  # actors started since report their pools' levels
        room = self.executor.capacity() - len(workers)
        if self.actor_cap is not None:
            room = min(room, self.actor_cap - len(workers))
        if room > 0:
            workers.extend(w.start(plan) for w in self._new_workers(room))
            progress.message(f"ray: {room} more actors ({self.executor.nodes()} nodes)")

    def _parallel(self, todo: Sequence[Job]) -> bool:
        """Whether job processes play (else the main process plays, one match at a time): more
        than one match to play, or a format that will make more."""
        return len(todo) > 1 or (self.maker is not None and bool(todo))

    def _workers(self, todo: Sequence[Job]) -> int:
        return self.jobs if self.maker is not None else min(self.jobs, len(todo))

    def _run_local(self, plan: Plan, todo: deque[Job], progress: Progress, out: Outcome) -> None:
        from bot_arena.arena.match.pool import BotPool, ServerDied

        game = games.get(plan.game, **plan.params)
        incidents = Incidents(plan, server_env(self.sandbox_level or UNCONFINED), progress.message)
        with BotPool(plan.limits, forkserver=self._server or True, sandbox=plan.sandbox) as pool:
            self.sandbox_level = pool.sandbox_level
            pool.prestart([plan.refs[i] for i in plan.playing])
            job = todo.popleft()
            self._claim(job)
            self._flush_marks()
            while True:
                began = time.monotonic()
                try:
                    record = play(pool, game, plan, job)
                except ServerDied as exc:
                    record = None
                    self._incident(incidents, job, str(exc), todo, out, progress)
                except (KeyboardInterrupt, SystemExit):
                    raise
                except Exception as exc:
                    record = None
                    text = f"match {job.match_id}: arena error: {type(exc).__name__}: {exc}"
                    out.failed.append(text)
                    progress.message(text)
                following = todo.popleft() if todo else None
                if following is not None:
                    self._claim(following)
                self._collect(progress, out)
                if record is not None:
                    self._add(plan, game, job, record, out, progress)
                # the next game will probably take as long as this one did
                if following is None or self._due(time.monotonic() - began):
                    self._store_ready(progress, out)
                    if self._advance(todo, progress):
                        return  # decided: what is still to play is dropped
                    if following is None and todo:
                        following = todo.popleft()
                        self._claim(following)
                if following is None:
                    return
                job = following

    @staticmethod
    def _incident(
        incidents: Incidents,
        job: Job,
        what: str,
        todo: deque[Job],
        out: Outcome,
        progress: Progress,
    ) -> None:
        """A match's incident (``incidents``): what to play next for it goes first in line."""
        again = incidents.happened(job, what)
        if again is not None:
            todo.appendleft(again)
        else:
            out.failed.append(f"match {job.match_id}: {what}; left to resume")

    def _run_parallel(
        self,
        plan: Plan,
        todo: deque[Job],
        progress: Progress,
        out: Outcome,
        workers: list[Worker],
    ) -> None:
        from bot_arena.arena.tournament.ray_executor import ClusterGone, WorkerLost

        game = games.get(plan.game, **plan.params)
        incidents = Incidents(plan, server_env(self.sandbox_level or UNCONFINED), progress.message)
        restarts = 0

        def incident(job: Job, what: str) -> None:
            self._incident(incidents, job, what, todo, out, progress)

        def busy() -> list[Worker]:  # the workers something is awaited from
            return [w for w in workers if w.queue or not w.ready]

        try:
            for w in workers:
                self._refill(w, todo)
            self._flush_marks()
            while any(w.queue for w in workers) or (todo and busy()):
                timeout = WATCH_S  # now and then: is a job stopped?
                if self._ready:
                    timeout = min(timeout, self._ready_since + GROUP_WAIT_S - time.monotonic())
                waiting = busy()
                ready = self._wait(waiting, max(0.0, timeout))
                for w in waiting:
                    try:
                        w.watch(STOP_GRACE_S)
                        replies = w.receive() if w in ready else []
                        if replies:
                            self._paced(w, len(replies))
                        for kind, match_id, payload in replies:
                            if not w.queue or w.queue[0].match_id != match_id:
                                raise JobFailed(f"answered for match {match_id} out of turn")
                            job = w.queue.popleft()
                            if kind == "ok":
                                self._add(plan, game, job, payload, out, progress)  # type: ignore[arg-type]
                            elif kind == "incident":
                                incident(job, str(payload))
                            else:
                                text = f"match {match_id}: arena error: {payload}"
                                out.failed.append(text)
                                progress.message(text)
                        self._refill(w, todo)
                    except WorkerLost as exc:  # its Ray node went away: nobody's doing
                        lost = list(w.queue)
                        w.queue.clear()
                        w.abandon()
                        workers.remove(w)
                        progress.message(f"{w.label} {exc}; {len(lost)} matches back in line")
                        todo.extendleft(reversed(self._back_in_line(lost, out, progress)))
                        if self.executor is not None and self.executor.capacity() == 0:
                            self.executor.gone = True
                            raise ClusterGone(
                                "no node of the Ray cluster is left; what was played is stored "
                                "(continue with: arena tournament resume ID --executor ray)"
                            ) from None
                        self._capacity_seen = 0.0  # replace it where there is room
                    except JobFailed as exc:
                        queued = list(w.queue)
                        in_play, unplayed = (queued[0], queued[1:]) if queued else (None, [])
                        w.queue.clear()
                        w.abandon()  # it may be stuck or hostile: do not wait for its games
                        workers.remove(w)
                        todo.extendleft(reversed(unplayed))  # sent ahead, never started
                        if in_play is not None:
                            incident(in_play, f"{w.label} {exc}")
                        # a death in a game is bounded by the incident rules (at most three
                        # per match); any other counts against the restarts
                        if todo and (in_play is not None or restarts < MAX_WORKER_RESTARTS):
                            restarts += in_play is None
                            w = self._new_workers(1)[0].start(plan)
                            workers.append(w)
                            self._refill(w, todo)
                self._grow(plan, workers, progress)
                self._collect(progress, out)
                if self._due():
                    self._store_ready(progress, out)
                    if self._advance(todo, progress):
                        self._stop_all(workers)
                        return
                    for w in workers:
                        self._refill(w, todo)
                if not any(w.queue for w in workers):
                    self._store_ready(progress, out)
                    if self._advance(todo, progress):
                        return
                    for w in workers:
                        self._refill(w, todo)
            if todo:
                text = f"matches {[j.match_id for j in todo]} left to resume: jobs kept failing"
                out.failed.append(text)
                progress.message(text)
        except BaseException:
            for w in workers:  # interrupted: do not wait for the games in progress
                w.terminate()
            raise
        finally:
            for w in workers:  # all at once: their bots close in parallel
                w.ask_stop()
            for w in workers:
                w.stop()

    def _wait(self, workers: Sequence[Worker], timeout: float) -> AbstractSet[Worker]:
        """The workers with something to receive, waiting up to ``timeout`` for one. Local
        jobs: one ``poll`` object, kept while the same pipes are awaited (building a selector
        for every wait cost more system calls than the wait itself)."""
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

    def _paced(self, worker: Worker, answers: int) -> None:
        """Note ``answers`` more answers of ``worker``: its pace (seconds a match, a moving
        average of the time between answers while it had matches queued)."""
        now = time.monotonic()
        pace, last = self._paces.get(worker, (math.inf, now))
        each = (now - last) / answers
        pace = each if math.isinf(pace) else pace + PACE_WEIGHT * (each - pace)
        self._paces[worker] = (pace, now)

    def _depth(self, worker: Worker) -> int:
        """How many matches ``worker`` keeps queued: its own minimum, or enough for its
        ``ahead_s`` of work at its pace (fast games: more, so that it does not run dry while
        the runner is busy elsewhere, and a Ray actor's batches hold tens of milliseconds),
        at most MAX_DEPTH."""
        pace = self._paces.get(worker, (math.inf, 0.0))[0]
        if pace * MAX_DEPTH <= worker.ahead_s:
            return MAX_DEPTH
        return max(worker.depth, min(MAX_DEPTH, math.ceil(worker.ahead_s / pace)))

    def _back_in_line(self, jobs: list[Job], out: Outcome, progress: Progress) -> list[Job]:
        """The matches of a lost worker to play again: each at most MAX_LOSSES times (a match
        that keeps taking its node down is left to resume)."""
        again = []
        for job in jobs:
            self._losses[job.match_id] = self._losses.get(job.match_id, 0) + 1
            if self._losses[job.match_id] <= MAX_LOSSES:
                again.append(job)
            else:
                text = f"match {job.match_id}: lost with its node {MAX_LOSSES} times; to resume"
                out.failed.append(text)
                progress.message(text)
        return again

    @staticmethod
    def _stop_all(workers: list[Worker]) -> None:
        """Stop the games in play without waiting for them (a test that has decided)."""
        for w in workers:
            w.terminate()
            w.queue.clear()

    def _refill(self, worker: Worker, todo: deque[Job]) -> None:
        if not (todo and worker.ready):
            return
        if not worker.queue:  # idle until now: its pace counts from this match on
            pace = self._paces.get(worker, (math.inf, 0.0))[0]
            self._paces[worker] = (pace, time.monotonic())
        depth = self._depth(worker)
        jobs = [todo.popleft() for _ in range(min(len(todo), depth - len(worker.queue)))]
        for job in jobs:
            self._claim(job)
        if jobs:
            worker.send_all(jobs, depth)


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
