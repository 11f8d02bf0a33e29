"""Landlock (Linux 5.13+): the bot's process may read only the paths it is given, write only
its private folders, make no TCP connection, and (ABI 6+) signal or reach by abstract unix
socket no process outside its own domain. Ptrace of a process outside the domain (and so
``/proc/PID/mem``, ``/proc/PID/fd``, ``/proc/PID/environ``) is refused by every ABI.

The rules are the kernel's; this module only states them (``restrict``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import stat
from collections.abc import Iterable

from bot_arena.arena.transport.sandbox import kernel

# access rights, by the ABI version that introduced them
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # valid on a file


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def abi() -> int:
    """The Landlock ABI version this kernel offers (0: none, or disabled)."""
    try:
        return kernel.syscall(
            kernel.SYS_LANDLOCK_CREATE_RULESET,
            None,
            ctypes.c_size_t(0),
            ctypes.c_uint32(_CREATE_RULESET_VERSION),
        )
    except OSError:
        return 0


def _fs_rights(version: int) -> int:
    rights = (MAKE_SYM << 1) - 1  # EXECUTE .. MAKE_SYM: ABI 1
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    if version >= 5:
        rights |= IOCTL_DEV
    return rights


def restrict(
    read: Iterable[str],
    write: Iterable[str],
    read_write_files: Iterable[str] = (),
    list_only: Iterable[str] = (),
) -> int:
    """Confine this process (and all it starts) for good: read and execute beneath ``read``,
    everything beneath ``write`` (directories), read and write ``read_write_files`` (devices
    such as /dev/null), list the names in ``list_only`` (a bot's folder: Python's import
    system lists a folder before it imports from it); nothing else on the file system, no
    TCP, and (ABI 6+) no signal or abstract unix socket out of the domain. Paths that do not
    exist are skipped. Returns the ABI used. Sets no_new_privs (Landlock requires it)."""
    version = abi()
    if version < 1:
        raise OSError("landlock is not available")
    all_fs = _fs_rights(version)
    attr = _RulesetAttr(all_fs, 0, 0)
    size = 8
    if version >= 4:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
        size = 16
    if version >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
    ruleset = kernel.syscall(
        kernel.SYS_LANDLOCK_CREATE_RULESET,
        ctypes.byref(attr),
        ctypes.c_size_t(size),
        ctypes.c_uint32(0),
    )
    try:
        reading = READ_FILE | READ_DIR | EXECUTE
        for path in read:
            _add(ruleset, path, reading, all_fs)
        for path in write:
            _add(ruleset, path, all_fs, all_fs)
        for path in list_only:
            _add(ruleset, path, READ_DIR, all_fs)
        for path in read_write_files:
            _add(ruleset, path, READ_FILE | WRITE_FILE | (IOCTL_DEV & all_fs), all_fs)
        kernel.prctl(kernel.PR_SET_NO_NEW_PRIVS, 1)
        kernel.syscall(kernel.SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)
    return version


def _add(ruleset: int, path: str, rights: int, handled: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # nothing there: nothing to allow
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_RIGHTS
        rule = _PathBeneathAttr(rights & handled, fd)
        with contextlib.suppress(OSError):  # e.g. a path on a file system Landlock cannot tag
            kernel.syscall(
                kernel.SYS_LANDLOCK_ADD_RULE,
                ctypes.c_int(ruleset),
                ctypes.c_int(_RULE_PATH_BENEATH),
                ctypes.byref(rule),
                ctypes.c_uint32(0),
            )
    finally:
        os.close(fd)
