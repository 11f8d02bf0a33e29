"""Unpacking a bot's archive (.zip, .tar, .tar.gz) under limits, as a stranger's file must be.

An archive is a few bytes that may stand for gigabytes (a *bomb*: one entry of 2 GiB of zeros,
or 20,000 empty files), or name places outside its folder. ``extract`` writes its entries into
an empty folder and refuses, with ``ArchiveError`` (one line), the first thing over a limit:

- more entries (files and folders) than ``Limits.entries``;
- more bytes in all than ``Limits.total_bytes``, counted as they are written (the sizes an
  entry's header declares are checked first, to refuse a bomb before any work, but never
  trusted: the bytes really written are what counts);
- an entry that expands more than ``Limits.ratio`` times its compressed size, beyond
  ``ALLOWANCE`` bytes (zip: each entry; a compressed tar: the whole decompressed stream against
  the archive's size);
- a link (symbolic or hard), a device, a FIFO or any other entry that is not a plain file or a
  folder; an absolute name or one with ``..``; the same name twice.

Everything a header says (names, kinds, declared sizes, the count) is checked in a first pass
that writes nothing, so a refused archive costs no file created; the second pass writes, makes
the same checks again and counts. The caller (``bundles``) removes the folder when this raises:
what was written is not a bot.
The limits come from the environment (``Limits.from_env``), so that every process of the arena
(a tournament's jobs included) applies the same ones.
"""

from __future__ import annotations

import io
import os
import stat
import struct
import tarfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from bot_arena.arena.match.botref import BotSpecError
from bot_arena.games import files as user_files

MIB = 1 << 20
ALLOWANCE = MIB  # bytes an entry may hold whatever its compression ratio (a small table)
CHUNK = 1 << 16  # bytes read and written at a time
ENTRIES_ENV = "ARENA_ARCHIVE_ENTRIES"
BYTES_ENV = "ARENA_ARCHIVE_BYTES"
RATIO_ENV = "ARENA_ARCHIVE_RATIO"
_UNITS = {"": 1, "K": 1 << 10, "M": MIB, "G": 1 << 30}


class ArchiveError(BotSpecError):
    """An archive refused (one line: what, and which limit)."""


def parse_size(name: str, text: str) -> int:
    """A positive whole number, bytes with an optional K, M or G (binary) suffix; ArchiveError
    naming the variable ``name`` otherwise."""
    raw = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = raw[-1:] if raw[-1:] in _UNITS else ""
    digits = raw[: len(raw) - len(unit)]
    if not digits.isdigit() or int(digits) <= 0 or len(digits) > 15:
        raise ArchiveError(f"${name}: {text!r} is not a positive whole number (K, M, G allowed)")
    return int(digits) * _UNITS[unit]


@dataclass(frozen=True)
class Limits:
    entries: int = 10_000  # files and folders
    total_bytes: int = 100 * MIB  # the bytes of every file, and the archive's own size
    ratio: int = 100  # uncompressed bytes per compressed byte, beyond ALLOWANCE

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Limits:
        """The defaults, each replaced by its variable when set (``$ARENA_ARCHIVE_ENTRIES``,
        ``$ARENA_ARCHIVE_BYTES``, ``$ARENA_ARCHIVE_RATIO``)."""
        default = cls()
        values = [
            parse_size(var, environ[var]) if environ.get(var, "").strip() else value
            for var, value in (
                (ENTRIES_ENV, default.entries),
                (BYTES_ENV, default.total_bytes),
                (RATIO_ENV, default.ratio),
            )
        ]
        return cls(*values)

    def expanded_cap(self, compressed: int) -> int:
        """The most bytes ``compressed`` bytes may expand to."""
        return ALLOWANCE + self.ratio * compressed


