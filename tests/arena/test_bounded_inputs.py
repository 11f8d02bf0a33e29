"""Issue 27 through the real command line: every file the arena reads is bounded, game
parameters have limits, and error lines quote a short prefix of what was wrong.

Each hostile input is made here, in ``tmp_path``; each command runs as its own process under a
2.5 GB address-space limit (what the arena would exceed before these guards: 3 GB and a
MemoryError) and a generous timeout (a FIFO read that blocks would hang it), and must end with
one line on stderr and exit status 2, no traceback. The processes are forks of one server that
has started Python and imported the CLI once (tests/forked_cli.py): each ran ``main()`` in a
fresh interpreter before, 0.2 to 0.4 s of CPU of start-up for some 40 commands.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests import inprocess
from tests.forked_cli import commands

pytestmark = pytest.mark.slow

MEMORY_CAP = int(2.5 * (1 << 30))
TIMEOUT = 120  # seconds a refused command may take at most, on the slowest machine
LONGEST_ERROR = 300  # characters: an error line quotes a prefix, never the input whole


def arena(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    """``arena ARGS`` as a process of its own, under the memory cap and the timeout."""
    return commands().run(
        list(args),
        cwd=cwd,
        env={**os.environ, **(env or {})},
        memory_bytes=MEMORY_CAP,
        timeout=TIMEOUT,
    )


def refused(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run ``arena ARGS`` and return its one error line (exit 2, nothing else on stderr)."""
    done = arena(cwd, *args, env=env)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    assert len(lines[0]) <= LONGEST_ERROR, lines[0]
    return lines[0]


@pytest.fixture
def fifo(tmp_path: Path) -> str:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return str(path)


TOURNAMENT = ["tournament", "run", "coins", "--bot", "random", "--bot", "random:seed=1"]


# --- special files: refused at once, never read -------------------------------------------------


@pytest.mark.timeout(2 * TIMEOUT)
@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "."])
def test_rate_refuses_what_is_not_a_regular_file(tmp_path: Path, fifo: str, special: str) -> None:
    line = refused(tmp_path, "rate", special)
    kind = {"/dev/zero": "a device", "fifo": "a FIFO", ".": "a directory"}[special]
    assert f"is {kind}, not a regular file" in line


@pytest.mark.timeout(2 * TIMEOUT)
@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_openings_refuse_what_is_not_a_regular_file(
    tmp_path: Path, fifo: str, special: str
) -> None:
    db = tmp_path / "arena.db"
    line = refused(tmp_path, *TOURNAMENT, "--openings", special, "--db", str(db))
    assert "--openings" in line and "not a regular file" in line
    assert not db.exists()  # checked before anything is stored


@pytest.mark.timeout(2 * TIMEOUT)
def test_tree_positions_and_figures_refuse_a_fifo(tmp_path: Path, fifo: str) -> None:
    assert "is a FIFO" in refused(tmp_path, "analyze", "tree", "--tree", fifo, "-b", "minimax")
    assert "is a FIFO" in refused(tmp_path, "solve", "connect4", "--positions", fifo)
    assert "is a FIFO" in refused(tmp_path, "report", "--figure", fifo, "--db", "x.db")


# --- sizes --------------------------------------------------------------------------------------


@pytest.mark.timeout(2 * TIMEOUT)
def test_a_huge_results_file_is_refused_by_its_size(tmp_path: Path) -> None:
    """A sparse 16 GB file costs no disk; read whole it would exhaust the memory cap."""
    huge = tmp_path / "huge.csv"
    with open(huge, "wb") as fh:
        fh.truncate(16 << 30)
    line = refused(tmp_path, "rate", str(huge))
    assert "larger than its limit of 64 MiB" in line


