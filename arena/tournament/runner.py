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

``Runner.run`` is the outline; the pieces: ``serial_loop.py`` (``jobs == 1``), ``worker_loop.py``
(the loop that feeds job processes and Ray actors alike), ``recovery.py`` (a worker that fails
or is lost, incidents), ``pacing.py`` (each worker's queue), ``group_commit.py`` (the groups)
and ``run_state.py`` (what they share).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections import deque
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session, sessionmaker

from bot_arena import games
from bot_arena.arena.match.adjudication import Adjudication
from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.confinement import server_env
from bot_arena.arena.match.record import MatchRecord
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.match.verify import check_record
from bot_arena.arena.tournament.committer import Committer
from bot_arena.arena.tournament.create import (
    TournamentError,
    claim_runner,
    load_tournament,
    played_by,
    this_host,
    tournament_book,
)
from bot_arena.arena.tournament.directors import director_for, played
from bot_arena.arena.tournament.directors.base import Director
from bot_arena.arena.tournament.dynamic import Batch as Made
from bot_arena.arena.tournament.dynamic import Maker, Making
from bot_arena.arena.tournament.group_commit import GROUP_MAX, Batch, GroupCommit
from bot_arena.arena.tournament.heartbeat import Heartbeat
from bot_arena.arena.tournament.incidents import Incidents
from bot_arena.arena.tournament.job import Job, Plan
from bot_arena.arena.tournament.job_handle import JobHandle, start_job_server
from bot_arena.arena.tournament.pacing import PREFETCH, Pacing
from bot_arena.arena.tournament.progress import Progress, Standings
from bot_arena.arena.tournament.recovery import Recovery
from bot_arena.arena.tournament.run_state import Outcome as Outcome
from bot_arena.arena.tournament.run_state import RunState
from bot_arena.arena.tournament.worker_loop import Waiter, WorkerLoop
from bot_arena.arena.transport.forkserver_client import ForkServer, ForkServerError
from bot_arena.arena.transport.limits import ResourceLimits
from bot_arena.arena.transport.sandbox import support
from bot_arena.arena.transport.sandbox.mode import UNCONFINED, SandboxSettings
from bot_arena.db import queries
from bot_arena.db import tournaments as stored
from bot_arena.db.models import Tournament
from bot_arena.db.store import versions_for
from bot_arena.db.writer import writer_for
from bot_arena.games.base import Game

if TYPE_CHECKING:
    from bot_arena.arena.match.pool import BotPool
    from bot_arena.arena.tournament.ray_executor import RayExecutor, RayWorker

    Worker = JobHandle | RayWorker
else:
    Worker = JobHandle


CHECK_SHARE = 0.05  # the share of the loop's time an eager director's checks may take
CHECK_SPACING_MAX_S = 0.5  # the longest between two of its checks (and two group commits)
CHECK_MIN_S = 1e-4  # a check cheaper than this (nothing evaluated) leaves the spacing


def pending_jobs(session: Session, tournament: Tournament) -> list[Job]:
    """The matches not done yet, in schedule order, with their seats as field positions."""
    position = {e.version.bot.name: e.position for e in tournament.entries}
    return [
        Job(
            m.match_id,
            tuple(position[b] for b in m.bots),
            m.start_position,
            m.seed,
            m.running,
            opening=tuple(m.opening.split()),
        )
        for m in stored.open_matches(session, tournament.id)
    ]


class Runner:
    """The main process of a run, the one writer: it reads what is left to play, has it played
    (``serial_loop`` or ``worker_loop``, failures handled by ``recovery``), checks every
    record and stores the results by groups (``group_commit``)."""

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
        skip: Collection[int] = (),
        stored_hook: Callable[[list[int]], None] | None = None,
        force: bool = False,
        pool: BotPool | None = None,
    ) -> None:
        """``forkserver``: one the caller started early (its imports overlap the creation of
        the tournament) and closes; by default the run starts and closes its own. ``limits``:
        the bots' resource limits (default: those the tournament was created with). ``sandbox``:
        how every pool of the run confines its bots (default: auto, nothing more to read);
        ``run`` raises SandboxUnavailable for ``on`` on a machine that cannot confine fully,
        before it writes anything or starts a bot. ``executor``: play on a Ray cluster's actors
        instead of local job processes (``ray_executor``; ``jobs`` then caps the actors, one
        per CPU the cluster offers by default). ``skip``: field positions of bots left out of
        this run (stored bots that can no longer be loaded): their matches stay pending.
        ``stored_hook``: told the ids of each group's matches once their commit is done (in
        the loop's thread; ``--pgn-out`` appends them). ``force``: play even though another
        live process seems to play the tournament (``resume --force``); otherwise the run
        claims it atomically first and is refused (TournamentError) while another plays it.
        ``pool``: a pool whose bots the caller started ahead (``prestart``: an engine's start,
        its net loaded, overlaps the creation of the tournament), played by a ``--jobs 1`` run
        instead of one of its own; the run closes it either way."""
        self.factory = factory
        self.force = force
        self.skip = frozenset(skip)
        self.stored_hook = stored_hook
        self.tournament_id = tournament_id
        self.refs = tuple(refs)
        self.jobs = max(1, jobs)
        self.limits = limits  # None: the tournament's own (``_prepare``)
        self.sandbox = sandbox or SandboxSettings()
        self.progress_stream = progress_stream
        self.tty = tty
        # the writer thread (its own connection) and the results on their way to it
        self.committer = Committer(factory.kw["bind"])
        self.commits = GroupCommit(self.committer, self._stored)
        self.version_ids: list[int] = []
        self._run: RunState | None = None  # the run in progress, once it is read
        self._server = forkserver  # starts the job processes and every bot
        self._pool = pool  # a serial run's pool, its bots started ahead (None: its own)
        self._own_server = forkserver is None
        # a Swiss, knockout or SPRT: what adds its matches as the results come (``directors``)
        self.maker: Maker | None = None
        self.executor = executor
        self.actor_cap = jobs if jobs > 0 else None  # for Ray: at most this many actors
        self._capacity_seen = 0.0  # when the cluster's CPUs were last read
        self._pacing: Pacing | None = None  # the workers' queues, once they are fed
        # a director's matches on their way to the database (``_advance``)
        self._making: tuple[Made, Future[list[int]]] | None = None

    @property
    def sandbox_level(self) -> str | None:
        """What the bots run under (known when ``run`` starts): every result of the run is
        stored with it."""
        return self.commits.sandbox

    @sandbox_level.setter
    def sandbox_level(self, level: str | None) -> None:
        self.commits.sandbox = level

    @property
    def db_seconds(self) -> float:
        """Time the runner's loop was held by the database: waiting for the writer thread, or
        in its own transactions (a director's matches)."""
        return self.commits.db_seconds

    # ---- the outline
    def run(self) -> Outcome:
        """Play what is left and store it; the tournament's heartbeat is refreshed meanwhile
        (``heartbeat.py``: how another machine tells that this run is gone)."""
        with Heartbeat(self.factory.kw["bind"], self.tournament_id):
            return self._run_all()

    def _run_all(self) -> Outcome:
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
            state = self._state(plan, jobs, progress)
            if self.jobs > 1 and self._server is not None and self._parallel(jobs):
                spare = self._new_workers(self._workers(jobs))
        except BaseException:
            for w in spare:
                w.stop(timeout=1.0)
            self._close_pool()
            self._close_server()
            raise
        todo = state.todo
        try:
            if self.jobs > 1 and self._parallel(todo):
                if len(spare) < self._workers(todo):
                    spare += self._new_workers(self._workers(todo) - len(spare))
                workers = [spare.pop().start(plan) for _ in range(self._workers(todo))]
                for w in spare:
                    w.stop(timeout=1.0)
                spare.clear()
                self._loop(state).run(workers)
            elif todo:
                for w in spare:
                    w.stop(timeout=1.0)
                spare.clear()
                self._run_serial(state)
        except KeyboardInterrupt:  # results not stored yet are played again by a resume
            state.out.interrupted = True
        finally:
            for w in spare:
                w.stop(timeout=1.0)
            self._close_pool()
            self._close_server()
            try:  # the groups handed over are stored (a group is never cut short)
                self.commits.close()
            finally:
                progress.close()
        self._finish(state.out)
        return state.out

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
            state = self._state(plan, jobs, progress)
        except BaseException:
            for w in early:
                w.terminate()
            raise
        workers: list[Worker] = []
        try:
            if not state.todo:
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
                self._loop(state).run(workers)
        except KeyboardInterrupt:
            state.out.interrupted = True
        except ClusterError as exc:
            failure = exc
            self.commits.store_ready()  # what came back before it went is kept
        finally:
            for w in workers:
                w.terminate()
            try:
                self.commits.close()
            finally:
                progress.close()
        self._finish(state.out)
        if failure is not None:
            raise failure
        return state.out

    def _state(self, plan: Plan, jobs: list[Job], progress: Progress) -> RunState:
        """The run about to be played (``_prepare`` has read what is left)."""
        game = games.get(plan.game, **plan.params)
        out = Outcome(self.tournament_id, progress.total, progress.done, 0)
        self._run = RunState(plan, game, deque(jobs), out, progress)
        return self._run

    def _incidents(self, state: RunState) -> Incidents:
        env = server_env(self.sandbox_level or UNCONFINED)
        return Incidents(state.plan, env, state.progress.message)

    def _run_serial(self, state: RunState) -> None:
        """``--jobs 1``: this process plays, with a pool of its own (its level is the run's)."""
        from bot_arena.arena.match.pool import BotPool
        from bot_arena.arena.tournament.serial_loop import play_serially

        recovery = Recovery(state, self._incidents(state))
        plan = state.plan
        given, self._pool = self._pool, None
        forkserver = self._server or True
        with given or BotPool(plan.limits, forkserver=forkserver, sandbox=plan.sandbox) as pool:
            self.sandbox_level = pool.sandbox_level
            pool.prestart([plan.refs[i] for i in plan.playing])
            play_serially(state, pool, self, recovery)

    def _close_pool(self) -> None:
        """Close the pool given to the run when no serial run took it (its bots are killed)."""
        given, self._pool = self._pool, None
        if given is not None:
            given.close()

    def _loop(self, state: RunState) -> WorkerLoop:
        """The loop that plays ``state`` on workers, local job processes or Ray actors."""

        def restart() -> Worker:
            return self._new_workers(1)[0].start(state.plan)

        recovery = Recovery(state, self._incidents(state), restart=restart, lost=self._lost)
        if self.executor is None:
            loop = WorkerLoop(state, self, recovery, Waiter())
        else:
            grow = lambda workers: self._grow(state, workers)  # noqa: E731
            loop = WorkerLoop(state, self, recovery, Waiter(self.executor), grow)
        self._pacing = loop.pacing  # a director keeps the workers' queues full (``_ahead``)
        return loop

    def _parallel(self, todo: Sequence[Job]) -> bool:
        """Whether job processes play (else the main process plays, one match at a time): more
        than one match to play, or a format that will make more."""
        return len(todo) > 1 or (self.maker is not None and bool(todo))

    def _workers(self, todo: Sequence[Job]) -> int:
        return self.jobs if self.maker is not None else min(self.jobs, len(todo))

    # ---- database side
    def _claim(self, session: Session) -> None:
        """Record this process as the tournament's runner, in the transaction that reads what
        is left: atomically (``claim_runner``), so of two runs started at the same instant
        exactly one plays; the other is refused here, before it plays or writes anything."""
        if self.force:  # the operator says the recorded process is not playing it
            tournament = load_tournament(session, self.tournament_id)
            stored.record_runner(session, tournament, this_host(), os.getpid())
            return
        running = claim_runner(session, self.tournament_id)
        if running is not None:
            raise TournamentError(played_by(self.tournament_id, running))

    def _prepare(self) -> tuple[Plan, list[Job], Progress]:
        with self.factory.begin() as session:
            self._claim(session)
            tournament = load_tournament(session, self.tournament_id)
            self.version_ids = [v.id for v in versions_for(session, self.refs)]
            self.commits.version_ids = self.version_ids
            jobs = pending_jobs(session, tournament)
            skipped = [job for job in jobs if not self.skip.isdisjoint(job.seats)]
            jobs = [job for job in jobs if self.skip.isdisjoint(job.seats)]
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
        total = sum(counts.values()) - counts["void"] - len(skipped)
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
        self.maker = self._maker(director, self._maker_fields(game, tournament))
        # the director reads each group's results before it adds matches: stored, or as they
        # are handed to the writer thread (``Director.eager``)
        self.commits.in_step = not director.eager
        director.load(played(session, tournament))
        if director.decided:
            return []
        conn = session.connection()
        return jobs + self.maker.make(conn, writer_for(conn), self.version_ids, self._ahead())

    def _maker_fields(self, game: Game[Any, Any], tournament: Tournament) -> Making:
        """What a maker needs of ``tournament``: the one list of its fields."""
        return Making(
            game,
            self.tournament_id,
            dict(tournament.settings),
            tournament.seed,
            dict(tournament.time_control),
            tournament_book(game, tournament),
        )

    def _maker(self, director: Director, making: Making) -> Maker:
        """What stores the matches ``director`` adds (a ladder's own keeps its field too)."""
        return Maker(director, making)

    def _ahead(self) -> int:
        """How many matches a director should keep made and not played: ``PREFETCH + 1`` a
        job; for an eager director (an SPRT, whose writes are spaced) what every worker's queue
        holds at its measured pace (``pacing``) and a group's worth more for the line (at least
        GROUP_MAX), so no worker runs dry between two of its writes."""
        least = self.jobs * (PREFETCH + 1)
        if self.maker is None or not self.maker.director.eager:  # made round by round
            return least
        queued = self._pacing.queued() if self._pacing is not None else 0
        return max(GROUP_MAX, least) + queued

    def _advance(self, state: RunState) -> bool:
        """After a write: the director's news, and the matches it adds now (stored in one
        transaction, then queued). True when the run must stop: the test has decided."""
        if self.maker is None:
            return False
        director = self.maker.director
        cpu = time.thread_time()
        line = director.report()
        if line is not None:
            state.progress.status(line)
        decided = director.decided
        if director.eager:
            self._space_checks(time.thread_time() - cpu)
        if decided:
            return True
        maker, versions = self.maker, self.version_ids
        if not director.eager:  # made round by round from the stored results: stored at once
            ahead = self._ahead()
            state.todo.extend(
                self.commits.call(lambda conn, w: maker.make(conn, w, versions, ahead))
            )
        else:
            # its pairs are written by the writer thread after the groups handed over; the loop
            # waits for them only when it has nothing else to send (one batch at a time: the
            # director knows a batch once it is stored)
            if self._making is not None and (self._making[1].done() or not state.todo):
                made, stored_as = self._making
                self._making = None
                ids: list[int] = self.commits.result(stored_as)
                state.todo.extend(maker.added(made, ids))
            batch = maker.plan(self._ahead()) if self._making is None else None
            if batch is not None:
                new = batch  # for the closure
                future = self.commits.submit(lambda conn, w: maker.write(conn, w, new, versions))
                if state.todo:
                    self._making = (batch, future)
                else:  # nothing else to send: wait for them
                    ids = self.commits.result(future)
                    state.todo.extend(maker.added(batch, ids))
        state.progress.total = max(state.progress.done + len(state.todo), director.expected_total())
        return False

    def _space_checks(self, cost: float) -> None:
        """An eager director checks (an SPRT: its LLR, some milliseconds of CPU) after each
        group handed over: groups are spaced so that the checks take about CHECK_SHARE of the
        loop's time at most (``cost``: the CPU seconds of the last check; one that found its
        state unchanged costs nothing and leaves the spacing as it was)."""
        if cost > CHECK_MIN_S:
            self.commits.spacing = min(CHECK_SPACING_MAX_S, cost / CHECK_SHARE)

    # ---- checking and storing (``worker_loop.Storing``)
    def accept(self, state: RunState, job: Job, record: MatchRecord) -> None:
        """Queue a result for the next group commit, once it has been checked by replaying it
        (``verify.check_record``). A record that fails is not stored: who forged it cannot be
        known (any bot that ran beside the job may have), so nobody is charged and the match is
        left to resume, reported like an arena error."""
        refs = [state.plan.refs[i] for i in job.seats]
        reason = check_record(state.game, record, refs, job.start_position, state.plan.adjudication)
        if reason is not None:
            state.fail(
                f"match {job.match_id}: record refused ({reason}); left to resume, nobody charged"
            )
            return
        self.commits.add(job, record)

    def store(self, state: RunState) -> bool:
        """Hand what is ready to the writer thread, then the director's news (``_advance``);
        True when the run must stop: the test has decided (then nothing more is handed over:
        see ``Director.eager``)."""
        group = self.commits.store_ready()
        if self.maker is not None and self.maker.director.eager:
            for job, record in group:
                self.maker.director.result(job.match_id, [s.score for s in record.seats])
        return self._advance(state)

    def _stored(self, batch: Batch, done: list[bool]) -> None:
        """A group's outcome (``GroupCommit``): each result stored, or why not."""
        if not batch:  # claims only
            return
        assert self._run is not None
        out, progress = self._run.out, self._run.progress
        director = self.maker.director if self.maker is not None else None
        for (job, record), ok in zip(batch, done, strict=True):
            if ok:
                out.played += 1
                if self.maker is not None and not self.maker.director.eager:
                    self.maker.stored(job, record)
                self._report(progress, job, record)
            else:  # voided (or done) by someone else while it was being played
                if director is not None and director.eager:  # told when it was handed over
                    director.retract(job.match_id)
                progress.message(f"match {job.match_id}: not stored (no longer pending)")
        if self.stored_hook is not None:
            self.stored_hook([job.match_id for (job, _), ok in zip(batch, done, strict=True) if ok])

    def _report(self, progress: Progress, job: Job, record: MatchRecord) -> None:
        faults = [
            f"match {job.match_id} seat {i} {s.bot}: {s.fault.termination.value}: {s.fault.message}"
            for i, s in enumerate(record.seats)
            if s.fault is not None
        ]
        progress.match_done([(job.seats[i], s.score) for i, s in enumerate(record.seats)], faults)

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

    # ---- workers
    def _new_workers(self, count: int) -> list[Worker]:
        if self.executor is not None:
            return list(self.executor.new_workers(count))
        if self._server is not None:
            try:
                env = server_env(self.sandbox_level or UNCONFINED)
                return [JobHandle(self._server, env) for _ in range(count)]
            except ForkServerError:
                self._server.broken = True  # ended, not kept for another run
                self._close_server()
        return [JobHandle(None, server_env(self.sandbox_level or UNCONFINED)) for _ in range(count)]

    def _close_server(self) -> None:
        if self._server is not None and self._own_server:
            self._server.release()  # kept for a next run in this thread, unless broken
        self._server = None

    def _lower_level(self, workers: Sequence[Worker]) -> None:
        """The level results are stored with: the lowest any actor's pool runs under (a node
        that cannot confine as well as this machine lowers it, never raises it)."""
        from bot_arena.arena.transport.sandbox.mode import LEVELS

        for w in workers:
            level = getattr(w, "sandbox_level", None)
            if level in LEVELS and LEVELS.index(level) > LEVELS.index(self.sandbox_level):
                self.sandbox_level = level

    def _grow(self, state: RunState, workers: list[Worker]) -> None:
        """On Ray, now and then: a node that joined offers CPUs; start actors on them."""
        if self.executor is None or time.monotonic() - self._capacity_seen < 1.0:
            return
        self._capacity_seen = time.monotonic()
        self._lower_level(workers)  # actors started since report their pools' levels
        room = self.executor.capacity() - len(workers)
        if self.actor_cap is not None:
            room = min(room, self.actor_cap - len(workers))
        if room > 0:
            workers.extend(w.start(state.plan) for w in self._new_workers(room))
            state.progress.message(f"ray: {room} more actors ({self.executor.nodes()} nodes)")

    def _lost(self) -> None:
        """A Ray actor is gone: ClusterGone when no node is left, else its replacement is
        looked for at once (``_grow``)."""
        from bot_arena.arena.tournament.ray_executor import ClusterGone

        if self.executor is not None and self.executor.capacity() == 0:
            self.executor.gone = True
            raise ClusterGone(
                "no node of the Ray cluster is left; what was played is stored "
                "(continue with: arena tournament resume ID --executor ray)"
            ) from None
        self._capacity_seen = 0.0  # replace it where there is room


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
