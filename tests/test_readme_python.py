"""The README's "From Python" section runs as printed: each ```python block, run as a script
in an empty folder, finishes and prints exactly the ```text block under it; the tournament,
the SPRT, the rating and the ladder each take at most five lines of code.

Each script runs as ``python example.py`` would, as ``__main__`` with its folder first on
``sys.path``, in a process of its own forked from one interpreter that has already imported
what the examples import (tests/forked_cli.py, ``Server.script``): a fresh interpreter spent
about 0.6 s of CPU importing SQLAlchemy, numpy and the API's modules before the first line of
an example did anything. The fork runs the same code: the subject here is what the example
prints, not Python's start-up (tests/api/test_front_door.py checks that ``import
bot_arena.arena`` stays lazy, in a fresh interpreter)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.forked_cli import Server

pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"```python\n(.*?)```\s*```text\n(.*?)```", re.S)


#: what the examples import before they play (each module a fresh interpreter ran them imported,
#: bar the standard library's), so that no fork imports it again
EXAMPLE_MODULES = (
    "bot_arena.arena.api.play",
    "bot_arena.arena.api.rating",
    "bot_arena.arena.api.tournaments",
    "bot_arena.arena.api.ladders",
    "bot_arena.arena.api.new_run",
    "bot_arena.arena.ratings.sprt_stats",
    "bot_arena.arena.ratings.query",
    "bot_arena.arena.match.pool",
    "bot_arena.arena.match.botspec",
    "bot_arena.arena.match.confinement",
    "bot_arena.arena.transport.sandbox.support",
    "bot_arena.arena.tournament.job_handle",
    "bot_arena.arena.tournament.create",
    "bot_arena.arena.tournament.dynamic",
    "bot_arena.arena.tournament.runner",
    "bot_arena.arena.tournament.ladder_runner",
    "bot_arena.arena.formats.results_file",
    "bot_arena.db.session",
    "bot_arena.db.models",
    "sqlalchemy.dialects.sqlite",
    "numpy.ma",
)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    made = Server(preload=EXAMPLE_MODULES, scripts=True)
    try:
        yield made
    finally:
        made.close()


def examples() -> list[tuple[str, str]]:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## From Python\n", 1)[1].split("\n## ", 1)[0]
    return [(code, printed) for code, printed in BLOCK.findall(section)]


def test_the_section_shows_a_tournament_an_sprt_a_rating_and_a_ladder_in_five_lines() -> None:
    found = examples()
    assert len(found) == 5
    for name in ("tournament", "sprt", "rate", "ladder_show"):
        (code,) = [c for c, _ in found if f"import {name}\n" in c or f" {name}\n" in c]
        lines = [line for line in code.splitlines() if line.strip()]
        assert len(lines) <= 5, code


@pytest.mark.timeout(600)
@pytest.mark.parametrize("index", range(5))
def test_a_readme_example_prints_what_the_readme_says(
    index: int, tmp_path: Path, server: Server
) -> None:
    code, printed = examples()[index]
    script = tmp_path / "example.py"  # a script, as a user runs it (its source is kept)
    script.write_text(code, encoding="utf-8")
    done = server.script(script, env=os.environ, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout == printed, done.stderr
