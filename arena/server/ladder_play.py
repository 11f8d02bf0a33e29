"""``arena serve --jobs N`` (or ``--executor ray``): the server plays its ladders.

A thread looks at the ladders every ``PERIOD`` seconds and starts one ``arena ladder run``
process for each ladder that no process plays (the runner's own record: ``active_runner``),
with the server's ``--jobs``, ``--executor``, ``--ray-address``, ``--sandbox`` and
``--allow-read``. A process of its own rather than a thread: the runner's loop, its signals
and its job processes stay out of the web server's process, a ladder that fails cannot take
the site down, and the same exactly-once machinery as a ``ladder run`` started by hand
applies (a ladder played by another process is left to it; a second runner started
meanwhile is refused by the runner's claim and retried later). The processes get SIGINT when
the server stops (and when it dies: the parent-death signal), so each stops as ``ladder
run`` does on Ctrl-C: what was played stays stored."""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field

from sqlalchemy.orm import Session, sessionmaker

log = logging.getLogger("arena.server")

PERIOD = 2.0  # seconds between looks at the ladders
STOP_WAIT = 20.0  # seconds a runner has to stop after SIGINT before it is killed


def _die_with_parent() -> None:  # pragma: no cover (runs in the child before exec)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGINT, 0, 0, 0)  # PR_SET_PDEATHSIG


def lower_priority(nice: int) -> int:
    """Raise the calling thread's nice value by ``nice`` (capped at 19) and return the new one.
    On Linux a nice value belongs to a thread, and a thread or a process starts with its
    creator's: so the web side (the event loop's thread, and the worker threads and processes
    it starts later) yields the CPU to the ladders' runners, which the players' thread, started
    before, goes on starting at the server's own priority. A nice value only ever goes up
    without privileges, so this is done once, at start-up."""
    tid = threading.get_native_id()
    now = os.getpriority(os.PRIO_PROCESS, tid)
    wanted = min(19, now + nice)
    if wanted != now:
        os.setpriority(os.PRIO_PROCESS, tid, wanted)
    return wanted


@dataclass
class LadderPlayers:
    """The ``ladder run`` processes the server started, by ladder name."""

    reads: sessionmaker[Session]
    db: str | None
    jobs: int | None
    executor: str
    ray_address: str | None = None  # the cluster, with executor "ray" (else $ARENA_RAY_ADDRESS)
    sandbox: tuple[str, ...] = ()  # the runners' --sandbox and --allow-read options
    running: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="ladder-players", daemon=True)
        self._thread.start()

    def _command(self, name: str) -> list[str]:
        command = [sys.executable, "-m", "bot_arena.arena.cli.app", "ladder", "run", name]
        if self.jobs is not None:
            command += ["--jobs", str(self.jobs)]
        if self.executor != "local":
            command += ["--executor", self.executor]
        if self.ray_address is not None:
            command += ["--ray-address", self.ray_address]
        command += self.sandbox
        if self.db is not None:
            command += ["--db", self.db]
        return command

    def _free(self) -> list[str]:
        """The ladders that no process plays."""
        from bot_arena.arena.tournament.create import active_runner, load_tournament
        from bot_arena.db import ladders

        free = []
        with self.reads() as session:
            for row in ladders.all_ladders(session, 10_000):
                if row.name in self.running:
                    continue
                if active_runner(load_tournament(session, row.tournament_id)) is None:
                    free.append(row.name)
        return free

    def _loop(self) -> None:
        while not self._stop.is_set():
            for name, process in list(self.running.items()):
                if process.poll() is not None:
                    del self.running[name]
            try:
                free = self._free()
            except Exception:
                log.exception("reading the ladders failed")
                free = []
            for name in free:
                if self._stop.is_set():
                    break
                self.running[name] = subprocess.Popen(
                    self._command(name),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=None,  # the runner's lines go to the server's log
                    preexec_fn=_die_with_parent,
                    env={**os.environ, "PYTHONUNBUFFERED": "1"},
                )
            self._stop.wait(PERIOD)

    def stop(self) -> None:
        """Stop looking and stop every runner started (SIGINT, a bounded wait, then kill)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(PERIOD + 10)
        for process in self.running.values():
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        for process in self.running.values():
            try:
                process.wait(STOP_WAIT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
