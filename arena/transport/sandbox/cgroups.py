"""Control groups per bot unit (its process and every process it starts): a total memory cap,
a total process cap where one is needed, and a way to kill all of it.

cgroup v1 (the ``memory`` and ``pids`` hierarchies) or v2 (a unified hierarchy with those
controllers enabled), whichever this machine mounts. Units live under ``bot-arena/``, named
by the arena process that makes them. Moving a process into a v1 group costs milliseconds (the
kernel waits for an RCU grace period), so the ``pids`` group is used only where nothing
cheaper caps the unit's processes: for an arena running as root. Anyone else's bot is capped by
``RLIMIT_NPROC`` in its own user namespace, which counts the unit's processes only; real root
(whom the bot's namespace maps to) is exempt from that limit (``confine``).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from functools import cache
from pathlib import Path

PARENT = "bot-arena"


def _mounts() -> list[tuple[str, set[str]]]:
    """(mount point, options) of every cgroup file system, from /proc/self/mounts."""
    found = []
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        fields = line.split()
        if len(fields) >= 4 and fields[2] in ("cgroup", "cgroup2"):
            found.append((fields[1], {fields[2], *fields[3].split(",")}))
    return found


@cache
def hierarchies(processes: bool) -> list[tuple[Path, str]]:
    """(group folder root, limit file) for a unit here: memory, and with ``processes`` pids
    too; [] when this machine lacks one of them."""
    mounts = _mounts()
    wanted = {"memory": "memory.limit_in_bytes"} | ({"pids": "pids.max"} if processes else {})
    v1 = [
        (Path(point), wanted[c])
        for c in wanted
        for point, opts in mounts
        if "cgroup" in opts and c in opts
    ]
    if len(v1) == len(wanted):
        return v1
    for point, opts in mounts:
        if "cgroup2" in opts:
            with contextlib.suppress(OSError):
                enabled = (Path(point) / "cgroup.subtree_control").read_text().split()
                if set(wanted) <= set(enabled):
                    return [(Path(point), "memory.max")] + (
                        [(Path(point), "pids.max")] if processes else []
                    )
    return []


class Unit:
    """A bot unit's cgroups (one per hierarchy)."""

    def __init__(self, name: str, paths: list[Path]) -> None:
        self.name = name
        self.paths = paths

    @classmethod
    def create(cls, name: str, memory_bytes: int, processes: int | None) -> Unit:
        """Make the unit's groups with their caps (``processes`` None: no pids group);
        OSError when this machine will not."""
        paths: list[Path] = []
        try:
            for root, limit_file in hierarchies(processes is not None):
                path = root / PARENT / name
                if path not in paths:
                    path.mkdir(parents=True)
                    paths.append(path)
                value = memory_bytes if limit_file.startswith("memory") else processes
                (path / limit_file).write_text(str(value))
        except OSError:
            Unit(name, paths).remove()
            raise
        if not paths:
            raise OSError("no memory (or pids) cgroup")
        return cls(name, paths)

    @staticmethod
    def join(paths: list[str]) -> None:
        """Move the calling process into the groups (in the bot's process, before its code)."""
        pid = str(os.getpid())
        for path in paths:
            with open(os.path.join(path, "cgroup.procs"), "w") as fh:
                fh.write(pid)

    def pids(self) -> set[int]:
        found: set[int] = set()
        for path in self.paths:
            with contextlib.suppress(OSError, ValueError):
                found.update(int(p) for p in (path / "cgroup.procs").read_text().split())
        return found

    def remove(self, timeout: float = 2.0) -> bool:
        """Kill every process left in the unit, then remove its groups (True when gone)."""
        end = time.monotonic() + timeout
        while True:
            left = self.pids()
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            removed = True
            for path in self.paths:
                try:
                    path.rmdir()
                except FileNotFoundError:
                    pass
                except OSError:
                    removed = False
            if removed or time.monotonic() >= end:
                return removed
            time.sleep(0.001)  # the kernel is still tearing the killed processes down


_serial = itertools.count(1)


def unit_name() -> str:
    """A new unit's name: the creating process's pid first, so a sweep knows whose it is,
    then a number unique in this process (several pools may run in one)."""
    return f"{os.getpid()}-{next(_serial)}"


def owner_gone(name: str) -> bool:
    """Whether a unit (or working folder) named ``<pid>-...`` belongs to a process that is
    gone."""
    owner = name.partition("-")[0]
    return owner.isdigit() and not os.path.exists(f"/proc/{owner}")


def sweep_stale() -> None:
    """Remove the units of arena processes that are gone (killed before they cleaned up)."""
    for root, _ in hierarchies(True) or hierarchies(False):
        with contextlib.suppress(OSError):
            for child in (root / PARENT).iterdir():
                if owner_gone(child.name):
                    Unit(child.name, [child]).remove(0.0)
