"""The few Linux system calls the sandbox needs that Python's ``os`` module lacks (3.11):
``unshare``, ``mount``, ``prctl`` and raw ``syscall`` (Landlock, seccomp), through ctypes.

Every wrapper raises ``OSError`` with the kernel's errno on failure, so a caller can tell "this
machine does not allow it" (EPERM, ENOSYS, EOPNOTSUPP) from a bug.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REC = 16384
MS_PRIVATE = 1 << 18

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38

# syscall numbers that differ between the machines we support (Landlock's are the same on all)
_ARCH: dict[str, dict[str, int]] = {
    "x86_64": {"seccomp": 317, "socket": 41, "audit_arch": 0xC000003E},
    "aarch64": {"seccomp": 277, "socket": 198, "audit_arch": 0xC00000B7},
}
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
SYS_IO_URING_SETUP = 425
SYS_MOUNT_SETATTR = 442
SYS_CLOSE_RANGE = 436  # one number on every architecture, as for all calls since 403
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1

_libc: Any = None


def libc() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def arch() -> dict[str, int] | None:
    """This machine's syscall numbers, None on an architecture we have no table for."""
    return _ARCH.get(platform.machine())


def check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def unshare(flags: int) -> None:
    check(libc().unshare(ctypes.c_int(flags)), "unshare")


def mount(
    source: str | None, target: str, fstype: str | None, flags: int, data: str | None
) -> None:
    def enc(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    check(
        libc().mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
        f"mount {target}",
    )


class _MountAttr(ctypes.Structure):
    _fields_ = (
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    )


def read_only_tree(path: str) -> None:
    """Make every mount at and beneath ``path`` read-only and private, in this mount namespace
    only (``mount_setattr``, Linux 5.12): no write, chmod, chown, utime or xattr change reaches
    the host's files through it, whatever the file permissions say."""
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, MS_PRIVATE, 0)
    check(
        libc().syscall(
            ctypes.c_long(SYS_MOUNT_SETATTR),
            ctypes.c_int(AT_FDCWD),
            os.fsencode(path),
            ctypes.c_uint(AT_RECURSIVE),
            ctypes.byref(attr),
            ctypes.c_size_t(ctypes.sizeof(attr)),
        ),
        f"mount_setattr {path}",
    )


def prctl(option: int, arg: int, arg3: int = 0) -> int:
    return check(
        libc().prctl(
            ctypes.c_int(option),
            ctypes.c_ulong(arg),
            ctypes.c_ulong(arg3),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
        ),
        "prctl",
    )


def syscall(number: int, *args: Any) -> int:
    return check(libc().syscall(ctypes.c_long(number), *args), f"syscall {number}")


def set_dumpable(dumpable: bool) -> None:
    """Non-dumpable: no core file, and ``/proc/PID`` (environ, mem, fds) of this process is
    closed to every process that may not ptrace it."""
    prctl(PR_SET_DUMPABLE, 1 if dumpable else 0)


def close_from(first: int) -> None:
    """Close every descriptor of this process numbered ``first`` or more, however high (one
    above 65,536, or above a soft limit lowered after it was opened): ``close_range`` (Linux
    5.9); where it is missing, each descriptor ``/proc/self/fd`` lists; without /proc, every
    number below the hard ``RLIMIT_NOFILE`` (a descriptor is always below it)."""
    try:
        syscall(SYS_CLOSE_RANGE, ctypes.c_uint(first), ctypes.c_uint(0xFFFFFFFF), ctypes.c_uint(0))
        return
    except OSError:
        pass
    try:
        listed = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        os.closerange(first, max(soft, hard) if hard != resource.RLIM_INFINITY else 1 << 20)
        return
    for fd in listed:
        if fd >= first:
            with contextlib.suppress(OSError):  # the listing's own, closed already
                os.close(fd)
