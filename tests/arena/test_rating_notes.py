"""The notes of a leaderboard's rows are true of the bot they name, checked against the games.

A pool whose "scored against" graph is not strongly connected is rated with a prior; its rows
say why. ``expected_note`` works the note out from the games alone (who scored against whom,
groups by reachability), and every row of every table must carry exactly that note.
"""

from __future__ import annotations

import json
from itertools import permutations
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.arena.ratings import GameResult, fit_ml
from bot_arena.arena.ratings.outcomes import pair_points
from bot_arena.arena.ratings.table import RatingTable
from tests.arena.test_leaderboard_db import Filler, ref

runner = CliRunner()

# (winner, loser, games): two groups that beat each other round and round, each with a member
# that met nobody outside it; one group in the middle; a bot that won and one that lost it all
GAMES = [
    ("t1", "t2", 2),  # group {t1, t2}: nobody outside scores against it; t2 meets only t1
    ("t2", "t1", 2),
    ("t1", "c", 1),
    ("t1", "e", 1),
    ("e", "f", 2),  # group {e, f}: scored against by t1, scores against c and zero
    ("f", "e", 2),
    ("e", "c", 1),
    ("f", "zero", 1),
    ("c", "d", 2),  # group {c, d}: scores against nobody outside; d (50%) meets only c
    ("d", "c", 2),
    ("ace", "zero", 1),  # ace won every game, zero lost every game
]
EXPECTED = {
    "t1": "group unbeaten by the rest: prior",
    "t2": "prior",
    "ace": "all wins: prior",
    "e": "prior",
    "f": "prior",
    "c": "group scored nothing against the rest: prior",
    "d": "prior",
    "zero": "all losses: prior",
}


def results() -> list[GameResult]:
    return [GameResult((w, lo), (1, 2)) for w, lo, n in GAMES for _ in range(n)]


def reach(edges: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in edges.get(todo.pop(), set()) - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


def expected_note(bot: str, games: list[GameResult]) -> str:
    """The prior's note for ``bot`` worked out from the games alone."""
    scored: dict[str, set[str]] = {}  # a -> the bots a scored against (won, drew or tied)
    scored_by: dict[str, set[str]] = {}
    met: dict[str, set[str]] = {}
    for game in games:
        for a, b in permutations(range(len(game.players)), 2):
            pa, pb = game.players[a], game.players[b]
            if pa == pb:
                continue
            met.setdefault(pa, set()).add(pb)
            if pair_points(game.ranks, a, b) > 0:
                scored.setdefault(pa, set()).add(pb)
                scored_by.setdefault(pb, set()).add(pa)
    pool = reach(met, bot)
    group = reach(scored, bot) & reach(scored_by, bot)
    if group == pool:
        return ""  # strongly connected: no prior
    unbeaten = not any(scored_by.get(x, set()) - group for x in group)
    scoreless = not any(scored.get(x, set()) - group for x in group)
    if len(group) == 1:
        return "all wins: prior" if unbeaten else "all losses: prior" if scoreless else "prior"
    if not met[bot] - group:
        return "prior"  # never met the rest: nothing about the rest is true of it
    if unbeaten:
        return "group unbeaten by the rest: prior"
    return "group scored nothing against the rest: prior" if scoreless else "prior"


def check_notes(table: RatingTable, games: list[GameResult]) -> None:
    for row in table.rows:
        note = row.note.removesuffix("model interval").removesuffix("; ")
        assert note == expected_note(row.bot, games), (row.bot, row.note, row.stats)


def test_the_notes_of_a_pool_with_groups() -> None:
    games = results()
    table = fit_ml(games)
    check_notes(table, games)
    assert {r.bot: r.note for r in table.rows} == EXPECTED
    assert table.row("d").stats.score == 0.5 and table.row("t2").stats.score == 0.5


def test_every_note_through_the_cli(tmp_path: Path) -> None:
    """``arena rate`` (a results file) and ``arena leaderboard`` (a database): the JSON rows
    carry the notes, and the compact table names each bot in the note under it."""
    path = tmp_path / "r.csv"
    path.write_text(
        "white,black,result\n" + "".join(f"{w},{lo},1-0\n" for w, lo, n in GAMES for _ in range(n))
    )
    rated = runner.invoke(app, ["rate", str(path), "--json"])
    assert rated.exit_code == 0, rated.output
    assert {r["bot"]: r["note"] for r in json.loads(rated.stdout)} == EXPECTED

    url = f"sqlite:///{tmp_path / 'n.db'}"
    fill = Filler(url)
    for w, lo, n in GAMES:
        for _ in range(n):
            fill.match("coins", [(ref(w), 1), (ref(lo), 2)])
    board = runner.invoke(app, ["leaderboard", "--db", url, "--json"])
    assert {r["bot"]: r["note"] for r in json.loads(board.stdout)} == EXPECTED
    text = runner.invoke(app, ["leaderboard", "--db", url], env={"COLUMNS": "80"}).stdout
    said: dict[str, str] = {}
    notes = sorted(set(EXPECTED.values()), key=len, reverse=True)  # "prior" ends them all
    for line in unwrapped(text):
        note = next((n for n in notes if line.endswith(f": {n}")), None)
        if line.startswith("note: ") and note is not None:
            for label in line[len("note: ") : -len(f": {note}")].split(", "):
                said[label.split(" (")[0]] = note
    assert said == EXPECTED


def unwrapped(text: str) -> list[str]:
    """The lines of a compact table's text with wrapped prose joined again."""
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("  ") and lines and lines[-1].startswith("note: "):
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines


BOTS = st.sampled_from(["a", "b", "c", "d", "e", "f"])


@st.composite
def a_game(draw: st.DrawFn) -> GameResult:
    seats = draw(st.integers(2, 4))
    players = tuple(draw(BOTS) for _ in range(seats))  # a bot may hold several seats
    ranks = tuple(draw(st.integers(1, seats)) for _ in range(seats))
    return GameResult(players, ranks)


@settings(max_examples=300, deadline=None)
@given(st.lists(a_game(), min_size=1, max_size=14))
def test_every_note_is_true_of_its_bot(games: list[GameResult]) -> None:
    check_notes(fit_ml(games), games)
