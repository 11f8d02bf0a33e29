"""``--seeding rating`` over ratings of separate pools (issue 32, item 14): each pool's best
bot is seeded before any pool's second, rated bots before unrated ones, so the byes go to the
top seeds and never to the weakest bot of one pool ahead of the best of another."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from bot_arena.arena.api.formats import interleaved
from bot_arena.arena.cli.app import app

runner = CliRunner()


def run(db: str, *args: str) -> str:
    options = ["--jobs", "1", "--move-time", "5", "--seed", "1", "--db", db]
    result = runner.invoke(app, ["tournament", "run", "tictactoe", *args, *options])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_knockout_seeds_pools_by_rank_and_unrated_last(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    # two pools that never met: alphabeta:depth=1 beats random every game (pool 1, random at
    # its bottom); depth 2 and depth 3 draw every game (pool 2)
    run(db, "--bot", "random", "--bot", "alphabeta:depth=1", "--games", "2")
    run(db, "--bot", "alphabeta:depth=2", "--bot", "alphabeta:depth=3", "--games", "2")
    field = ["mcts:iterations=20", "random", "alphabeta:depth=1", "alphabeta:depth=2"]
    field += ["alphabeta:depth=3"]
    bots = [word for spec in field for word in ("--bot", spec)]
    out = run(db, *bots, "--format", "knockout", "--seeding", "rating", "--games", "2", "--json")
    knockout = json.loads(out.strip().splitlines()[-1])["knockout"]
    seeding = knockout["seeding"]
    assert seeding[:2] == ["alphabeta:depth=1", "alphabeta:depth=2"]  # each pool's best
    assert seeding[2:] == ["alphabeta:depth=3", "random", "mcts:iterations=20"], seeding
    first = knockout["rounds"][0]
    byes = [tie["first"] for tie in first if tie["second"] is None]
    assert sorted(byes) == sorted(seeding[:3])  # five bots, eight slots: the top three
    played = [tie for tie in first if tie["second"] is not None]
    assert [(t["first"], t["second"]) for t in played] == [("random", "mcts:iterations=20")]


def test_interleaved_ranks_within_pools_then_elo_then_field_order() -> None:
    rated = {0: (1, 1400.0), 1: (2, 1600.0), 2: (1, 1700.0), 3: (2, 1600.0), 4: (3, 1500.0)}
    assert interleaved(rated) == [2, 1, 4, 3, 0]
