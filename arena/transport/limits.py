"""Resource limits of one bot process, applied inside the child before the bot's code runs.

The limits are set by the bot's own process before any bot code runs: the Python worker calls
``setrlimit`` first thing; ``cmd:`` bots start through ``/bin/sh -c 'ulimit ...; exec "$@"'`` (or,
without a ``/bin/sh``, ``python -m arena.worker.launch``), so the arena never needs
``preexec_fn`` (unsafe with threads).
"""

from __future__ import annotations

import math
import resource
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class ResourceLimits:
    """``memory_mb`` caps the address space (RLIMIT_AS), ``cpu_s`` the CPU seconds of the
    process over its whole life (a reused worker accumulates them over a series; ``None`` = no
    cap), ``open_files`` the descriptors, ``startup_s`` the time to answer the handshake."""

    memory_mb: int = 1024
    cpu_s: float | None = None
    open_files: int = 256
    startup_s: float = 10.0

    def __post_init__(self) -> None:
        if self.memory_mb < 16:
            raise ValueError(f"memory limit must be >= 16 MB, not {self.memory_mb}")
        if self.cpu_s is not None and self.cpu_s <= 0:
            raise ValueError(f"CPU limit must be > 0 seconds, not {self.cpu_s}")
        if self.open_files < 16:
            raise ValueError(f"open-files limit must be >= 16, not {self.open_files}")
        if not 0 < self.startup_s < math.inf:  # NaN fails too
            raise ValueError(
                f"startup limit must be a finite number of seconds > 0, not {self.startup_s}"
            )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ResourceLimits:
        """The inverse of ``to_dict`` (ValueError on data that is not limits)."""
        if not isinstance(data, dict) or set(data) != {f for f in cls.__dataclass_fields__}:
            raise ValueError("limits: not an object with exactly the limits' fields")
        numbers = (int, float)
        cpu_s = data["cpu_s"]
        if not all(isinstance(data[k], int) for k in ("memory_mb", "open_files")) or not (
            isinstance(data["startup_s"], numbers) and isinstance(cpu_s, (*numbers, type(None)))
        ):
            raise ValueError("limits: a field is not a number")
        return cls(data["memory_mb"], cpu_s, data["open_files"], data["startup_s"])

    def argv(self) -> list[str]:
        """Command-line options that carry the limits to the child (see ``parse_argv``)."""
        out = ["--memory-mb", str(self.memory_mb), "--open-files", str(self.open_files)]
        if self.cpu_s is not None:
            out += ["--cpu-s", repr(self.cpu_s)]
        return out

    def shell_prefix(self) -> list[str]:
        """``/bin/sh -c 'ulimit ...; exec "$@"' arena-bot``: prepended to a command line, it
        starts the command under these limits in a millisecond (no Python launcher)."""
        steps = [f"ulimit -v {self.memory_mb * 1024}", f"ulimit -n {self.open_files}"]
        if self.cpu_s is not None:
            steps.append(f"ulimit -t {max(1, math.ceil(self.cpu_s))}")
        return ["/bin/sh", "-c", "; ".join([*steps, 'exec "$@"']), "arena-bot"]


def _lower(which: int, soft: int) -> None:
    """Set the soft limit (and the hard one when allowed) without raising an existing cap."""
    _, cur_hard = resource.getrlimit(which)
    if cur_hard != resource.RLIM_INFINITY:
        soft = min(soft, cur_hard)
    hard = cur_hard if which == resource.RLIMIT_CPU else soft
    if which == resource.RLIMIT_CPU and cur_hard == resource.RLIM_INFINITY:
        hard = soft + 1  # SIGXCPU at soft, SIGKILL one second later
    resource.setrlimit(which, (soft, hard))


def apply(memory_mb: int | None, open_files: int | None, cpu_s: float | None) -> None:
    """Lower this process's limits (called in the child, before any bot code)."""
    if memory_mb is not None:
        _lower(resource.RLIMIT_AS, memory_mb * 1024 * 1024)
    if open_files is not None:
        _lower(resource.RLIMIT_NOFILE, open_files)
    if cpu_s is not None:
        _lower(resource.RLIMIT_CPU, max(1, math.ceil(cpu_s)))
