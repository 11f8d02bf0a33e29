"""Tournaments on a real Ray cluster of two nodes on this machine (``--executor ray``).

The fixture starts a head node (its own port, one CPU) and a second node (one CPU) with
``ray start``, the second in a mount namespace of its own where the driver's bot folder is an
empty tmpfs: a bot file there exists only on the driver's side, as on a cluster of separate
machines. Results go to PostgreSQL when $ARENA_TEST_PG_URL is set, else to SQLite. Selected
with ``-m ray``; skipped (saying why) where Ray is not installed, unless $ARENA_RAY_REQUIRED
is set (CI), which makes that a failure.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot_arena.arena.tournament import ray_executor
from bot_arena.arena.transport.process import descendants
from bot_arena.db.tournaments import RUNNER
from tests import inprocess, needs
from tests.arena.test_tournament_crash import Db, Gate, forked, wait_until
from tests.db.dbtest import database
from tests.forked_cli import COMMAND_MODULES, Forked, Server

# one cluster at a time: every test of the module runs on one xdist worker (--dist loadfile)
pytestmark = [pytest.mark.ray, pytest.mark.slow]

BOTS = ["alphabeta:depth=3", "alphabeta:depth=2", "random"]
LIMIT_S = 120.0  # a bound on waits for the cluster, never a guess at how long it takes
# for the nodes and for every driver the tests start: no usage reports, and no token (the
# cluster listens on loopback only; a token file left in ~/.ray by another Ray would make
# the nodes disagree about it)
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
# Daemons the runs under test never use, left out (each a Python process importing Ray, a
# second of CPU to start, and polling while it lives): the head's autoscaler monitor (a cluster
# of fixed nodes; ``--no-monitor`` is a hidden flag of ``ray start``) and each node's log monitor
# (it sends the workers' output to drivers, and every arena driver says ``log_to_driver=False``).
CHEAP_HEAD = ["--no-monitor"]
CHEAP_NODE = ["--include-log-monitor", "false"]
#: what a driver on the cluster imports before it joins, beyond the CLI's and a run's: Ray
#: (a single-threaded import: nothing of it runs until ``ray.init``, in the fork) and the
#: executor, and the ladder's run
DRIVER_MODULES = (
    *COMMAND_MODULES,
    "ray",
    "bot_arena.arena.tournament.ray_executor",
    "bot_arena.arena.tournament.ladder_runner",
    "bot_arena.arena.api.ladders",
)


def _ray_cli() -> list[str]:
    """Ray's command line run by this interpreter (``ray start``'s nodes then start their
    workers with it, so they import the same ``bot_arena``), not whatever ``ray`` is first on
    $PATH: a wrapper there ran ``python -m ray``, which Ray cannot be, and every test of the
    module failed at the fixture."""
    try:
        import ray  # noqa: F401
    except ImportError:
        needs.missing(needs.RAY, "Ray is not installed (pip install 'bot-arena[ray]')")
    return [sys.executable, "-m", "ray.scripts.scripts"]


#: a client of a cluster's control store (GCS) that answers each line it reads with the count
#: of nodes alive there: one process for the module's waits, where each poll was a fresh
#: ``python -c`` whose ``ray.init`` joined the cluster as a driver (a job, a core worker, the
#: import of all of Ray) to read ``ray.nodes()``; this reads the same node table, ``Alive``
#: being the ``ALIVE`` state
NODES_PROBE = """
import sys

from ray._raylet import GcsClient
from ray.core.generated.gcs_pb2 import GcsNodeInfo

client = GcsClient(address=sys.argv[1])
for _ in sys.stdin:
    try:
        nodes = client.get_all_node_info(timeout=10).values()
        alive = sum(node.state == GcsNodeInfo.ALIVE for node in nodes)
    except Exception as exc:  # no answer in time, the cluster gone: asked again by the wait
        print("alive-nodes -1", type(exc).__name__, flush=True)
    else:
        print("alive-nodes", alive, flush=True)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pids(pattern: str) -> set[int]:
    out = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout
    return {int(p) for p in out.split()}


