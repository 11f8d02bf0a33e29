"""Matches whose playing took part of the arena down: who is to blame.

An *incident* is a match in play when its job process died or was found stopped, or when the
fork server its bots were forked from died (``pool.ServerDied``). Confined bots cannot cause one
(they cannot see, signal or ptrace anything outside their namespace); unconfined ones can, by
accident or on purpose (``--sandbox off``, or a machine that lacks a layer). An arena error
leaves a match to resume and charges nobody; here that would let a bot that kills the arena's
processes lose nothing, and hit the same kill at every resume. So:

1. a match's first incident: it is played again, at once, by a fresh job;
2. its second: each of its bots plays a *trial*, the same match with every other seat taken by
   the stand-in (the built-in random bot), in a job process of its own (exec'd, with its own
   fork server: a trial takes nothing else down). If exactly one bot's trial ends in an
   incident too, that bot is charged: the match is played with its seat barred (a crash fault
   before the first move, its evidence the incidents), and stored like any result;
3. otherwise (no trial, or more than one, failed: chance, or an attack the trials do not
   provoke) the match is left to resume and nobody is charged; the run says so.

The trials' results are not stored.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from multiprocessing.connection import wait

from bot_arena.arena.match import faults
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.tournament.job import Job, Plan
from bot_arena.arena.tournament.job_handle import JobFailed, JobHandle

STAND_IN = "random"
WATCH_S = 0.25  # how often a waiting runner looks for stopped jobs
STOP_GRACE_S = 0.5  # a job found stopped for longer than this has failed
TRIAL_LIMIT_S = 600.0  # a trial still running after this long is given up (and not blamed)


class Incidents:
    """One run's incidents, by match."""

    def __init__(
        self, plan: Plan, job_env: dict[str, str] | None, tell: Callable[[str], None]
    ) -> None:
        """``job_env``: a trial job's environment (the run's jobs'); ``tell`` reports each
        step to the run's output."""
        self.plan = plan
        self.job_env = job_env
        self.tell = tell
        self.seen: dict[int, list[str]] = {}  # match id -> what happened, in order
        self.proven: dict[int, str] = {}  # field position -> the trial that proved it

    def happened(self, job: Job, what: str) -> Job | None:
        """Note an incident of ``job``'s match (``what``: the job's failure, the server's
        death); the job to play next for it (the match again, or with its offender's seat
        barred), or None: left to resume."""
        tell = self.tell
        seen = self.seen.setdefault(job.match_id, [])
        seen.append(what)
        if job.barred:  # the charged replay failed too: nothing more to learn here
            tell(f"match {job.match_id}: {what}; left to resume")
            return None
        if len(seen) == 1:
            tell(f"match {job.match_id}: {what}; playing it again")
            return job
        known = [p for p in dict.fromkeys(job.seats) if p in self.proven]
        if len(known) == 1:  # proven by an earlier match's trial: no need to try again
            tell(f"match {job.match_id}: {what} again")
            return self._charge(job, known[0], self.proven[known[0]])
        tell(f"match {job.match_id}: {what} again; trial games to find the bot that does it")
        guilty: list[tuple[int, str]] = []
        for position in dict.fromkeys(job.seats):
            failure = self.trial(job, position)
            name = self.plan.refs[position].name
            if failure is not None:
                guilty.append((position, failure))
                tell(f"match {job.match_id}: trial of {name}: {failure}")
            else:
                tell(f"match {job.match_id}: trial of {name}: played through")
        if len(guilty) != 1:
            why = "no trial failed" if not guilty else "every trial failed"
            tell(f"match {job.match_id}: {why}; left to resume, nobody charged")
            return None
        position, failure = guilty[0]
        self.proven[position] = f"match {job.match_id}: {failure}"
        return self._charge(job, position, self.proven[position])

    def _charge(self, job: Job, position: int, trial: str) -> Job:
        """``job`` with the seats of the bot at field ``position`` barred, charged with the
        match's incidents (``trial``: the failure of the trial game that proved it)."""
        fault = faults.crash(
            "attacked the arena: the job playing this match failed twice and a trial game of "
            "this bot alone failed the same way",
            reason="arena_attack",
            incidents=list(self.seen[job.match_id]),
            trial=trial,
        )
        self.tell(f"match {job.match_id}: {self.plan.refs[position].name} charged")
        barred = tuple((seat, fault) for seat, p in enumerate(job.seats) if p == position)
        return dataclasses.replace(job, barred=barred)

    def trial(self, job: Job, position: int) -> str | None:
        """Play ``job``'s match with the bot at field ``position`` in its own seats and the
        stand-in in every other, in a job process of its own; why that job failed (died, was
        stopped, or its fork server died), or None when it played the match through."""
        refs = (*self.plan.refs, resolve(STAND_IN))
        stand_in = len(refs) - 1
        plan = dataclasses.replace(self.plan, refs=refs, playing=(position, stand_in))
        seats = tuple(p if p == position else stand_in for p in job.seats)
        handle = JobHandle(None, self.job_env)  # exec'd: its bots have a fork server of their own
        try:
            handle.start(plan)
            handle.send(Job(job.match_id, seats, job.start_position, job.seed, opening=job.opening))
            deadline = time.monotonic() + TRIAL_LIMIT_S
            while time.monotonic() < deadline:
                ready = wait([handle.inbox], WATCH_S)
                handle.watch(STOP_GRACE_S)
                for kind, _, payload in handle.receive() if ready else []:
                    return str(payload) if kind == "incident" else None
            return None
        except JobFailed as exc:
            return f"job process {exc}"
        finally:
            handle.abandon()
