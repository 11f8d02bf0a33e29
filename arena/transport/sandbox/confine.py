"""Confining a bot's process: ``enter(plan)``, called in the new process before any bot code
(a fork of the fork server or an exec'd worker, Python bots and ``cmd:`` programs alike).

In order, each layer the plan names (``support`` finds out which ones this machine offers):

1. ``cgroups``: join the unit's memory group (and, for an arena running as root, its pids
   group), made by the pool: a total cap on the unit's memory (and processes), and a handle to
   kill all of it.
2. ``namespaces``: a user namespace (root in it is the arena's own user outside, with no
   capability over anything the namespace does not own), an empty network namespace (no network
   at all, loopback included), and PID, mount, IPC and UTS namespaces. The calling process stays
   outside as the *keeper* and mirrors the bot's exit status; inside, a minimal init (PID 1)
   runs the bot (PID 2). When the bot dies init exits, and the kernel kills everything else in
   the namespace (a double-forked daemon included): nothing outlives the bot. In the new mount
   namespace the bot gets a fresh ``/proc`` (its own processes only), a private tmpfs as its
   working folder (gone with the namespace) and another on ``/dev/shm``; every other mount is
   read-only there (no write, chmod, utime or xattr change reaches the host's files).
   ``RLIMIT_NPROC`` caps the unit's processes (counted per user namespace; real root is exempt,
   hence its pids group).
3. The environment: scrubbed (no variable of the arena's), ``HOME`` and ``TMPDIR`` the working
   folder, which is also the current one.
4. ``seccomp``: no ``socket()`` (unix sockets by path included).
5. ``landlock``: read-only access to what it needs to run (``plan.read``), write access to its
   working folder only, no TCP, no signal to (nor ptrace of) a process outside its domain.

Steps 1, 2 and 4 do not depend on the bot (``prepare``): a fork server can take them in a spare
process before a bot is asked for, and hand that process the bot when it is.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import signal
from dataclasses import asdict, dataclass, field
from typing import Any

from bot_arena.arena.transport.sandbox import cgroups, kernel, landlock, seccomp

CGROUPS = "cgroups"
NAMESPACES = "namespaces"
LANDLOCK = "landlock"
SECCOMP = "seccomp"
LAYERS = (CGROUPS, NAMESPACES, LANDLOCK, SECCOMP)

SYSTEM_READ = (  # what a dynamically linked program needs to start, and no secret
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/ssl/certs",
    "/etc/nsswitch.conf",
    "/etc/mime.types",
    "/dev/zero",
    "/dev/urandom",
    "/dev/random",
    "/dev/full",
    "/sys/devices/system/cpu",  # how many CPUs (os.cpu_count)
)
DEVICES_RW = ("/dev/null",)
_KEPT_VARS = ("PATH", "LANG", "PYTHONPATH")  # what a confined runtime may need to start
WORK_MB = 64  # the working folder's size cap (memory, charged to the unit)


def clean_env(home: str | None = None) -> dict[str, str]:
    """The whole environment of a confined process (and of the arena processes bots are forked
    from): no variable of the user's but these; ``home`` as ``HOME`` and ``TMPDIR``."""
    env = {k: os.environ[k] for k in _KEPT_VARS if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    if home is not None:
        env.update(HOME=home, TMPDIR=home)
    return env


@dataclass(frozen=True)
class Plan:
    """What ``enter`` does for one bot process (JSON on the worker's command line)."""

    layers: tuple[str, ...]
    work: str  # an empty folder: the bot's working folder (a private tmpfs is mounted on it)
    read: tuple[str, ...] = ()  # read and execute beneath (besides SYSTEM_READ)
    listed: tuple[str, ...] = ()  # folders whose names (not contents) it may list
    cgroups: tuple[str, ...] = ()  # the unit's group folders, to join
    processes: int = 64  # the unit's process cap (a fallback where there are no cgroups)
    env: dict[str, str] = field(default_factory=dict)  # the bot's whole environment

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Plan:
        data: dict[str, Any] = json.loads(text)
        return cls(
            tuple(str(x) for x in data["layers"]),
            str(data["work"]),
            tuple(str(x) for x in data["read"]),
            tuple(str(x) for x in data["listed"]),
            tuple(str(x) for x in data["cgroups"]),
            int(data["processes"]),
            {str(k): str(v) for k, v in dict(data["env"]).items()},
        )


_prepared: str | None = None  # the working folder this process was prepared for (``prepare``)


def prepare(plan: Plan) -> None:
    """The part of ``enter`` that is the same for every bot: the cgroups, the namespaces (this
    process becomes the keeper and never returns: the bot's process returns), the mounts, the
    process cap and seccomp. A fork server prepares a *spare* process this way ahead of time;
    ``enter`` then does only the rest, the part that depends on the bot."""
    global _prepared
    if CGROUPS in plan.layers:
        cgroups.Unit.join(list(plan.cgroups))
    if NAMESPACES in plan.layers:
        _new_namespaces()
        _keep()  # from here on: the bot's process, PID 2 of its namespace
        _mounts(plan.work)
        # counted per user namespace: this cap is the unit's alone (a fallback for cgroups)
        _lower(resource.RLIMIT_NPROC, plan.processes)
    if SECCOMP in plan.layers:
        seccomp.install()
    _prepared = plan.work


def enter(plan: Plan) -> None:
    """Confine this process by ``plan``; returns in the confined process (with namespaces, a
    new child of this one: this one becomes the keeper and never returns). What ``prepare``
    already did for this plan's working folder is not done twice."""
    if _prepared != plan.work:
        prepare(plan)
    os.chdir(plan.work)
    os.environ.clear()
    os.environ.update(plan.env)
    if LANDLOCK in plan.layers:
        read = [*SYSTEM_READ, *plan.read]
        read.append("/proc" if NAMESPACES in plan.layers else f"/proc/{os.getpid()}")
        landlock.restrict(read, [plan.work, "/dev/shm"], DEVICES_RW, plan.listed)


def _new_namespaces() -> None:
    uid, gid = os.getuid(), os.getgid()
    kernel.unshare(
        kernel.CLONE_NEWUSER
        | kernel.CLONE_NEWNET
        | kernel.CLONE_NEWNS
        | kernel.CLONE_NEWPID
        | kernel.CLONE_NEWIPC
        | kernel.CLONE_NEWUTS
    )
    # root inside is the arena's own user outside, with no capability over the host
    for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)


