"""``arena rate FILE``: PGN and CSV results through the command line, and the file readers."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.arena.formats.csv_results import parse_csv
from bot_arena.arena.formats.pgn import parse_pgn
from bot_arena.arena.ratings import GameResult, RatingInputError

runner = CliRunner()

PGN = """[Event "test"]
[White "Alpha"]
[Black "Beta"]
[Result "1-0"]

1. e4 e5 2. Nf3 {a comment} Nc6 1-0

[Event "test"]
[White "Beta"]
[Black "Alpha"]
[Result "1/2-1/2"]

1. d4 d5 1/2-1/2

[Event "test"]
[White "Alpha \\"A\\" One"]
[Black "Beta"]
[Result "*"]

1. c4 *

[Event "test"]
[White "Beta"]
[Black "Alpha"]
[Result "0-1"]
1. Nf3 0-1
[White "Alpha"]
[Black "Beta"]
[Result "0-1"]
0-1
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_parse_pgn_reads_tags_and_skips_unfinished() -> None:
    results = parse_pgn(PGN)
    assert results == [
        GameResult(("Alpha", "Beta"), (1, 2)),
        GameResult(("Beta", "Alpha"), (1, 1)),
        GameResult(("Beta", "Alpha"), (2, 1)),
        GameResult(("Alpha", "Beta"), (2, 1)),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[White "a"]\n[Result "1-0"]\n1-0\n', "no Black tag"),
        ('[White "a"]\n[Black "b"]\n[Result "2-0"]\n', "bad result '2-0'"),
        ('[White "a"\n', "malformed tag"),
    ],
)
def test_bad_pgn(text: str, message: str) -> None:
    with pytest.raises(RatingInputError, match=message):
        parse_pgn(text)


def test_parse_csv_both_shapes() -> None:
    two = parse_csv("White, Black ,Result\na,b,1-0\nb,a,1/2-1/2\n\nb,c,*\nc,a,0-1\n")
    assert two == [
        GameResult(("a", "b"), (1, 2)),
        GameResult(("b", "a"), (1, 1)),
        GameResult(("c", "a"), (2, 1)),
    ]
    multi = parse_csv("match,bot,rank\n1,a,1\n1,b,2\n1,c,2\n2,c,1\n2,a,3\n2,b,2\n")
    assert multi == [GameResult(("a", "b", "c"), (1, 2, 2)), GameResult(("c", "a", "b"), (1, 3, 2))]
    for bad, message in [
        ("x,y\n1,2\n", "columns white,black,result or match,bot,rank"),
        ("match,bot,rank\n1,a,first\n1,b,2\n", "rank must be a whole number"),
        ("match,bot,rank\n1,a,1\n", "only one row"),
        ("white,black,result\na,b\n", "expected 3 columns"),
    ]:
        with pytest.raises(RatingInputError, match=message):
            parse_csv(bad)


def test_rate_pgn_json(tmp_path: Path) -> None:
    result = runner.invoke(app, ["rate", write(tmp_path, "games.pgn", PGN), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    by_bot = {r["bot"]: r for r in rows}
    assert set(by_bot) == {"Alpha", "Beta"}
    alpha = by_bot["Alpha"]
    # Alpha: 2 wins, 1 draw, 1 loss = 2.5 / 4 = 62.5%
    assert (alpha["wins"], alpha["draws"], alpha["losses"], alpha["games"]) == (2, 1, 1, 4)
    assert alpha["score"] == pytest.approx(0.625)
    diff = alpha["elo"] - by_bot["Beta"]["elo"]
    assert diff == pytest.approx(-400 * math.log10(1 / 0.625 - 1), abs=1e-6)
    assert alpha["error"] > 0 and alpha["rank"] == 1 and 0.5 < alpha["los"] < 1
    for key in ("bot", "elo", "error", "games", "score"):
        assert key in alpha


def test_rate_csv_formats(tmp_path: Path) -> None:
    path = write(tmp_path, "r.csv", "white,black,result\na,b,1-0\na,b,1-0\nb,a,1-0\na,b,1/2-1/2\n")
    table = runner.invoke(app, ["rate", path, "--wide"])
    assert table.exit_code == 0, table.output
    assert "relative to pool average = 1500" in table.stdout
    assert "W-D-L" in table.stdout and "2-1-1" in table.stdout
    as_csv = runner.invoke(app, ["rate", path, "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert [r["bot"] for r in rows] == ["a", "b"]
    assert float(rows[0]["elo"]) + float(rows[1]["elo"]) == pytest.approx(3000.0)
    md = runner.invoke(app, ["rate", path, "--format", "markdown", "--center", "1000"])
    assert "| bot" in md.stdout and "pool average = 1000" in md.stdout
    anchored = runner.invoke(app, ["rate", path, "--anchor", "b=2000", "--json"])
    assert {r["bot"]: r["elo"] for r in json.loads(anchored.stdout)}["b"] == 2000.0
    elo = runner.invoke(app, ["rate", path, "--method", "elo", "--k", "32"])
    assert "order-dependent" in elo.stdout and "K = 32" in elo.stdout


def test_rate_nplayer_csv(tmp_path: Path) -> None:
    text = "match,bot,rank\n" + "".join(
        f"{m},a,1\n{m},b,2\n{m},c,3\n" if m % 3 else f"{m},b,1\n{m},a,2\n{m},c,2\n"
        for m in range(1, 13)
    )
    result = runner.invoke(app, ["rate", write(tmp_path, "n.csv", text), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["bot"] for r in rows] == ["a", "b", "c"]
    a = rows[0]
    assert a["firsts"] == 8 and a["avg_rank"] == pytest.approx((8 * 1 + 4 * 2) / 12)
    table = runner.invoke(app, ["rate", write(tmp_path, "n.csv", text), "--wide"])
    assert "avg rank" in table.stdout and "1st" in table.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["rate", "missing.pgn"], "no such file"),
        (["rate", "{bad}"], "bad result"),
        (["rate", "{empty}"], "no finished games"),
        (["rate", "{bad}", "--anchor", "x"], "--anchor wants NAME=ELO"),
        (["rate", "{good}", "--anchor", "zed=100"], "anchor bot 'zed' has no rated games"),
        (["rate", "{good}", "--format", "xml"], ""),
    ],
)
def test_rate_bad_input_is_one_line_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    files = {
        "{bad}": write(tmp_path, "bad.csv", "white,black,result\na,b,1:0\n"),
        "{empty}": write(tmp_path, "empty.pgn", '[White "a"]\n[Black "b"]\n[Result "*"]\n'),
        "{good}": write(tmp_path, "good.csv", "white,black,result\na,b,1-0\n"),
    }
    result = runner.invoke(app, [files.get(a, a) for a in args])
    assert result.exit_code == 2, result.output
    if message:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