class _Budget:
    """The entries and bytes of one pass over an archive (the names and sizes declared; the
    bytes really written), against the limits."""

    def __init__(self, archive: Path, limits: Limits) -> None:
        self.archive = archive
        self.limits = limits
        self.entries = 0
        self.declared_bytes = 0
        self.written = 0
        self.names: set[str] = set()

    def refuse(self, why: str) -> ArchiveError:
        return ArchiveError(f"bot archive {str(self.archive)!r} refused: {why}")

    def entry(self, name: str) -> tuple[str, ...]:
        """Count one entry and check its name: relative, inside the folder, seen once. Its
        parts (none: the folder itself, ``./`` as ``tar -C dir .`` writes it)."""
        self.entries += 1
        if self.entries > self.limits.entries:
            raise self.refuse(f"more than {self.limits.entries} entries (${ENTRIES_ENV})")
        parts = name.split("/")
        if not name or name.startswith("/") or ".." in parts or "\0" in name:
            raise self.refuse(f"unsafe path {name!r}")
        clean = tuple(p for p in parts if p not in ("", "."))
        key = "/".join(clean)
        if clean and key in self.names:
            raise self.refuse(f"{name!r} appears twice")
        self.names.add(key)
        return clean

    def declared(self, name: str, size: int, cap: int) -> None:
        """Refuse before any work an entry whose header declares more than is allowed."""
        self.declared_bytes += size
        if self.declared_bytes > self.limits.total_bytes:
            raise self.refuse(
                f"{name!r} declares {size} bytes, over the {self.limits.total_bytes} bytes "
                f"allowed in all (${BYTES_ENV})"
            )
        if size > cap:
            raise self.refuse(
                f"{name!r} declares {size} bytes, over {cap} for its compressed size "
                f"(ratio {self.limits.ratio}, ${RATIO_ENV})"
            )

    def copy(self, source: IO[bytes], target: Path, name: str, cap: int) -> None:
        """Write ``source`` into the new file ``target``, counting the bytes really written
        against the total and the entry's ``cap``."""
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out:
            here = 0
            while chunk := source.read(CHUNK):
                here += len(chunk)
                if self.written + here > self.limits.total_bytes:
                    raise self.refuse(
                        f"more than {self.limits.total_bytes} bytes unpacked (${BYTES_ENV})"
                    )
                if here > cap:
                    raise self.refuse(
                        f"{name!r} expands past {cap} bytes (ratio {self.limits.ratio}, "
                        f"${RATIO_ENV})"
                    )
                out.write(chunk)
        self.written += here


def read(archive: Path, limits: Limits) -> bytes:
    """The archive's bytes, read once (what is hashed is what is unpacked, even if the file
    changes meanwhile), never more than ``Limits.total_bytes``; ArchiveError otherwise."""
    try:  # the one reader of user-named files: a regular file only (a FIFO never blocks);
        # its size is this module's limit, counted as read
        with user_files.open_binary(archive, "bot archive", 1 << 62) as fh:
            data = fh.read(limits.total_bytes + 1)
    except user_files.FileRefused as exc:
        raise ArchiveError(str(exc)) from None
    except OSError as exc:
        raise ArchiveError(f"cannot read bot archive {str(archive)!r}: {exc.strerror}") from None
    if len(data) > limits.total_bytes:
        raise ArchiveError(
            f"bot archive {str(archive)!r} refused: over {limits.total_bytes} bytes (${BYTES_ENV})"
        )
    return data


def extract(archive: Path, data: bytes, folder: Path, limits: Limits) -> int:
    """Unpack ``data``, the bytes of ``archive`` (``read``: the name is for messages), into the
    empty ``folder`` (see the module's docstring); the bytes written. ArchiveError for an
    archive refused or unreadable."""
    budget = _Budget(archive, limits)
    try:
        unpack = _zip if zipfile.is_zipfile(io.BytesIO(data)) else _tar  # is_tarfile: unbounded
        # a pass that only reads the headers, so that a refused archive costs no file written;
        # then the pass that writes, the same checks made again and the bytes counted
        unpack(data, None, budget)
        budget = _Budget(archive, limits)
        unpack(data, folder, budget)
    except (OSError, EOFError, tarfile.TarError, zipfile.BadZipFile, ValueError) as exc:
        if isinstance(exc, ArchiveError):
            raise
        raise ArchiveError(f"cannot unpack bot archive {str(archive)!r}: {exc}") from None
    return budget.written


def _made(folder: Path, clean: tuple[str, ...], is_dir: bool) -> Path:
    """The path for an entry in ``folder``, its parent folders made (never following a link:
    only this code writes here, and it makes none)."""
    target = folder.joinpath(*clean)
    parent = target if is_dir else target.parent
    parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return target


DIRECTORY_BYTES = 1024  # of a zip's central directory, per entry allowed (a name, extras)
_END = struct.Struct("<4s4H2LH")  # the end of central directory record


def _zip_directory(data: bytes, budget: _Budget) -> None:
    """Refuse a zip whose end record counts too many entries, or whose central directory
    (which ``zipfile`` reads whole, an object per entry, before anything can be counted) is
    larger than the entries allowed could need; zip64 archives too (a bot needs neither 65,535
    entries nor 4 GiB)."""
    tail = data[-(_END.size + 0xFFFF) :]  # the record, then a comment
    at = len(tail) - _END.size  # no comment: the record ends the file
    if tail[at : at + 4] != b"PK\x05\x06":
        at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < _END.size:
        return  # zipfile finds none either, and refuses it
    _, _, _, _, count, directory, _, _ = _END.unpack_from(tail, at)
    if count == 0xFFFF or directory == 0xFFFFFFFF:
        raise budget.refuse("a zip64 archive")
    entries = budget.limits.entries
    if count > entries:
        raise budget.refuse(f"counts {count} entries, over the {entries} allowed (${ENTRIES_ENV})")
    if directory > entries * DIRECTORY_BYTES:
        raise budget.refuse(
            f"a central directory of {directory} bytes, over {entries * DIRECTORY_BYTES} "
            f"({DIRECTORY_BYTES} an entry, ${ENTRIES_ENV})"
        )


