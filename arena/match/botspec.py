"""What a ``--bot SPEC`` names: a built-in spec, a ``.py`` file, ``pkg.mod:attr``, a ``cmd:``
command line, ``human``, or a name registered in the database (through a lookup callable),
read into a BotRef (its version: the hash of what runs, ``versions``) and checked enough to
fail early with a one-line message (a ``cmd:`` program that cannot be run included).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Callable
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path

from bot_arena import bots
from bot_arena.arena.match import versions
from bot_arena.arena.match.botref import (
    BUILTIN,
    COMMAND,
    ENGINES,
    HUMAN,
    MODULE,
    PROGRAMS,
    BotRef,
    BotSpecError,
    file_target,
    pinned,
)
from bot_arena.arena.match.engines import OPTION_PREFIX, engine_command, split_engine
from bot_arena.bots.base import BotError
from bot_arena.games import files as user_files

_MODULE_ATTR = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


def from_file(path: str, name: str | None = None) -> BotRef:
    """A bot module from a ``.py`` file (``file.py`` or ``file.py:Attr``), source read now."""
    parsed = file_target(path)
    if parsed is None:
        raise BotSpecError(f"bot file {path!r} is not a .py file")
    file_name, attr = parsed
    file = Path(file_name).expanduser()
    try:
        source = user_files.read_text(file, user_files.BOT)
    except user_files.FileRefused as exc:
        raise BotSpecError(str(exc)) from None
    target = str(file.resolve()) + (f":{attr}" if attr else "")
    version, files = versions.python_file(file, source)
    return BotRef(name or file.stem, MODULE, target, source, version, files)


ARCHIVES = (".zip", ".tar", ".tar.gz", ".tgz")
MAIN = "main.py"  # a bot given as a folder or an archive: its entry file (Kaggle's name)


def from_bundle(spec: str) -> BotRef:
    """A multi-file bot given as a folder or an archive (.zip, .tar, .tar.gz) holding
    ``main.py`` (at its top, or in its one top-level folder), named after the folder or the
    archive. An archive is unpacked once, by its contents' hash, into a private folder."""
    path = Path(spec).expanduser()
    if path.is_dir():
        folder = path
        name = path.resolve().name
    elif path.is_file():
        folder = _unpacked(path)
        name = path.name
        for suffix in ARCHIVES:
            name = name.removesuffix(suffix)
    else:
        raise BotSpecError(f"bot archive {spec!r} does not exist")
    main = folder / MAIN
    if not main.is_file():
        inner = [p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")]
        if len(inner) == 1 and (inner[0] / MAIN).is_file():
            main = inner[0] / MAIN
        else:
            raise BotSpecError(f"bot {spec!r} has no {MAIN} (the file a bot folder starts from)")
    return from_file(str(main), name)


def _unpacked(archive: Path) -> Path:
    """The folder ``archive`` is unpacked in (made on first use; nothing may land outside it:
    absolute paths, ``..``, links and devices are refused)."""
    import hashlib
    import shutil
    import tarfile
    import tempfile
    import zipfile

    try:
        kind = user_files.ARCHIVE
        with user_files.open_binary(archive, kind.what, kind.limit()) as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()[:20]
    except user_files.FileRefused as exc:
        raise BotSpecError(str(exc)) from None
    except OSError as exc:
        raise BotSpecError(f"cannot read bot archive {str(archive)!r}: {exc}") from None
    root = Path(tempfile.gettempdir()) / f"arena-bundles-{os.getuid()}"
    root.mkdir(mode=0o700, exist_ok=True)
    target = root / digest
    if target.is_dir():
        return target
    partial = Path(tempfile.mkdtemp(dir=root))
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                for name in zf.namelist():
                    parts = Path(name).parts
                    if Path(name).is_absolute() or ".." in parts:
                        raise BotSpecError(f"bot archive {str(archive)!r}: unsafe path {name!r}")
                zf.extractall(partial)
        elif tarfile.is_tarfile(archive):
            with tarfile.open(archive) as tf:
                tf.extractall(partial, filter="data")
        else:
            raise BotSpecError(f"bot archive {str(archive)!r} is not a zip or tar archive")
        try:
            partial.rename(target)
        except OSError:
            if not target.is_dir():  # else another process unpacked the same archive first
                raise
    except (OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
        raise BotSpecError(f"cannot unpack bot archive {str(archive)!r}: {exc}") from None
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
    return target


def _find_spec(name: str, path: list[str] | None) -> ModuleSpec | None:
    """Where the import system would find module ``name`` (``path``: its parent package's
    folders; None for a top-level name), without importing or running anything."""
    module = sys.modules.get(name)
    if module is not None:  # imported already: nothing runs
        return getattr(module, "__spec__", None)
    if path is not None:
        # PathFinder is told the last part only: for a namespace package it looks up the
        # parent by the full name in sys.modules, and the parent is not imported (the folders
        # to search are ``path`` either way)
        return PathFinder.find_spec(name.rpartition(".")[2], path)
    for finder in sys.meta_path:  # the interpreter's and installed finders, no user code
        find = getattr(finder, "find_spec", None)
        found = None if find is None else find(name, None)
        if found is not None:
            return found  # type: ignore[no-any-return]
    return None


def find_module(module_name: str) -> ModuleSpec | None:
    """The spec of a dotted module found one part at a time, each package's folders searched
    for the next part, so no package's ``__init__.py`` runs in the arena (``importlib``'s
    ``find_spec`` imports the parents); None when it is not found."""
    if module_name in sys.modules:  # imported already (os.path too, an alias)
        try:
            return _find_spec(module_name, None)
        except (ImportError, ValueError, OSError):
            return None
    parts = module_name.split(".")
    path: list[str] | None = None
    found: ModuleSpec | None = None
    for i in range(len(parts)):
        try:
            found = _find_spec(".".join(parts[: i + 1]), path)
        except (ImportError, ValueError, OSError):
            return None
        if found is None:
            return None
        if i < len(parts) - 1:
            if found.submodule_search_locations is None:  # not a package
                return None
            path = list(found.submodule_search_locations)
    return found


def _from_module(spec: str) -> BotRef:
    module_name = spec.partition(":")[0]
    # Like the worker: installed packages first, then the current folder (at the end of the
    # path, so a stray games.py there cannot replace the arena's own packages).
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    found = find_module(module_name)
    if found is None or found.origin is None or not found.has_location:
        raise BotSpecError(f"bot module {module_name!r} cannot be found")
    try:
        source = Path(found.origin).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return pinned(spec, MODULE, spec)
    version = versions.python_module(module_name, source, found.origin)
    return BotRef(spec, MODULE, spec, source, version)


def resolve(spec: str, lookup: Callable[[str], BotRef | None] | None = None) -> BotRef:
    """The bot a spec names, checked enough to fail early with a clear one-line message."""
    spec = spec.strip()
    if not spec:
        raise BotSpecError("empty bot spec")
    if spec.startswith("cmd:"):
        command = spec[4:].strip()
        versions.check_command(command)
        return BotRef(f"cmd:{command}", COMMAND, command, None, versions.command(command))
    kind = next((k for k in ENGINES if spec.startswith(f"{k}:")), None)
    if kind is not None:  # uci: or xboard:
        target = spec[len(kind) + 1 :].strip()
        versions.check_command(shlex.join(split_engine(target)[0]))
        # the options are part of the version: the hashed text is the whole target
        return BotRef(f"{kind}:{target}", kind, target, None, versions.command(target))
    if spec == HUMAN:
        return pinned(HUMAN, HUMAN, HUMAN)
    if file_target(spec) is not None:
        return from_file(spec)
    if os.path.isfile(os.path.join(spec, MAIN)) or spec.endswith((*ARCHIVES, os.sep)):
        return from_bundle(spec)
    if bots.is_builtin(spec):
        try:
            bots.make(spec)
        except BotError as exc:
            raise BotSpecError(str(exc)) from None
        return pinned(spec, BUILTIN, spec)
    if _MODULE_ATTR.match(spec):
        return _from_module(spec)
    if lookup is not None:
        found = lookup(spec)
        if found is not None:
            if found.kind in PROGRAMS:  # a registered program: runnable from here?
                versions.check_command(engine_command(found))
            return found
    raise BotSpecError(
        f"unknown bot {spec!r}: not a built-in ({', '.join(bots.names())}), a .py file, "
        f"a folder or archive with {MAIN}, pkg.module:attr, cmd:<command>, uci:<command>, "
        "xboard:<command> or a registered name"
    )


def anchor_command(command: str) -> str:
    """``command`` with each word (or ``--option=value`` value) that names an existing path
    relative to the current folder made absolute, so that it runs the same from any folder
    (``./engine --book=book.bin`` -> ``/home/me/engines/engine --book=/home/me/...``)."""
    words = []
    for word in versions.split_command(command):
        named = word.startswith(("-", OPTION_PREFIX))  # --book=FILE, option.BookFile=FILE
        option, eq, value = word.partition("=") if named else ("", "", word)
        if value and not os.path.isabs(value) and os.path.exists(value):
            value = os.path.abspath(value)
        words.append(f"{option}{eq}{value}")
    return shlex.join(words)