@pytest.mark.timeout(2 * TIMEOUT)
def test_the_limit_is_settable_and_a_bad_setting_is_one_line(tmp_path: Path) -> None:
    results = tmp_path / "r.csv"
    results.write_text("white,black,result\n" + "a,b,1-0\n" * 200_000)  # 1.6 MB
    small = {"ARENA_MAX_RESULTS_MB": "1"}
    assert "larger than its limit of 1 MiB" in refused(tmp_path, "rate", str(results), env=small)
    bad = refused(tmp_path, "rate", str(results), env={"ARENA_MAX_RESULTS_MB": "lots"})
    assert "$ARENA_MAX_RESULTS_MB: 'lots' is not a size in MiB" in bad
    # within the limit: in this process (no memory cap asked of it)
    ok = inprocess.run(
        "rate", str(results), "--json", cwd=tmp_path, env={"ARENA_MAX_RESULTS_MB": "2"}
    )
    assert ok.returncode == 0, ok.stderr


@pytest.mark.timeout(2 * TIMEOUT)
def test_a_csv_field_over_the_csv_modules_limit_is_one_line(tmp_path: Path) -> None:
    big = tmp_path / "big.csv"
    big.write_text("white,black,result\nsmall,b,1-0\n" + "a" * 200_000 + ",b,1-0\n")
    line = refused(tmp_path, "rate", str(big))
    assert line.startswith(f"error: {big}:3: not CSV (field larger than field limit (16384))")


@pytest.mark.timeout(2 * TIMEOUT)
def test_a_line_longer_than_the_cap_is_one_line(tmp_path: Path) -> None:
    book = tmp_path / "book.txt"
    book.write_text("3\n" + "4" * (2 << 20) + "\n")
    line = refused(tmp_path, *TOURNAMENT, "--openings", str(book), "--db", "a.db")
    assert "line 2 is longer than 1 MiB" in line


# --- game parameters ----------------------------------------------------------------------------

BOMBS = [
    (["coins", "-p", "coins=1000000000"], "coins must be <= 10000 (its limit), not 1000000000"),
    (["coins", "-p", "coins=20000", "-p", "max_take=20000"], "must be <= "),
    (["coins", "-p", "max_take=20000"], "max_take must be <= 100 (its limit), not 20000"),
    (["coins", "-p", "players=100000"], "players must be <= 16 (its limit)"),
    (["nim", "-p", "players=100000"], "players must be <= 16 (its limit), not 100000"),
    (["nim", "-p", "piles=1000000000"], "adds up to more than 10000 (its limit)"),
    (["nim", "-p", "piles=" + ",".join(["5"] * 5000)], "lists 5000 numbers; at most 100"),
    (["connect4", "-p", "width=100000"], "width must be <= 9 (its limit)"),
]


@pytest.mark.timeout(4 * TIMEOUT)
@pytest.mark.parametrize(("game", "why"), BOMBS)
def test_game_parameters_are_checked_before_anything_is_built(
    tmp_path: Path, game: list[str], why: str
) -> None:
    play = refused(tmp_path, "play", *game, "-b", "random", "-b", "random", "--no-save")
    analyze = refused(tmp_path, "analyze", *game, "-b", "alphabeta")
    assert why in play and why in analyze


@pytest.mark.timeout(2 * TIMEOUT)
def test_a_position_beyond_the_limits_is_refused(tmp_path: Path) -> None:
    line = refused(tmp_path, "analyze", "nim", "--position", "1000000000,1", "-b", "alphabeta")
    assert "adds up to more than 10000 (its limit)" in line


def test_arena_games_json_shows_the_limits(tmp_path: Path) -> None:
    done = inprocess.run("games", "--json", cwd=tmp_path)  # what it prints, not its process
    assert done.returncode == 0, done.stderr
    listed = {row["game"]: row for row in json.loads(done.stdout)}
    assert listed["coins"]["limits"]["coins"] == {"min": 0, "max": 10_000}
    assert listed["nim"]["limits"]["piles"] == {"max_count": 100, "max_total": 10_000}
    assert listed["nim"]["limits"]["players"] == {"min": 2, "max": 16}
    assert listed["connect4"]["limits"]["width"] == {"min": 1, "max": 9}
    assert listed["tree"]["limits"]["tree"]["max_depth"] == 400
    assert listed["tree"]["limits"]["max_nodes"] == {"min": 1, "max": 10_000_000}


