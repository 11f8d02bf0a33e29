"""A database on a read-only file system (issue 32, items 10 and 11): read commands open it
read-only (``mode=ro``, and ``immutable`` where its folder cannot be written, so SQLite need not
create the WAL index beside it) and work; ``arena play`` refuses before it plays, exit 2.

Root ignores file permissions, so the folder is made read-only the way that binds root too: a
read-only bind mount, in a mount namespace of the command's own (``unshare -rm``: a user
namespace, as the sandbox tests need)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.db.session import DatabaseOpenError
from bot_arena.db.sqlite_open import unreadable_log
from tests import inprocess
from tests.needs import SANDBOX, skip_unless

# arena commands as processes on a read-only file system: seconds a test
pytestmark = pytest.mark.slow

runner = CliRunner()
# $1 the folder, then the command: bound read-only onto itself, in this process's namespace only
SCRIPT = 'd="$1"; shift; mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" && exec "$@"'


def _can_unshare() -> bool:
    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0
    except OSError:
        return False


needs_unshare = skip_unless(
    _can_unshare(), SANDBOX, "unshare -rm (user and mount namespaces) is not available"
)


def read_only(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` with ``folder`` read-only for it (root included)."""
    arena = [sys.executable, "-m", "bot_arena.arena.cli.app", *args]
    command = ["unshare", "-rm", "sh", "-c", SCRIPT, "sh", str(folder), *arena]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding arena.db with a finished tournament (its WAL merged at close), played
    once a module."""
    folder = tmp_path_factory.mktemp("played")
    db = str(folder / "arena.db")
    args = ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "alphabeta:depth=1"]
    args += ["--games", "2", "--jobs", "1", "--seed", "1", "--db", db]
    # in this process (tests/inprocess.py), which closes the connections the command left
    # open as its exit would: the last one to close merges the WAL into the file
    result = inprocess.run(*args, cwd=Path.cwd())
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["arena.db"]
    return folder


@pytest.fixture
def stored(played: Path, tmp_path: Path) -> Path:
    """A folder of this test's own holding a copy of the played arena.db, and nothing else."""
    folder = tmp_path / "ro"
    folder.mkdir()
    shutil.copyfile(played / "arena.db", folder / "arena.db")
    return folder


@needs_unshare
def test_read_commands_work_on_a_read_only_file_system(stored: Path, tmp_path: Path) -> None:
    db = str(stored / "arena.db")
    before = (stored / "arena.db").read_bytes()
    board = read_only(stored, "leaderboard", "--db", db, "--json")
    assert board.returncode == 0, board.stderr
    assert "alphabeta:depth=1" in board.stdout
    listed = read_only(stored, "matches", "--db", db)
    assert listed.returncode == 0 and "random vs alphabeta:depth=1" in listed.stdout
    page = tmp_path / "report.html"
    report = read_only(stored, "report", "--db", db, "-o", str(page))
    assert report.returncode == 0, report.stderr
    assert report.stdout.startswith(f"wrote {page}") and page.stat().st_size > 0
    assert sorted(p.name for p in stored.iterdir()) == ["arena.db"]
    assert (stored / "arena.db").read_bytes() == before


@needs_unshare
def test_play_refuses_before_playing(stored: Path) -> None:
    db = str(stored / "arena.db")
    played = read_only(
        stored, "play", "tictactoe", "--bot", "random", "--bot", "random", "--db", db
    )
    assert played.returncode == 2, played.stderr
    assert played.stdout == ""  # not a move played, not even the board shown
    assert played.stderr == (
        f"error: database sqlite:///{db} is read-only here: its folder cannot be written (a"
        " read-only file system or folder; unable to open database file); commands that only"
        " read it work\n"
    )
    listed = runner.invoke(app, ["matches", "--db", db, "--json"])
    assert listed.exit_code == 0 and len(listed.stdout.strip().splitlines()) >= 1


def test_a_log_with_commits_in_a_read_only_folder_is_refused(tmp_path: Path) -> None:
    """``immutable`` would read the file without the commits still in its ``-wal``: refused,
    saying so; an empty log (or none) holds nothing to miss."""
    path = tmp_path / "arena.db"
    unreadable_log(path)
    (tmp_path / "arena.db-wal").write_bytes(b"")
    unreadable_log(path)
    (tmp_path / "arena.db-wal").write_bytes(b"x" * 32)
    with pytest.raises(DatabaseOpenError, match=r"last commits are still in arena\.db-wal"):
        unreadable_log(path)
