"""The private folders an upload is written to while its validation games run, named by the
server that made them, so that a server starting sweeps the folders of servers that died
(``kill -9`` leaves its folder behind) and never a live server's.

A folder is ``arena-upload-<boot>-<pid>-<start>-<random>`` in the temporary folder: the
machine's boot id (8 hex digits), the server's pid and the time it started (in clock ticks
since boot, ``/proc/PID/stat``'s field 22). A pid is reused, but not with the same start time
in the same boot, so a folder whose process is not running with that start time (or whose boot
is over) belongs to a dead server. Folders of other names, other users, or that are not plain
folders (a link) are left alone."""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

PREFIX = "arena-upload-"
_NAME = re.compile(r"arena-upload-([0-9a-f]{8})-([0-9]{1,10})-([0-9]{1,20})-")


def _boot() -> str:
    try:
        text = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return "00000000"
    digits = "".join(c for c in text.strip().lower() if c in "0123456789abcdef")
    return (digits + "0" * 8)[:8]


def _started(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot), None if it is not running."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # the command name may hold blanks and ')'
    return fields[19] if len(fields) > 19 else None  # field 22 of the whole line


def identity(pid: int | None = None) -> str:
    """``<boot>-<pid>-<start>`` of process ``pid`` (this one by default)."""
    pid = os.getpid() if pid is None else pid
    return f"{_boot()}-{pid}-{_started(pid) or 0}"


def make_folder() -> str:
    """A new private folder (mode 0700) named by this server."""
    return tempfile.mkdtemp(prefix=f"{PREFIX}{identity()}-")


def _dead(name: str, boot: str) -> bool:
    found = _NAME.match(name)
    if found is None:
        return False
    folder_boot, pid, start = found.groups()
    return folder_boot != boot or _started(int(pid)) != start


def sweep(folder: str | None = None) -> list[str]:
    """Remove the upload folders of dead servers from ``folder`` (the temporary folder by
    default); the names removed."""
    where = Path(folder if folder is not None else tempfile.gettempdir())
    boot, uid = _boot(), os.getuid()
    removed: list[str] = []
    try:
        names = [p.name for p in where.iterdir() if p.name.startswith(PREFIX)]
    except OSError:
        return removed
    for name in sorted(names):
        path = where / name
        try:
            info = path.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or not _dead(name, boot):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(name)
    return removed
