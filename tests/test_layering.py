"""The house runs one way: every import in the source goes to a lower layer (or stays in its own
package), and the installed package list matches the folders.

Layers, lowest first: the game rules, the bots, the match layer (talking to bot processes, the
worker that hosts a bot, the match itself with its records and bot references), the results
database, then what is built on stored results (ratings; tournaments; file formats; reports),
then the Python API, the web server over it and the command line. Imports inside functions
count too: a lazy import is still a dependency, and so is a module named by a string that code
imports: ``import_module("bot_arena.x")`` and the ``"bot_arena.x.y:function"`` targets the
registries and the fork server's jobs load by name. (A name built at run time,
``import_module(variable)``, cannot be seen here.)
"""

from __future__ import annotations

import ast
import functools
import re
import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "bot_arena"
FOLDERS = ("games", "bots", "arena", "db")
#: a ``"module:attribute"`` target of ours, as the registries and the fork server's jobs name them
TARGET = re.compile(rf"{NAMESPACE}(\.\w+)+:\w+(\.\w+)*")
#: the calls that import the module named by their first argument
IMPORTERS = frozenset({"import_module", "__import__"})

# package -> layer; a module may import from its own package or from a lower layer only
LAYERS: dict[str, int] = {
    "games": 0,
    "bots": 1,
    "arena.transport": 2,
    "arena.worker": 3,
    "arena.match": 4,
    "db": 5,
    "arena.ratings": 6,
    "arena.tournament": 7,
    "arena.formats": 7,
    "arena.report": 8,
    "arena.api": 9,
    "arena.server": 10,
    "arena.cli": 11,
}


def package_of(module: str) -> str:
    """The layered package holding ``module`` (a dotted name without the namespace)."""
    parts = module.split(".")
    for size in (2, 1):
        name = ".".join(parts[:size])
        if name in LAYERS:
            return name
    raise AssertionError(f"{module} is in no layer: add its package to LAYERS")


