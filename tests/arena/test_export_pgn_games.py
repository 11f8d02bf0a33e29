"""``arena export -f pgn`` writes one game's matches: over matches of several games it is one
line naming them and the way out (exit 2, nothing written; a game of more seats, which PGN
cannot hold, is only skipped as before), ``--game NAME`` selects one game's
matches in SQL (every format), and each game's PGN is byte for byte that game's part of what
the export wrote before it refused a mix (``fixtures/export/all.pgn``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.arena.test_export_stream import FIXTURES, export
from tests.arena.test_export_stream import database as database  # the fixture: one built file


def games_of(pgn: str, variant: str) -> str:
    """The games of ``variant`` in a PGN export's text, as the export separates them."""
    games = pgn.split("\n\n[Event ")
    games = games[:1] + ["[Event " + g for g in games[1:]]
    return "\n".join(
        g if g.endswith("\n") else g + "\n" for g in games if f'[Variant "{variant}"]' in g
    )


def test_a_pgn_export_of_many_games_is_one_line_naming_them(database: Path) -> None:
    code, out, err = export(database, "-f", "pgn")
    assert (code, out) == (2, "")
    assert err == (
        "error: these matches are of 3 games ('chess', 'connect4', 'tictactoe') and a "
        "PGN file holds one: choose one with --game NAME (or --tournament N)\n"
    )
    # the other filters apply first
    code, _, err = export(database, "-f", "pgn", "--since", "2023-11-22")
    assert code == 2 and "of 2 games ('chess', 'connect4')" in err
    code, out, _ = export(database, "-f", "pgn", "--since", "2023-11-23")
    assert code == 0 and out.count("[Event ") == 1


@pytest.mark.parametrize("game", ["chess", "tictactoe", "connect4"])
def test_one_games_pgn_is_its_part_of_the_mixed_export_of_before(database: Path, game: str) -> None:
    code, out, err = export(database, "-f", "pgn", "--game", game)
    assert (code, err) == (0, "")
    expected = games_of((FIXTURES / "all.pgn").read_text(), game)
    assert expected.count("[Event ") >= 1
    assert out == expected


def test_game_selects_in_every_format_and_a_game_not_stored_is_exit_2(database: Path) -> None:
    code, out, _ = export(database, "-f", "jsonl", "--game", "tictactoe")
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    everything = json.loads((FIXTURES / "all.json").read_text())
    assert records == [r for r in everything if r["game"] == "tictactoe"] and records
    code, out, err = export(database, "-f", "pgn", "--game", "rolit")  # three seats: none written
    assert (code, out) == (0, "")
    assert err.startswith("warning: 1 matches of more than two players skipped")
    code, out, err = export(database, "-f", "csv", "--game", "go\x1b[2J")
    assert (code, out) == (2, "")
    assert err == (
        "error: no match of game 'go\\x1b[2J' in this database (its games: 'chess', "
        "'connect4', 'rolit', 'tictactoe')\n"
    )


def test_a_whole_games_report_names_an_export_that_runs(database: Path) -> None:
    from bot_arena.arena.report.data import collect
    from bot_arena.db.session import make_engine, session_factory

    engine = make_engine(f"sqlite:///{database}")
    with session_factory(engine)() as session:
        data = collect(session, game="tictactoe", limit=1)
    engine.dispose()
    assert data.rest_command == "arena export --game tictactoe --format pgn"
    code, out, _ = export(database, *data.rest_command.split()[2:])
    assert code == 0 and out.count("[Event ") == 3
