"""What a ``--bot SPEC`` names: a built-in spec, a ``.py`` file, ``pkg.mod:attr``, a ``cmd:``
command line, ``human``, or a name registered in the database (through a lookup callable),
read into a BotRef (its version: the hash of what runs, ``versions``) and checked enough to
fail early with a one-line message (a ``cmd:`` program that cannot be run included).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shlex
import sys
import threading
from collections.abc import Callable, Sequence
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
    UnloadableBot,
    file_target,
    files_from,
    pinned,
)
from bot_arena.arena.match.engines import (
    OPTION_PREFIX,
    engine_command,
    split_engine,
    without_name,
)
from bot_arena.arena.match.names import check_derived
from bot_arena.arena.transport.sandbox import paths
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
    name = name if name is not None else check_derived(file.stem, file_name)
    return loadable(BotRef(name, MODULE, target, source, version, files))


ARCHIVES = (".zip", ".tar", ".tar.gz", ".tgz")
MAIN = paths.MAIN  # a bot given as a folder or an archive: its entry file (Kaggle's name)


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
    check_derived(name, spec)
    main = folder / MAIN
    if not main.is_file():
        inner = [p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")]
        if len(inner) == 1 and (inner[0] / MAIN).is_file():
            main = inner[0] / MAIN
        else:
            raise BotSpecError(f"bot {spec!r} has no {MAIN} (the file a bot folder starts from)")
    return from_file(str(main), name)


def _unpacked(archive: Path) -> Path:
    """The folder ``archive`` is unpacked in, under limits, in the bundle cache (``bundles``:
    nothing may land outside it, a refused archive leaves nothing behind)."""
    from bot_arena.arena.match import bundles

    return bundles.unpacked(archive)


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
        typed = spec[4:].strip()
        versions.check_command(typed)
        command = anchor_command(typed)  # runs the same from the bot's own working folder
        return BotRef(f"cmd:{typed}", COMMAND, command, None, versions.command(command))
    kind = next((k for k in ENGINES if spec.startswith(f"{k}:")), None)
    if kind is not None:  # uci: or xboard:
        label, typed = without_name(spec[len(kind) + 1 :].strip())
        versions.check_command(shlex.join(split_engine(typed)[0]))
        target = anchor_command(typed)
        # the options are part of the version: the hashed text is the whole target (its
        # name= word left out: a name is no part of what runs)
        name = label or f"{kind}:{typed}"
        return BotRef(name, kind, target, None, versions.command(target))
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
        found = lookup(spec)  # UnloadableBot for a stored version that cannot be read
        if found is not None:
            try:
                return loadable(found)
            except BotSpecError as exc:
                raise UnloadableBot(spec, str(exc)) from None
    raise BotSpecError(
        f"unknown bot {spec!r}: not a built-in ({', '.join(bots.names())}), a .py file, "
        f"a folder or archive with {MAIN}, pkg.module:attr, cmd:<command>, uci:<command>, "
        "xboard:<command> or a registered name"
    )


def hash_ahead(specs: Sequence[str]) -> threading.Thread | None:
    """Start reading and hashing the programs ``specs`` run (``cmd:``, ``uci:`` and
    ``xboard:`` bots) on a thread of its own, or None when no spec runs one. A new run starts
    this before it checks its options: its ``resolve`` of those bots then finds each program's
    digest kept (or waits for the reading under way, ``digests``) instead of reading a 47 MB
    engine in line before its engines can start; the hashing itself releases the GIL. The
    thread resolves quietly: whatever is wrong with a spec is said by the ``resolve`` that
    follows, as it would be without it. The caller joins the thread."""
    kinds = ("cmd:", *(f"{kind}:" for kind in ENGINES))
    programs = [spec for spec in specs if spec.strip().startswith(kinds)]
    if not programs:
        return None

    def resolve_quietly() -> None:
        for spec in programs:
            with contextlib.suppress(Exception):  # said again, by the resolve that counts
                resolve(spec)

    thread = threading.Thread(target=resolve_quietly, name="hash-ahead", daemon=True)
    thread.start()
    return thread


def loadable(ref: BotRef) -> BotRef:
    """``ref`` when a pool can start it (BotSpecError else): its stored files stay inside its
    folder, its program can be run from here. The one check of a bot fresh from its files
    (``resolve``, so ``arena bots add`` stores nothing that fails it) and of a registered one
    (read back from the database, maybe by an older release's rules)."""
    try:
        files_from([list(f) for f in ref.files])
    except ValueError as exc:
        raise BotSpecError(str(exc)) from None
    if ref.kind in PROGRAMS:  # a program: runnable from here?
        versions.check_command(engine_command(ref))
    return ref


def resolve_all(
    specs: Sequence[str], lookup: Callable[[str], BotRef | None] | None = None
) -> list[BotRef]:
    """The bots ``specs`` name (``resolve``), with the names of file and folder bots that
    clash told apart by their parent folder (``alice/bot`` and ``bob/bot`` for
    ``alice/bot.py`` and ``bob/bot.py``).

    Only clashing names are lengthened: a bot's name is its key in the database (its versions,
    its rating), so ``bot.py`` keeps the name ``bot`` it always had whenever it is alone, and
    two students' ``bot.py`` from different folders enter as two bots, named so a reader can
    tell which is whose. The same file given twice is still the same bot twice."""
    return distinct_names(specs, [resolve(spec, lookup) for spec in specs])


def distinct_names(specs: Sequence[str], refs: Sequence[BotRef]) -> list[BotRef]:
    """``refs`` (resolved from ``specs``) with clashing file and folder bots' names told
    apart, as ``resolve_all`` says."""
    derived = [r.kind == MODULE and r.name != s.strip() for r, s in zip(refs, specs, strict=True)]
    out = []
    for ref, own in zip(refs, derived, strict=True):
        clash = {r.target for r in refs if r.name == ref.name}
        if own and len(clash) > 1:
            parsed = file_target(ref.target)
            path = Path(parsed[0] if parsed else ref.target)
            folder = path.parent.parent if path.name == MAIN else path.parent
            ref = dataclasses.replace(ref, name=f"{folder.name}/{ref.name}")
        out.append(ref)
    return out


def anchor_command(command: str) -> str:
    """``command`` with each word (or ``--option=value`` value) that names an existing path
    relative to the current folder made absolute, so that it runs the same from any folder
    (``./engine --book=book.bin`` -> ``/home/me/engines/engine --book=/home/me/...``). A
    program named without a ``/`` is looked up on PATH, as a shell does, and stays as it is."""
    words = []
    for i, word in enumerate(versions.split_command(command)):
        named = word.startswith(("-", OPTION_PREFIX))  # --book=FILE, option.BookFile=FILE
        option, eq, value = word.partition("=") if named else ("", "", word)
        on_path = i == 0 and os.sep not in value
        if value and not on_path and not os.path.isabs(value) and os.path.exists(value):
            value = os.path.abspath(value)
        words.append(f"{option}{eq}{value}")
    return shlex.join(words)
