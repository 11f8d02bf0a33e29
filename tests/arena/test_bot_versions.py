"""A bot's version is the hash of what runs: editing a helper module or a ``cmd:`` program is a
new version (and a tournament will not resume on it unforced); a registered ``cmd:`` bot runs
from any folder; a program that cannot be run is refused before any match, not charged as a
stall. Through the real command line."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot_arena.arena.match.botspec import resolve
from tests import inprocess

# each test runs the arena command (tournaments, several processes): seconds a test
pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parent / "fixtures"

HELPER_BOT = """import helper


def choose_move(game, state, budget):
    return helper.pick(game.legal_moves(state))
"""


def run(*args: str, cwd: Path) -> Any:
    """``arena ARGS`` in ``cwd``, in this process (``tests/inprocess.py``)."""
    return inprocess.run(*args, cwd=cwd)


def add(cwd: Path, spec: str, db: Path) -> dict[str, Any]:
    proc = run(
        "bots", "add", spec, "-n", "mine", "-g", "tictactoe", "--json", "--db", str(db), cwd=cwd
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def test_editing_a_helper_module_makes_a_new_version(tmp_path: Path) -> None:
    """A file bot (not a folder's ``main.py``) is its file and the modules it imports."""
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.py").write_text(HELPER_BOT)
    (folder / "helper.py").write_text("def pick(moves):\n    return moves[0]\n")
    (folder / "unrelated.py").write_text("X = 1\n")  # not imported: not part of the bot
    db = tmp_path / "arena.db"
    first = add(tmp_path, str(folder / "bot.py"), db)
    assert first["created"] and first["game"] == "tictactoe"
    (folder / "unrelated.py").write_text("X = 2\n")
    assert add(tmp_path, str(folder / "bot.py"), db)["created"] is False
    (folder / "helper.py").write_text("def pick(moves):\n    return moves[-1]\n")
    second = add(tmp_path, str(folder / "bot.py"), db)
    assert second["created"] and second["version"] == 2 and second["sha256"] != first["sha256"]


def test_a_folder_bot_is_every_file_of_its_folder(tmp_path: Path) -> None:
    """A folder bot (``main.py``) may read every file of its folder, so each is in its
    version: editing a data file beside it is a new version."""
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "main.py").write_text(HELPER_BOT)
    (folder / "helper.py").write_text("def pick(moves):\n    return moves[0]\n")
    (folder / "weights.txt").write_text("1\n")
    db = tmp_path / "arena.db"
    first = add(tmp_path, str(folder), db)
    (folder / "weights.txt").write_text("2\n")
    second = add(tmp_path, str(folder), db)
    assert second["created"] and second["sha256"] != first["sha256"]


def test_a_single_file_bot_keeps_the_hash_of_its_text() -> None:
    """Versions stored before helpers were hashed stay the same for single-file bots."""
    file = FIXTURES / "first_legal.py"
    ref = resolve(str(file))
    assert ref.sha256 == hashlib.sha256(file.read_bytes()).hexdigest()


