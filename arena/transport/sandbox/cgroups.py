"""One memory control group per bot unit (its process and every process it starts): a total
memory cap, and a way to kill all of it.

cgroup v1 (the ``memory`` hierarchy) or v2 (a unified hierarchy with the memory controller
enabled), whichever this machine mounts writable. Units live under ``bot-arena/``, named by
the pool that starts them. The unit's process cap is not a cgroup's: moving a process into a
v1 group costs about 2 ms (the kernel waits for an RCU grace period), so one group per unit is
what start-up can afford; the cap is ``RLIMIT_NPROC`` in the unit's own user namespace, which
counts the unit's processes only (``confine``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
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


def hierarchies() -> list[tuple[Path, str]]:
    """(root, memory limit file) of the hierarchy that holds units here, or [] when this
    machine has no memory controller mounted."""
    mounts = _mounts()
    for point, opts in mounts:
        if "cgroup" in opts and "memory" in opts:
            return [(Path(point), "memory.limit_in_bytes")]
    for point, opts in mounts:
        if "cgroup2" in opts:
            with contextlib.suppress(OSError):
                if "memory" in (Path(point) / "cgroup.subtree_control").read_text().split():
                    return [(Path(point), "memory.max")]
    return []


class Unit:
    """A bot unit's cgroups (one per hierarchy)."""

    def __init__(self, name: str, paths: list[Path]) -> None:
        self.name = name
        self.paths = paths

    @classmethod
    def create(cls, name: str, memory_bytes: int) -> Unit:
        """Make the unit's group with its cap (OSError when this machine will not)."""
        paths = []
        try:
            for root, memory_file in hierarchies():
                path = root / PARENT / name
                path.mkdir(parents=True)
                paths.append(path)
                (path / memory_file).write_text(str(memory_bytes))
        except OSError:
            Unit(name, paths).remove()
            raise
        if not paths:
            raise OSError("no memory cgroup")
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


def unit_name(serial: int) -> str:
    """A unit's name: the creating process's pid first, so a sweep knows whose it is."""
    return f"{os.getpid()}-{serial}"


def sweep_stale() -> None:
    """Remove the units of arena processes that are gone (killed before they cleaned up)."""
    for root, _ in hierarchies():
        with contextlib.suppress(OSError):
            for child in (root / PARENT).iterdir():
                owner = child.name.partition("-")[0]
                if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
                    Unit(child.name, [child]).remove(0.0)
