"""A ladder on ``arena serve`` under readers (issue 31): many concurrent clients reading the
ladder's standings and the API while the server plays the ladder, against the same ladder
with no readers in the same run.

    python bench/serve.py [--clients 200] [--seconds 10] [--rounds 2] [--interval 0] [--sse]
                          [--web-nice N] [--client-nice N]

A ladder of tictactoe bots (built-in, so every game is short) is made in a fresh SQLite
database and ``arena serve --jobs 1`` is started on a free loopback port: it plays the ladder
in a ``ladder run`` process of its own. Then, ``--rounds`` times, a quiet stretch (no reader)
and a loaded stretch (``--clients`` asyncio clients on httpx, each a loop of requests: the
standings JSON most of the time, ``/api/ladders`` and the ladder's page otherwise; each
client sends back the ETag it was last given for a route, as the page's poller does, and a 304
counts as an answer), each ``--seconds`` long; with ``--client-nice N``, also a third stretch a
round whose clients run in a child process niced by N (standing in for remote browsers; both
figures are printed, each round's ratio too). ``--web-nice``: the server's (default: its own).
Reported: each route's p50 and p99 latency and requests a second under
load; the ladder's games a second (done matches counted in the database) quiet and loaded,
and their ratio (the target: >= 0.9); the server process's CPU milliseconds a request (user +
sys from /proc), and with one client asking in a row, each route's CPU a request against
``/api/health``'s (the trivial route) in the same run. And, in process, what the cache
saves: the median time of a standings fit against a cached read (``perf_counter``).
With ``--sse`` the clients follow the ladder's live standings instead
(``/api/ladders/{ladder}/events``, as the page's EventSource does: eight to a loopback address,
the server's cap per address, so 127.0.0.1, .2, ...): reported are the latency from a game
stored (the first time a thread polling the database every 2 ms sees the ladder's count of
done games reach an event's ``games``) to that event at each client, p50 and p99, the events
received, and the server's CPU while they are open. Loopback only, bounded in clients and
time. On a shared machine compare the CPU numbers: the latencies and games a second depend on
what else runs (the load average is printed).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)  # bench/ holds scripts named like packages (bench/games.py)

import httpx

ARENA = [sys.executable, "-m", "bot_arena.arena.cli.app"]
FIELD = ["random", "random:seed=3", "random:seed=5", "alphabeta:depth=1", "alphabeta:depth=2"]
LADDER = "bench"
#: what a reader asks for, with weights: mostly the standings, as a page polling them would
ROUTES = (
    (f"/api/ladders/{LADDER}/standings", 8),
    ("/api/ladders", 1),
    (f"/ladders/{LADDER}", 1),
)
MAX_CLIENTS = 1000
MAX_SECONDS = 120.0


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Sched:
    """What the kernel counted of a set of threads (``/proc/PID/task/TID``): nanoseconds on
    a CPU and waiting on a run queue (runnable, not running: a wake-up's wait for a CPU),
    and context switches, voluntary (the thread blocked) and not (it was preempted)."""

    on_cpu: int = 0
    waiting: int = 0
    voluntary: int = 0
    preempted: int = 0

    def __sub__(self, other: Sched) -> Sched:
        return Sched(
            self.on_cpu - other.on_cpu,
            self.waiting - other.waiting,
            self.voluntary - other.voluntary,
            self.preempted - other.preempted,
        )


def _tree(root: int) -> list[int]:
    """The live descendants of process ``root`` (not ``root`` itself)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(f"/proc/{entry.name}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def ladder_sched(server: int) -> dict[int, Sched]:
    """Each thread of the server's ladder players (its child processes and everything under
    them: the ``ladder run`` runner, its fork server, the bots), by thread id."""
    found = {}
    for pid in _tree(server):
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                cpu, wait, _ = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
                status = Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines()
            except (OSError, ValueError):
                continue
            switches = {k: int(v) for k, _, v in (line.partition(":\t") for line in status)
                        if k.endswith("ctxt_switches")}  # fmt: skip
            found[int(tid)] = Sched(
                int(cpu),
                int(wait),
                switches.get("voluntary_ctxt_switches", 0),
                switches.get("nonvoluntary_ctxt_switches", 0),
            )
    return found


def sched_since(server: int, before: dict[int, Sched]) -> Sched:
    """What the ladder players' threads were counted since ``before`` (threads that ended
    meanwhile are left out; threads started since count from zero)."""
    total = Sched()
    for tid, now in ladder_sched(server).items():
        spent = now - before.get(tid, Sched())
        total = Sched(
            total.on_cpu + spent.on_cpu,
            total.waiting + spent.waiting,
            total.voluntary + spent.voluntary,
            total.preempted + spent.preempted,
        )
    return total


def stretch(
    server: int, held: dict[int, Sched], db: Path, count: int, began: float
) -> tuple[Sched, int, float]:
    """What the ladder players' threads were counted since ``held``, the games stored since
    there were ``count``, and the seconds since ``began``."""
    return sched_since(server, held), done(db) - count, time.perf_counter() - began


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def done(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return int(conn.execute("SELECT count(*) FROM matches WHERE status = 'done'").fetchone()[0])
    finally:
        conn.close()


def games_per_s(db: Path, seconds: float) -> float:
    """The ladder's stored games a second over ``seconds`` with nobody reading."""
    before, start = done(db), time.perf_counter()
    time.sleep(seconds)
    return (done(db) - before) / (time.perf_counter() - start)


NOT_MODIFIED = "304s"  # the key under which ``_readers`` counts its 304 answers


async def _readers(
    url: str, clients: int, seconds: float, interval: float
) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {path: [] for path, _ in ROUTES}
    found[NOT_MODIFIED] = []
    failed: list[str] = []
    paths = [p for p, w in ROUTES for _ in range(w)]
    stop = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:

        async def reader(seed: int) -> None:
            pick = random.Random(seed)
            tags: dict[str, str] = {}  # as the page's poller: the ETag of what it holds
            await asyncio.sleep(pick.uniform(0.0, interval))  # readers' polls spread out
            while time.monotonic() < stop:
                path = pick.choice(paths)
                held = {"If-None-Match": tags[path]} if path in tags else {}
                start = time.perf_counter()
                try:
                    answer = await http.get(path, headers=held)
                except httpx.TransportError as exc:
                    failed.append(f"{path}: {type(exc).__name__}")
                    continue
                found[path].append(time.perf_counter() - start)
                if answer.status_code == 304:
                    found[NOT_MODIFIED].append(0.0)
                elif answer.status_code != 200:
                    failed.append(f"{path}: {answer.status_code} {answer.text[:100]}")
                elif "etag" in answer.headers:
                    tags[path] = answer.headers["etag"]
                await asyncio.sleep(max(0.0, interval - (time.perf_counter() - start)))

        await asyncio.gather(*(reader(i) for i in range(clients)))
    if failed:
        print(f"{len(failed)} requests failed, the first: {failed[0]}", file=sys.stderr)
    return found


SSE_PER_ADDRESS = 8  # the server's streams_per_client
DB_POLL_S = 0.002  # how often the SSE mode looks for newly stored games


class Stored:
    """When each count of done games was first seen (a thread polling the database)."""

    def __init__(self, db: Path) -> None:
        import threading

        self.db, self.at, self.stop = db, dict[int, float](), threading.Event()
        self.oldest: list[float] = []  # each event's latency from the first game it newly holds
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)
        sql = "SELECT count(*) FROM matches WHERE status = 'done'"
        try:
            last = int(conn.execute(sql).fetchone()[0])
            while not self.stop.wait(DB_POLL_S):
                now, count = time.perf_counter(), int(conn.execute(sql).fetchone()[0])
                for seen in range(last + 1, count + 1):
                    self.at.setdefault(seen, now)
                last = max(last, count)
        finally:
            conn.close()


async def _followers(url: str, clients: int, seconds: float, stored: Stored) -> list[float]:
    """``clients`` streams of the ladder's events for ``seconds``: each event's latency from
    its games' storing (events whose count was stored before the stretch are not counted)."""
    import json

    latencies: list[float] = []
    failed: list[str] = []
    stop = time.monotonic() + seconds
    path = f"/api/ladders/{LADDER}/events"
    oldest = stored.oldest

    async def follower(http: httpx.AsyncClient) -> None:
        try:
            async with http.stream("GET", path) as answer:
                if answer.status_code != 200:
                    failed.append(f"{answer.status_code} {(await answer.aread())[:100]!r}")
                    return
                lines = answer.aiter_lines()
                before: int | None = None  # the games of this client's last event
                while time.monotonic() < stop:
                    try:
                        line = await asyncio.wait_for(anext(lines), stop - time.monotonic())
                    except TimeoutError:
                        return
                    if line.startswith("data: "):
                        now = time.perf_counter()
                        games = json.loads(line[6:])["games"]
                        if games in stored.at and before is not None and before < games:
                            latencies.append(now - stored.at[games])
                            oldest.append(now - stored.at.get(before + 1, stored.at[games]))
                        before = games
        except httpx.HTTPError as exc:
            failed.append(type(exc).__name__)

    https = [
        httpx.AsyncClient(
            base_url=url,
            timeout=60,
            transport=httpx.AsyncHTTPTransport(local_address=f"127.0.0.{1 + i}"),
        )
        for i in range((clients + SSE_PER_ADDRESS - 1) // SSE_PER_ADDRESS)
    ]
    try:
        await asyncio.gather(*(follower(https[i // SSE_PER_ADDRESS]) for i in range(clients)))
    finally:
        for http in https:
            await http.aclose()
    if failed:
        print(f"{len(failed)} streams failed, the first: {failed[0]}", file=sys.stderr)
    return latencies


def followed(
    url: str, db: Path, clients: int, seconds: float
) -> tuple[list[float], list[float], float]:
    """Event latencies of ``clients`` streams for ``seconds`` (from the newest game each
    event holds; ``Stored.oldest``: from the first game it newly holds), and the games a second
    stored meanwhile."""
    stored = Stored(db)
    stored.thread.start()
    before, start = done(db), time.perf_counter()
    try:
        latencies = asyncio.run(_followers(url, clients, seconds, stored))
    finally:
        stored.stop.set()
        stored.thread.join()
    return latencies, stored.oldest, (done(db) - before) / (time.perf_counter() - start)


def _niced_readers(
    nice: int, url: str, clients: int, seconds: float, interval: float
) -> dict[str, list[float]]:
    """``_readers`` in a process of its own whose nice value is raised by ``nice``."""
    os.nice(nice)
    return asyncio.run(_readers(url, clients, seconds, interval))


def loaded(
    url: str, db: Path, clients: int, seconds: float, interval: float = 0.0, nice: int = 0
) -> tuple[dict[str, list[float]], float]:
    """Latencies by route under ``clients`` readers for ``seconds``, and the games a second
    stored meanwhile. ``nice``: the readers run in a child process at a nice value that much
    higher (remote browsers stand in for by a process that yields the CPU), else in this one."""
    before, start = done(db), time.perf_counter()
    if nice:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(1) as pool:
            found = pool.apply(_niced_readers, (nice, url, clients, seconds, interval))
    else:
        found = asyncio.run(_readers(url, clients, seconds, interval))
    return found, (done(db) - before) / (time.perf_counter() - start)


def sequential_cpu(url: str, pid: int, repeats: int = 200) -> dict[str, float]:
    """The server's CPU seconds a request of each route (and of ``/api/health``, the
    baseline), one client asking ``repeats`` times in a row: the cost of a request itself,
    without the contention of many clients."""
    costs = {}
    with httpx.Client(base_url=url, timeout=60) as http:
        for path in ["/api/health", *(p for p, _ in ROUTES)]:
            http.get(path).raise_for_status()
            before = cpu_s(pid)
            for _ in range(repeats):
                http.get(path).raise_for_status()
            costs[path] = (cpu_s(pid) - before) / repeats
    return costs


def make_ladder(db: Path) -> None:
    from bot_arena.arena.api.ladders import ladder_add, ladder_create, ladder_run

    ladder_create(LADDER, "tictactoe", db=str(db), seed=1)
    ladder_add(LADDER, FIELD, db=str(db))
    ladder_run(LADDER, jobs=1, until_games=40, db=str(db))  # a standings worth fitting


def fit_cost(db: Path, repeats: int = 30) -> tuple[float, float]:
    """Median seconds of a standings fit and of a cached read, in process."""
    from bot_arena.arena.api import ladder_views
    from bot_arena.arena.api.ladder_views import StandingsCache
    from bot_arena.db.session import make_engine, session_factory

    engine = make_engine(str(db), read_only=True)
    try:
        sessions = session_factory(engine)
        fits, hits = [], []
        cache = StandingsCache()
        with sessions() as session:
            row = ladder_views.find(session, LADDER)
            for _ in range(repeats):
                start = time.perf_counter()
                ladder_views.standings(session, row)
                fits.append(time.perf_counter() - start)
            cache.get(session, row, ladder_views.standings)
            for _ in range(repeats):
                start = time.perf_counter()
                cache.get(session, row, ladder_views.standings)
                hits.append(time.perf_counter() - start)
        return statistics.median(fits), statistics.median(hits)
    finally:
        engine.dispose()


def refresh_cost(db: Path, repeats: int = 20) -> tuple[int, float, float]:
    """The ladder's done games, and the median CPU seconds (``process_time``, in process) of
    what the server pays about once a second while it plays: the standings' key, and a read
    afresh of a followed ladder (its director held, as the server holds it). At the ladder's
    size after the run: these grow with its games, the requests' cost does not."""
    from bot_arena.arena.api import ladder_views
    from bot_arena.arena.api.ladder_follow import Followers
    from bot_arena.db.ladders import standings_key
    from bot_arena.db.session import make_engine, session_factory

    engine = make_engine(str(db), read_only=True)
    try:
        followers = Followers()
        with session_factory(engine)() as session:
            row = ladder_views.find(session, LADDER)
            ladder_views.standings(session, row, followers)  # the director loaded once
            keys, reads = [], []
            for _ in range(repeats):
                start = time.process_time()
                standings_key(session, row.tournament_id)
                keys.append(time.process_time() - start)
                start = time.process_time()
                ladder_views.standings(session, row, followers)
                reads.append(time.process_time() - start)
        return done(db), statistics.median(keys), statistics.median(reads)
    finally:
        engine.dispose()


def start_server(
    folder: Path, db: Path, web_nice: int | None
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(folder / "serve.log", "wb")  # noqa: SIM115 (closed with the process)
    nice = [] if web_nice is None else ["--web-nice", str(web_nice)]
    process = subprocess.Popen(
        [*ARENA, "serve", "--db", str(db), "--port", str(port), "--jobs", "1", *nice],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"error: arena serve did not start: {(folder / 'serve.log').read_text()}")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--interval",
        type=float,
        default=0.0,
        help="seconds between one client's requests (0: at once, a closed loop; 2: as the "
        "ladder page polls)",
    )
    parser.add_argument(
        "--sse",
        action="store_true",
        help="the clients follow the standings' server-sent events instead of asking",
    )
    parser.add_argument(
        "--web-nice",
        type=int,
        default=None,
        help="arena serve's --web-nice (default: the server's own default)",
    )
    parser.add_argument(
        "--client-nice",
        type=int,
        default=0,
        help="also a loaded stretch a round with the clients in a process niced this much "
        "(standing in for remote browsers, which take none of the server's CPU); both figures "
        "are printed",
    )
    args = parser.parse_args()
    if not 1 <= args.clients <= MAX_CLIENTS:
        parser.error(f"--clients: give 1 to {MAX_CLIENTS}")
    if not 0 < args.seconds <= MAX_SECONDS:
        parser.error(f"--seconds: give more than 0, at most {MAX_SECONDS}")
    if not 1 <= args.rounds <= 10:
        parser.error("--rounds: give 1 to 10")
    if not 0 <= args.interval <= args.seconds:
        parser.error("--interval: give 0 to --seconds")
    if not 0 <= args.client_nice <= 19 or (args.client_nice and args.sse):
        parser.error("--client-nice: give 0 to 19, without --sse")
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        folder = Path(tmp)
        db = folder / "arena.db"
        make_ladder(db)
        fit, hit = fit_cost(db)
        process, url = start_server(folder, db, args.web_nice)
        try:
            deadline = time.monotonic() + 60  # the server's runner has started playing
            first = done(db)
            while done(db) == first and time.monotonic() < deadline:
                time.sleep(0.1)
            alone = sequential_cpu(url, process.pid)
            quiet: list[float] = []
            busy: list[float] = []
            niced: list[float] = []  # the games a second with the clients niced
            niced_found: dict[str, list[float]] = {}
            found: dict[str, list[float]] = {path: [] for path, _ in ROUTES}
            cpu = 0.0
            wall = 0.0
            events: list[float] = []
            firsts: list[float] = []
            spent: dict[str, list[tuple[Sched, int, float]]] = {"quiet": [], "loaded": []}
            for _ in range(args.rounds):
                held, count, began = ladder_sched(process.pid), done(db), time.perf_counter()
                quiet.append(games_per_s(db, args.seconds))
                spent["quiet"].append(stretch(process.pid, held, db, count, began))
                held, count, began = ladder_sched(process.pid), done(db), time.perf_counter()
                cpu_before, wall_before = cpu_s(process.pid), time.perf_counter()
                if args.sse:
                    late, early, rate = followed(url, db, args.clients, args.seconds)
                    events += late
                    firsts += early
                else:
                    latencies, rate = loaded(url, db, args.clients, args.seconds, args.interval)
                    for path, values in latencies.items():
                        found[path] = found.get(path, []) + values
                cpu += cpu_s(process.pid) - cpu_before
                wall += time.perf_counter() - wall_before
                busy.append(rate)
                spent["loaded"].append(stretch(process.pid, held, db, count, began))
                if args.client_nice:
                    held, count = ladder_sched(process.pid), done(db)
                    began = time.perf_counter()
                    latencies, rate = loaded(
                        url, db, args.clients, args.seconds, args.interval, args.client_nice
                    )
                    for path, values in latencies.items():
                        niced_found[path] = niced_found.get(path, []) + values
                    niced.append(rate)
                    spent.setdefault("niced", []).append(
                        stretch(process.pid, held, db, count, began)
                    )
        except Exception:
            log = (folder / "serve.log").read_text(errors="replace")
            print(f"the server's log:\n{log[-4000:]}", file=sys.stderr)
            raise
        finally:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        games, key_cost, refresh = refresh_cost(db)
        errors = [
            line
            for line in (folder / "serve.log").read_text(errors="replace").splitlines()
            if "Error" in line or "error" in line
        ]
        if errors:
            print("the server logged:\n" + "\n".join(errors[:20]), file=sys.stderr)
    not_modified = len(found.pop(NOT_MODIFIED, []))
    niced_found.pop(NOT_MODIFIED, None)
    requests = sum(len(v) for v in found.values())
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"standings in process: fit {ms(fit)} (median), cached read {ms(hit)}: x{fit / hit:.0f}")
    print(
        f"at {games} games, in process (CPU, median): the standings' key {ms(key_cost)}, "
        f"a read afresh of the followed ladder {ms(refresh)} (the server: about once a second)"
    )
    print("one client, in a row (server CPU a request, against /api/health):")
    for path, cost in alone.items():
        print(f"  {path:32} {ms(cost)}  x{cost / alone['/api/health']:.2f}")
    if args.sse:
        print(f"{args.clients} clients following the events, {args.rounds} x {args.seconds:.0f} s:")
        if len(events) >= 2:
            for what, values in (("newest", events), ("first new", firsts)):
                cuts = statistics.quantiles(values, n=100)
                print(
                    f"  stored game ({what} in the event) -> the event: "
                    f"p50 {ms(statistics.median(values))}  p99 {ms(cuts[98])}"
                )
            print(f"  {len(events)} events received, {len(events) / wall:.0f}/s")
        else:
            print(f"  only {len(events)} events received")
        print(f"  server CPU while followed: {cpu / wall * 100:.1f}% of a CPU")
    else:
        every = f", each every {args.interval:g} s" if args.interval else ", each asking at once"
        print(f"{args.clients} clients{every}, {args.rounds} x {args.seconds:.0f} s loaded:")
        for path, values in found.items():
            q = statistics.quantiles(values, n=100)
            print(
                f"  {path:32} {len(values) / wall:7.0f} req/s  "
                f"p50 {ms(statistics.median(values))}  p99 {ms(q[98])}"
            )
        per = cpu * 1000 / requests
        print(f"  all routes: {requests / wall:.0f} req/s, server CPU {per:.2f} ms a request")
        print(f"  answered 304 (the client held the ETag's bytes): {not_modified}")
        if niced_found:
            print(f"  with the clients' process niced by {args.client_nice}:")
            for path, values in niced_found.items():
                q = statistics.quantiles(values, n=100)
                print(f"  {path:32} p50 {ms(statistics.median(values))}  p99 {ms(q[98])}")
    q, b = statistics.median(quiet), statistics.median(busy)
    print(
        f"ladder games/s: quiet {q:.1f} (median of {quiet}), loaded {b:.1f} "
        f"(median of {busy}): {b / q:.2f} of quiet"
    )
    pairs = [f"{x / y:.2f}" for x, y in zip(busy, quiet, strict=True)]
    print(f"  each round's loaded/quiet: {', '.join(pairs)}")
    if niced:
        n = statistics.median(niced)
        each = ", ".join(f"{x / y:.2f}" for x, y in zip(niced, quiet, strict=True))
        print(
            f"  with the clients niced by {args.client_nice} (not as remote browsers would be: "
            f"they share this machine): loaded {n:.1f} (median of {niced}): {n / q:.2f} of "
            f"quiet; each round's: {each}"
        )
    print("the ladder's processes (runner, fork server, bots: /proc schedstat), a game:")
    for what, stretches in spent.items():
        games = sum(g for _, g, _ in stretches) or 1
        on_cpu = sum(x.on_cpu for x, _, _ in stretches) / games / 1e6
        waiting = sum(x.waiting for x, _, _ in stretches) / games / 1e6
        voluntary = sum(x.voluntary for x, _, _ in stretches) / games
        preempted = sum(x.preempted for x, _, _ in stretches) / games
        wall = sum(t for _, _, t in stretches) / games * 1000
        print(
            f"  {what:7} {wall:.2f} ms apart; on a CPU {on_cpu:.2f} ms, waiting for one "
            f"{waiting:.2f} ms; "
            f"switches {voluntary:.1f} blocked, {preempted:.1f} preempted"
        )


if __name__ == "__main__":
    main()
