"""A bot's version is the SHA-256 of what runs, not of how it is named.

- A Python file bot: its file and every module and package of its folder that it imports
  (transitively: the same import scan that decides what a confined bot may read,
  ``transport.sandbox.paths.python_closure``). Editing a helper module is a new version. The
  Python files are stored with the version (``BotRef.files``), so a registered version runs as
  it was; other files beside them (data) count in the version but are read where they are.
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
import stat
from collections.abc import Iterable
from pathlib import Path

from bot_arena.arena.match.botref import BotRef, BotSpecError, sha256_text
from bot_arena.arena.transport.sandbox.paths import command_paths, package_paths, python_closure

_SKIP_DIRS = {"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache"}


def _files(paths: Iterable[str]) -> list[Path]:
    """The regular files among ``paths`` and beneath the folders among them (caches and
    version-control folders aside), each once, by real path."""
    found: dict[str, Path] = {}
    for path in paths:
        p = Path(path)
        if p.is_dir():
            for root, dirs, names in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
                for name in names:
                    file = Path(root) / name
                    if not name.endswith((".pyc", ".pyo")) and _regular(file):
                        found.setdefault(os.path.realpath(file), file)
        elif _regular(p):
            found.setdefault(os.path.realpath(p), p)
    return [found[k] for k in sorted(found)]


def _regular(path: Path) -> bool:
    """A regular file (not a FIFO a bot reads from, a device or a socket: reading one could
    block for ever or never end)."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def _digest(text: str, files: list[Path], base: Path | None) -> str:
    """The SHA-256 of ``text`` and the files (each by its name relative to ``base`` and its
    bytes); of ``text`` alone when there is no file."""
    if not files:
        return sha256_text(text)
    h = hashlib.sha256(text.encode("utf-8"))
    for file in files:
        name = os.path.relpath(file, base) if base is not None else str(file)
        try:
            data = file.read_bytes()
        except OSError:
            data = b""
        h.update(b"\0" + name.encode("utf-8", "surrogateescape") + b"\0")
        h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


def python_file(file: Path, source: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The version of the bot in ``file`` whose text is ``source``, and its other Python files
    (path relative to its folder, text), which are stored with the version. Its other files
    (data beside its modules) count in the version but stay where they are."""
    main = os.path.realpath(file)
    folder = file.resolve().parent
    others = [f for f in _files(python_closure(str(file))) if os.path.realpath(f) != main]
    code = []
    for f in others:
        if f.suffix == ".py":
            try:
                code.append((os.path.relpath(f, folder), f.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError):
                continue  # hashed all the same (as bytes): it only cannot be stored as text
    return _digest(source, others, folder), tuple(code)


def bot_folder(ref: BotRef, file: str, path: str) -> str:
    """The folder a file bot (``path``, run from ``file``) imports its modules from: that of
    the private copy it runs from when the copy holds them (a version stored with its files),
    else its own."""
    return str(Path(file).parent if ref.files and file != path else Path(path).resolve().parent)


def python_module(module: str, source: str, origin: str) -> str:
    """The version of the ``pkg.mod:attr`` bot whose module file is ``origin``."""
    folder = Path(os.getcwd())
    main = os.path.realpath(origin)
    found = _files(package_paths(module, str(folder)))
    others = [f for f in found if os.path.realpath(f) != main]
    return _digest(source, others, folder)


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
    """The version of a ``cmd:`` bot: its command line, its program and the files it names."""
    return _digest(command, _files(command_paths(split_command(command))), None)