def _keep() -> None:
    """Split into three processes and return in the bot's. This one stays behind as the
    *keeper* (outside the new PID namespace: the referee's child, holding none of the bot's
    descriptors) and exits as the bot did, so the referee sees one process. Its child is PID 1
    of the namespace, a minimal init that reaps orphans; when the bot exits, init passes the
    bot's status to the keeper and exits, and the kernel kills whatever the bot left behind.
    The bot is PID 2, with ordinary signal handling (a PID 1 ignores most signals)."""
    status_r, status_w = os.pipe()
    init = os.fork()
    if init == 0:
        os.close(status_r)
        die_with_keeper(status_w)
        bot = os.fork()
        if bot == 0:
            kernel.prctl(kernel.PR_SET_PDEATHSIG, signal.SIGKILL)  # ... and the bot with init
            if os.getppid() != 1:  # init died before the request took effect
                os._exit(1)
            os.close(status_w)
            return
        close_all_but(status_w)
        status = _wait_for(bot)
        os.write(status_w, status.to_bytes(4, "little"))
        os._exit(0)
    os.close(status_w)
    close_all_but(status_r)  # the bot's pipes: their far ends see EOF when the bot exits
    status = _wait_for(init)
    reported = os.read(status_r, 4)
    if len(reported) == 4:
        status = int.from_bytes(reported, "little")
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # killed by a signal: the keeper dies of the same one
        with contextlib.suppress(OSError, ValueError):
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        os._exit(128 - code)
    os._exit(code)


def die_with_keeper(status_w: int) -> None:
    """Init's parent-death signal, then the check that the keeper had not died already, before
    the request took effect (between the fork and ``prctl``): then nothing would ever kill this
    init, and it exits. Its ``getppid()`` cannot tell (0: the keeper is outside its PID
    namespace), so it asks the status pipe: the keeper holds the only other end, and a pipe
    whose reading end is closed everywhere polls as an error on its writing end."""
    kernel.prctl(kernel.PR_SET_PDEATHSIG, signal.SIGKILL)
    poller = select.poll()
    poller.register(status_w, select.POLLOUT)
    if any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0)):
        os._exit(1)


def close_all_but(fd: int) -> None:
    """Close every descriptor of this process but ``fd``, however high (``kernel.close_from``,
    as the fork server does). (``os.closerange(0, 0)`` would close them all: it asks the
    kernel for the range 0 to -1, read as unsigned.)"""
    if fd > 0:
        os.closerange(0, fd)
    kernel.close_from(fd + 1)


def _wait_for(child: int) -> int:
    """Reap children (an init reaps every orphan) until ``child`` exits; its wait status."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            return 1 << 8
        if pid == child:
            return status


def _mounts(work: str) -> None:
    """The bot's view of the files: the host's, all read-only; its own /proc, working folder
    and /dev/shm on top (what Landlock does not cover, file metadata, is covered here)."""
    kernel.read_only_tree("/")
    quiet = kernel.MS_NOSUID | kernel.MS_NODEV
    kernel.mount("proc", "/proc", "proc", quiet | kernel.MS_NOEXEC, None)
    kernel.mount("tmpfs", work, "tmpfs", quiet, f"size={WORK_MB}m,mode=0700")
    if os.path.isdir("/dev/shm"):
        kernel.mount("tmpfs", "/dev/shm", "tmpfs", quiet | kernel.MS_NOEXEC, f"size={WORK_MB}m")


def _lower(which: int, value: int) -> None:
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(which, (value, value))
