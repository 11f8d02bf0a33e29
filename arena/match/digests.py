"""A file's SHA-256 for a bot's version, read once a process while the file stays the same.

A tournament of an engine against itself names one program twice (``uci:stockfish`` with two
sets of options): each bot's version hashes the program, and stockfish is 47 MB, about 60 ms
of CPU to read and hash, once per bot and again in every process that resolves it. A large
file's digest is therefore kept, in this process only, under what identifies its contents
without reading them: its real path, device and inode, size, and modification and change
times to the nanosecond. Any write changes the change time (and a replaced file is another
inode), so a file that changed is read and hashed again.

A timestamp is only as fine as the file system's clock tick (a few milliseconds on ext4): a
file written twice within one tick, to the same size, would keep its first stamps. So, as git
does with its index ("racy git"), a digest is kept only for a file whose times are at least
``SETTLED_S`` in the past when it is read: a later write then gives it a later time. Small
files (a Python bot's modules) are cheap to read and are always read (``MIN_CACHED``).

A new run hashes its programs on a thread of their own while it checks its options
(``botspec.hash_ahead``): a digest asked for while another thread is reading the same file
waits for that reading instead of starting a second one.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable

MIN_CACHED = 1 << 20  # bytes: smaller files are read and hashed every time
SETTLED_S = 2.0  # a file changed this recently is not kept (its next change may keep the stamps)
MAX_KEPT = 256  # digests kept a process (the oldest dropped first)

Identity = tuple[str, int, int, int, int, int]

_kept: dict[Identity, bytes] = {}
_reading: dict[Identity, threading.Event] = {}  # set when that file's reading has ended
_lock = threading.Lock()


def _identity(path: str) -> Identity | None:
    """What identifies the contents of the file at ``path`` (a link: the link itself, which
    the scan's read refuses to follow; a FIFO or a device: size 0, never kept)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _settled(identity: Identity) -> bool:
    newest = max(identity[4], identity[5])
    return newest <= time.time_ns() - int(SETTLED_S * 1e9)


def file_sha256(path: str, read: Callable[[str], bytes]) -> bytes:
    """The SHA-256 (raw digest) of the file at ``path`` (a real path), its bytes read by
    ``read`` (the scan's bounded, regular-files-only read); a large file that has not changed
    since it was last hashed in this process is not read again."""
    before = _identity(path)
    if before is None or before[3] < MIN_CACHED:
        return hashlib.sha256(read(path)).digest()
    with _lock:
        digest = _kept.get(before)
        other = _reading.get(before) if digest is None else None
        if digest is None and other is None:
            mine = _reading[before] = threading.Event()
    if digest is not None:
        return digest
    if other is not None:  # another thread is reading it: its digest, once kept
        other.wait()
        with _lock:
            digest = _kept.get(before)
        return digest if digest is not None else hashlib.sha256(read(path)).digest()
    try:
        digest = hashlib.sha256(read(path)).digest()
        # a write while it was read moved the change time past ``before``: that key is not
        # seen again. Kept only when the next write will give the file a later time
        # (``SETTLED_S``).
        if _settled(before):
            with _lock:
                if len(_kept) >= MAX_KEPT:
                    del _kept[next(iter(_kept))]
                _kept[before] = digest
    finally:
        with _lock:
            del _reading[before]
        mine.set()
    return digest


def forget() -> None:
    """Drop every digest kept (tests)."""
    with _lock:
        _kept.clear()
