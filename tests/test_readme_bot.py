"""The bot of the README's "Write your first bot" section is a bot: checked on every game it
names through the real command line, it plays every seat without a fault."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_bot() -> str:
    section = README.read_text(encoding="utf-8").split("## Write your first bot", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None, "the README's first-bot section has no python block"
    return found.group(1)


def test_the_readme_bot_plays_without_a_fault(tmp_path: Path) -> None:
    bot = tmp_path / "greedy.py"
    bot.write_text(readme_bot())
    assert len(readme_bot().strip().splitlines()) <= 12  # a short example stays short
    arena = [sys.executable, "-m", "bot_arena.arena.cli.app"]
    for game in ("connect4", "tictactoe"):
        proc = subprocess.run(
            [*arena, "bots", "check", str(bot), "--game", game, "--json"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        out = json.loads(proc.stdout)
        assert out["ok"] and out["game"] == game and out["games"] == 2