def module_name(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _named_by_string(node: ast.AST) -> list[str]:
    """The module a string names for import: the first argument of ``import_module(...)`` (or
    ``importlib.import_module``, ``__import__``), or a whole ``"bot_arena.x.y:attr"`` target."""
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        first = node.args[0]
        if called in IMPORTERS and isinstance(first, ast.Constant) and isinstance(first.value, str):
            return [first.value]
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and TARGET.fullmatch(node.value)
    ):
        return [node.value.partition(":")[0]]
    return []


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported module without the namespace) for every import of our own packages,
    statements and strings imported by name alike; a bare top-level name (``import games``) is
    reported as ``!games``."""
    try:
        return list(_imports_in(path.read_text(encoding="utf-8")))
    except _RelativeImport as exc:
        raise AssertionError(f"{path}:{exc.args[0]}: relative import") from None


class _RelativeImport(Exception):
    """A relative import at line ``args[0]``."""


@functools.cache
def _imports_in(text: str) -> tuple[tuple[int, str], ...]:
    """``imports`` of a module's source ``text``, kept: the self-tests check copies of the
    source (each file the same text at another path) and parse only their probes again."""
    tree = ast.parse(text)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        names: list[str] = _named_by_string(node)
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            base = node.module
            # ``from bot_arena.arena import protocol`` imports the module bot_arena.arena.protocol
            names = [f"{base}.{a.name}" for a in node.names] if base.count(".") < 2 else [base]
        elif isinstance(node, ast.ImportFrom) and node.level:
            raise _RelativeImport(node.lineno)
        for name in names:
            top = name.split(".")[0]
            lineno = getattr(node, "lineno", 0)
            if top == NAMESPACE and "." in name:
                found.append((lineno, name.split(".", 1)[1]))
            elif top in FOLDERS:
                found.append((lineno, f"!{name}"))
    return tuple(found)


def sources(root: Path = ROOT) -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (root / folder).rglob("*.py"))


def violations(root: Path = ROOT) -> list[str]:
    bad = []
    for path in sources(root):
        if "migrations" in path.parts and path.parent.name == "versions":
            continue  # Alembic revisions import only alembic and sqlalchemy
        here = module_name(path, root)
        if here == "arena":  # no layer: it only re-exports the Python API, lazily
            assert {t for _, t in imports(path)} <= {
                f"arena.api.{m}" for m in ("errors", "ladders", "play", "rating", "tournaments")
            }, "arena/__init__.py imports the API only"
            continue
        mine = package_of(here)
        for line, target in imports(path):
            where = f"{path.relative_to(root)}:{line}"
            if target.startswith("!"):
                bad.append(f"{where}: imports {target[1:]} outside the {NAMESPACE} namespace")
                continue
            theirs = package_of(target)
            if theirs != mine and LAYERS[theirs] >= LAYERS[mine]:
                bad.append(
                    f"{where}: {mine} (layer {LAYERS[mine]}) imports {target} (layer "
                    f"{LAYERS[theirs]})"
                )
    return bad


def test_imports_run_one_way() -> None:
    assert violations() == []


def source_copy(tmp_path: Path) -> Path:
    """The four source folders' Python files, copied: probes are written there, never into the
    work tree (where a parallel run's other tests would read them)."""
    for folder in FOLDERS:
        shutil.copytree(
            ROOT / folder,
            tmp_path / folder,
            ignore=lambda where, names: [n for n in names if not n.endswith(".py") and "." in n],
        )
    return tmp_path


def test_the_check_sees_an_import_going_up(tmp_path: Path) -> None:
    """The checker itself: an upward import and a bare top-level import are both reported."""
    root = source_copy(tmp_path)
    probe = "from bot_arena.arena.cli import app\nimport db.store\n"
    (root / "games" / "_layering_probe.py").write_text(probe, encoding="utf-8")
    found = [v for v in violations(root) if "_layering_probe" in v]
    assert len(found) == 2, found
    assert "games (layer 0) imports arena.cli (layer 11)" in found[0]
    assert "outside the bot_arena namespace" in found[1]
    assert not (ROOT / "games" / "_layering_probe.py").exists()


def test_the_check_follows_modules_named_by_strings(tmp_path: Path) -> None:
    """``import_module`` with a literal and a ``"module:function"`` target are imports too;
    a module named for ``python -m`` (a process started, nothing imported) and prose are not."""
    root = source_copy(tmp_path)
    probe = (
        "import importlib\n"
        "from importlib import import_module\n"
        'importlib.import_module("bot_arena.arena.tournament.job")\n'
        'import_module("bot_arena.db.store")\n'
        'JOB = "bot_arena.arena.tournament.job:run_forked"\n'
        'import_module("games.chess")\n'
        'SERVER = ["-m", "bot_arena.arena.worker.forkserver_server"]\n'
        '"""see bot_arena.arena.cli:main for the command"""\n'
        'import_module("bot_arena.bots.random_bot")\n'
    )
    (root / "bots" / "_string_probe.py").write_text(probe, encoding="utf-8")
    found = [v.split(": ", 1)[1] for v in violations(root) if "_string_probe" in v]
    assert found == [
        "bots (layer 1) imports arena.tournament.job (layer 7)",
        "bots (layer 1) imports db.store (layer 5)",
        "bots (layer 1) imports arena.tournament.job (layer 7)",
        "imports games.chess outside the bot_arena namespace",
    ], found


def test_every_package_folder_is_installed() -> None:
    """pyproject.toml lists the packages by hand (they are mapped under the namespace): a new
    folder missing from the list would be left out of a wheel."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    folders = {
        f"{NAMESPACE}." + ".".join(init.parent.relative_to(ROOT).parts)
        for folder in FOLDERS
        for init in (ROOT / folder).rglob("__init__.py")
    }
    assert listed == folders
