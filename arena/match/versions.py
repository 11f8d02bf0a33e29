"""A bot's version is the SHA-256 of what runs, not of how it is named.

- A Python file bot: its file and every module and package of its folder that it imports
  (transitively: the same import scan that decides what a confined bot may read,
  ``transport.sandbox.paths.python_closure``); a folder bot (``main.py``): every file of its
  folder. Editing a helper module is a new version. The Python files are stored with the
  version (``BotRef.files``), so a registered version runs as it was; other files beside them
  (data) count in the version but are read where they are.
- The files are found by one bounded, link-safe scan (``transport.sandbox.scan``): regular
  files only, links only where they stay inside the bot's folder, limits on count, bytes and
  time. A bot the scan refuses is a BotSpecError (one line), before anything runs or is stored.
- A ``pkg.mod:attr`` bot: the module's file and what it imports beside it, the same way.
- A ``cmd:`` bot: the command line, the program it runs and every argument that names a file
  (``command_paths``): a rebuilt engine binary or an edited script is a new version.

A bot that is a single file (or a command that names no file) keeps the hash of its text alone,
the versions the arena gave before it hashed more: a database's versions stay valid.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bot_arena.arena.match.botref import BotRef, BotSpecError, sha256_text
from bot_arena.arena.match.digests import file_sha256
from bot_arena.arena.transport.sandbox.paths import command_paths, package_paths, python_closure
from bot_arena.arena.transport.sandbox.scan import Scan, ScanError


def _files(paths: Iterable[str], scan: Scan) -> list[Path]:
    """The regular files among ``paths`` and beneath the folders among them (caches and
    version-control folders aside), each once, by real path: ``scan``'s, so each stays inside
    its folder, links that lead out are refused and the whole is bounded."""
    return [Path(f) for f in scan.add_all(paths)]


def _digest(text: str, files: list[Path], base: Path | None, scan: Scan) -> str:
    """The SHA-256 of ``text`` and the files (each by its name relative to ``base`` and its
    bytes, read by ``scan``: regular files only; a large file unchanged since this process last
    hashed it is not read again, ``digests``); of ``text`` alone when there is no file."""
    if not files:
        return sha256_text(text)
    h = hashlib.sha256(text.encode("utf-8"))
    for file in files:
        name = os.path.relpath(file, base) if base is not None else str(file)
        h.update(b"\0" + name.encode("utf-8", "surrogateescape") + b"\0")
        h.update(file_sha256(str(file), scan.read))
    return h.hexdigest()


def python_file(file: Path, source: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The version of the bot in ``file`` whose text is ``source``, and its other Python files
    (path relative to its folder, text), which are stored with the version. Its other files
    (data beside its modules) count in the version but stay where they are."""
    with _refusing():
        scan = Scan(str(file.absolute().parent))
        main = scan.inside(str(file))
        folder = Path(main).parent
        closure = python_closure(str(file), scan=scan)
        others = [f for f in _files(closure, scan) if str(f) != main]
        code = []
        for f in others:
            if f.suffix == ".py":
                try:
                    code.append((os.path.relpath(f, folder), scan.read(str(f)).decode("utf-8")))
                except UnicodeDecodeError:
                    continue  # hashed all the same (as bytes): it only cannot be stored as text
        return _digest(source, others, folder, scan), tuple(code)


def bot_folder(ref: BotRef, file: str, path: str) -> str:
    """The folder a file bot (``path``, run from ``file``) imports its modules from: that of
    the private copy it runs from when the copy holds them (a version stored with its files),
    else its own."""
    return str(Path(file).parent if ref.files and file != path else Path(path).resolve().parent)


def python_module(module: str, source: str, origin: str) -> str:
    """The version of the ``pkg.mod:attr`` bot whose module file is ``origin``."""
    with _refusing():
        folder = Path(os.getcwd())
        main = os.path.realpath(origin)
        scan = Scan(str(folder))
        found = _files(package_paths(module, str(folder)), scan)
        others = [f for f in found if str(f) != main]
        return _digest(source, others, folder, scan)


def split_command(command: str) -> list[str]:
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise BotSpecError(f"cmd: cannot read the command line: {exc}") from None
    if not argv:
        raise BotSpecError("cmd: bot without a command line")
    return argv


def check_command(command: str) -> None:
    """BotSpecError when the command's program cannot be run from here: a program not found is
    the user's setup, not the bot's loss, so it is refused before any match."""
    program = split_command(command)[0]
    if shutil.which(program) is not None:
        return
    if os.sep not in program:
        why = "not found on PATH"
    elif not os.path.exists(program):
        why = f"no such file from {os.getcwd()}"
    else:
        why = "not an executable file"
    raise BotSpecError(f"program {program!r} cannot be run: {why}")


def command(command: str) -> str:
    """The version of a ``cmd:`` bot: its command line, its program and the files it names
    (a folder it names: the files inside it, the scan's way)."""
    with _refusing():
        scan = Scan("/")
        files: list[Path] = []
        for path in command_paths(split_command(command)):
            if os.path.isdir(path):
                scan.within(path)  # links that lead out of it are refused
            else:
                scan.within(os.path.dirname(os.path.realpath(path)))  # taken where it leads
            files.extend(_files([path], scan))
        return _digest(command, sorted(set(files)), None, scan)


@contextmanager
def _refusing() -> Iterator[None]:
    """A bot the scan refuses (a link out of its folder, a limit) as a BotSpecError."""
    try:
        yield
    except ScanError as exc:
        raise BotSpecError(str(exc)) from None