# --- trees --------------------------------------------------------------------------------------


def chain(depth: int) -> object:
    """A tree ``depth`` moves deep: one leaf and one inner node a level."""
    node: object = 1
    for _ in range(depth):
        node = [node, 0]
    return node


@pytest.mark.timeout(2 * TIMEOUT)
def test_a_tree_deeper_than_the_limit_is_one_line_and_400_is_searched(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text(json.dumps(chain(900)))
    line = refused(tmp_path, "analyze", "tree", "--tree", str(deep), "-b", "alphabeta")
    assert "deeper than 400 moves (its limit) at 0/0/0" in line and line.endswith("0/…")
    fits = tmp_path / "fits.json"
    fits.write_text(json.dumps(chain(400)))
    done = arena(tmp_path, "analyze", "tree", "--tree", str(fits), "-b", "alphabeta", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["depth"] == 400


@pytest.mark.timeout(2 * TIMEOUT)
def test_a_json_nested_past_the_parser_is_one_line(tmp_path: Path) -> None:
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "1" + "]" * 100_000)
    line = refused(tmp_path, "analyze", "tree", "--tree", str(nested), "-b", "alphabeta")
    assert "nests its JSON deeper than the parser goes" in line


@pytest.mark.timeout(2 * TIMEOUT)
def test_ten_million_leaves_are_refused_by_the_node_limit(tmp_path: Path) -> None:
    wide = tmp_path / "wide.json"
    with open(wide, "w") as fh:
        fh.write("[" + "0," * (10**7 - 1) + "0]")  # 20 MB
    line = refused(tmp_path, "analyze", "tree", "--tree", str(wide), "-b", "alphabeta")
    assert "more than 1000000 nodes (its limit; -p max_nodes=N raises it)" in line
    small = refused(
        tmp_path, "analyze", "tree", "--tree", str(wide), "-p", "max_nodes=1000", "-b", "minimax"
    )
    assert "larger than its limit" in small  # 32 bytes a node: the file is not even read


# --- error lines quote a prefix -----------------------------------------------------------------


@pytest.mark.timeout(2 * TIMEOUT)
def test_a_long_position_is_quoted_by_a_prefix(tmp_path: Path) -> None:
    line = refused(tmp_path, "analyze", "connect4", "--position", "4" * 5000, "-b", "alphabeta")
    assert "'" + "4" * 60 + "…' (5000 characters)" in line


@pytest.mark.timeout(2 * TIMEOUT)
def test_a_rank_of_5000_digits_is_quoted_by_a_prefix(tmp_path: Path) -> None:
    ranks = tmp_path / "ranks.csv"
    ranks.write_text("match,bot,rank\n1,a,1\n1,b," + "9" * 5000 + "\n")
    line = refused(tmp_path, "rate", str(ranks))
    assert line.endswith("rank must be a whole number, not '" + "9" * 60 + "…' (5000 characters)")


@pytest.mark.timeout(2 * TIMEOUT)
def test_a_bot_file_that_is_a_fifo_or_a_device_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    for bot, kind in (("fifo.py", "a FIFO"), ("zero.py", "a device")):
        line = refused(tmp_path, "play", "coins", "--bot", bot, "--bot", "random", "--no-save")
        assert line == f"error: bot file '{bot}' is {kind}, not a regular file"


@pytest.mark.timeout(2 * TIMEOUT)
def test_a_bot_archive_over_its_limit_is_refused(tmp_path: Path) -> None:
    huge = tmp_path / "huge.zip"
    with open(huge, "wb") as fh:
        fh.truncate(16 << 30)  # sparse: no disk
    line = refused(tmp_path, "play", "coins", "--bot", "huge.zip", "--bot", "random", "--no-save")
    assert (
        line == "error: bot archive 'huge.zip' refused: over 104857600 bytes ($ARENA_ARCHIVE_BYTES)"
    )
