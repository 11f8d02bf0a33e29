"""What a confined bot may read: the runtime it needs to run, and its own files.

- ``runtime_paths``: the Python installation (the standard library, the installed packages and
  what their ``.pth`` files add, ``PYTHONPATH``), and the arena's own packages (which an
  editable install keeps in the source tree: the folders themselves, not the tree around them).
- ``python_closure``: a bot file and the files beside it that it imports, followed through the
  imports of those (found by reading the source, never running it): a helper module next to
  the bot works, another bot's file next to it stays closed. A bot that imports by a computed
  name or opens a data file beside it needs ``--allow-read``.
- ``command_paths``: a ``cmd:`` bot's program and every argument that names an existing path.
"""

from __future__ import annotations

import ast
import itertools
import os
import shutil
import site
import sys
import sysconfig
from collections.abc import Iterable
from importlib.util import find_spec
from pathlib import Path

from bot_arena.arena.transport.sandbox.scan import Scan

ARENA_PACKAGES = ("bot_arena.arena", "bot_arena.bots", "bot_arena.games", "bot_arena.db")
_MAX_LISTED = 10_000  # entries of a folder looked at to tell a namespace package
MAIN = "main.py"  # a folder bot's entry file (Kaggle's name): all of its folder is the bot's


def runtime_paths() -> list[str]:
    """The installation's own folders, never the live ``sys.path``: the arena (and a test
    run) adds the current folder and others to it, which a bot must not read through."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable)}
    found.update(sysconfig.get_paths().values())
    sites = [*site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        sites.append(site.getusersitepackages())
    found.update(sites)
    found.update(_pth_folders(sites))  # what .pth files add (other editable installs)
    found.update(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    for name in ARENA_PACKAGES:
        spec = find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            found.update(spec.submodule_search_locations)
    return sorted(_real(p for p in found if os.path.isabs(p) and os.path.exists(p)))


def _pth_folders(sites: Iterable[str]) -> set[str]:
    """The folders that the ``.pth`` files of ``sites`` put on ``sys.path``."""
    found = set()
    for folder in sites:
        try:
            names = [n for n in os.listdir(folder) if n.endswith(".pth")]
        except OSError:
            continue
        for name in names:
            try:
                lines = Path(folder, name).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            for line in lines:
                line = line.strip()
                if line and not line.startswith(("#", "import ", "import\t")):
                    path = os.path.join(folder, line)
                    if os.path.isdir(path):
                        found.add(os.path.abspath(path))
    return found


def _real(paths: Iterable[str]) -> set[str]:
    """Each path and, when it is a symbolic link, where it leads (Landlock tags the target)."""
    out = set()
    for path in paths:
        out.add(path)
        out.add(os.path.realpath(path))
    return out


def python_closure(file: str, folder: str | None = None, scan: Scan | None = None) -> list[str]:
    """``file`` and the modules and packages of ``folder`` (default: the file's own) that it
    imports, transitively; for a folder bot (its file is ``main.py``) the whole folder. Every
    path stays inside the folder: a link that leads out is refused (``ScanError``), and only
    regular files are read. ``scan``: the scan of that folder to use (a new one by default)."""
    base = os.path.abspath(folder or os.path.dirname(os.path.abspath(file)))
    if scan is None:
        scan = Scan(base)
    scan.inside(file)
    if os.path.basename(file) == MAIN:
        return sorted({base, scan.folder})
    return _closure(file, base, scan)


def _closure(file: str, base: str, scan: Scan) -> list[str]:
    """``file`` and the modules and packages of ``base`` it imports, transitively (each path
    as named and where it leads)."""
    todo = [(os.path.abspath(file), scan.inside(file))]
    seen: set[str] = set()
    allowed: set[str] = set()
    while todo:
        current, real = todo.pop()
        if real in seen:
            continue
        seen.add(real)
        allowed.update((current, real))
        for name in _imported_names(real, scan):
            top = name.split(".")[0]
            package = os.path.join(base, top)
            module = package + ".py"
            if _is_package(Path(package)):  # a package: all of it (its own imports are inside)
                allowed.update((package, scan.inside(package)))
            elif os.path.isfile(module):
                todo.append((module, scan.inside(module)))
    return sorted(allowed)


def _is_package(folder: Path) -> bool:
    """A folder Python would import code from: one with ``__init__.py``, or a namespace package
    holding a module or a package. A folder that merely shares an imported name is not one: a
    bot in /tmp that says ``import ray`` must not open /tmp/ray, Ray's session folder."""
    if (folder / "__init__.py").is_file():
        return True
    try:
        children = list(itertools.islice(folder.iterdir(), _MAX_LISTED))
    except OSError:  # not a folder, or not ours to list
        return False
    return any(
        (c.suffix == ".py" and c.is_file()) or (c / "__init__.py").is_file() for c in children
    )


def _imported_names(real: str, scan: Scan) -> list[str]:
    """The modules the file at ``real`` (a real path) imports, read as a regular file only:
    never a FIFO or a device."""
    try:
        tree = ast.parse(scan.read(real), filename=real)
    except (SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                names.append(node.module)
            elif node.level == 1:  # from . import x (a bot inside a package folder)
                names.extend([node.module] if node.module else [a.name for a in node.names])
    return names


def package_paths(module: str, folder: str) -> list[str]:
    """For ``pkg.mod:attr`` bots: the top-level package (or module file) found in ``folder``
    (installed packages are in ``runtime_paths`` already)."""
    top = module.split(".")[0]
    for candidate in (Path(folder) / top, Path(folder) / f"{top}.py"):
        if candidate.is_dir():  # all of the package, and what its modules import beside it
            scan = Scan(folder)
            allowed = {scan.inside(str(candidate)), str(candidate)}
            for source in scan.add_all([str(candidate)]):
                if source.endswith(".py"):
                    allowed.update(_closure(source, scan.folder, scan))
            return sorted(_real(allowed))
        if candidate.is_file():
            scan = Scan(folder)
            scan.inside(str(candidate))
            return _closure(str(candidate), scan.folder, scan)
    return []


def command_paths(argv: list[str]) -> list[str]:
    """A command's program (found on PATH) and the arguments that name existing paths."""
    found: set[str] = set()
    if argv:
        program = shutil.which(argv[0])
        if program:
            found.add(program)
    for arg in argv:
        value = arg.partition("=")[2] if arg.startswith("-") and "=" in arg else arg
        if value and os.path.exists(value):
            found.add(os.path.abspath(value))
    return sorted(_real(found))
