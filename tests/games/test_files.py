"""The one reader of user-named files (games/files.py), the quoting of input in errors
(games/quoting.py) and the declared parameter limits (games/params.py), piece by piece."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest

from bot_arena import games
from bot_arena.games import files
from bot_arena.games.base import GameError
from bot_arena.games.params import Between, bind, limits
from bot_arena.games.quoting import cut, shown
from bot_arena.games.tree import TreeGame

SMALL = files.FileKind("test file", "ARENA_TEST_MAX_MB", 1)


def test_a_regular_file_within_its_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "ok.txt"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\n")
    assert files.read_text(path, SMALL) == "\ufeffone\r\ntwo\n"
    with files.lines(path, SMALL) as lines:
        assert list(lines) == ["one\r\n", "two\n"]  # the byte-order mark dropped


def test_the_read_stops_at_the_limit_whatever_the_size_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that grows after it was measured (here: fstat says it is empty) is still read
    no further than its limit."""
    path = tmp_path / "grows.txt"
    path.write_bytes(b"x\n" * (1 << 20))  # 2 MiB
    real = os.fstat

    def empty(fd: int) -> Any:
        info = real(fd)
        return os.stat_result((info.st_mode, *info[1:6], 0, *info[7:10]))

    monkeypatch.setattr(files.os, "fstat", empty)
    with pytest.raises(files.FileRefused, match="larger than its limit of 1 MiB"):
        files.read_bytes(path, "test file", 1 << 20)
    with (
        pytest.raises(files.FileRefused, match="larger than its limit of 1 MiB"),
        files.lines(path, SMALL) as lines,
    ):
        for _ in lines:
            pass


GROWN = """
import os, resource, sys
from bot_arena.games import files
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
real = os.fstat
files.os.fstat = lambda fd: os.stat_result((real(fd).st_mode, *real(fd)[1:6], 0, *real(fd)[7:10]))
try:
    files.read_bytes(sys.argv[1], "test file", 1 << 20)
except files.FileRefused as exc:
    print(exc)
"""


@pytest.mark.timeout(120)
def test_the_read_itself_is_bounded(tmp_path: Path) -> None:
    """16 GB (sparse) that the size check missed: read whole, it would break a 1 GB cap."""
    huge = tmp_path / "huge"
    with open(huge, "wb") as fh:
        fh.truncate(16 << 30)
    done = subprocess.run(
        [sys.executable, "-c", GROWN, str(huge)], capture_output=True, text=True, timeout=100
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "larger than its limit of 1 MiB" in done.stdout


def test_text_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"fine\n\xe9t\xe9\n")
    with (
        pytest.raises(files.FileRefused, match="line 2 is not utf-8 text"),
        files.lines(path, SMALL) as lines,
    ):
        list(lines)
    with pytest.raises(files.FileRefused, match=r"is not utf-8 text \(byte 5\)"):
        files.read_text(path, SMALL)


def test_the_limit_comes_from_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert SMALL.limit() == 1 << 20
    monkeypatch.setenv("ARENA_TEST_MAX_MB", "0.5")
    assert SMALL.limit() == 1 << 19
    for bad in ("0", "-1", "nan", "lots", "1e300"):
        monkeypatch.setenv("ARENA_TEST_MAX_MB", bad)
        with pytest.raises(files.FileRefused, match=r"\$ARENA_TEST_MAX_MB: .* is not a size"):
            SMALL.limit()


def test_shown_quotes_a_prefix() -> None:
    assert shown("abc") == "'abc'"
    assert shown("x" * 61) == "'" + "x" * 60 + "…' (61 characters)"
    assert shown(12) == "12"
    assert shown(10**70) == "1" + "0" * 59 + "… (71 characters)"
    assert cut("y" * 200) == "y" * 120 + "…"


def test_limits_are_read_from_the_annotations() -> None:
    class Thing:
        def __init__(self, n: Annotated[int, Between(1, 5)] = 1, free: int = 0) -> None:
            pass

    assert limits(Thing) == {"n": Between(1, 5)}
    assert bind("thing", Thing, {"n": "5", "free": "99"}) == {"n": 5, "free": 99}
    with pytest.raises(GameError, match=r"thing: n must be <= 5 \(its limit\), not 6"):
        bind("thing", Thing, {"n": "6"})
    with pytest.raises(GameError, match="thing: n must be >= 1, not 0"):
        bind("thing", Thing, {"n": 0})


def test_an_annotation_that_cannot_be_evaluated_declares_no_limit() -> None:
    class Plugin:
        def __init__(self, n: Unknown = 1) -> None:  # type: ignore[name-defined]  # noqa: F821
            pass

    assert limits(Plugin) == {}
    assert bind("plugin", Plugin, {"n": "3"}) == {"n": "3"}


@pytest.mark.parametrize(
    ("name", "params", "why"),
    [
        ("coins", {"coins": 10**9}, r"coins must be <= 10000 \(its limit\)"),
        ("nim", {"piles": "9999,2"}, r"adds up to more than 10000 \(its limit\)"),
        ("nim", {"piles": "1," * 100 + "1"}, "lists 101 numbers; at most 100"),
        ("rolit", {"size": 28}, r"size must be <= 26 \(its limit\)"),
        ("rolit", {"size": 7}, "size must be even"),
    ],
)
def test_games_check_their_declared_limits(name: str, params: dict[str, Any], why: str) -> None:
    with pytest.raises(GameError, match=why):
        games.get(name, **params)


def test_the_largest_allowed_games_are_built() -> None:
    assert games.get("coins", coins=10_000, max_take=100, players=16).num_players == 16
    nim = games.get("nim", players=16, piles=",".join(["100"] * 100))
    assert len(nim.legal_moves(nim.initial_state())) == 10_000


def test_tree_nodes_and_depth_are_limited_without_recursion() -> None:
    node: Any = 1
    for _ in range(400):
        node = [node, 0]
    deep = TreeGame.from_data(node)
    leaf = deep.parse_position("/".join(["0"] * 400))
    assert deep.is_terminal(leaf) and deep.format_position(leaf).count("/") == 399
    with pytest.raises(GameError, match=r"deeper than 400 moves \(its limit\)"):
        TreeGame.from_data([node, 0])
    with pytest.raises(GameError, match=r"more than 5 nodes \(its limit"):
        TreeGame.from_data([[1, 2], [3, 4]], max_nodes=5)
    assert TreeGame.from_data([[1, 2], [3, 4]], max_nodes=7).legal_moves(0) == (0, 1)
