"""The runner's pieces on their own, without processes or a database: failure recovery (what
goes back in line, the restart budget, lost Ray matches) and the group commit's groups."""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import Future
from typing import Any

import pytest

from bot_arena.arena.tournament import group_commit
from bot_arena.arena.tournament.group_commit import GROUP_MAX, GroupCommit
from bot_arena.arena.tournament.job import Job
from bot_arena.arena.tournament.recovery import MAX_LOSSES, MAX_WORKER_RESTARTS, Recovery
from bot_arena.arena.tournament.run_state import Outcome, RunState


def _job(match_id: int) -> Job:
    return Job(match_id, (0, 1), None, match_id)


class _Progress:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def message(self, text: str) -> None:
        self.lines.append(text)


class _Incidents:
    """Plays a match again after its first incident, leaves it to resume after the second."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, str]] = []

    def happened(self, job: Job, what: str) -> Job | None:
        self.seen.append((job.match_id, what))
        return job if sum(m == job.match_id for m, _ in self.seen) == 1 else None


class _Worker:
    label = "job process 1"

    def __init__(self, *queued: int) -> None:
        self.queue = deque(_job(m) for m in queued)
        self.abandoned = False

    def abandon(self) -> None:
        self.abandoned = True


def _state(*todo: int) -> RunState:
    out = Outcome(1, 10, 0, 0)
    return RunState(None, None, deque(_job(m) for m in todo), out, _Progress())  # type: ignore[arg-type]


def _recovery(state: RunState, started: list[_Worker]) -> Recovery:
    def restart() -> Any:
        started.append(_Worker())
        return started[-1]

    return Recovery(state, _Incidents(), restart=restart)  # type: ignore[arg-type]


def test_a_failed_worker_s_matches_go_first_in_line_the_one_in_play_as_an_incident() -> None:
    state, started = _state(9), []
    recovery = _recovery(state, started)
    failed = _Worker(3, 4, 5)
    workers: list[Any] = [failed]
    fresh = recovery.worker_failed(failed, Exception("died"), workers)  # type: ignore[arg-type]
    assert failed.abandoned and failed not in workers and not failed.queue
    # the match in play is played again first (its first incident), then those never started
    assert [j.match_id for j in state.todo] == [3, 4, 5, 9]
    assert recovery.incidents.seen == [(3, "job process 1 died")]  # type: ignore[attr-defined]
    assert fresh is started[0] and workers == [fresh]
    assert recovery.restarts == 0  # a death in a game is bounded by the incident rules


def test_failures_outside_a_game_use_up_the_restarts() -> None:
    state, started = _state(1, 2), []
    recovery = _recovery(state, started)
    workers: list[Any] = []
    for _ in range(MAX_WORKER_RESTARTS + 2):
        idle = _Worker()
        workers.append(idle)
        recovery.worker_failed(idle, Exception("died"), workers)  # type: ignore[arg-type]
    assert len(started) == MAX_WORKER_RESTARTS
    assert recovery.restarts == MAX_WORKER_RESTARTS


def test_no_worker_is_started_when_nothing_is_left_to_play() -> None:
    state, started = _state(), []
    recovery = _recovery(state, started)
    idle = _Worker()
    assert recovery.worker_failed(idle, Exception("died"), [idle]) is None  # type: ignore[arg-type]
    assert started == []


def test_a_lost_ray_worker_s_matches_go_back_in_line_at_most_max_losses_times() -> None:
    state = _state(9)
    lost_calls: list[int] = []
    recovery = Recovery(state, _Incidents(), lost=lambda: lost_calls.append(1))  # type: ignore[arg-type]
    for time in range(MAX_LOSSES + 1):
        state.todo = deque(j for j in state.todo if j.match_id == 9)
        actor = _Worker(7, 8)
        recovery.worker_lost(actor, Exception("lost its node"), [actor])  # type: ignore[arg-type]
        if time < MAX_LOSSES:
            assert [j.match_id for j in state.todo] == [7, 8, 9]
    assert [j.match_id for j in state.todo] == [9]
    assert state.out.failed == [
        f"match {m}: lost with its node {MAX_LOSSES} times; to resume" for m in (7, 8)
    ]
    assert len(lost_calls) == MAX_LOSSES + 1
    assert state.progress.lines[0] == "job process 1 lost its node; 2 matches back in line"  # type: ignore[attr-defined]


class _Committer:
    """Runs each transaction at once, recording the match ids each one completes and marks."""

    def __init__(self) -> None:
        self.writes: list[tuple[list[int], list[int]]] = []

    def submit(self, task: Any) -> Future[list[bool]]:
        writer = _Writer()
        done: Future[list[bool]] = Future()
        done.set_result(task(None, writer))
        self.writes.append((writer.marked, writer.completed))
        return done


class _Writer:
    def __init__(self) -> None:
        self.marked: list[int] = []
        self.completed: list[int] = []

    def mark_running(self, ids: list[int]) -> None:
        self.marked += ids

    def complete_matches(self, items: Any, *, sandbox: str | None) -> list[bool]:
        self.completed += [item[0] for item in items]
        return [True] * len(items)


class _Clock:
    """Time stands still: a group is due when it is full, never by its age."""

    @staticmethod
    def monotonic() -> float:
        return 0.0

    @staticmethod
    def perf_counter() -> float:
        return 0.0


def test_groups_double_up_to_group_max_and_a_claim_completed_in_its_group_is_not_marked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(group_commit, "time", _Clock)
    committer, told = _Committer(), []
    commits = GroupCommit(committer, lambda batch, done: told.append(len(batch)))  # type: ignore[arg-type]
    commits.version_ids = [10, 11]
    sizes = []
    match_id = 0
    for _ in range(9):
        size = 0
        while not commits.due():
            match_id += 1
            commits.claim(_job(match_id))
            commits.add(_job(match_id), None)  # type: ignore[arg-type]
            size += 1
        commits.claim(_job(1000 + match_id))  # started, not finished: marked by this write
        commits.store_ready()
        sizes.append(size)
    assert sizes == [1, 2, 4, 8, 16, 32, 64, 64, 64] and GROUP_MAX == 64
    assert told == sizes
    for marked, completed in committer.writes:
        assert len(marked) == 1 and marked[0] >= 1000 and marked[0] - 1000 in completed


class _SlowCommitter:
    """Each transaction's result comes when ``finish`` is called (from another thread, later,
    with ``later``)."""

    def __init__(self, later: bool) -> None:
        self.later = later
        self.pending: list[tuple[Future[list[bool]], list[bool]]] = []

    def submit(self, task: Any) -> Future[list[bool]]:
        done: Future[list[bool]] = Future()
        self.pending.append((done, task(None, _Writer())))
        if self.later:
            threading.Timer(0.05, self.finish).start()
        return done

    def finish(self) -> None:
        for done, result in self.pending:
            done.set_result(result)
        self.pending.clear()


@pytest.mark.parametrize("in_step", [False, True])
def test_in_step_the_loop_waits_for_each_group_else_it_goes_on(in_step: bool) -> None:
    """A director reads a group's results before it adds matches (``in_step``); otherwise the
    loop goes on feeding the workers while up to GROUPS_IN_FLIGHT groups are written."""
    told: list[int] = []
    committer = _SlowCommitter(later=in_step)
    commits = GroupCommit(committer, lambda batch, done: told.append(len(batch)))  # type: ignore[arg-type]
    commits.version_ids, commits.in_step = [10, 11], in_step
    commits.add(_job(1), None)  # type: ignore[arg-type]
    commits.store_ready()
    assert told == ([1] if in_step else [])
    committer.finish()
    commits.collect(keep=0)
    assert told == [1]


class _Ticking:
    """A clock that moves only when the test moves it."""

    now = 100.0

    @classmethod
    def monotonic(cls) -> float:
        return cls.now

    @classmethod
    def perf_counter(cls) -> float:
        return cls.now


def test_groups_wait_for_their_spacing_even_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``spacing`` (an SPRT's checks kept cheap), a group is handed over no sooner than
    that after the last one, full or old; without it, as soon as it is full."""
    monkeypatch.setattr(group_commit, "time", _Ticking)
    commits = GroupCommit(_Committer(), lambda batch, done: None)  # type: ignore[arg-type]
    commits.version_ids, commits.spacing = [10, 11], 0.5  # binary fractions: exact sums
    commits.add(_job(1), None)  # type: ignore[arg-type]
    assert commits.due()  # nothing handed over yet
    commits.store_ready()
    for match_id in range(2, 2 + GROUP_MAX):
        commits.add(_job(match_id), None)  # type: ignore[arg-type]
    _Ticking.now += 0.25  # full and older than GROUP_WAIT_S, but 0.25 s after the last group
    assert not commits.due()
    assert commits.wait_left() == 0.25
    _Ticking.now += 0.25
    assert commits.due()
    commits.store_ready()
    commits.spacing = 0.0
    commits.add(_job(100), None)  # type: ignore[arg-type]
    commits.add(_job(101), None)  # type: ignore[arg-type]
    assert not commits.due()  # the group size is 4 now: neither full nor old
    commits.add(_job(102), None)  # type: ignore[arg-type]
    commits.add(_job(103), None)  # type: ignore[arg-type]
    assert commits.due()
