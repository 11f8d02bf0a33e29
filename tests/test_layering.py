"""The house runs one way: every import in the source goes to a lower layer (or stays in its own
package), and the installed package list matches the folders.

Layers, lowest first: the game rules, the bots, the match layer (talking to bot processes, the
worker that hosts a bot, the match itself with its records and bot references), the results
database, then what is built on stored results (ratings; tournaments; file formats; reports),
then the Python API and the command line over it. Imports inside functions count too: a lazy
import is still a dependency.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "bot_arena"
FOLDERS = ("games", "bots", "arena", "db")

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
    "arena.cli": 10,
}


def package_of(module: str) -> str:
    """The layered package holding ``module`` (a dotted name without the namespace)."""
    parts = module.split(".")
    for size in (2, 1):
        name = ".".join(parts[:size])
        if name in LAYERS:
            return name
    raise AssertionError(f"{module} is in no layer: add its package to LAYERS")


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported module without the namespace) for every import of our own packages;
    a bare top-level name (``import games``) is reported as ``!games``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            base = node.module
            # ``from bot_arena.arena import protocol`` imports the module bot_arena.arena.protocol
            names = [f"{base}.{a.name}" for a in node.names] if base.count(".") < 2 else [base]
        elif isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}:{node.lineno}: relative import")
        for name in names:
            top = name.split(".")[0]
            if top == NAMESPACE and "." in name:
                found.append((node.lineno, name.split(".", 1)[1]))
            elif top in FOLDERS:
                found.append((node.lineno, f"!{name}"))
    return found


def sources() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))


def violations() -> list[str]:
    bad = []
    for path in sources():
        if "migrations" in path.parts and path.parent.name == "versions":
            continue  # Alembic revisions import only alembic and sqlalchemy
        here = module_name(path)
        if here == "arena":  # no layer: it only re-exports the Python API, lazily
            assert {t for _, t in imports(path)} <= {
                f"arena.api.{m}" for m in ("errors", "play", "rating", "tournaments")
            }, "arena/__init__.py imports the API only"
            continue
        mine = package_of(here)
        for line, target in imports(path):
            where = f"{path.relative_to(ROOT)}:{line}"
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


def test_the_check_sees_an_import_going_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker itself: an upward import and a bare top-level import are both reported."""
    fake = ROOT / "games" / "_layering_probe.py"
    fake.write_text("from bot_arena.arena.cli import app\nimport db.store\n", encoding="utf-8")
    try:
        found = [v for v in violations() if "_layering_probe" in v]
    finally:
        fake.unlink()
    assert len(found) == 2, found
    assert "games (layer 0) imports arena.cli (layer 10)" in found[0]
    assert "outside the bot_arena namespace" in found[1]


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
