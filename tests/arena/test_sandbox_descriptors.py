"""Three review items of the sandbox: descriptors are closed however high they are (the keeper,
init and the fork server alike), init exits when its keeper died before init's parent-death
signal took effect, and x32 calls fail as the seccomp module says.

Each check runs in a fresh interpreter (its descriptors and limits changed freely) or a fork.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap

import pytest

from bot_arena.arena.transport.sandbox import confine, support

pytestmark = pytest.mark.sandbox

CHECK = """
import errno, os, resource, sys
from bot_arena.arena.transport.sandbox import confine, kernel

high, lowered, fallback = int(sys.argv[1]), sys.argv[2] == "1", sys.argv[3] == "1"
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (high + 1, hard))
r, w = os.pipe()
os.dup2(r, high)
if lowered:  # the descriptor stays open above a soft limit lowered after it was made
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
if fallback:  # a kernel without close_range(2): /proc/self/fd is read instead
    def missing(*args):
        raise OSError(errno.ENOSYS, "no close_range")
    kernel.syscall = missing
keep = int(os.environ["CHECK_FD"])  # the test's pipe: the one descriptor kept
confine.close_all_but(keep)
try:
    os.fstat(high)
    os.write(keep, b"open")
except OSError:
    os.write(keep, b"closed")
"""


def run_check(high: int, lowered: bool, fallback: bool) -> str:
    r, w = os.pipe()
    proc = subprocess.run(
        [sys.executable, "-c", CHECK, str(high), str(int(lowered)), str(int(fallback))],
        pass_fds=(w,),
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "CHECK_FD": str(w)},
    )
    os.close(w)
    out = os.read(r, 16).decode()
    os.close(r)
    assert proc.returncode == 0, proc.stderr
    return out


def test_a_descriptor_above_65536_is_closed() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= 65_537:
        pytest.skip(f"the hard RLIMIT_NOFILE here is {hard}: no descriptor above 65,536 can open")
    for fallback in (False, True):
        assert run_check(65_537, lowered=False, fallback=fallback) == "closed"


@pytest.mark.parametrize("fallback", [False, True], ids=["close_range", "/proc/self/fd"])
def test_a_descriptor_above_a_lowered_soft_limit_is_closed(fallback: bool) -> None:
    """Runs on any machine: the highest descriptor the hard limit allows, the soft limit then
    lowered below it (what ``sysconf(SC_OPEN_MAX)``, the fork server's old bound, reads)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    high = min(hard, 1 << 20) - 1 if hard != resource.RLIM_INFINITY else (1 << 16) + 1
    assert run_check(high, lowered=True, fallback=fallback) == "closed"


FORKSERVER = """
import os, resource, sys
from bot_arena.arena.worker import forkserver_server as forkserver

hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
high = hard - 1
r, w = os.pipe()
os.dup2(r, high)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
fds = [os.open(os.devnull, os.O_RDWR) for _ in range(3)]
request = {"kind": "worker", "cwd": os.getcwd(), "env": {}}

def run():
    try:
        os.fstat(high)
        return 3
    except OSError:
        return 0

pid = os.fork()
if pid == 0:
    forkserver._become(request, fds, run, None)
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


def test_a_forked_worker_inherits_no_high_descriptor() -> None:
    """The fork server's worker closes what ``close_all_but`` closes (one rule): a descriptor
    above the soft limit it was forked under too."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > 1 << 20:
        pytest.skip("no finite hard RLIMIT_NOFILE to open a descriptor just below")
    proc = subprocess.run(
        [sys.executable, "-c", FORKSERVER], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr)


def fork_exit(body: str, *, reader_open: bool) -> int:
    """Exit status of a fork that runs ``confine.die_with_keeper`` on a pipe's writing end,
    its reading end held by this process or closed (the keeper died before the check)."""
    code = textwrap.dedent(
        f"""
        import os
        from bot_arena.arena.transport.sandbox import confine
        r, w = os.pipe()
        if not {reader_open}:
            os.close(r)
        pid = os.fork()
        if pid == 0:
            if {reader_open}:
                os.close(r)
            {body}
            os._exit(0)
        raise SystemExit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    return proc.returncode


def test_init_exits_when_its_keeper_died_before_its_parent_death_signal() -> None:
    body = "confine.die_with_keeper(w)"
    assert fork_exit(body, reader_open=False) == 1  # nobody holds the keeper's end: gone
    assert fork_exit(body, reader_open=True) == 0  # the keeper is there: init goes on


def test_x32_calls_fail_with_eacces_under_the_filter() -> None:
    """What the seccomp module's docstring says, on the real kernel (x86_64 only)."""
    if confine.SECCOMP not in support.probe()[0] or os.uname().machine != "x86_64":
        pytest.skip("seccomp filters on x86_64 only")
    code = textwrap.dedent(
        """
        import ctypes, errno
        from bot_arena.arena.transport.sandbox import seccomp
        seccomp.install()
        libc = ctypes.CDLL(None, use_errno=True)
        result = libc.syscall(ctypes.c_long(0x40000000 + 39))  # getpid, x32 numbering
        raise SystemExit(0 if result == -1 and ctypes.get_errno() == errno.EACCES else 1)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
