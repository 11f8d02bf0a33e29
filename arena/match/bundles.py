"""The bundle cache: where a bot's archive is unpacked, once per archive (by its SHA-256), and
kept for the next time it is named.

It lives in ``$ARENA_BUNDLES``, else ``arena-bundles-UID`` in the temporary folder (``$TMPDIR``,
else /tmp), a folder of this user's alone (refused when another user owns it or may write to
it). Inside, each bundle is a folder named by its archive's hash, its last use the folder's
modification time. Its size is capped (``$ARENA_BUNDLE_CACHE``, default 1 GiB, counting every
file's bytes and ``ENTRY_COST`` for each file or folder): after each new bundle, the least
recently used ones are removed until the cache is under its cap again, and so are the leftovers
of extractions that were interrupted (a killed process).

Several processes may use the cache at once (a tournament's, another ``arena play``). Locks
(``flock``, released by the kernel when a process dies) keep them apart:

- ``.lock``, exclusive, for a short while around every change of the folder's list (a new
  extraction's folder made, a bundle renamed into place, one removed) and every look-up;
- each extraction in progress, ``.partial-HASH-XXXX``, holds its own folder exclusively: a
  cleaner that can take that lock has found the leftover of a process that died;
- each bundle in use is held shared by each process that uses it, for as long as it lives: the
  cleaner removes only a bundle it can lock exclusively, never one a running match reads.

An archive is unpacked into its ``.partial-`` folder and renamed to its hash only once whole;
any error removes the partial folder, so a refused archive leaves nothing behind. Two processes
unpacking the same archive at once each write their own; the first rename wins, the other is
removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from bot_arena.arena.match import archives
from bot_arena.arena.match.archives import ArchiveError

ROOT_ENV = "ARENA_BUNDLES"
CAP_ENV = "ARENA_BUNDLE_CACHE"
DEFAULT_CAP = 1 << 30
ENTRY_COST = 1024  # bytes counted for each file or folder (its inode, its name)
PARTIAL = ".partial-"
LOCK = ".lock"

_held: dict[str, int] = {}  # bundle path -> a descriptor holding it shared, for this process


def root() -> Path:
    """The cache's folder, made if missing; ArchiveError when it is not this user's alone."""
    configured = os.environ.get(ROOT_ENV, "").strip()
    folder = Path(configured or Path(tempfile.gettempdir()) / f"arena-bundles-{os.getuid()}")
    try:
        folder.mkdir(mode=0o700, parents=bool(configured), exist_ok=True)
        info = folder.lstat()
    except OSError as exc:
        raise ArchiveError(f"bundle cache {str(folder)!r}: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise ArchiveError(
            f"bundle cache {str(folder)!r} is not a folder of this user's alone (${ROOT_ENV})"
        )
    return folder


def cap() -> int:
    text = os.environ.get(CAP_ENV, "").strip()
    return archives.parse_size(CAP_ENV, text) if text else DEFAULT_CAP


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """The cache's own lock, exclusive."""
    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _try_lock(path: Path, how: int) -> int | None:
    """A descriptor of the folder ``path`` locked ``how`` without waiting, or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fcntl.flock(fd, how | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _use(bundle: Path) -> Path:
    """Hold ``bundle`` shared for the rest of this process and mark it used now (under the
    cache's lock: no cleaner holds it exclusively)."""
    key = str(bundle)
    if key not in _held:
        fd = _try_lock(bundle, fcntl.LOCK_SH)
        if fd is None:
            raise ArchiveError(f"bundle {key!r} cannot be locked")
        _held[key] = fd
    with contextlib.suppress(OSError):
        os.utime(bundle)
    return bundle


def unpacked(archive: Path) -> Path:
    """The folder ``archive`` is unpacked in: the cached one, or a new one made now (under the
    limits of ``archives``); ArchiveError when the archive is refused, leaving nothing behind."""
    limits = archives.Limits.from_env()
    size_cap = cap()
    data = archives.read(archive, limits)  # hashed and unpacked alike
    name = hashlib.sha256(data).hexdigest()
    folder = root()
    target = folder / name
    with _locked(folder):
        if target.is_dir():
            return _use(target)
        partial = Path(tempfile.mkdtemp(prefix=f"{PARTIAL}{name[:16]}-", dir=folder))
        hold = _try_lock(partial, fcntl.LOCK_EX)  # taken before any cleaner may look
    try:
        archives.extract(archive, data, partial, limits)
        with _locked(folder):
            if target.is_dir():  # another process unpacked the same archive first
                shutil.rmtree(partial, ignore_errors=True)
            else:
                partial.rename(target)
            if hold is not None:  # its lock went with the folder: shared from here on
                os.close(hold)
                hold = None
            bundle = _use(target)
            _clean(folder, size_cap, keep=target)
        return bundle
    except OSError as exc:
        raise ArchiveError(f"cannot unpack bot archive {str(archive)!r}: {exc}") from None
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
        if hold is not None:
            os.close(hold)


def _size(bundle: Path) -> int:
    """A bundle's bytes and ``ENTRY_COST`` for each entry, as its files are now."""
    total = 0
    for base, dirs, files in os.walk(bundle):
        for entry in (*dirs, *files):
            total += ENTRY_COST
            with contextlib.suppress(OSError):
                info = os.lstat(os.path.join(base, entry))
                total += info.st_size if stat.S_ISREG(info.st_mode) else 0
    return total


def _clean(folder: Path, size_cap: int, keep: Path) -> None:
    """Remove the leftovers of dead extractions, then the least recently used bundles that no
    process holds until the cache is within ``size_cap`` (``keep``, just made, stays). Called
    under the cache's lock."""
    bundles: list[tuple[float, Path, int]] = []
    for entry in folder.iterdir():
        if entry.name == LOCK or entry == keep:
            continue
        if entry.name.startswith(PARTIAL):
            fd = _try_lock(entry, fcntl.LOCK_EX)
            if fd is not None:  # its process died: nobody finishes it
                shutil.rmtree(entry, ignore_errors=True)
                os.close(fd)
            continue
        with contextlib.suppress(OSError):
            bundles.append((entry.lstat().st_mtime, entry, _size(entry)))
    total = _size(keep) + sum(size for _, _, size in bundles)
    for _, bundle, size in sorted(bundles, key=lambda b: b[0]):
        if total <= size_cap:
            break
        if str(bundle) in _held:
            continue
        fd = _try_lock(bundle, fcntl.LOCK_EX)
        if fd is None:  # in use by a running process
            continue
        shutil.rmtree(bundle, ignore_errors=True)
        os.close(fd)
        total -= size
