"""The README's "From Python" section runs as printed: each ```python block, run as a script
by a fresh interpreter in an empty folder, finishes and prints exactly the ```text block under
it; the tournament, the SPRT, the rating and the ladder each take at most five lines of code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"```python\n(.*?)```\s*```text\n(.*?)```", re.S)


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
def test_a_readme_example_prints_what_the_readme_says(index: int, tmp_path: Path) -> None:
    code, printed = examples()[index]
    script = tmp_path / "example.py"  # a script, as a user runs it (its source is kept)
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, script.name], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == printed, done.stderr
