"""Where a distributed tournament would stop scaling: the writer's ceiling and Ray's overhead.

    python bench/cluster.py [--writes 4000] [--fast 6000] [--search 400] [--pg URL] [--no-ray]
        [--ray-niceness N]

1. **The writer's ceiling.** Results stored per second by one driver, as the runner stores
   them (group commit: up to 64 results a transaction, each match's row, seats and moves), on
   SQLite and, with ``--pg`` (or ``$ARENA_TEST_PG_URL``), on PostgreSQL. The records are real
   (random tic-tac-toe games played once), written again into ``--writes`` pending matches.
2. **Executors on the same CPUs.** A round-robin of 4 bots played by the local executor with
   ``--jobs 2`` and by the Ray executor on a two-node Ray cluster started here on loopback (one
   CPU a node, two actors): games/s for a fast game (random tic-tac-toe, ``--fast`` games) and
   a searching one (alpha-beta depth 4 against depth 3 on Connect Four, ``--search`` games;
   random openings of 2 plies in both), and Ray's overhead
   per match, (wall on Ray - wall locally) / games, from the medians of ``--repeats`` runs;
   and the same in steady play, from the first game to finish to the last (by their stored
   finish times), which leaves out each executor's start (Ray's actors: about 0.45 s here).
3. From 1 and 2: the number of CPUs at which one writer is the limit for each kind of game
   (writer ceiling / games per second per CPU), printed for docs/scaling.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from sqlalchemy import func, select

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)  # bench/ holds scripts named like packages (bench/games.py)

from bot_arena import games
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import BotPool
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.tournament.create import create
from bot_arena.arena.tournament.group_commit import GROUP_MAX
from bot_arena.arena.tournament.runner import Runner, pending_jobs
from bot_arena.arena.transport.process import descendants
from bot_arena.db.models import Match
from bot_arena.db.session import make_engine, session_factory
from bot_arena.db.store import versions_for
from bot_arena.db.writer import writer_for

FAST = ("tictactoe", ["random:seed=1", "random:seed=2", "random:seed=3", "random:seed=4"])
# two searchers, so every game is a whole game of alpha-beta at depth 4 against depth 3 (random
# openings of 2 plies keep the games apart)
SEARCH = ("connect4", ["alphabeta:depth=4", "alphabeta:depth=3"])
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}


def new_tournament(url: str, game_name: str, field: list[str], total: int, seed: int) -> int:
    engine = make_engine(url)
    factory = session_factory(engine)
    refs = [resolve(s) for s in field]
    pairs = len(field) * (len(field) - 1) // 2
    tid = create(
        factory,
        games.get(game_name),
        field,
        refs,
        fmt="round-robin",
        games_per_group=max(1, round(total / pairs)),
        time_control=TimeControl(move_time=5.0),
        seed=seed,
        opening_plies=2,
    )
    engine.dispose()
    return tid


def writer_ceiling(url: str, writes: int) -> float:
    """Results stored per second through the runner's writer, GROUP_MAX a transaction."""
    game = games.get(FAST[0])
    refs = [resolve(s) for s in FAST[1]]
    with BotPool() as pool:
        records = [pool.play(game, refs[:2], seed=s) for s in range(16)]
    tid = new_tournament(url, *FAST, writes, 1)
    engine = make_engine(url)
    factory = session_factory(engine)
    with factory() as session:
        from bot_arena.arena.tournament.create import load_tournament

        tournament = load_tournament(session, tid)
        jobs = pending_jobs(session, tournament)
        version_ids = [v.id for v in versions_for(session, refs)]
    with engine.connect() as conn:
        writer = writer_for(conn)
        start = time.perf_counter()
        for i in range(0, len(jobs), GROUP_MAX):
            group = jobs[i : i + GROUP_MAX]
            with conn.begin():
                done = writer.complete_matches(
                    [
                        (job.match_id, records[k % 16], [version_ids[s] for s in job.seats], False)
                        for k, job in enumerate(group, i)
                    ],
                    sandbox="off",
                )
            assert all(done)
        spent = time.perf_counter() - start
    engine.dispose()
    return len(jobs) / spent


