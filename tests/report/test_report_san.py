"""The report shows chess moves in SAN, as ``replay`` does, and the SPRT's settings block wraps
instead of scrolling sideways (issue 32, item 15)."""

from __future__ import annotations

import json
from pathlib import Path

import chess
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app

runner = CliRunner()


def test_report_moves_are_san_and_the_sprt_block_wraps(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    args = ["sprt", "chess", "--bot", "random", "--bot", "random:seed=1", "--max-games", "2"]
    played = runner.invoke(app, [*args, "--max-moves", "3", "--jobs", "1", "--db", db])
    assert played.exit_code == 0, played.output
    page = tmp_path / "report.html"
    made = runner.invoke(app, ["report", "--tournament", "1", "--db", db, "-o", str(page)])
    assert made.exit_code == 0, made.output
    html = page.read_text()
    exported = runner.invoke(app, ["export", "--format", "jsonl", "--db", db])
    for line in exported.stdout.splitlines():
        board, san = chess.Board(), []
        for move in json.loads(line)["moves"]:
            uci = chess.Move.from_uci(move["move"])
            san.append(board.san(uci))
            board.push(uci)
        assert f'"moves": {json.dumps(san)}' in html
    assert "pre.format { background: var(--band); padding: 8px; border-radius: 6px; " \
        "white-space: pre-wrap; overflow-wrap: anywhere; }" in html  # fmt: skip
    assert "SPRT random (NEW) vs random:seed=1 (BASE)" in html
