"""A tree game played by confined bots: each bot's process builds the game again from its
parameters, so it must be able to read the tree file (``Game.input_files``), named as the user
wrote it (a path relative to the current folder) while the bot runs in a private one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot_arena.arena.transport.sandbox import support
from tests import inprocess, needs

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

ROOT = Path(__file__).resolve().parents[2]
FLAGS = ("--json", "--no-save", "--sandbox", "on")
TREE = ROOT / "tests" / "bots" / "data" / "trees" / "textbook-three-by-three.json"


@pytest.mark.timeout(300)
def test_confined_bots_play_a_tree_named_relative_to_the_current_folder(tmp_path: Path) -> None:
    missing = support.probe()[1]
    if missing:
        needs.missing(
            needs.SANDBOX, "this machine cannot confine bots fully: lacks " + ", ".join(missing)
        )
    (tmp_path / "t.json").write_bytes(TREE.read_bytes())
    # the command in this process (its bots are processes of their own, confined as ever): the
    # current folder is the subject, not the arena's process
    done = inprocess.run(
        *["play", "tree", "--tree", "t.json", "-b", "alphabeta", "-b", "minimax", *FLAGS],
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["sandbox"] == "confined"
    assert [seat["fault"] for seat in record["seats"]] == [None, None], record["seats"]
    assert record["termination"] == "normal"
    assert record["params"]["tree"] == str(tmp_path / "t.json")