def play(
    url: str, game_name: str, field: list[str], total: int, seed: int, executor: object
) -> tuple[float, float]:
    """Games per second of one tournament: over the wall time of the run (creation excluded),
    and in steady play (between the first and the last game to finish, by their stored finish
    times: the executor's start, a fork server or Ray's actors, left out for both alike)."""
    tid = new_tournament(url, game_name, field, total, seed)
    engine = make_engine(url)
    factory = session_factory(engine)
    refs = [resolve(s) for s in field]
    with open(os.devnull, "w") as quiet:
        runner = Runner(
            factory,
            tid,
            refs,
            jobs=2,
            progress_stream=quiet,
            tty=False,
            executor=executor,  # type: ignore[arg-type]
        )
        start = time.perf_counter()
        outcome = runner.run()
        wall = time.perf_counter() - start
    with engine.connect() as conn:
        first, last, n = conn.execute(
            select(func.min(Match.finished), func.max(Match.finished), func.count()).where(
                Match.tournament_id == tid, Match.status == "done"
            )
        ).one()
    engine.dispose()
    assert outcome.finished, outcome.failed
    steady = (n - 1) / max((last - first).total_seconds(), 1e-9)
    return outcome.done / wall, steady


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def two_nodes(niceness: int | None = None) -> Iterator[str]:
    """A Ray cluster of two one-CPU nodes on loopback; its address. ``niceness``: of its worker
    processes, the actors and their bots (None: Ray's default, 15)."""
    ray = shutil.which("ray") or str(Path(sys.executable).with_name("ray"))
    temp = Path(tempfile.mkdtemp(prefix="arena-ray-", dir="/tmp"))
    port = _free_port()
    env = {**os.environ, **RAY_ENV}
    if niceness is not None:
        env["RAY_worker_niceness"] = str(niceness)
    common = ["--num-cpus", "1", "--node-ip-address", "127.0.0.1"]
    try:
        subprocess.run(
            [ray, "start", "--head", "--port", str(port), *common, "--include-dashboard",
             "false", "--disable-usage-stats", "--temp-dir", str(temp / "ray")],
            env=env, check=True, capture_output=True,
        )  # fmt: skip
        subprocess.run(
            [ray, "start", "--address", f"127.0.0.1:{port}", *common],
            env=env,
            check=True,
            capture_output=True,
        )
        yield f"127.0.0.1:{port}"
    finally:
        # its processes, everything under them and their process groups (Ray's agents outlive
        # their raylet by a minute otherwise)
        found = subprocess.run(["pgrep", "-f", str(temp)], capture_output=True, text=True)
        ours = {int(p) for p in found.stdout.split()}
        for pid in list(ours):
            ours |= set(descendants(pid))
        for pid in ours:
            with suppress(ProcessLookupError):
                group = os.getpgid(pid)
                if group != os.getpgrp():
                    os.killpg(group, signal.SIGKILL)
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=4000)
    parser.add_argument("--fast", type=int, default=6000)
    parser.add_argument("--search", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pg", default=os.environ.get("ARENA_TEST_PG_URL"))
    parser.add_argument("--no-ray", action="store_true")
    # Ray starts its workers at nice 15 (its daemons first), the local executor's jobs run at 0:
    # on a machine shared with other work that may weigh on Ray, so this sets the niceness of
    # the nodes' workers (measured here: no difference beyond the noise)
    parser.add_argument("--ray-niceness", type=int, default=-1, help="-1: Ray's default (15)")
    args = parser.parse_args()
    os.environ.update(RAY_ENV)
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        ceilings = {}
        urls = {"SQLite": f"sqlite:///{tmp}/writer.db"}
        if args.pg:
            urls["PostgreSQL"] = args.pg
        print(f"1. the writer's ceiling: {args.writes} results, {GROUP_MAX} a transaction")
        for name, url in urls.items():
            runs = [writer_ceiling(url, args.writes) for _ in range(args.repeats)]
            ceilings[name] = statistics.median(runs)
            print(f"  {name:<11} {ceilings[name]:8.0f} results/s  (runs: "
                  f"{', '.join(f'{r:.0f}' for r in runs)})")  # fmt: skip
        if args.no_ray:
            return
        from bot_arena.arena.tournament.ray_executor import RayExecutor

        nice = None if args.ray_niceness < 0 else args.ray_niceness
        print(
            "2. executors on 2 CPUs: local --jobs 2 against 2 Ray actors on 2 nodes (Ray's "
            f"workers at nice {15 if nice is None else nice})"
        )
        rates: dict[str, dict[str, float]] = {}
        with two_nodes(nice) as address:
            executor = RayExecutor(address)
            try:
                for label, (game_name, field), total in (
                    ("fast", FAST, args.fast),
                    ("search", SEARCH, args.search),
                ):
                    local, remote = [], []
                    for r in range(args.repeats):  # interleaved: load changes hit both alike
                        url = f"sqlite:///{tmp}/{label}-{r}.db"
                        local.append(play(url, game_name, field, total, r, None))
                        remote.append(play(url, game_name, field, total, r, executor))
                    lr = statistics.median(x[0] for x in local)
                    rr = statistics.median(x[0] for x in remote)
                    ls = statistics.median(x[1] for x in local)
                    rs = statistics.median(x[1] for x in remote)
                    rates[label] = {"local": lr, "ray": rr}
                    print(
                        f"  {label:<6} {game_name:<9} local {lr:7.1f} games/s, ray {rr:7.1f} "
                        f"games/s: ray/local {rr / lr:.2f}x, Ray's overhead "
                        f"{1000 * (1 / rr - 1 / lr) * 2:.2f} ms a match per actor\n"
                        f"  {'':<6} {'steady':<9} local {ls:7.1f} games/s, ray {rs:7.1f} "
                        f"games/s: ray/local {rs / ls:.2f}x (first game to last; the "
                        f"executors' start left out)"
                    )
            finally:
                executor.close()
        print("3. CPUs at which one writer is the limit (ceiling / games per second per CPU)")
        for name, ceiling in ceilings.items():
            for label, rate in rates.items():
                per_cpu = rate["ray"] / 2
                print(f"  {name:<11} {label:<6}: {ceiling / per_cpu:9.0f} CPUs")


if __name__ == "__main__":
    main()