class Cluster:
    """Two Ray nodes on loopback, started and stopped with ``ray start``."""

    def __init__(self, root: Path) -> None:
        self.ray = _ray_cli()
        self.root = root
        self.temp = root / "ray"  # short: Ray's socket paths must stay under 108 bytes
        self.driver_only = root / "driver-only"  # an empty tmpfs on the second node
        self.driver_only.mkdir()
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            **RAY_ENV,
            # a dead node is noticed in about 2 s (the default takes 30)
            "RAY_health_check_period_ms": "500",
            "RAY_health_check_timeout_ms": "500",
            "RAY_health_check_failure_threshold": "3",
        }
        self.second_raylet: int | None = None
        self._probe: subprocess.Popen[str] | None = None
        #: the drivers of the tests' runs on the cluster: forks of one server that started
        #: Python and imported the CLI, a run's modules and Ray once (tests/forked_cli.py),
        #: where each was a fresh ``python -m`` spending about a second of CPU on that
        self.drivers = Server(preload=DRIVER_MODULES)
        # the head's and the second node's ``ray start`` while launched, not yet waited for
        self._starting: tuple[subprocess.Popen[str], subprocess.Popen[str]] | None = None

    def _launch(self, argv: list[str], prefix: list[str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*(prefix or []), *argv],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def _finish(self, started: subprocess.Popen[str]) -> None:
        """Wait for a ``ray start`` (bounded); RuntimeError with its output when it failed."""
        try:
            out, _ = started.communicate(timeout=LIMIT_S)
        except subprocess.TimeoutExpired:
            started.kill()
            out, _ = started.communicate()
        if started.returncode != 0:
            raise RuntimeError(f"{started.args} failed:\n{out}")

    def launch(self) -> None:
        """Both nodes' ``ray start`` run at once, not waited for (:meth:`ready` waits): the
        second's waits for the head's control store (trying again each second), so their
        start-ups overlap, and the caller's own work overlaps them both."""
        head = [
            *self.ray, "start", "--head", "--port", str(self.port), "--num-cpus", "1",
            "--node-ip-address", "127.0.0.1", "--include-dashboard", "false",
            "--disable-usage-stats", "--temp-dir", str(self.temp),
            *CHEAP_HEAD, *CHEAP_NODE,
        ]  # fmt: skip
        self._starting = (self._launch(head), self._launch_second())

    def ready(self) -> None:
        """Wait for what :meth:`launch` started: both nodes up and counted alive (once)."""
        if self._starting is None:
            return
        (head, second), self._starting = self._starting, None
        try:
            self._finish(head)
        except BaseException:
            second.kill()
            second.communicate()
            raise
        self._join_second(second, before=set())

    def _launch_second(self) -> subprocess.Popen[str]:
        """``ray start`` of the second node, in a mount namespace where the driver-only folder
        is empty."""
        start = [
            *self.ray, "start", "--address", self.address, "--num-cpus", "1",
            "--node-ip-address", "127.0.0.1", *CHEAP_NODE,
        ]  # fmt: skip
        script = f'mount -t tmpfs arena-ray "{self.driver_only}" && exec "$@"'
        prefix = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"]
        return self._launch(start, prefix)

    def _raylets(self) -> set[int]:
        """This cluster's raylets (their command lines name its temp folder): other runs on
        the machine start Ray clusters of their own at the same time."""
        return _pids(f"raylet/raylet .*{self.temp}/")

    def _join_second(self, started: subprocess.Popen[str], before: set[int]) -> None:
        self._finish(started)
        ours = os.readlink("/proc/self/ns/mnt")
        new = {p for p in self._raylets() - before if _mount_ns(p) not in (ours, None)}
        assert len(new) == 1, new  # the one in a mount namespace of its own
        self.second_raylet = new.pop()
        self.wait_nodes(2)

    def add_second(self) -> None:
        """The second node again (the test before killed it)."""
        before = self._raylets()
        self._join_second(self._launch_second(), before)

    def alive_nodes(self) -> int:
        """How many nodes the control store counts alive (-1: no answer), asked of the probe
        (:data:`NODES_PROBE`), started at the first ask and again if it has ended."""
        probe = self._probe
        if probe is None or probe.poll() is not None:
            probe = self._probe = subprocess.Popen(
                [sys.executable, "-c", NODES_PROBE, self.address],
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
        assert probe.stdin is not None and probe.stdout is not None
        try:
            probe.stdin.write("?\n")
            probe.stdin.flush()
        except BrokenPipeError:
            return -1
        # Ray may print its own warnings on stdout too: the count is read from its tagged line
        # (the probe bounds each ask with a timeout, so an answer always comes or it ends)
        for line in probe.stdout:
            if line.startswith("alive-nodes "):
                return int(line.split()[1])
        return -1

    def close_probe(self) -> None:
        probe, self._probe = self._probe, None
        if probe is None:
            return
        assert probe.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            probe.stdin.close()
        try:
            probe.wait(10)
        except subprocess.TimeoutExpired:
            probe.kill()
            probe.wait()
        if probe.stdout is not None:
            probe.stdout.close()

    def wait_nodes(self, count: int) -> None:
        end = time.monotonic() + LIMIT_S
        while (alive := self.alive_nodes()) != count:
            assert time.monotonic() < end, f"{alive} nodes alive, not {count}"
            time.sleep(0.2)

    def kill_second(self) -> None:
        """The second node dies as a machine does: its raylet and every process under it (the
        actor, its fork server and bots) at once."""
        assert self.second_raylet is not None
        for pid in [self.second_raylet, *descendants(self.second_raylet)]:
            with _gone():
                os.kill(pid, signal.SIGKILL)
        self.second_raylet = None

    def stop(self) -> None:
        """Every process of this cluster: those naming its temp folder (GCS, raylets, monitors),
        everything under them, and their process groups (agents and the client server outlive
        their raylet by a minute otherwise); the nodes' probe first, and a ``ray start`` still
        running (launched, never waited for) before them, so it starts nothing after."""
        self.close_probe()
        starting, self._starting = self._starting, None
        for launched in starting or ():
            launched.kill()
            launched.communicate()
        ours = _pids(str(self.temp))
        for pid in list(ours):
            ours |= set(descendants(pid))
        groups = set()
        for pid in ours:
            with _gone():
                groups.add(os.getpgid(pid))
        for group in groups - {os.getpgrp()}:
            with _gone():
                os.killpg(group, signal.SIGKILL)
        for pid in ours:
            with _gone():
                os.kill(pid, signal.SIGKILL)
        end = time.monotonic() + 30.0
        # a zombie is dead (its parent, maybe not this process, has yet to reap it): waiting
        # for it to leave /proc waited out the 30 s where nobody reaped at once
        while (left := {p for p in ours if not _zombie(p)}) and time.monotonic() < end:
            time.sleep(0.05)
        assert not left, left


class _gone:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return exc[0] is ProcessLookupError


def _mount_ns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return None


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


@pytest.fixture(scope="module")
def launched() -> Iterator[Cluster]:
    """The module's cluster, its nodes launched and not waited for (:meth:`Cluster.ready`):
    the shared runs' local run plays while they start."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed")
    root = Path(tempfile.mkdtemp(prefix="arena-ray-", dir="/tmp"))
    saved = {k: os.environ.get(k) for k in RAY_ENV}
    os.environ.update(RAY_ENV)
    handle = Cluster(root)
    try:
        handle.launch()
        yield handle
    finally:
        handle.drivers.close()
        handle.stop()
        with _gone():
            subprocess.run(["umount", str(handle.driver_only)], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(scope="module")
def cluster(launched: Cluster) -> Cluster:
    """The module's cluster, both its nodes started."""
    launched.ready()
    return launched


@pytest.fixture
def two_nodes(cluster: Cluster) -> Cluster:
    """The cluster with both nodes up (a test before may have killed the second)."""
    if cluster.second_raylet is None:
        cluster.add_second()
    return cluster


@contextlib.contextmanager
def _db(folder: Path) -> Iterator[Db]:
    kind = "postgresql" if os.environ.get("ARENA_TEST_PG_URL") else "sqlite"
    with database(kind, folder) as url:
        handle = Db(url)
        yield handle
        if handle.engine is not None:
            handle.engine.dispose()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Db]:
    with _db(tmp_path) as handle:
        yield handle


def arena(cluster: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` as a process of its own (a fork of the cluster's ``drivers``), with this
    test's environment: for the commands that join the cluster."""
    return cluster.drivers.run(list(args), cwd=os.getcwd(), env=os.environ, timeout=600)


def driver(
    cluster: Cluster, cmd: list[str], log: Path
) -> contextlib.AbstractContextManager[Forked]:
    """``started`` for an ``arena`` command that joins the cluster, as a fork of its
    ``drivers``; ``log`` is there from the start (the fork opens it itself), so a wait may
    read it at once."""
    log.touch()
    return forked(cluster.drivers, cmd, log)


def local(*args: str) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` in this process (``tests/inprocess.py``): for the commands that do not
    reach the cluster (creating, adding, showing, a local run), whose process is not the
    subject. Those that reach it stay real processes: the cluster's driver never runs here."""
    return inprocess.run(*args, cwd=Path.cwd())


def run_args(db: Db, games: int, *extra: str) -> list[str]:
    bots = [a for spec in BOTS for a in ("--bot", spec)]
    return [
        "tournament", "run", "connect4", *bots, "--games", str(games), "--seed", "5",
        "--move-time", "5", "--db", db.url, *extra,
    ]  # fmt: skip


def results(db: Db, tid: int) -> dict[tuple[int, tuple[str, ...]], tuple[Any, ...]]:
    """Each match by (round, bots in seat order): its final position, termination and scores."""
    rows = db.query(
        "SELECT m.id, m.round, m.final_position, m.termination, b.name, s.score FROM matches m"
        " JOIN seats s ON s.match_id = m.id JOIN bot_versions v ON v.id = s.bot_version_id"
        f" JOIN bots b ON b.id = v.bot_id WHERE m.tournament_id = {tid} ORDER BY m.id, s.seat"
    )
    by_match: dict[int, list[Any]] = {}
    for mid, rnd, final, termination, name, score in rows:
        entry = by_match.setdefault(mid, [rnd, final, termination, [], []])
        entry[3].append(name)
        entry[4].append(score)
    out: dict[tuple[int, tuple[str, ...]], tuple[Any, ...]] = {}
    for rnd, final, termination, names, scores in by_match.values():
        key = (rnd, tuple(names))
        assert key not in out
        out[key] = (final, termination, tuple(scores))
    return out


def stored_once(db: Db, tid: int, total: int) -> None:
    """Every match of the tournament done, each with one row of seats per seat and its moves
    numbered once (nothing stored twice)."""
    statuses = Counter(
        s for (s,) in db.query(f"SELECT status FROM matches WHERE tournament_id = {tid}")
    )
    assert statuses == {"done": total}
    seats = db.query(
        "SELECT s.match_id, COUNT(*) FROM seats s JOIN matches m ON m.id = s.match_id"
        f" WHERE m.tournament_id = {tid} GROUP BY s.match_id"
    )
    assert len(seats) == total and {n for _, n in seats} == {2}
    doubled = db.query(
        "SELECT mv.match_id, mv.ply FROM moves mv JOIN matches m ON m.id = mv.match_id"
        f" WHERE m.tournament_id = {tid} GROUP BY mv.match_id, mv.ply HAVING COUNT(*) > 1"
    )
    assert doubled == []


def tournament_id(output: str) -> int:
    return int(output.split("tournament ", 1)[1].split(":", 1)[0])


#: a bot written to the driver-only folder: it exists on the driver's side only
GREEDY = """
def choose_move(game, state, budget):
    me = game.current_player(state)
    def value(move):
        after = game.apply(state, move)
        if game.is_terminal(after):
            return game.utility(after)[me]
        return game.evaluate(after)[me]
    return max(game.legal_moves(state), key=value)
"""


@dataclasses.dataclass
class RoundRobin:
    """One round-robin played twice in one database, by local jobs and on the cluster, its
    field led by a bot file that only the driver has: checked by the test that compares the
    executors and by the one about the bot file (one driver on the cluster, not two)."""

    db: Db
    on_second_node: bool  # whether the second node saw the bot file when the run started
    by_jobs: subprocess.CompletedProcess[str]
    on_ray: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def round_robin(
    launched: Cluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RoundRobin]:
    """The local run plays while the cluster's nodes start (they are waited for after it)."""
    bot = launched.driver_only / "greedy.py"
    bot.write_text(GREEDY.lstrip())
    with _db(tmp_path_factory.mktemp("round-robin")) as db:
        args = [
            "tournament", "run", "connect4", "--bot", str(bot), "--bot", "alphabeta:depth=2",
            "--bot", "random", "--games", "4", "--seed", "5", "--move-time", "5",
            "--db", db.url, "--json",
        ]  # fmt: skip
        by_jobs = local(*args, "--jobs", "2")
        launched.ready()
        if launched.second_raylet is None:
            launched.add_second()
        assert launched.second_raylet is not None
        seen_there = Path(f"/proc/{launched.second_raylet}/root") / bot.relative_to("/")
        on_second_node = seen_there.exists()
        on_ray = arena(launched, *args, "--executor", "ray", "--ray-address", launched.address)
        yield RoundRobin(db, on_second_node, by_jobs, on_ray)


def _summary(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(summary, dict)
    return summary


def test_a_round_robin_over_two_nodes_matches_the_local_executor(round_robin: RoundRobin) -> None:
    db = round_robin.db
    first, second = _summary(round_robin.by_jobs), _summary(round_robin.on_ray)
    assert "ray: 2 nodes, 2 actors" in round_robin.on_ray.stderr
    stored_once(db, second["id"], 12)
    assert results(db, first["id"]) == results(db, second["id"])
    boards = [
        local("leaderboard", "--tournament", str(t["id"]), "--db", db.url, "--json")
        for t in (first, second)
    ]
    rows = [
        [{k: v for k, v in row.items() if k != "version"} for row in json.loads(b.stdout)]
        for b in boards
    ]
    assert rows[0] == rows[1]


def test_killing_a_node_mid_run_loses_and_duplicates_nothing(
    two_nodes: Cluster, db: Db, tmp_path: Path
) -> None:
    """The gated bot holds both actors' games until the second node is dead, so that node
    has matches (batches sent ahead included) when it dies, however fast the others play; the
    tokens given first let some matches be stored before, on both nodes."""
    gate = Gate(tmp_path / "gated")
    gate.hold()
    gate.give(20)
    log = tmp_path / "run.log"
    try:
        with driver(two_nodes, gated_run(db, gate, 16, two_nodes.address), log) as proc:
            wait_until(proc, lambda: gate.left() == 0 and "2 actors" in log.read_text(), log)
            wait_until(
                proc,
                lambda: db.query("SELECT COUNT(*) FROM matches WHERE status = 'done'") >= [(2,)],
                log,
            )
            two_nodes.kill_second()
            gate.release()
            assert proc.wait(timeout=LIMIT_S) == 0, log.read_text()
    finally:
        gate.release()
    text = log.read_text()
    lost = [line for line in text.splitlines() if "back in line" in line]
    assert lost  # the node's matches were played elsewhere
    assert int(lost[0].split("; ")[-1].split()[0]) > 0, lost
    stored_once(db, tournament_id(text), 48)


def gated_run(db: Db, gate: Gate, games: int, address: str) -> list[str]:
    """The command of a Ray tournament with the gated bot in its field."""
    bots = [a for spec in gate.field() for a in ("--bot", spec)]
    return [
        sys.executable, "-m", "bot_arena.arena.cli.app",
        "tournament", "run", "tictactoe", *bots, "--games", str(games), "--seed", "5",
        "--move-time", "30", "--db", db.url, "--executor", "ray", "--ray-address", address,
    ]  # fmt: skip


def test_a_node_that_joins_mid_run_gets_actors(cluster: Cluster, db: Db, tmp_path: Path) -> None:
    """The gated bot holds the run (it moves only with tokens) until the new node's actor has
    started; then the gate opens and both actors play the rest. (Placed after the test that
    kills the second node: the node that test killed is the one this one starts again, where
    before, a test in between started it only for this one to kill it: a node's start and its
    daemons, several seconds of CPU, fewer.)"""
    if cluster.second_raylet is not None:
        cluster.kill_second()
    cluster.wait_nodes(1)  # killed here or by the test before: the control store has seen it
    gate = Gate(tmp_path / "gated")
    gate.hold()
    log = tmp_path / "run.log"
    cmd = gated_run(db, gate, 20, cluster.address)
    try:
        with driver(cluster, cmd, log) as proc:
            wait_until(proc, lambda: "ray: 1 nodes, 1 actors" in log.read_text(), log)
            cluster.add_second()
            wait_until(proc, lambda: "ray: 1 more actors (2 nodes)" in log.read_text(), log)
            gate.release()
            assert proc.wait(timeout=LIMIT_S) == 0, log.read_text()
    finally:
        gate.release()
    stored_once(db, tournament_id(log.read_text()), 60)


def test_a_killed_driver_resumes_on_the_cluster_exactly_once(
    two_nodes: Cluster, db: Db, tmp_path: Path
) -> None:
    args = run_args(db, 12, "--executor", "ray", "--ray-address", two_nodes.address)
    log = tmp_path / "run.log"
    cmd = [sys.executable, "-m", "bot_arena.arena.cli.app", *args]
    with driver(two_nodes, cmd, log) as proc:
        wait_until(
            proc,
            lambda: db.query("SELECT COUNT(*) FROM matches WHERE status = 'done'") >= [(5,)],
            log,
        )
        proc.send_signal(signal.SIGKILL)
    tid = tournament_id(log.read_text())
    before = dict(
        db.query(f"SELECT id, final_position FROM matches WHERE tournament_id = {tid}"
                 " AND status = 'done'")
    )  # fmt: skip
    assert 5 <= len(before) < 36
    resumed = arena(
        two_nodes, "tournament", "resume", str(tid), "--executor", "ray", "--ray-address",
        two_nodes.address, "--db", db.url, "--force",
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    stored_once(db, tid, 36)
    after = dict(db.query(f"SELECT id, final_position FROM matches WHERE tournament_id = {tid}"))
    assert all(after[m] == final for m, final in before.items())  # nothing played twice


def test_a_bot_file_only_on_the_driver_plays_on_the_other_node(round_robin: RoundRobin) -> None:
    """The round-robin's field is led by a bot file in the driver-only folder: the second node
    does not have it, yet its 8 matches of the 12 are played by the cluster's two actors (one a
    node) with no seat failing to load it (an actor that looked for the file on its own node
    faults its seats there)."""
    db = round_robin.db
    assert not round_robin.on_second_node  # the second node does not have the file
    summary = _summary(round_robin.on_ray)
    assert "ray: 2 nodes, 2 actors" in round_robin.on_ray.stderr
    stored_once(db, summary["id"], 12)
    played = db.query(
        "SELECT COUNT(DISTINCT s.match_id) FROM seats s JOIN matches m ON m.id = s.match_id"
        " JOIN bot_versions v ON v.id = s.bot_version_id JOIN bots b ON b.id = v.bot_id"
        f" WHERE m.tournament_id = {summary['id']} AND b.name = 'greedy'"
    )
    assert played == [(8,)]
    faults = db.query(
        "SELECT COUNT(*) FROM seats s JOIN matches m ON m.id = s.match_id"
        f" WHERE m.tournament_id = {summary['id']} AND s.fault IS NOT NULL"
    )
    assert faults == [(0,)]  # no seat failed to load the bot, on either node


# A bot that tries to reach the cluster it plays on (its session folder and address file, the
# control store's port, Ray itself) as it loads, and reports how each try went in its moves'
# info. Run confined (the default sandbox), every try must fail.
PROBE = """
import os
import socket
import threading

TEMP = {temp!r}  # the cluster's session folder (ray start --temp-dir)
PORT = {port!r}  # the control store's (GCS) port


def _try(what):
    try:
        return "reached: " + repr(what())[:200]
    except BaseException as exc:  # every failure is an answer here
        return f"refused: {{type(exc).__name__}}: {{str(exc)[:160]}}"


def _contents(folder):
    return [open(os.path.join(folder, n)).read() for n in os.listdir(folder) if "port" in n]


def _join(address):
    # Ray's own waits for a control store that never answers (20 tries a second apart, each
    # connect bounded at 5 s; past 120 s in all), shortened to one try of 1 s: refused in 4 s
    # without a network (a net namespace of its own; 7 s with tries of 2 s), within the bound
    # below. A join that works needs the store's answer on loopback, milliseconds: unconfined,
    # this join reached the module's cluster 6 runs of 6 at load 7-10. (Were it ever refused
    # for want of time, the plain connection to the port above would still show a reach.)
    os.environ.update(
        RAY_gcs_server_port_wait_time_s="1",
        RAY_py_gcs_connect_timeout_s="1",
        RAY_gcs_rpc_server_connect_timeout_s="1",
    )
    import ray

    ray.init(address=address, logging_level="ERROR", log_to_driver=False)
    try:
        return ray.cluster_resources()
    finally:  # each try on its own: a second ray.init in a joined process says "twice"
        ray.shutdown()


def _bounded(what, seconds=10.0):
    out = ["refused: no answer in %g s" % seconds]

    def run():
        out[0] = _try(what)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    return out[0]


TRIES = {{
    "session files": _try(lambda: _contents(os.path.join(TEMP, "session_latest"))),
    "address file": _try(lambda: open(os.path.join(TEMP, "ray_current_cluster")).read()),
    "/dev/shm": _try(lambda: os.listdir("/dev/shm")),
    "GCS port": _try(lambda: socket.create_connection(("127.0.0.1", PORT), timeout=5).close()),
    "ray.init auto": _bounded(lambda: _join("auto")),
    "ray.init GCS": _bounded(lambda: _join(f"127.0.0.1:{{PORT}}")),
}}


def choose_move(game, state, budget):
    return game.legal_moves(state)[0], {{"tries": TRIES}}
"""


def test_a_confined_bot_cannot_reach_the_cluster(cluster: Cluster, db: Db) -> None:
    """The probe plays two matches on the cluster under the default sandbox: it cannot read
    the files of Ray's session folder (their names, below the bot's own folder, it may list:
    docs/security.md) or its address file, sees none of the machine's shared memory, cannot
    connect to the control store, and ``ray.init`` finds no cluster (auto) or fails to connect
    (the GCS address; the probe shortens Ray's own retries, so the refusal comes in seconds);
    the matches are played and stored, no fault. (Without the sandbox the same probe reads the
    folder and the file, lists /dev/shm and connects.)"""
    # beside the cluster's session folder, which is named ``ray`` as Ray's default /tmp/ray is:
    # the probe's ``import ray`` must not open it as a package of the bot's
    bot = cluster.root / "probe.py"
    bot.write_text(PROBE.format(temp=str(cluster.temp), port=cluster.port))
    done = arena(
        cluster, "tournament", "run", "tictactoe", "--bot", str(bot), "--bot", "random",
        "--games", "2", "--move-time", "5", "--startup-time", "120",
        "--executor", "ray", "--ray-address", cluster.address, "--db", db.url, "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    tid = json.loads(done.stdout.strip().splitlines()[-1])["id"]
    stored_once(db, tid, 2)
    rows = db.query(
        "SELECT m.sandbox, mv.info FROM moves mv JOIN matches m ON m.id = mv.match_id"
        f" WHERE m.tournament_id = {tid} AND mv.info IS NOT NULL"
    )
    host_shm = set(os.listdir("/dev/shm"))
    tries = [
        json.loads(info)["tries"] if isinstance(info, str) else info["tries"] for _, info in rows
    ]
    assert tries and {level for level, _ in rows} == {"confined"}
    for found in tries:
        shm = found.pop("/dev/shm")
        assert shm.startswith("refused") or not host_shm & set(
            json.loads(shm[9:].replace("'", '"'))
        )
        reached = {what: how for what, how in found.items() if not how.startswith("refused: ")}
        assert reached == {}, reached
        assert set(found) == {
            "session files",
            "address file",
            "GCS port",
            "ray.init auto",
            "ray.init GCS",
        }
    faults = db.query(
        "SELECT s.fault FROM seats s JOIN matches m ON m.id = s.match_id"
        f" WHERE m.tournament_id = {tid} AND s.fault IS NOT NULL"
    )
    assert faults == []


def test_a_ladder_on_the_cluster_plays_and_stores_each_game_once(
    two_nodes: Cluster, db: Db
) -> None:
    """``ladder run --executor ray``: the ladder's games are played by the cluster's actors
    (both nodes'), each stored once with its two seats, and its standings count them."""
    created = local(
        "ladder", "create", "club", "--game", "connect4", "--seed", "5", "--move-time", "5",
        "--db", db.url,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    field = ["alphabeta:depth=2", "random:seed=1", "random:seed=2"]  # quick games
    added = local("ladder", "add", "club", *field, "--db", db.url)
    assert added.returncode == 0, added.stderr
    run = arena(
        two_nodes, "ladder", "run", "club", "--executor", "ray", "--ray-address", two_nodes.address,
        "--until-games", "8", "--db", db.url,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "ray: 2 nodes, 2 actors" in run.stderr
    shown = json.loads(local("ladder", "show", "club", "--json", "--db", db.url).stdout)
    total = shown["games"]
    assert total >= 8 and shown["in_play"] == 0
    stored_once(db, shown["id"], total)
    assert sum(row["games"] for row in shown["standings"]) == 2 * total
    # run again: it goes on from where it stood, nothing played twice
    again = arena(
        two_nodes, "ladder", "run", "club", "--executor", "ray", "--ray-address", two_nodes.address,
        "--until-games", str(total + 4), "--db", db.url,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    more = json.loads(local("ladder", "show", "club", "--json", "--db", db.url).stdout)
    assert more["games"] >= total + 4
    stored_once(db, shown["id"], more["games"])


def _runner(db: Db, ladder: str) -> dict[str, Any] | None:
    """The runner the ladder's tournament records (host and pid), if any."""
    rows = db.query(
        "SELECT t.settings FROM tournaments t JOIN ladders l ON l.tournament_id = t.id "
        f"WHERE l.name = '{ladder}'"
    )
    settings = rows[0][0] if rows else {}
    settings = json.loads(settings) if isinstance(settings, str) else settings
    found = settings.get(RUNNER)
    return found if isinstance(found, dict) else None


def test_serve_plays_its_ladder_on_the_cluster_and_stops_its_runner(
    two_nodes: Cluster, db: Db, tmp_path: Path
) -> None:
    """``arena serve --executor ray --ray-address``: the server's own ``ladder run`` (its child,
    recorded as the ladder's runner) plays the ladder on the cluster's actors (both nodes);
    every game is stored once; the server's SIGTERM stops the runner as Ctrl-C does (it ends
    its run and clears its entry) and the server then ends by itself."""
    from tests.server.conftest import start

    created = local(
        "ladder", "create", "club", "--game", "connect4", "--seed", "5", "--move-time", "5",
        "--db", db.url,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    added = local("ladder", "add", "club", "alphabeta:depth=2", "random:seed=1", "random:seed=2",
                  "--db", db.url)  # fmt: skip
    assert added.returncode == 0, added.stderr
    server = start(tmp_path, db.url, "--executor", "ray", "--ray-address", two_nodes.address)
    try:

        def games() -> int:
            with server.client() as client:
                return int(client.get("/api/ladders/club/standings").json()["games"])

        end = time.monotonic() + LIMIT_S * 3  # the actors start, then 6 games are played
        while games() < 6:
            assert server.process.poll() is None, server.log.read_text()[-3000:]
            assert time.monotonic() < end, server.log.read_text()[-3000:]
            time.sleep(0.2)
        runner = _runner(db, "club")
        assert runner is not None, server.log.read_text()[-3000:]
        pid = int(runner["pid"])
        stat = Path(f"/proc/{pid}/stat").read_text()
        assert int(stat.rsplit(")", 1)[1].split()[1]) == server.process.pid  # the server's child
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        address = two_nodes.address.encode()
        assert argv[3:10] == [b"ladder", b"run", b"club", b"--executor", b"ray",
                              b"--ray-address", address], argv  # fmt: skip
    finally:
        server.stop()
    log = server.log.read_text()
    # it stopped by itself after its runner had (uvicorn ends on SIGTERM by that signal), not
    # killed by ``stop``'s deadline
    assert server.process.returncode == -signal.SIGTERM, log[-3000:]
    assert "ray: 2 nodes, 2 actors" in log, log[-3000:]  # the runner's line: on the cluster
    assert "Traceback" not in log, log[-3000:]
    assert not Path(f"/proc/{pid}").exists() or _zombie(pid)
    assert _runner(db, "club") is None  # its run ended and cleared its entry
    done = db.query(
        "SELECT COUNT(*) FROM matches m JOIN ladders l ON l.tournament_id = m.tournament_id "
        "WHERE l.name = 'club' AND m.status = 'done'"
    )[0][0]
    assert done >= 6
    seats = db.query(
        "SELECT m.id FROM matches m JOIN seats s ON s.match_id = m.id "
        "WHERE m.status = 'done' GROUP BY m.id HAVING COUNT(*) <> 2"
    )
    doubled = db.query(
        "SELECT mv.match_id, mv.ply FROM moves mv GROUP BY mv.match_id, mv.ply HAVING COUNT(*) > 1"
    )
    assert seats == [] and doubled == []  # each game stored once, whole
    shown = json.loads(local("ladder", "show", "club", "--json", "--db", db.url).stdout)
    assert shown["games"] == done and sum(r["games"] for r in shown["standings"]) == 2 * done


def test_the_time_a_cluster_may_refuse_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    """``$ARENA_RAY_GONE_AFTER_S``: unset, the default; a number of seconds above 0; anything
    else one line (ClusterError) before the run joins."""
    monkeypatch.delenv(ray_executor.GONE_AFTER_ENV, raising=False)
    assert ray_executor.gone_after() == ray_executor.GONE_AFTER_S
    monkeypatch.setenv(ray_executor.GONE_AFTER_ENV, " 1.5 ")
    assert ray_executor.gone_after() == 1.5
    for wrong in ("0", "-2", "nan", "inf", "soon"):
        monkeypatch.setenv(ray_executor.GONE_AFTER_ENV, wrong)
        with pytest.raises(ray_executor.ClusterError, match="ARENA_RAY_GONE_AFTER_S"):
            ray_executor.gone_after()


def test_when_the_cluster_goes_away_the_run_stops_in_one_line_and_resumes_later(
    cluster: Cluster, db: Db, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last test of the module: it takes the whole cluster down while the gated bot holds
    the run (it has tokens for a few of its games only). The driver gives the stopped cluster
    1 s, not the default 5 (``$ARENA_RAY_GONE_AFTER_S``): it never comes back, and the run
    ends on its control store's refusal (with 5 s it often ended first on its actors' loss,
    "no node of the Ray cluster is left": the same one line, the other path)."""
    if cluster.second_raylet is None:
        cluster.add_second()
    monkeypatch.setenv(ray_executor.GONE_AFTER_ENV, "1")
    gate = Gate(tmp_path / "gated")
    gate.hold()
    gate.give(60)
    log = tmp_path / "run.log"
    cmd = gated_run(db, gate, 20, cluster.address)
    try:
        with driver(cluster, cmd, log) as proc:
            wait_until(
                proc,
                lambda: db.query("SELECT COUNT(*) FROM matches WHERE status = 'done'") >= [(5,)],
                log,
            )
            cluster.stop()
            assert proc.wait(timeout=LIMIT_S) == 1, log.read_text()
    finally:
        gate.release()
    text = log.read_text()
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "continue with: arena tournament resume" in errors[0], text
    assert "Traceback" not in text
    tid = tournament_id(text)
    done = dict(db.query(f"SELECT id, final_position FROM matches WHERE tournament_id = {tid}"
                         " AND status = 'done'"))  # fmt: skip
    assert 5 <= len(done) < 60
    resumed = local("tournament", "resume", str(tid), "--jobs", "2", "--db", db.url, "--force")
    assert resumed.returncode == 0, resumed.stderr
    stored_once(db, tid, 60)
    after = dict(db.query(f"SELECT id, final_position FROM matches WHERE tournament_id = {tid}"))
    assert all(after[m] == final for m, final in done.items())
