"""Tournament throughput with the database: a round-robin of 4 random bots on tic-tac-toe.

For ``--jobs 1`` and ``--jobs 2`` it plays the whole tournament into a fresh SQLite file and
reports games per second (wall clock, including creating the schedule and storing every match),
the speed-up of the second job over the first (the baseline, measured in the same run), and the
database's share of the wall time: the seconds the runner's loop was held by the database over
the wall time, that is creating the schedule (its transaction) plus ``Runner.db_seconds`` (the
loop waiting for its writer thread: a group handed over while two are still being written, the
last ones at the end; a director's matches). Group commits run on the runner's writer thread
(``tournament/committer.py``) while the loop goes on feeding the jobs, so it also reports that
thread's busy share (its seconds inside transactions over the wall time, waits for the GIL
included) and its CPU share (its CPU seconds in them over the wall time). Before the writer
thread the loop stored the groups itself: then all three are the same seconds. Medians over
``--repeats``.

It also reports the CPU time of every process involved (this one, the job processes and the bot
processes, from ``getrusage``) per game and as cores kept busy: with one job the referee and its
bots already overlap on two cores (the bot's bookkeeping after an answer, the kernel's pipe work),
so the ceiling for the second job's speed-up is cores / (cores busy with one job), less any CPU
the parallel path adds (job processes, one set of bot processes per job).

``--pg URL`` plays every run on PostgreSQL too (a fresh schema of that database per run,
alternated with the SQLite runs) and prints PostgreSQL's games/s as a share of SQLite's.
``bench/sprt.py --speed`` imports ``one_run`` and ``fresh_url`` to time an SPRT beside a
tournament.

    python bench/tournament.py [--games 1000] [--repeats 3] [--pg URL]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)  # bench/ holds scripts named like packages (bench/games.py)

from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

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


@dataclass
class Run:
    rate: float  # games/s
    games: int
    cores: float  # CPU seconds of every process / wall seconds
    schedule: float  # creating the schedule, share of the wall time
    held: float  # the runner's loop held by the database (Runner.db_seconds), share
    thread: float  # the writer thread inside transactions, share of the wall time
    thread_cpu: float  # its CPU time in them, share of the wall time

    @property
    def db(self) -> float:
        """The database's share of the wall time: the schedule and the loop held."""
        return self.schedule + self.held


def fresh_url(folder: Path, pg: str | None, name: str) -> str:
    """A new empty database for one run: a SQLite file in ``folder``, or with ``pg`` (a
    PostgreSQL URL) a new schema ``bench_NAME`` of that database (dropped first if it exists)."""
    if pg is None:
        return f"sqlite:///{folder / f'bench-{name}.db'}"
    schema = f"bench_{name}".replace("-", "_")
    admin = create_engine(pg, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    finally:
        admin.dispose()
    url = make_url(pg).update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False)


def one_run(
    url: str,
    jobs: int,
    games_total: int,
    index: int,
    *,
    field: list[str] = FIELD,
    fmt: str = "round-robin",
    format_settings: dict[str, object] | None = None,
) -> Run:
    """One tournament on the empty database ``url``, measured: a round-robin of ``field``
    with about ``games_total`` games, or a format made as it goes (``fmt``, its settings)."""
    engine = make_engine(url)
    factory = session_factory(engine)
    game = games.get("tictactoe")
    refs = [resolve(s) for s in field]
    pairs = len(field) * (len(field) - 1) // 2
    per_pair = max(1, round(games_total / pairs)) if format_settings is None else None
    cpu = cpu_seconds()
    start = time.perf_counter()
    server = start_job_server()  # as `arena tournament run` does: it imports during create()
    scheduling = time.perf_counter()
    tid = create(
        factory,
        game,
        field,
        refs,
        fmt=fmt,
        games_per_group=per_pair,
        time_control=TimeControl(move_time=2.0),
        seed=index,
        opening_plies=0,
        format_settings=format_settings,
    )
    created = time.perf_counter() - scheduling
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
    # a runner without a writer thread (the commit before it) stored in its loop
    committer = getattr(runner, "committer", None)
    busy = runner.db_seconds if committer is None else committer.busy_seconds
    busy_cpu = runner.db_seconds if committer is None else committer.cpu_seconds
    return Run(
        outcome.done / wall,
        outcome.done,
        cpu / wall,
        created / wall,
        runner.db_seconds / wall,
        busy / wall,
        busy_cpu / wall,
    )


def show(label: str, x: Run) -> None:
    print(
        f"  {label}: {x.games} games, {x.rate:7.1f} games/s, "
        f"db {100 * x.db:4.1f}% of the time (schedule {100 * x.schedule:.1f}%, "
        f"loop held {100 * x.held:.1f}%), writer thread {100 * x.thread:.1f}% "
        f"(CPU {100 * x.thread_cpu:.1f}%), CPU {1000 * x.cores / x.rate:.2f} ms per "
        f"game, {x.cores:.2f} cores busy",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pg", default=None, help="a PostgreSQL URL to play on as well")
    args = parser.parse_args()
    results: dict[int, list[Run]] = {1: [], 2: []}
    on_pg: dict[int, list[Run]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        for r in range(args.repeats):
            for jobs in (1, 2):  # interleaved, so load changes hit both alike
                url = fresh_url(Path(tmp), None, f"{jobs}-{r}")
                results[jobs].append(one_run(url, jobs, args.games, r))
                show(f"run {r + 1}: jobs {jobs}", results[jobs][-1])
                if args.pg:
                    url = fresh_url(Path(tmp), args.pg, f"{jobs}_{r}")
                    on_pg[jobs].append(one_run(url, jobs, args.games, r))
                    show(f"run {r + 1}: jobs {jobs} PostgreSQL", on_pg[jobs][-1])

    def med(jobs: int, what: str) -> float:
        return statistics.median(getattr(x, what) for x in results[jobs])

    rate = {j: med(j, "rate") for j in results}
    busy = {j: med(j, "cores") for j in results}
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"round-robin, 4 random bots, tic-tac-toe, {results[1][0].games} games, "
        f"medians of {args.repeats} (cores: {os.cpu_count()})"
    )
    for j in (1, 2):
        print(
            f"  --jobs {j}: {rate[j]:7.1f} games/s  database {100 * med(j, 'db'):4.1f}% of the"
            f" time (schedule {100 * med(j, 'schedule'):.1f}%, loop held"
            f" {100 * med(j, 'held'):.1f}%); writer thread busy {100 * med(j, 'thread'):.1f}%"
            f" (CPU {100 * med(j, 'thread_cpu'):.1f}%); CPU {1000 * busy[j] / rate[j]:.2f} ms"
            f" per game, {busy[j]:.2f} cores busy"
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
        f"  database share of the wall time with 2 jobs: {100 * med(2, 'db'):.1f}% (target <= 5%)"
    )
    if args.pg:
        for j in (1, 2):
            pg = statistics.median(x.rate for x in on_pg[j])
            cpu = statistics.median(x.cores / x.rate for x in on_pg[j])
            print(
                f"  PostgreSQL --jobs {j}: {pg:7.1f} games/s, {pg / rate[j]:.2f}x SQLite's"
                f" (target >= 0.8x); CPU {1000 * cpu:.2f} ms per game; writer thread busy"
                f" {100 * statistics.median(x.thread for x in on_pg[j]):.1f}%"
            )


if __name__ == "__main__":
    main()
