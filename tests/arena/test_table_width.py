"""``arena leaderboard`` and ``arena tournament show`` fit the terminal by default (long names
cut, fewer columns, prose wrapped); ``--wide`` shows every column; JSON, CSV and Markdown keep
every field whatever the width. On a real tournament of bots with long names, one of which
crashes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.arena.cli.tournament_cmd import _crosstable_text

runner = CliRunner()

LONG = [f"a_bot_whose_name_goes_on_and_on_number_{i}" for i in range(6)]
CRASHER = "a_bot_that_raises_on_its_third_move_in_every_game"
FIELD = [*LONG, CRASHER]
FIXTURES = Path(__file__).parent / "fixtures"
BOT = """
import random

def choose_move(game, state, budget):
    return random.Random({seed}).choice(list(game.legal_moves(state)))
"""
COMPACT = ["#", "bot", "Elo", "±95%", "games", "score", "faults"]
WIDE_ONLY = ["W-D-L", "draws", "LOS", "timeouts", "crashes", "illegal", "note"]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """The database URL and the run's standard output."""
    folder = tmp_path_factory.mktemp("width")
    specs: list[str] = []
    for i, name in enumerate(LONG):
        (folder / f"{name}.py").write_text(BOT.format(seed=i))
        specs += ["--bot", str(folder / f"{name}.py")]
    (folder / f"{CRASHER}.py").write_text((FIXTURES / "raise_third.py").read_text())
    specs += ["--bot", str(folder / f"{CRASHER}.py")]
    url = f"sqlite:///{folder / 'w.db'}"
    args = ["tournament", "run", "tictactoe", *specs, "--db", url, "--seed", "5", "-j", "4"]
    result = runner.invoke(app, [*args, "--move-time", "5"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return url, result.stdout


def arena(*args: str, columns: int = 80) -> str:
    result = runner.invoke(app, list(args), env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return result.stdout


def header(text: str, first: str = "bot") -> list[str]:
    """The column names of the first table in ``text`` whose second column is ``first``."""
    line = next(ln for ln in text.splitlines() if re.match(rf"\s*#\s+{first}\s", ln))
    return line.split()


def body(text: str, first: str = "bot") -> list[list[str]]:
    """The rows of that table, cut into cells where its line of dashes has them."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if re.match(rf"\s*#\s+{first}\s", ln)) + 2
    end = lines.index("", start) if "" in lines[start:] else len(lines)
    spans = [m.span() for m in re.finditer("-+", lines[start - 1])]
    return [[line[a:b].strip() for a, b in spans] for line in lines[start:end]]


def widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def shows(name: str, cell: str) -> bool:
    """Whether ``cell`` is ``name``, or ``name`` with its middle cut out for an ellipsis."""
    head, cut, tail = cell.partition("…")
    return cell == name or (bool(cut) and name.startswith(head) and name.endswith(tail))


def test_the_run_ends_with_a_leaderboard_that_fits(played: tuple[str, str]) -> None:
    _, stdout = played
    board = stdout[stdout.index("Leaderboard") :]
    assert widest(board) <= 80
    banner = stdout[: stdout.index("Leaderboard")].strip()  # the progress lines are on stderr
    assert banner.startswith("tournament 1: round-robin of 7 bots") and widest(banner) <= 80
    assert "seed 5" in " ".join(banner.split())
    assert header(board) == COMPACT
    assert "…" in board


@pytest.mark.parametrize("columns", [80, 120])
def test_leaderboard_compact_and_wide(played: tuple[str, str], columns: int) -> None:
    url, _ = played
    rows = json.loads(arena("leaderboard", "--db", url, "--json"))
    text = arena("leaderboard", "--db", url, columns=columns)
    assert widest(text) <= columns
    assert header(text) == COMPACT  # faults: the crasher has some
    crashes = {r["bot"]: r["crashes"] for r in rows}
    assert crashes[CRASHER] > 0 and not any(crashes[b] for b in LONG)
    labels = [f"{r['bot']} ({r['version']})" for r in rows]
    shown = [cells[1] for cells in body(text)]
    for row, label in zip(rows, shown, strict=True):
        name, version = label.rsplit(" ", 1)
        assert shows(row["bot"], name) and version == f"({row['version']})"
        assert ("…" in name) == (columns == 80)  # whole names when there is room
    # the notes under the table name the bots as the table does
    notes = " ".join(text[text.index("\nnote: ") :].split())
    assert all(label in notes for label in shown)
    assert ("…" in text) == (columns == 80)

    wide = arena("leaderboard", "--db", url, "--wide", columns=columns)
    assert [c for c in WIDE_ONLY if c in header(wide)] == WIDE_ONLY
    assert all(label in wide for label in labels) and "…" not in wide
    assert widest(wide) > columns  # every column, whatever the width
    assert arena("leaderboard", "--db", url, "--wide", columns=40) == wide


@pytest.mark.parametrize("columns", [80, 120])
def test_rate_prints_the_same_tables(tmp_path: Path, columns: int) -> None:
    """``arena rate``: results from a file (no versions, no faults), two players and N."""
    names = [f"{name}_played_elsewhere" for name in LONG]
    path = tmp_path / "r.csv"
    games = [(names[i], names[(i + k) % 6]) for i in range(6) for k in (1, 2)]
    path.write_text("white,black,result\n" + "".join(f"{a},{b},1-0\n" for a, b in games))
    text = arena("rate", str(path), columns=columns)
    assert widest(text) <= columns and header(text) == COMPACT[:-1]
    cells = [row[1] for row in body(text)]
    assert len(set(cells)) == 6 and all(any(shows(n, c) for n in names) for c in cells)
    assert ("…" in text) == (columns == 80)
    wide = arena("rate", str(path), "--wide", columns=columns)
    assert "W-D-L" in header(wide) and all(name in wide for name in names)
    three = tmp_path / "n.csv"
    three.write_text("match,bot,rank\n" + "".join(f"1,{n},{i + 1}\n" for i, n in enumerate(names)))
    assert "avg" not in header(arena("rate", str(three), columns=columns))
    assert "avg" in header(arena("rate", str(three), "--wide", columns=columns))


def test_no_faults_column_without_faults(played: tuple[str, str]) -> None:
    url, _ = played
    text = arena("leaderboard", "--db", url, "--bot", LONG[0], "--bot", LONG[1])
    assert header(text) == COMPACT[:-1]


def test_machine_formats_keep_every_field(played: tuple[str, str]) -> None:
    url, _ = played
    for fmt in ("json", "csv", "markdown"):
        narrow = arena("leaderboard", "--db", url, "--format", fmt, columns=40)
        assert narrow == arena("leaderboard", "--db", url, "--format", fmt, "--wide", columns=200)
        assert "…" not in narrow
    rows = json.loads(arena("leaderboard", "--db", url, "--json", columns=40))
    assert set(rows[0]) == {
        *("pool", "rank", "bot", "version", "elo", "error", "games", "points", "score"),
        *("wins", "draws", "losses", "draw_rate", "los", "timeouts", "crashes", "illegal"),
        *("note", "relative_to", "method"),
    }
    markdown = arena("leaderboard", "--db", url, "--format", "markdown", columns=40)
    assert all(re.search(rf"\|\s*{c}\s*\|", markdown) for c in ("W-D-L", "LOS", "timeouts"))


@pytest.mark.parametrize("columns", [50, 80, 120])
def test_show_compact_and_wide(played: tuple[str, str], columns: int) -> None:
    """Settings, standings, then the crosstable in one block or more (50 columns: two)."""
    url, _ = played
    summary = json.loads(arena("tournament", "show", "1", "--db", url, "--json"))
    text = arena("tournament", "show", "1", "--db", url, columns=columns)
    settings, standings, *crosstable = text.rstrip("\n").split("\n\n")
    assert all(widest(block) <= columns for block in [settings, *crosstable])
    assert " ".join(settings.split()).startswith(
        "tournament 1 game tictactoe format round-robin, 2 games per pairing, opening plies 0 "
        "time move 5s seed 5 status done: 42/42 done"
    )
    if columns >= 80:  # 50: the standings' columns alone are wider, whatever the names
        assert widest(text) <= columns
    assert header(standings) == ["#", "bot", "games", "points", "score", "%", "W-D-L", "faults"]
    numbers = [header(block, "crosstable")[2:] for block in crosstable]
    assert [n for block in numbers for n in block] == [str(i + 1) for i in range(len(FIELD))]
    assert (len(crosstable) > 1) == (columns == 50)
    rows = body(standings)
    expected = summary["standings"]
    assert all(shows(s["bot"], cells[1]) for s, cells in zip(expected, rows, strict=True))
    assert [cells[-1] for cells in rows] == [str(sum(s["faults"].values())) for s in expected]
    assert expected[-1]["bot"] == CRASHER and expected[-1]["faults"]["crash"] > 0
    assert ("…" in standings) == (columns < 120)  # whole names when there is room
    assert len({cells[1] for cells in rows}) == len(FIELD)  # cut in the middle: still apart
    for block in crosstable:
        cells = body(block, "crosstable")
        assert all(shows(s["bot"], row[1]) for s, row in zip(expected, cells, strict=True))

    wide = arena("tournament", "show", "1", "--db", url, "--wide", columns=columns)
    _, standings, *crosstable = wide.rstrip("\n").split("\n\n")
    assert body(standings)[-1][-1] == f"crash {expected[-1]['faults']['crash']}"  # by kind
    assert all(s["bot"] in standings for s in expected) and "…" not in wide
    assert len(crosstable) == 1
    assert arena("tournament", "show", "1", "--db", url, "--wide", columns=200) == wide


def test_a_crosstable_too_wide_for_the_terminal_comes_in_blocks() -> None:
    """Fifteen bots: the names are cut as far as they go, then the columns are split; every
    cell is shown once, in its row, under its column's number."""
    names = [f"bot_number_{i}_with_a_long_name" for i in range(15)]
    cross: dict[str, Any] = {
        a: {b: {"points": (i * 7 + j) % 5 / 2, "games": 2} for j, b in enumerate(names) if b != a}
        for i, a in enumerate(names)
    }
    summary = {"standings": [{"bot": n} for n in names], "crosstable": cross}
    text = _crosstable_text(summary, 80)
    assert widest(text) <= 80
    seen: dict[tuple[int, str], str] = {}
    for block in text.split("\n\n"):
        numbers = header(block, "crosstable")[2:]
        rows = body(block, "crosstable")
        assert [int(cells[0]) for cells in rows] == list(range(1, 16))
        for row, cells in enumerate(rows, start=1):
            assert "…" in cells[1] and shows(names[row - 1], cells[1])
            for number, cell in zip(numbers, cells[2:], strict=True):
                seen[(row, number)] = cell
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if a != b:
                cell = cross[a][b]
                assert seen[(i + 1, str(j + 1))] == f"{cell['points']:g}/{cell['games']}"
            else:
                assert seen[(i + 1, str(j + 1))] == "-"
    assert len(seen) == 15 * 15 and len(text.split("\n\n")) > 1


@pytest.mark.parametrize("columns", [50, 80, 120])
def test_crosstable_fits_and_wide_keeps_it_whole(played: tuple[str, str], columns: int) -> None:
    """``arena crosstable`` fits the terminal as ``tournament show`` does (the same code): every
    line within the width, each cell once under its column, the total last; --wide: one piece
    with whole names."""
    url, _ = played
    pairs = json.loads(arena("crosstable", "--db", url, "--json"))
    labels = list(dict.fromkeys(p["bot"] for p in pairs))  # the rows' order
    text = arena("crosstable", "--db", url, columns=columns)
    assert widest(text) <= columns
    blocks = [b for b in text.split("\n\n") if re.search(r"^\s*#\s+bot\s", b, re.M)]
    assert (len(blocks) > 1) == (columns == 50)  # 80: names cut, one block
    assert ("…" in text) == (columns < 120)
    seen: dict[tuple[int, str], str] = {}
    for block in blocks:
        for cells in body(block):
            assert shows(labels[int(cells[0]) - 1], cells[1])
            for number, cell in zip(header(block)[2:], cells[2:], strict=True):
                seen[(int(cells[0]), number)] = cell
    assert [h for b in blocks for h in header(b)[2:]] == [
        *(str(i + 1) for i in range(len(FIELD))),
        "total",
    ]
    for p in pairs:
        row, column = labels.index(p["bot"]) + 1, str(labels.index(p["opponent"]) + 1)
        assert seen[(row, column)] == f"{p['points']:g}/{p['games']}"
    assert all(seen[(i, str(i))] == "-" for i in range(1, len(FIELD) + 1))

    wide = arena("crosstable", "--db", url, "--wide", columns=columns)
    assert "…" not in wide and all(label in wide for label in labels)
    assert len([b for b in wide.split("\n\n") if re.search(r"^\s*#\s+bot\s", b, re.M)]) == 1