def test_a_tournament_does_not_resume_on_an_edited_helper(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "main.py").write_text(HELPER_BOT)
    helper = folder / "helper.py"
    helper.write_text("import time\n\ndef pick(moves):\n    time.sleep(0.2)\n    return moves[0]\n")
    db = tmp_path / "arena.db"
    args = ["tournament", "run", "tictactoe", "--bot", str(folder / "main.py"), "--bot", "random"]
    args += ["--games", "2", "--jobs", "1", "--db", str(db)]
    proc = run(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(db) as conn:  # as if it had been interrupted: one match to play again
        conn.execute("UPDATE matches SET status = 'running' WHERE id = 2")
        conn.execute("UPDATE tournaments SET status = 'running'")
    helper.write_text("def pick(moves):\n    return moves[-1]\n")
    refused = run("tournament", "resume", "1", "--db", str(db), cwd=tmp_path)
    assert refused.returncode == 2 and "main changed since tournament 1" in refused.stderr, (
        refused.stderr
    )
    forced = run("tournament", "resume", "1", "--force", "--db", str(db), cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr


def test_a_cmd_bot_is_its_program_registered_to_run_from_anywhere(tmp_path: Path) -> None:
    engines = tmp_path / "engines"
    engines.mkdir()
    shutil.copy(FIXTURES / "first_legal.sh", engines / "engine.sh")
    (engines / "engine.sh").chmod(0o755)
    db = tmp_path / "arena.db"
    first = add(engines, "cmd:./engine.sh", db)
    # the stored command names the program by its absolute path
    with sqlite3.connect(db) as conn:
        (target,) = conn.execute("SELECT target FROM bot_versions").fetchone()
    assert target == str(engines / "engine.sh")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    played = run(
        "play", "coins", "-b", "mine", "-b", "random", "--json", "--db", str(db), cwd=elsewhere
    )
    assert played.returncode == 0, played.stderr
    assert json.loads(played.stdout)["seats"][0]["fault"] is None
    # the program edited: a new version, though the command line is the same
    with (engines / "engine.sh").open("a") as fh:
        fh.write("# tuned\n")
    second = add(engines, "cmd:./engine.sh", db)
    assert second["created"] and second["sha256"] != first["sha256"]


def test_a_program_that_cannot_be_run_is_refused_before_the_match(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    (tmp_path / "not_executable.sh").write_text("#!/bin/sh\n")
    for spec, why in (
        ("cmd:./missing_engine", "no such file"),
        ("cmd:no-such-program-anywhere --x", "not found on PATH"),
        ("cmd:./not_executable.sh", "not an executable file"),
    ):
        proc = run("play", "tictactoe", "-b", spec, "-b", "random", "--db", str(db), cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        line = proc.stderr.strip()
        assert line.startswith("error: program") and why in line and "\n" not in line, line
    assert not db.exists() or _matches(db) == 0


def test_bots_add_needs_the_game_and_says_which_it_checked(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    bot = str(FIXTURES / "first_legal.py")
    missing = run("bots", "add", bot, "-n", "mine", "--db", str(db), cwd=tmp_path)
    assert missing.returncode == 2 and missing.stderr.startswith("error: --game is required")
    checked = run("bots", "check", bot, "-g", "connect4", cwd=tmp_path)
    assert checked.returncode == 0 and "of connect4" in checked.stdout, checked.stdout


def _matches(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        try:
            return int(conn.execute("SELECT count(*) FROM matches").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def _helper_bot(folder: Path, pick: str = "moves[0]") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "main.py").write_text(HELPER_BOT)
    (folder / "helper.py").write_text(f"def pick(moves):\n    return {pick}\n")
    return folder


def test_a_registered_version_runs_with_the_files_stored_with_it(tmp_path: Path) -> None:
    """Confined as by default: the bot runs from a private copy of its stored files."""
    folder = _helper_bot(tmp_path / "bot")
    db = tmp_path / "arena.db"
    stored = add(tmp_path, str(folder / "main.py"), db)
    with sqlite3.connect(db) as conn:
        (files,) = conn.execute("SELECT files FROM bot_versions").fetchone()
    assert json.loads(files) == [["helper.py", "def pick(moves):\n    return moves[0]\n"]]
    (folder / "helper.py").write_text("raise SystemExit('this helper is not the stored one')\n")
    played = run(
        "play", "tictactoe", "-b", "mine", "-b", "random", "--json", "--db", str(db), cwd=tmp_path
    )
    assert played.returncode == 0, played.stderr
    record = json.loads(played.stdout)
    assert record["seats"][0]["fault"] is None and record["seats"][0]["version"] == stored["sha256"]
    (folder / "helper.py").unlink()  # gone from disk altogether: still the stored version
    again = run(
        "play", "tictactoe", "-b", "mine", "-b", "random", "--json", "--db", str(db), cwd=tmp_path
    )
    assert again.returncode == 0 and json.loads(again.stdout)["seats"][0]["fault"] is None


def test_a_bot_given_as_a_folder_or_an_archive(tmp_path: Path) -> None:
    folder = _helper_bot(tmp_path / "src" / "deep_bot")
    shutil.make_archive(str(tmp_path / "zipped_bot"), "zip", folder)
    shutil.make_archive(str(tmp_path / "tarred_bot"), "gztar", folder.parent)  # one inner folder
    for spec, name in (
        (str(folder), "deep_bot"),
        (str(tmp_path / "zipped_bot.zip"), "zipped_bot"),
        (str(tmp_path / "tarred_bot.tar.gz"), "tarred_bot"),
    ):
        played = run(
            "play", "tictactoe", "-b", spec, "-b", "random", "--json", "--no-save", cwd=tmp_path
        )
        assert played.returncode == 0, (spec, played.stderr)
        seat = json.loads(played.stdout)["seats"][0]
        assert seat["bot"] == name and seat["fault"] is None, (spec, seat)


def test_an_archive_that_would_write_outside_its_folder_is_refused(tmp_path: Path) -> None:
    import zipfile

    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("main.py", HELPER_BOT)
        zf.writestr("../escaped.py", "X = 1\n")
    proc = run("play", "tictactoe", "-b", str(evil), "-b", "random", "--no-save", cwd=tmp_path)
    assert proc.returncode == 2 and "unsafe path '../escaped.py'" in proc.stderr, proc.stderr
    assert not (tmp_path / "escaped.py").exists()
    no_main = tmp_path / "nomain"
    no_main.mkdir()
    (no_main / "bot.py").write_text(HELPER_BOT)
    proc = run("play", "tictactoe", "-b", f"{no_main}/", "-b", "random", "--no-save", cwd=tmp_path)
    assert proc.returncode == 2 and "has no main.py" in proc.stderr, proc.stderr


def test_a_fifo_among_a_bots_files_is_not_read(tmp_path: Path) -> None:
    """Only regular files count in a version: opening a FIFO to hash it would block for ever
    (a bot may talk to the world through one, as the tournament crash tests' bot does)."""
    import os

    folder = tmp_path / "bot"
    (folder / "gate").mkdir(parents=True)
    (folder / "gate" / "__init__.py").write_text("")
    os.mkfifo(folder / "gate" / "tokens")
    (folder / "main.py").write_text("import gate\n" + HELPER_BOT.partition("\n")[2])
    main = str(folder / "main.py")
    code = f"from bot_arena.arena.match.botspec import resolve; print(resolve({main!r}).sha256)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and len(proc.stdout.strip()) == 64, proc.stderr
