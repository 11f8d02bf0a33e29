"""Playing a tournament's matches on a Ray cluster (``--executor ray``).

Only *where a match is played* changes: the runner keeps scheduling, checking and storing
every result itself (the one writer, group commit), exactly as with local job processes.
Each worker here is a Ray actor (``ray_actor.MatchActor``), one per CPU the cluster offers,
spread over the nodes; an actor holds a BotPool as a local job does (bots reused between its
games, the same sandbox, limits and clocks, since the pool is the same code) and plays the
matches it is sent, a few ahead (Ray runs an actor's calls in the order they were made).
Matches go in batches: one call plays k of them and answers with their k lines, k adapted so
that a call holds tens of milliseconds of the actor's work (a Ray call costs the driver about
half a millisecond of CPU, which a fast game would otherwise pay on its own).

What travels is data: the Plan and each Job as lines of JSON, each answer as the line a local
job would write (bytes, which Ray carries as msgpack, not as a pickle), decoded and checked by
the runner as a job's (``decode_reply``: the actor runs beside untrusted bots too). Ray itself
trusts the sender: ``ray.get`` unpickles a result its sending worker labelled as a pickle, so
this holds against bots (confined, they cannot reach the actor's process or the cluster) and
not against a taken-over actor or node; hence ``--ray-allow-unconfined`` (docs/security.md).
A file bot travels inside the Plan as its stored source and files with its SHA-256
(``BotRef``), and the node's pool runs it from a private copy when the file is not on that
machine, so a worker node needs only the package installed. A ``cmd:``/``uci:``/``xboard:``
program must exist on every node: each actor checks the programs of the field when it starts,
and the run stops before any match with a line naming the node.

Faults of the cluster: an actor whose node died (its raylet killed) fails with Ray's actor
error; the runner puts the matches of every batch it had not answered (the one in play and
those sent ahead) back in line, and they are played by the actors left (nobody is charged: the
node is gone, not a bot's doing); the answers of batches that came back before are stored as
any others. A new node is used as soon as it offers a CPU. When no node is left, or the
cluster's control store stops answering, the run stops with one line (``ClusterGone``);
everything stored stays, and ``tournament resume`` plays the rest later.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import logging
import math
import os
import socket
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from bot_arena.arena.tournament.job import (
    Job,
    MessageError,
    Plan,
    Reply,
    decode,
    decode_reply,
    encode,
)
from bot_arena.arena.tournament.job_handle import JobFailed
from bot_arena.arena.tournament.ray_actor import MatchActor
from bot_arena.arena.transport.sandbox.mode import CONFINED

INSTALL = "pip install 'bot-arena[ray]'"
ADDRESS_ENV = "ARENA_RAY_ADDRESS"
START_LIMIT_S = 120.0  # the longest the actors may take to start (placement, imports, probes)
DEPTH = 6  # matches queued per actor at least
AHEAD_S = 0.1  # and as many more as make this much of its work (a local job's queue: 20 ms)
BATCHES = 3  # the matches queued are sent in about this many calls (one plays, two wait)
GONE_AFTER_S = 5.0  # the control store refusing connections this long: the cluster is gone
GONE_AFTER_ENV = "ARENA_RAY_GONE_AFTER_S"  # that time, set by the operator (docs/scaling.md)


class ClusterError(Exception):
    """The cluster cannot play this run (Ray missing, unreachable, a program missing on a
    node); the message is one line."""


class ClusterGone(ClusterError):
    """The cluster went away during the run."""


class WorkerLost(JobFailed):
    """An actor is gone (its node died, or its process did): the matches it had go back in
    line, and nobody is charged."""


# --- the driver's side ----------------------------------------------------------------------


class RayWorker:
    """The runner's handle on one actor: the matches sent to it, oldest first, with their
    results to come (Ray object refs), as ``JobHandle`` is on a job process."""

    def __init__(self, executor: RayExecutor, actor: Any) -> None:
        self.executor = executor
        self.actor = actor
        self.queue: deque[Job] = deque()
        self._results: deque[Any] = deque()  # one object ref per batch not answered, in order
        self._started: Any = None
        self.node: str | None = None  # the node's id, once started
        self.label = "ray actor (starting)"
        self.sandbox_level: str | None = None
        self.stopping = False
        # matches queued ahead: a result takes a Ray round trip to reach the runner, and the
        # next match one to reach the actor, so it holds more than a local job
        self.depth = DEPTH
        self.ahead_s = AHEAD_S
        self.fetched: list[Any] = []  # batches' answers (or Ray's errors) fetched, in order

    def start(self, plan: Plan) -> RayWorker:
        self._started = self.actor.start.remote(encode({"plan": plan.to_dict()}))
        return self

    @property
    def ready(self) -> bool:
        """Started and checked: it takes matches from now on."""
        return self.node is not None

    def started(self, timeout: float) -> None:
        """Wait for the actor's start; ClusterError naming the node when it cannot play."""
        import ray

        try:
            line = ray.get(self._started, timeout=timeout)
        except ray.exceptions.GetTimeoutError:
            raise ClusterError(
                f"a Ray actor did not start within {timeout:g} s (does the cluster have the "
                "CPUs it offers, and bot-arena installed on every node?)"
            ) from None
        except ray.exceptions.RayError as exc:
            raise ClusterError(f"a Ray actor failed to start: {_first_line(exc)}") from None
        self._take_start(line)

    def _take_start(self, line: bytes) -> None:
        try:
            answer = decode(line)
            if not isinstance(answer, dict):
                raise MessageError("a start answer is an object")
        except MessageError as exc:
            raise JobFailed(f"sent a malformed start ({exc})") from None
        if "error" in answer:
            raise ClusterError(f"cannot play on {answer['error']}")
        self.node, self.label = str(answer["node"]), f"ray actor on {answer['host']}"
        self.sandbox_level = str(answer["sandbox"])
        if self.sandbox_level != CONFINED and not self.executor.allow_unconfined:
            # the CLI refused this machine's level; a node may offer fewer layers than it
            raise ClusterError(
                f"{answer['host']} runs bots {self.sandbox_level}, not fully confined: they "
                "could join the cluster; give --ray-allow-unconfined to accept that"
            )

    def awaited(self) -> list[Any]:
        """What is awaited from it, oldest first: its start, then its matches' results."""
        if not self.ready:
            return [self._started] if self._started is not None else []
        return list(self._results)

    def send_all(self, jobs: Sequence[Job], depth: int) -> None:
        """Queue ``jobs``, sent in calls of at most ``depth / BATCHES`` matches (``depth``: how
        many the runner keeps queued), so that one call holds tens of milliseconds of work
        and the actor always has the next call waiting."""
        size = max(1, -(-depth // BATCHES))
        for at in range(0, len(jobs), size):
            batch = jobs[at : at + size]
            self.queue.extend(batch)
            line = encode({"jobs": [job.to_dict() for job in batch]})
            self._results.append(self.actor.play.remote(line))

    def receive(self) -> list[Reply]:
        """The answers the executor's ``wait`` fetched for it, in order (maybe none);
        WorkerLost when the actor is gone, JobFailed when it answered out of the protocol.
        When batches came back before the actor's error, their answers come first and the
        error with the next call (``wait`` returns the worker at once), so they are stored."""
        got, self.fetched = self.fetched, []
        out: list[Reply] = []
        for at, value in enumerate(got):
            if isinstance(value, BaseException):
                if out:
                    self.fetched = got[at:]
                    return out
                # The actor is gone (Ray's actor errors: its process, or its node, died; with
                # no restarts it does not come back). Nothing of a game's can do that: a bot
                # runs in processes of its own and cannot signal the actor, and a game that
                # takes the actor's fork server down is answered as an incident. So the
                # matches of every batch not answered go back in line, nobody charged; the
                # runner bounds how often.
                self._results.clear()
                if not self.ready:
                    raise WorkerLost(f"did not start ({_first_line(value)})")
                gone = "lost its node" if not self.executor.node_alive(self.node) else "died"
                raise WorkerLost(f"{gone} ({_first_line(value)})")
            if not self.ready:
                self._take_start(value)
                continue
            self._results.popleft()
            *lines, rest = value.split(b"\n") if isinstance(value, bytes) else [b"", b"?"]
            try:
                if rest or not lines:
                    raise MessageError("a batch's answer is not whole lines")
                out.extend(decode_reply(line) for line in lines)
            except MessageError as exc:
                raise JobFailed(f"sent a malformed message ({exc})") from None
        return out

    def watch(self, grace: float) -> None:
        """Nothing to watch from here: a bot cannot stop the actor (its own process group,
        namespaces), and an actor that stops answering is found by Ray when its node goes."""

    def terminate(self) -> None:
        import ray

        self._results.clear()
        if self.executor.gone or not self.executor._reachable():
            return  # the cluster is gone, and the actor with it (Ray's kill would wait)
        with contextlib.suppress(Exception):  # already gone
            ray.kill(self.actor, no_restart=True)

    def abandon(self) -> None:
        self.terminate()

    def ask_stop(self) -> None:
        if not self.stopping:
            self.stopping = True
            try:
                self._closing = self.actor.close.remote()
            except Exception:
                self._closing = None

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the actor to close its pool (bounded wait), then make sure it is gone."""
        import ray

        if not self.ready:  # never placed, or never answered its start: nothing to close
            self.terminate()
            return
        self.ask_stop()
        closing = getattr(self, "_closing", None)
        if closing is not None:
            with contextlib.suppress(Exception):
                ray.wait([closing], timeout=timeout)
        self.terminate()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def _silent(address: str | None, timeout: float = 5.0) -> str | None:
    """Why nothing answers at a ``host:port`` cluster address (its control store), or None
    when something does, or when the address is of another form (``auto``, ``ray://``, none:
    Ray resolves those itself)."""
    if address is None or "://" in address:
        return None
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return None
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            return None
    except OSError as exc:
        return f"nothing answers there ({exc.strerror or type(exc).__name__})"


def gone_after() -> float:
    """How long the control store may refuse connections before the run stops as gone:
    ``$ARENA_RAY_GONE_AFTER_S`` seconds, else GONE_AFTER_S. A head whose control store is
    restarted by its supervisor may need longer; a run that should give up on a dead cluster
    at once, shorter. ClusterError when the variable is not a number of seconds above 0."""
    text = os.environ.get(GONE_AFTER_ENV, "").strip()
    if not text:
        return GONE_AFTER_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0.0 < seconds < math.inf:
        raise ClusterError(f"${GONE_AFTER_ENV} is a number of seconds above 0, not {text[:40]!r}")
    return seconds


def joinable(address: str | None) -> str | None:
    """The cluster address a run joins: ``address``, else ``$ARENA_RAY_ADDRESS`` (None: a
    local Ray for a try-out). Checked at once, as every ``--executor ray`` is before anything
    runs: ClusterError (one line) when Ray is not installed, or when nothing answers at a
    ``host:port`` address (``ray.init`` would retry a dead address for minutes)."""
    try:
        found = importlib.util.find_spec("ray") is not None
    except ValueError:  # an entry of None in sys.modules: ``import ray`` fails
        found = False
    if not found:
        raise ClusterError(f"--executor ray needs Ray: {INSTALL}")
    address = address or os.environ.get(ADDRESS_ENV) or None
    refused = _silent(address)
    if refused is not None:
        raise ClusterError(f"cannot join the Ray cluster at {address}: {refused}")
    return address


class RayExecutor:
    """Ray actors as the run's workers. ``address``: a cluster's (``auto``: the one this machine
    belongs to), or None to start a local Ray for a try-out; ``$ARENA_RAY_ADDRESS`` when not
    given."""

    def __init__(self, address: str | None = None, *, allow_unconfined: bool = False) -> None:
        """``allow_unconfined``: the operator accepts actors whose nodes cannot confine bots
        fully (``--ray-allow-unconfined``); otherwise such an actor stops the run."""
        self.allow_unconfined = allow_unconfined
        self.gone_after = gone_after()
        try:
            import ray
        except ImportError:
            raise ClusterError(f"--executor ray needs Ray: {INSTALL}") from None
        self.address = joinable(address)
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        try:
            ray.init(
                address=self.address,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.ERROR,
                configure_logging=True,
            )
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = self.address or "a local Ray"
            raise ClusterError(
                f"cannot join the Ray cluster at {where}: {_first_line(exc)}"
            ) from None
        self._actor = ray.remote(MatchActor).options(
            num_cpus=1, max_restarts=0, max_task_retries=0, scheduling_strategy="SPREAD"
        )
        self._gcs = ray.get_runtime_context().gcs_address
        self._ahead: list[Any] = []  # actors asked for ahead (``ask_ahead``), not handed out
        self._unreachable_since: float | None = None
        self._nodes: dict[str, bool] = {}
        self.gone = False  # the cluster went away: leave without Ray's shutdown
        self._closed = False
        self._checked = 0.0  # when the control store was last checked
        self._quiet = True  # the last wait brought nothing

    def _read_nodes(self) -> dict[str, bool]:
        import ray

        if not self._reachable():  # ray.nodes() would wait for the control store a minute
            return {}
        try:
            self._nodes = {n["NodeID"]: bool(n["Alive"]) for n in ray.nodes()}
        except Exception:
            self._nodes = {}
        return self._nodes

    def node_alive(self, node: str | None) -> bool:
        return node is not None and self._read_nodes().get(node, False)

    def capacity(self) -> int:
        """The CPUs the cluster's live nodes offer: how many actors it can hold (0 while its
        control store does not answer)."""
        import ray

        if not self._reachable():
            return 0
        try:
            nodes = ray.nodes()
        except Exception:
            return 0
        return int(sum(n["Resources"].get("CPU", 0) for n in nodes if n["Alive"]))

    def nodes(self) -> int:
        return sum(self._read_nodes().values())

    def ask_ahead(self, cap: int | None = None) -> None:
        """Ask now for the actors a run will start (one per CPU the cluster offers, at most
        ``cap``: its ``jobs``), before it is stored and its schedule read: Ray places each and
        starts its process (a Ray worker imports Ray, then the actor's modules and this node's
        sandbox probe: a second or more of each node's CPU) while the driver does that work,
        where they used to start after it. ``new_workers`` hands them out first."""
        count = self.capacity() if cap is None else min(self.capacity(), cap)
        self._ahead.extend(self._actor.remote() for _ in range(count - len(self._ahead)))

    def new_workers(self, count: int) -> list[RayWorker]:
        """``count`` workers: the actors asked for ahead first, then new ones."""
        actors, self._ahead = self._ahead[:count], self._ahead[count:]
        actors += [self._actor.remote() for _ in range(count - len(actors))]
        return [RayWorker(self, actor) for actor in actors]

    def wait(self, workers: Sequence[RayWorker], timeout: float) -> list[RayWorker]:
        """The workers with answers ready, waiting up to ``timeout`` for one; each gets every
        answer that is ready in order (``fetched``), all fetched in one call: Ray's calls are
        what a match costs the runner here, so there are three a loop, not several a result.
        ClusterGone once the cluster's control store has refused connections for
        ``gone_after`` seconds."""
        held = [w for w in workers if w.fetched]  # answers (or an error) not taken yet
        if held:
            return held
        import ray

        # while answers flow the cluster is there; a connection a second is enough then
        if self._quiet or time.monotonic() - self._checked > 1.0:
            self._checked = time.monotonic()
            self._check_reachable()
        awaited = {w: w.awaited() for w in workers}
        heads = [refs[0] for refs in awaited.values() if refs]
        if not heads:
            time.sleep(max(0.0, timeout))
            return []
        ready, _ = ray.wait(heads, num_returns=1, timeout=max(0.0, timeout))
        self._quiet = not ready
        if not ready:
            return []
        every = [r for refs in awaited.values() for r in refs]
        done = set(ray.wait(every, num_returns=len(every), timeout=0)[0])
        prefixes: dict[RayWorker, list[Any]] = {}
        for w, refs in awaited.items():
            prefix = list(itertools.takewhile(done.__contains__, refs))
            if prefix:
                prefixes[w] = prefix
        fetch = [r for prefix in prefixes.values() for r in prefix]
        try:
            values = list(ray.get(fetch))
        except ray.exceptions.RayError:  # which one failed: one at a time
            values = []
            for ref in fetch:
                try:
                    values.append(ray.get(ref))
                except ray.exceptions.RayError as exc:
                    values.append(exc)
        at = 0
        for w, prefix in prefixes.items():
            w.fetched.extend(values[at : at + len(prefix)])
            at += len(prefix)
        return list(prefixes)

    def _check_reachable(self) -> None:
        """ClusterGone once the control store has refused connections for ``gone_after`` s."""
        if self._reachable():
            return
        assert self._unreachable_since is not None
        if time.monotonic() - self._unreachable_since > self.gone_after:
            self.gone = True
            raise ClusterGone(
                f"the Ray cluster at {self._gcs} stopped answering; what was played is stored "
                "(continue with: arena tournament resume ID --executor ray)"
            )

    def _reachable(self) -> bool:
        """Whether the cluster's control store (GCS) takes a connection now. Checked before
        every call that needs it: Ray's own calls wait a minute for a store that is gone, then
        end the process."""
        host, _, port = self._gcs.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=1.0):
                self._unreachable_since = None
                return True
        except OSError:
            if self._unreachable_since is None:
                self._unreachable_since = time.monotonic()
            return False

    def close(self) -> None:
        """Leave the cluster (not when it is gone: Ray's shutdown would wait for it); once,
        however often it is called (the run, then whoever started it)."""
        import ray

        if self._closed:
            return
        self._closed = True
        self._ahead.clear()  # never handed out: they end with this driver's job
        if self.gone or not self._reachable():
            return
        with contextlib.suppress(Exception):
            ray.shutdown()
