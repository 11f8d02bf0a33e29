"""A seccomp filter that takes sockets away: ``socket()`` fails with EACCES (every family:
TCP, UDP, and unix sockets by path, which neither a network namespace nor Landlock closes:
PostgreSQL's socket file is one), and so does ``io_uring_setup`` (io_uring can open sockets
on its own). ``socketpair`` stays: a pair of connected sockets reaches nobody else.

Other numberings, read off the filter: a call with the x32 numbering (this architecture's,
the number with bit 30 set) fails with EACCES whatever it is (the filter compares x32 numbers
with none of its own, so it refuses them all rather than let x32's ``socket`` through); a call
made with another architecture's (i386 compat, ``int 0x80``) kills the process.
"""

from __future__ import annotations

import ctypes
import errno

from bot_arena.arena.transport.sandbox import kernel

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL_PROCESS = 0x80000000
_X32_BIT = 0x40000000
_SECCOMP_SET_MODE_FILTER = 1


class _Instruction(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _Program(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction)))


def program(audit_arch: int, socket_nr: int) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions (seccomp_data: nr at 0, arch at 4)."""
    deny = (_RET_K, 0, 0, _RET_ERRNO | errno.EACCES)
    return [
        (_LD_W_ABS, 0, 0, 4),  # 0: arch
        (_JEQ_K, 1, 0, audit_arch),  # 1: ours -> 3
        (_RET_K, 0, 0, _RET_KILL_PROCESS),  # 2
        (_LD_W_ABS, 0, 0, 0),  # 3: syscall number
        (_JGE_K, 3, 0, _X32_BIT),  # 4: x32 numbering -> 8
        (_JEQ_K, 2, 0, socket_nr),  # 5: socket -> 8
        (_JEQ_K, 1, 0, kernel.SYS_IO_URING_SETUP),  # 6: io_uring_setup -> 8
        (_RET_K, 0, 0, _RET_ALLOW),  # 7
        deny,  # 8
    ]


def install() -> None:
    """Install the filter on this process and all it starts (sets no_new_privs)."""
    numbers = kernel.arch()
    if numbers is None:
        raise OSError("seccomp: no syscall table for this machine")
    code = program(numbers["audit_arch"], numbers["socket"])
    instructions = (_Instruction * len(code))(*(_Instruction(*i) for i in code))
    prog = _Program(len(code), instructions)
    kernel.prctl(kernel.PR_SET_NO_NEW_PRIVS, 1)
    kernel.syscall(
        numbers["seccomp"],
        ctypes.c_uint(_SECCOMP_SET_MODE_FILTER),
        ctypes.c_uint(0),
        ctypes.byref(prog),
    )
