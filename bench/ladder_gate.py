"""What the ladder's gate costs: the field's revision read before each match leaves the line.

A ladder's workers hold only the match they play, and before any match is sent the runner reads
the field's revision (``LadderRunner._gate``, ``arena/tournament/ladder_runner.py``) so that a
retirement stored meanwhile drops the retired bot's made matches before they start. On a ladder
of fast bots (``random`` at tic-tac-toe, sandbox off) that is one small read per game. This
plays the same ladder in stretches of ``--games`` games, alternately with the gate and with the
gate made a no-op (the baseline, in the same run and database), and prints per arm the median
games/s (wall-clock: under load, unreliable), the runner's CPU per game (user+sys of this
process: the runner and its writer; the job processes are not counted) and the gate's own time
per call (wall and CPU, measured around each call).

    python bench/ladder_gate.py [--games 200] [--rounds 3] [--jobs 2] [--db URL]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from bot_arena.arena.api.ladders import ladder_add, ladder_create, ladder_run
from bot_arena.arena.tournament import ladder_runner as ladder_module

FIELD = ["random:seed=1", "random:seed=2", "random:seed=3", "random:seed=4", "random:seed=5"]


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Timed:
    """``LadderRunner._gate`` wrapped: calls, their wall and CPU seconds; ``off`` skips it."""

    def __init__(self, original: Callable[..., None]) -> None:
        self.original, self.off = original, False
        self.calls, self.wall, self.cpu = 0, 0.0, 0.0

    def install(self) -> None:
        timed = self

        def gate(runner: Any, state: Any) -> None:
            if timed.off:
                return
            wall, used = time.perf_counter(), time.process_time()
            timed.original(runner, state)
            timed.calls += 1
            timed.wall += time.perf_counter() - wall
            timed.cpu += time.process_time() - used

        ladder_module.LadderRunner._gate = gate  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games a stretch")
    parser.add_argument("--rounds", type=int, default=3, help="stretches per arm, alternated")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--db", help="a database URL (default: a new SQLite file)")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="ladder-gate-")
    db = args.db or os.path.join(folder, "arena.db")
    ladder_create("gate", "tictactoe", seed=1, sandbox="off", db=db)
    ladder_add("gate", FIELD, sandbox="off", db=db)
    timed = Timed(ladder_module.LadderRunner._gate)
    timed.install()
    rates: dict[str, list[float]] = {"gate": [], "no gate": []}
    cpus: dict[str, list[float]] = {"gate": [], "no gate": []}
    stored = 0
    ladder_run("gate", until_games=args.games, jobs=args.jobs, sandbox="off", db=db)  # warm-up
    stored = args.games
    for _ in range(args.rounds):
        for arm in ("gate", "no gate"):
            timed.off = arm == "no gate"
            stored += args.games
            wall, used = time.perf_counter(), cpu()
            end = ladder_run("gate", until_games=stored, jobs=args.jobs, sandbox="off", db=db)
            wall, used = time.perf_counter() - wall, cpu() - used
            rates[arm].append(end.played / wall)
            cpus[arm].append(used / end.played)
            stored = end.games
    load = os.getloadavg()
    print(f"ladder of {len(FIELD)} random bots, tictactoe, --jobs {args.jobs}, {db}")
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (wall figures unreliable)")
    for arm in ("gate", "no gate"):
        print(
            f"{arm:8} games/s (wall) median {statistics.median(rates[arm]):7.1f} "
            f"{[round(r, 1) for r in rates[arm]]}; runner CPU a game "
            f"{1e3 * statistics.median(cpus[arm]):.2f} ms"
        )
    if timed.calls:
        print(
            f"gate: {timed.calls} calls, {1e6 * timed.wall / timed.calls:.0f} us wall and "
            f"{1e6 * timed.cpu / timed.calls:.0f} us CPU a call"
        )


if __name__ == "__main__":
    main()