def _zip(data: bytes, folder: Path | None, budget: _Budget) -> None:
    """One pass over a zip's entries; with ``folder`` None, their headers are checked only."""
    _zip_directory(data, budget)
    size = len(data)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        infos = zf.infolist()
        if len(infos) > budget.limits.entries:  # before any is written
            raise budget.refuse(
                f"holds {len(infos)} entries, over the {budget.limits.entries} allowed "
                f"(${ENTRIES_ENV})"
            )
        for info in infos:
            clean = budget.entry(info.filename)
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if stat.S_ISLNK(mode):
                raise budget.refuse(f"{info.filename!r} is a link")
            if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
                raise budget.refuse(f"{info.filename!r} is not a file or a folder")
            if info.is_dir():
                if folder is not None:
                    _made(folder, clean, True)
                continue
            # the compressed size is the header's too: never more than the archive holds
            cap = budget.limits.expanded_cap(min(info.compress_size, size))
            budget.declared(info.filename, info.file_size, cap)
            if folder is None:
                continue
            with zf.open(info) as source:
                budget.copy(source, _made(folder, clean, False), info.filename, cap)


class _Readable(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


class _Bounded:
    """A compressed tar's decompressed stream for tarfile, forward only, which refuses to go
    past ``cap`` bytes (a bomb of zeros, or a header that asks tarfile to read gigabytes)."""

    def __init__(self, stream: _Readable, cap: int, budget: _Budget) -> None:
        self.stream = stream
        self.cap = cap
        self.budget = budget
        self.pos = 0

    def _check(self, end: int) -> None:
        if end > self.cap:
            raise self.budget.refuse(
                f"expands past {self.cap} bytes (ratio {self.budget.limits.ratio}, ${RATIO_ENV})"
            )

    def read(self, n: int = -1) -> bytes:
        n = self.cap + 1 - self.pos if n < 0 else n
        self._check(self.pos + n if n > CHUNK else self.pos)  # a large read asked at once
        data = self.stream.read(n)
        self.pos += len(data)
        self._check(self.pos)
        return data

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        target = {os.SEEK_SET: offset, os.SEEK_CUR: self.pos + offset}.get(whence)
        if target is None or target < self.pos:
            raise self.budget.refuse("an entry that is read out of order")
        while self.pos < target:
            if not self.read(min(CHUNK, target - self.pos)):
                break
        return self.pos


def _decompressed(raw: io.BytesIO) -> _Readable:
    """``raw``'s bytes, decompressed when they start as gzip, bzip2 or xz data do."""
    import bz2
    import gzip
    import lzma

    head = raw.read(6)
    raw.seek(0)
    if head.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=raw)
    if head.startswith(b"BZh"):
        return bz2.BZ2File(raw)
    if head.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(raw)
    return raw


def _tar(data: bytes, folder: Path | None, budget: _Budget) -> None:
    """One pass over a tar's entries; with ``folder`` None, their headers are checked only
    (the stream is read through all the same: a tar has no table of contents)."""
    with io.BytesIO(data) as raw:
        bounded = _Bounded(_decompressed(raw), budget.limits.expanded_cap(len(data)), budget)
        try:
            tf = tarfile.open(fileobj=bounded, mode="r:")  # type: ignore[call-overload]  # noqa: SIM115
        except (tarfile.ReadError, OSError, EOFError):  # not even one entry of a tar
            raise ArchiveError(
                f"bot archive {str(budget.archive)!r} is not a zip or tar archive"
            ) from None
        with tf:
            while (member := tf.next()) is not None:
                _tar_member(tf, member, folder, budget)


def _tar_member(
    tf: tarfile.TarFile, member: tarfile.TarInfo, folder: Path | None, budget: _Budget
) -> None:
    """One entry, checked before tarfile reads past it (``next`` skips its data)."""
    clean = budget.entry(member.name)
    if member.issym() or member.islnk():
        raise budget.refuse(f"{member.name!r} is a link")
    if member.isdir():
        if folder is not None:
            _made(folder, clean, True)
        return
    if not member.isreg() or member.issparse():
        raise budget.refuse(f"{member.name!r} is not a file or a folder")
    cap = budget.limits.total_bytes  # a tar stores its files' bytes as they are
    budget.declared(member.name, member.size, cap)
    if folder is None:
        return
    source = tf.extractfile(member)
    if source is None:
        raise budget.refuse(f"{member.name!r} cannot be read")
    with source:
        budget.copy(source, _made(folder, clean, False), member.name, cap)
