"""Which confinement layers this machine offers, found by trying each one for real in a
throw-away process (``python -m bot_arena.arena.transport.sandbox.support``), once per arena
process (a tournament job takes its runner's answer instead: ``answer``/``adopt``); and the
level a pool's bots run under for a mode (``level_for``)."""

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
from typing import Any

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
# what the probe found here (working layers, codes of what else is missing), or was adopted
_found: tuple[frozenset[str], tuple[str, ...]] | None = None


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
    if _started is not None or _found is not None or not sys.platform.startswith("linux"):
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


def _probed() -> tuple[frozenset[str], tuple[str, ...]]:
    """(working layers, codes of what else is missing) from the probe process."""
    try:
        return _parsed(json.loads(_probe_output()))
    except (OSError, ValueError, KeyError, TypeError, subprocess.SubprocessError):
        return frozenset(), ()


def _parsed(found: Any) -> tuple[frozenset[str], tuple[str, ...]]:
    """The probe's answer (``{"layers": [...], "missing": [...]}``), only the names it may hold;
    ValueError when it is not such an object."""
    if not isinstance(found, dict):
        raise ValueError("the probe's answer is not an object")
    layers, extra = found["layers"], found["missing"]
    if not isinstance(layers, list) or not isinstance(extra, list):
        raise ValueError("the probe's answer holds no lists")
    return (
        frozenset(str(x) for x in layers) & frozenset(confine.LAYERS),
        tuple(str(x) for x in extra if str(x) in WHAT),
    )


def probe() -> tuple[frozenset[str], tuple[str, ...]]:
    """(layers that work here, what is missing), from the probe process (started here, or
    ahead by ``start``) the first time; or as adopted from this process's parent."""
    global _found
    if not sys.platform.startswith("linux"):
        return frozenset(), ("Linux",)
    if _found is None:
        _found = _probed()
    layers, extra = _found
    missing = [WHAT[layer] for layer in confine.LAYERS if layer not in layers]
    missing += [WHAT[m] for m in extra]
    return layers, tuple(missing)


def answer() -> dict[str, list[str]] | None:
    """What the probe found in this process, as the probe prints it (None: not probed yet),
    for a process started to serve this one on the same machine (``adopt``)."""
    if _found is None:
        return None
    return {"layers": sorted(_found[0]), "missing": list(_found[1])}


def adopt(found: Any) -> None:
    """Take the answer (``answer``) of the process that started this one on the same machine,
    a tournament job's runner, instead of probing again: each job probed for itself, a fresh
    interpreter (about 0.1 s of CPU) before its first match, on every job start of every run.
    Nothing when this process has an answer of its own already, or ``found`` is not one (it
    then probes for itself, as before). A Ray actor, maybe on another machine, never adopts."""
    global _found
    if _found is not None or found is None:
        return
    with contextlib.suppress(ValueError, KeyError, TypeError):
        _found = _parsed(found)


def forget() -> None:
    """Forget this process's answer (the next ``probe`` runs the probe again)."""
    global _found
    _found = None


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
