"""The Ray executor's batches, driver side, without a cluster (``RayWorker`` with a stand-in
actor and executor): matches go in calls of about a third of the queue; a batch's answer is
its matches' lines in order; when an actor dies after some batches came back, their answers are
handed over first (to be stored, once) and the loss comes with the next call, the matches of
every batch not answered still queued for the runner to put back in line."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot_arena.arena.tournament.job import Job, decode, encode
from bot_arena.arena.tournament.job_handle import JobFailed
from bot_arena.arena.tournament.ray_executor import RayExecutor, RayWorker, WorkerLost


class Call:
    def __init__(self, calls: list[bytes]) -> None:
        self.calls = calls

    def remote(self, line: bytes) -> str:
        self.calls.append(line)
        return f"ref{len(self.calls)}"


class Actor:
    def __init__(self) -> None:
        self.calls: list[bytes] = []
        self.play = Call(self.calls)


class Executor:
    gone = False

    def node_alive(self, node: str | None) -> bool:
        return False


def _worker() -> tuple[RayWorker, Actor]:
    actor = Actor()
    worker = RayWorker(Executor(), actor)  # type: ignore[arg-type]
    worker.node, worker.label = "n1", "ray actor on node n1"  # started
    return worker, actor


def _jobs(n: int) -> list[Job]:
    return [Job(100 + i, (0, 1), None, i) for i in range(n)]


def _answer(jobs: list[Job]) -> bytes:
    return b"".join(encode(["error", job.match_id, "played"]) for job in jobs)


def test_matches_go_in_calls_of_a_third_of_the_queue() -> None:
    worker, actor = _worker()
    jobs = _jobs(7)
    worker.send_all(jobs, 9)
    sent = [[j["match_id"] for j in decode(line)["jobs"]] for line in actor.calls]
    assert sent == [[100, 101, 102], [103, 104, 105], [106]]
    assert list(worker.queue) == jobs
    assert worker.awaited() == ["ref1", "ref2", "ref3"]
    worker.send_all(_jobs(1), 2)  # a shallow queue: one match a call
    assert len(actor.calls) == 4


def test_a_batch_answers_its_matches_in_order() -> None:
    worker, _ = _worker()
    jobs = _jobs(4)
    worker.send_all(jobs, 6)
    worker.fetched = [_answer(jobs[:2])]
    assert [(k, m) for k, m, _ in worker.receive()] == [("error", 100), ("error", 101)]
    assert worker.awaited() == ["ref2"]


def test_a_lost_actor_hands_over_what_came_back_then_its_loss() -> None:
    worker, _ = _worker()
    jobs = _jobs(6)
    worker.send_all(jobs, 6)  # three calls of two
    worker.fetched = [_answer(jobs[:2]), RuntimeError("The actor died unexpectedly")]
    first = worker.receive()
    assert [m for _, m, _ in first] == [100, 101]  # the batch that came back: to be stored
    # the runner pops what it stores; the rest stays queued and the loss is held for it
    worker.queue.popleft()
    worker.queue.popleft()
    assert RayExecutor.wait(None, [worker], 10.0) == [worker]  # type: ignore[arg-type]
    with pytest.raises(WorkerLost, match="lost its node"):
        worker.receive()
    assert [j.match_id for j in worker.queue] == [102, 103, 104, 105]  # two batches back
    assert worker.awaited() == []


@pytest.mark.parametrize(
    "answer",
    [b"", b'["error", 100, "x"]', b"not json\n", json.dumps({"a": 1}).encode() + b"\n", 5],
)
def test_a_batch_answer_that_is_not_whole_reply_lines_fails_the_worker(answer: Any) -> None:
    worker, _ = _worker()
    worker.send_all(_jobs(2), 6)
    worker.fetched = [answer]
    with pytest.raises(JobFailed):
        worker.receive()
