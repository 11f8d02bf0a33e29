"""The threads that play uploads' validation games (``server/validators.py``): they keep the
priority of the thread that made them, however the web side's is lowered after; a job's
exception reaches its caller; their count bounds the jobs run at once."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading

import pytest

from bot_arena.arena.server.ladder_play import lower_priority
from bot_arena.arena.server.validators import Validators

NICE_OF_A_CHILD = [sys.executable, "-c", "import os; print(os.getpriority(os.PRIO_PROCESS, 0))"]


def _child_nice() -> int:
    return int(subprocess.run(NICE_OF_A_CHILD, check=True, capture_output=True).stdout)


def test_a_job_and_the_processes_it_starts_keep_the_priority_of_the_threads_maker() -> None:
    """As the server does: the threads made, then the (web side's) thread niced by 5; a job
    run from it starts a process at the makers' priority, one started by the niced thread
    itself does not."""
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    if base >= 19:
        pytest.skip("this process runs at nice 19: nothing lower to see")
    validators = Validators(1)
    seen: dict[str, int] = {}

    def web_side() -> None:  # a thread of its own: the test process keeps its nice value
        validators.start()
        seen["web"] = lower_priority(5)
        seen["validation"] = validators.run(_child_nice)
        seen["inline"] = _child_nice()

    thread = threading.Thread(target=web_side)
    thread.start()
    thread.join()
    validators.stop()
    assert seen == {"web": min(19, base + 5), "validation": base, "inline": min(19, base + 5)}


def test_a_jobs_exception_is_raised_to_its_caller_and_the_thread_goes_on() -> None:
    validators = Validators(1)

    def fails() -> int:
        raise ValueError("no such bot")

    with pytest.raises(ValueError, match="no such bot"):
        validators.run(fails)
    assert validators.run(lambda: 7) == 7
    validators.stop()


def test_no_more_jobs_run_at_once_than_there_are_threads() -> None:
    validators = Validators(2)
    lock = threading.Lock()
    running = {"now": 0, "most": 0}
    both_in = threading.Barrier(2, timeout=30)

    def job() -> None:
        with lock:
            running["now"] += 1
            running["most"] = max(running["most"], running["now"])
        # two at once do happen ... (a third, had it run at once, would find it passed)
        with contextlib.suppress(threading.BrokenBarrierError):
            both_in.wait()
        with lock:
            running["now"] -= 1

    callers = [threading.Thread(target=validators.run, args=(job,)) for _ in range(6)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    validators.stop()
    assert running["most"] == 2, running  # ... and never more
