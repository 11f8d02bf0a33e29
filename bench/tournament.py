"""Tournament throughput with the database: a round-robin of 4 random bots on tic-tac-toe.

For ``--jobs 1`` and ``--jobs 2`` it plays the whole tournament into a fresh SQLite file and
reports games per second (wall clock, including creating the schedule and storing every match),
the speed-up of the second job over the first (the baseline, measured in the same run), and the
database's share: the seconds spent in write transactions (the schedule, each result) over the
wall time, and over the CPU time of every process. With one job the two agree (storing holds up
the next game); with two the writer stores while both jobs play, so the wall share counts time
nobody waits for and the CPU share is the cost: the part of the machine's work spent storing.
Medians over ``--repeats``.

It also reports the CPU time of every process involved (this one, the job processes and the bot
processes, from ``getrusage``) per game and as cores kept busy: with one job the referee and its
bots already overlap on two cores (the bot's bookkeeping after an answer, the kernel's pipe work),
so the ceiling for the second job's speed-up is cores / (cores busy with one job), less any CPU
the parallel path adds (job processes, one set of bot processes per job).

    python bench/tournament.py [--games 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)  # bench/ holds scripts named like packages (bench/games.py)

from bot_arena import games
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.tournament.create import create
from bot_arena.arena.tournament.job_handle import start_job_server
from bot_arena.arena.tournament.runner import Runner
from bot_arena.db.session import make_engine, session_factory

FIELD = ["random:seed=1", "random:seed=2", "random:seed=3", "random:seed=4"]


def cpu_seconds() -> float:
    """CPU time of this process and of every child process it has waited for (and theirs)."""
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


Run = tuple[float, float, int, float]  # games/s, database share of the wall time, games, cores


def one_run(folder: Path, jobs: int, games_total: int, index: int) -> Run:
    """(games/s, database share of the wall time, games, CPU seconds / wall seconds) of one
    tournament."""
    url = f"sqlite:///{folder / f'bench-{jobs}-{index}.db'}"
    engine = make_engine(url)
    factory = session_factory(engine)
    game = games.get("tictactoe")
    refs = [resolve(s) for s in FIELD]
    pairs = len(FIELD) * (len(FIELD) - 1) // 2
    per_pair = max(1, round(games_total / pairs))
    cpu = cpu_seconds()
    start = time.perf_counter()
    server = start_job_server()  # as `arena tournament run` does: it imports during create()
    tid = create(
        factory,
        game,
        FIELD,
        refs,
        fmt="round-robin",
        games_per_group=per_pair,
        time_control=TimeControl(move_time=2.0),
        seed=index,
        opening_plies=0,
    )
    created = time.perf_counter() - start
    with open(os.devnull, "w") as quiet:
        runner = Runner(
            factory, tid, refs, jobs=jobs, progress_stream=quiet, tty=False, forkserver=server
        )
        outcome = runner.run()
    if server is not None:
        server.close()
    wall = time.perf_counter() - start
    cpu = cpu_seconds() - cpu  # every job and bot process has been waited for by now
    engine.dispose()
    assert outcome.finished, outcome.failed
    return outcome.done / wall, (created + runner.db_seconds) / wall, outcome.done, cpu / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    results: dict[int, list[Run]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        for r in range(args.repeats):
            for jobs in (1, 2):  # interleaved, so load changes hit both alike
                results[jobs].append(one_run(Path(tmp), jobs, args.games, r))
                got, part, n, used = results[jobs][-1]
                print(
                    f"  run {r + 1}: jobs {jobs}: {n} games, {got:7.1f} games/s, "
                    f"db {100 * part:4.1f}% of the time ({1000 * part / got:.2f} ms per game), "
                    f"CPU {1000 * used / got:.2f} ms per game, {used:.2f} cores busy"
                )
    rate = {j: statistics.median(x[0] for x in results[j]) for j in results}
    share = {j: statistics.median(x[1] for x in results[j]) for j in results}
    busy = {j: statistics.median(x[3] for x in results[j]) for j in results}
    # database seconds / CPU seconds of the run = (wall share * wall) / (cores busy * wall)
    cpu_share = {j: statistics.median(x[1] / x[3] for x in results[j]) for j in results}
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"round-robin, 4 random bots, tic-tac-toe, {results[1][0][2]} games, "
        f"medians of {args.repeats} (cores: {os.cpu_count()})"
    )
    for j in (1, 2):
        print(
            f"  --jobs {j}: {rate[j]:7.1f} games/s  database {100 * share[j]:4.1f}% of the time"
            f" ({1000 * share[j] / rate[j]:.2f} ms per game);"
            f" CPU {1000 * busy[j] / rate[j]:.2f} ms per game, {busy[j]:.2f} cores busy"
        )
    print(f"  speed-up of the second job: {rate[2] / rate[1]:.2f}x  (target >= 1.7x)")
    if cores:
        # at c CPU seconds per game, `cores` cores play at most cores / c games per second
        print(
            f"  ceiling of the speed-up on {cores} cores: {cores / busy[1]:.2f}x at the CPU cost"
            f" per game of --jobs 1, {cores * rate[2] / (busy[2] * rate[1]):.2f}x at that of"
            " --jobs 2"
        )
    print(
        f"  database share of the wall time: jobs 1 {100 * share[1]:.1f}%,"
        f" jobs 2 {100 * share[2]:.1f}%; of the CPU time: jobs 1 {100 * cpu_share[1]:.1f}%,"
        f" jobs 2 {100 * cpu_share[2]:.1f}%  (target <= 10%)"
    )


if __name__ == "__main__":
    main()
