"""``arena export`` streams: the JSON, CSV and PGN it writes match by match are byte for byte
what it wrote when it built the whole output first (``fixtures/export/``, written by that code
from ``export_db``'s database), ``--format jsonl`` holds the same records a line each, and
``--since``/``--until``/``--tournament`` select in SQL; chunk boundaries and a malformed row
change nothing but that row."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import export_db
import pytest
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.db.exported import ExportFilter, exported_matches
from bot_arena.db.session import make_engine, session_factory

FIXTURES = Path(__file__).parent / "fixtures" / "export"
runner = CliRunner()


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("export") / "arena.db"
    export_db.build(f"sqlite:///{path}")
    return path


def export(db: Path, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["export", "--db", str(db), *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("fmt", ["json", "csv", "pgn"])
@pytest.mark.parametrize(("name", "args"), [("all", ()), ("t1", ("-t", "1")), ("t2", ("-t", "2"))])
def test_byte_for_byte_the_export_of_before(
    database: Path, fmt: str, name: str, args: tuple[str, ...]
) -> None:
    if (name, fmt) == ("all", "pgn"):
        pytest.skip("a PGN export of many games is refused: test_export_pgn_games.py")
    code, out, err = export(database, "-f", fmt, *args)
    assert code == 0, err
    assert out.encode() == (FIXTURES / f"{name}.{fmt}").read_bytes()
    expected_err = FIXTURES / f"{name}.{fmt}.stderr"
    assert err == (expected_err.read_text() if expected_err.exists() else "")


def test_jsonl_holds_the_json_arrays_records_a_line_each(database: Path) -> None:
    code, out, _ = export(database, "-f", "jsonl")
    assert code == 0
    lines = out.split("\n")
    assert lines[-1] == ""  # every line ended, the last one too
    assert [json.loads(line) for line in lines[:-1]] == json.loads(
        (FIXTURES / "all.json").read_text()
    )


def ids_of(out: str) -> list[int]:
    return [json.loads(line)["match"] for line in out.splitlines()]


def test_since_and_until_select_by_start_in_utc(database: Path) -> None:
    # match N started 2023-11-14T22:13:20.125Z + N - 1 days; 7 is void, 11 pending
    assert ids_of(export(database, "-f", "jsonl", "--since", "2023-11-17")[1]) == [
        4,
        5,
        6,
        8,
        9,
        10,
    ]
    until = export(database, "-f", "jsonl", "--until", "2023-11-16T22:13:20.125")[1]
    assert ids_of(until) == [1, 2]  # until is exclusive
    window = ("--since", "2023-11-15T23:13:20+01:00", "--until", "2023-11-19")
    assert ids_of(export(database, "-f", "jsonl", *window)[1]) == [2, 3, 4, 5]
    assert ids_of(export(database, "-f", "jsonl", *window, "-t", "1")[1]) == [2, 4]
    code, out, err = export(database, "-f", "json", "--since", "2030-01-01")
    assert (code, out, err) == (0, "[]\n", "")
    code, out, _ = export(database, "-f", "csv", "--since", "2030-01-01")
    assert out == (FIXTURES / "all.csv").read_text().split("\n", 1)[0] + "\n"


@pytest.mark.parametrize("value", ["yesterday", "2024-13-01", ""])
def test_a_date_that_is_not_iso_is_one_line_and_exit_2(database: Path, value: str) -> None:
    code, out, err = export(database, "--until", value)
    assert code == 2 and out == ""
    assert err.startswith("error: --until takes an ISO date") and err.count("\n") == 1


def test_chunk_boundaries_change_nothing(database: Path) -> None:
    sessions = session_factory(make_engine(f"sqlite:///{database}"))
    with sessions() as session:
        whole = [(m.id, m.record) for m in exported_matches(session, ExportFilter())]
        for chunk in (1, 2, 3):
            assert [(m.id, m.record) for m in exported_matches(session, ExportFilter(), chunk)] == (
                whole
            )
    assert [i for i, _ in whole] == [1, 2, 3, 4, 5, 6, 8, 9, 10]


def test_a_malformed_row_is_left_out_and_said(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    export_db.build(f"sqlite:///{path}")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE seats SET fault = '{not json' WHERE match_id = 4 AND seat = 0")
    code, out, err = export(path, "-f", "jsonl")
    assert code == 0
    assert ids_of(out) == [1, 2, 3, 5, 6, 8, 9, 10]
    assert err.startswith("warning: match 4 left out: ") and err.count("\n") == 1
    expected = [r for r in json.loads((FIXTURES / "all.json").read_text()) if r["match"] != 4]
    assert [json.loads(line) for line in out.splitlines()] == expected
