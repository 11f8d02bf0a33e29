"""``arena analyze --svg/--dot`` says what it wrote, as ``report`` does (issue 32, item 16):
on stdout after the analysis, on stderr beside ``--json`` (stdout stays one JSON object)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from bot_arena.arena.cli.app import app

runner = CliRunner()
ARGS = ["analyze", "tictactoe", "--position", "x.o/.x./...", "--bot", "minimax"]


def test_analyze_says_what_it_wrote(tmp_path: Path) -> None:
    svg, dot = tmp_path / "t.svg", tmp_path / "t.dot"
    result = runner.invoke(app, [*ARGS, "--svg", str(svg), "--dot", str(dot)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    kb = svg.stat().st_size / 1e3
    assert lines[-1] == f"wrote {svg} (SVG picture of the searched tree, 933 nodes, {kb:.1f} kB)"
    assert lines[-2].startswith(f"wrote {dot} (Graphviz DOT of the searched tree, 933 nodes, ")
    assert "nodes 933" in lines[-3]  # the analysis first


def test_beside_json_the_line_goes_to_stderr(tmp_path: Path) -> None:
    svg = tmp_path / "t.svg"
    result = runner.invoke(app, [*ARGS, "--svg", str(svg), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["move"] == "9"
    assert result.stderr.startswith(f"wrote {svg} (SVG picture")
