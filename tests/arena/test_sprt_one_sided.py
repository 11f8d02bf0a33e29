"""An SPRT whose counts hold one outcome only prints what fastchess prints for them: infinite or
undefined estimates said as such, never a large finite number the regularization made up
(issue 32, item 5: 34-0 was "Elo 1199.8 +/- 142.5, nElo 11695.5")."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from arena_helpers import FIXTURES
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.arena.ratings.sprt_stats import SprtSettings, evaluate

runner = CliRunner()
TRI = SprtSettings(0.0, 5.0, statistics="trinomial")


@pytest.mark.parametrize(
    ("counts", "elo", "nelo", "los"),
    [
        ((0, 0, 34), "Elo inf +/- undefined", "nElo inf +/- undefined", "LOS 100.0%"),
        ((34, 0, 0), "Elo -inf +/- undefined", "nElo -inf +/- undefined", "LOS 0.0%"),
        ((0, 34, 0), "Elo 0.0 +/- 0.0", "nElo undefined +/- undefined", "LOS undefined"),
    ],
)
def test_one_outcome_trinomial_is_said_as_fastchess_computes_it(
    counts: tuple[int, int, int], elo: str, nelo: str, los: str
) -> None:
    line = evaluate(TRI, (0,) * 5, counts).line()
    assert f"| {elo} | {nelo} | {los} |" in line, line


def test_pairs_of_one_outcome_and_json_says_null_with_the_text() -> None:
    state = evaluate(SprtSettings(0.0, 5.0), (0, 0, 0, 17, 0), (0, 0, 0))
    # every pair 3/2: the score 3/4 is exact (190.8 Elo, no spread), nElo divides by zero
    assert "Elo 190.8 +/- 0.0 | nElo inf +/- undefined | LOS 100.0%" in state.line()
    data = state.to_dict()
    assert data["nelo"] == {"value": None, "low": None, "high": None, "shown": "inf +/- undefined"}
    assert data["elo"]["value"] == pytest.approx(400 * math.log10(3))
    assert "shown" not in data["elo"]  # finite estimates keep their plain shape
    json.dumps(data, allow_nan=False)  # strict JSON


def test_mixed_counts_keep_their_finite_estimates() -> None:
    state = evaluate(TRI, (0,) * 5, (0, 1, 33))
    assert math.isfinite(state.elo.value) and math.isfinite(state.nelo.error)
    assert "undefined" not in state.line() and "inf" not in state.line()


def test_sprt_cli_all_wins(tmp_path: Path) -> None:
    """NEW wins every game (BASE answers no move): the status line and ``tournament show``
    say the estimates are infinite, their intervals undefined."""
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    base = str(FIXTURES / "returns_99.py")
    args = ["sprt", "tictactoe", "--bot", "random", "--bot", base, "--max-games", "6"]
    result = runner.invoke(app, [*args, "--jobs", "1", "--seed", "3", "--db", db])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())  # the status line may wrap between its fields
    assert "Elo inf +/- undefined" in text and "nElo inf +/- undefined" in text, text
    assert "LOS 100.0%" in text and "1199" not in text
    shown = runner.invoke(app, ["tournament", "show", "1", "--json", "--db", db])
    assert shown.exit_code == 0, shown.output
    sprt = json.loads(shown.stdout)["sprt"]
    assert sprt["trinomial"] == [0, 0, 6]
    assert sprt["elo"]["value"] is None and sprt["elo"]["shown"] == "inf +/- undefined"
    assert sprt["los"] == 1.0
