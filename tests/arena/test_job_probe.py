"""A tournament job takes its runner's answer to "which sandbox layers work here" with its Plan
(``support.answer``/``support.adopt``) instead of starting a probe process of its own; a
malformed answer is not taken (the job then probes for itself)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.tournament import job, job_handle
from bot_arena.arena.tournament.job import Plan, decode, encode
from bot_arena.arena.transport.sandbox import confine, support

PLAN = Plan("tictactoe", {}, (resolve("random"),), TimeControl(move_time=1.0))


@pytest.fixture(autouse=True)
def own_answer() -> Iterator[None]:
    """Each test starts with this process not probed, and leaves its answer as it found it."""
    kept = support._found
    support.forget()
    yield
    support._found = kept


def no_probe() -> object:
    raise AssertionError("a probe process was started")


def test_a_job_takes_its_runners_answer_and_starts_no_probe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(support, "_probe_process", no_probe)
    sent = {"layers": [confine.NAMESPACES, confine.SECCOMP], "missing": ["landlock-scopes"]}
    to_job_r, to_job_w = os.pipe()
    from_job_r, from_job_w = os.pipe()
    os.write(to_job_w, encode({"plan": PLAN.to_dict(), "support": sent}) + encode(None))
    os.close(to_job_w)
    job.serve(to_job_r, from_job_w)  # its pool asks for the level: the answer it was given
    os.close(from_job_w)
    os.close(from_job_r)
    assert support.answer() == sent
    layers, missing = support.probe()
    assert layers == {confine.NAMESPACES, confine.SECCOMP}
    assert support.WHAT[confine.CGROUPS] in missing
    assert support.WHAT["landlock-scopes"] in missing


@pytest.mark.parametrize(
    "found",
    [None, "namespaces", {"layers": "namespaces", "missing": []}, {"layers": []}, [1, 2]],
    ids=["none", "text", "not-a-list", "no-missing", "a-list"],
)
def test_what_is_not_an_answer_is_not_taken(found: object) -> None:
    support.adopt(found)
    assert support.answer() is None  # this process will probe for itself


def test_only_the_names_an_answer_may_hold_are_taken() -> None:
    support.adopt(
        {"layers": [confine.LANDLOCK, "rootkit", 7], "missing": ["landlock-scopes", "<b>x</b>"]}
    )
    assert support.answer() == {"layers": [confine.LANDLOCK], "missing": ["landlock-scopes"]}


def test_an_answer_of_its_own_is_kept() -> None:
    support.adopt({"layers": [], "missing": []})
    support.adopt({"layers": [confine.NAMESPACES], "missing": []})
    assert support.answer() == {"layers": [], "missing": []}


def first_message() -> Any:
    """What ``JobHandle.start`` sends a job first (read from the pipe to the job)."""
    read, write = os.pipe()
    handle = object.__new__(job_handle.JobHandle)
    handle.outbox = write
    handle.start(PLAN)
    os.close(write)
    with os.fdopen(read, "rb") as inbox:
        return decode(inbox.readline())


def test_the_runner_sends_its_own_answer_with_the_plan() -> None:
    support.adopt({"layers": [confine.SECCOMP], "missing": []})  # as if probed here
    message = first_message()
    assert message["support"] == {"layers": [confine.SECCOMP], "missing": []}
    assert Plan.from_dict(message["plan"]) == PLAN


def test_a_runner_that_has_not_probed_sends_no_answer() -> None:
    assert first_message()["support"] is None
