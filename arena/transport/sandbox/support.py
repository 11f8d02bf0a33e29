"""Which confinement layers this machine offers, found by trying each one for real in a
throw-away process (``python -m bot_arena.arena.transport.sandbox.support``), once per arena
process; and the level a pool's bots run under for a mode (``level_for``)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import cache

from bot_arena.arena.transport.sandbox import confine, landlock
from bot_arena.arena.transport.sandbox.mode import (
    CONFINED,
    PARTIAL,
    UNCONFINED,
    Mode,
    SandboxUnavailable,
)

PROBE_MODULE = "bot_arena.arena.transport.sandbox.support"
FULL_LANDLOCK_ABI = 6  # signal and abstract-socket scoping
WHAT = {  # how a missing layer is named to the user
    confine.CGROUPS: "cgroups (a memory cap per bot; and, for root, a process cap)",
    confine.NAMESPACES: "namespaces (no network, own processes, private folder)",
    confine.LANDLOCK: "landlock (file access)",
    "landlock-scopes": f"landlock ABI {FULL_LANDLOCK_ABI} (signal scoping)",
    confine.SECCOMP: "seccomp (no sockets)",
}


_started: subprocess.Popen[bytes] | None = None  # the probe process started ahead (start)


def _probe_process() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-P", "-m", PROBE_MODULE],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=confine.clean_env(),
    )


def start() -> None:
    """Start the probe process now, ahead of the first ``probe()``, which reads its answer: a
    command that will start bots calls this first, so the probe (a fresh interpreter, about
    0.1 s) runs on another core while the command imports and checks its options. Nothing
    when the probe has run or is running in this process, or cannot be started."""
    global _started
    if _started is not None or probe.cache_info().currsize or not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError):
        _started = _probe_process()


def _probe_output() -> bytes:
    """What the probe process printed: the one ``start`` began, else a new one."""
    global _started
    process, _started = _started, None
    if process is None:
        process = _probe_process()
    with process:
        try:
            out, _ = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    return out


@cache
def probe() -> tuple[frozenset[str], tuple[str, ...]]:
    """(layers that work here, what is missing), from the probe process (started here, or
    ahead by ``start``)."""
    if not sys.platform.startswith("linux"):
        return frozenset(), ("Linux",)
    try:
        found = json.loads(_probe_output())
        layers = frozenset(str(x) for x in found["layers"]) & frozenset(confine.LAYERS)
        extra = tuple(str(x) for x in found["missing"])
    except (OSError, ValueError, KeyError, TypeError, subprocess.SubprocessError):
        layers, extra = frozenset(), ()
    missing = [WHAT[layer] for layer in confine.LAYERS if layer not in layers]
    missing += [WHAT[m] for m in extra if m in WHAT]
    return layers, tuple(missing)


def level_for(mode: Mode) -> tuple[str, tuple[str, ...]]:
    """(level, missing) for a pool run in ``mode``; SandboxUnavailable for ``on`` when
    anything is missing."""
    if mode is Mode.OFF:
        return UNCONFINED, ()
    layers, missing = probe()
    if mode is Mode.ON and missing:
        raise SandboxUnavailable(
            "sandbox on: this machine cannot confine bots fully; missing " + ", ".join(missing)
        )
    if not layers:
        return UNCONFINED, missing
    return (PARTIAL if missing else CONFINED), missing


# --- the probe process -------------------------------------------------------------------------
def _try(test: Callable[[], object]) -> bool:
    """Run ``test`` in a child; True when it returned normally."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            test()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _main() -> None:
    layers: list[str] = []
    missing: list[str] = []
    work = tempfile.mkdtemp(prefix="arena-probe-")
    try:
        plan = confine.Plan((confine.NAMESPACES,), work)
        if _try(lambda: confine.enter(plan)):
            layers.append(confine.NAMESPACES)
        if _try(lambda: landlock.restrict(["/usr"], [work])):
            layers.append(confine.LANDLOCK)
            if landlock.abi() < FULL_LANDLOCK_ABI:
                missing.append("landlock-scopes")
        if _try(_seccomp_blocks_sockets):
            layers.append(confine.SECCOMP)
        if _cgroups_work():
            layers.append(confine.CGROUPS)
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(work)
    print(json.dumps({"layers": layers, "missing": missing}))


def _seccomp_blocks_sockets() -> None:
    from bot_arena.arena.transport.sandbox import seccomp

    seccomp.install()
    try:
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
    except PermissionError as exc:
        if exc.errno == errno.EACCES:
            return
    raise OSError("seccomp did not take sockets away")


def _cgroups_work() -> bool:
    from bot_arena.arena.transport.sandbox.cgroups import Unit, unit_name

    try:
        unit = Unit.create(unit_name(), 64 << 20, 16 if os.getuid() == 0 else None)
    except OSError:
        return False
    try:
        paths = [str(p) for p in unit.paths]
        return _try(lambda: Unit.join(paths))
    finally:
        unit.remove()


if __name__ == "__main__":
    _main()
