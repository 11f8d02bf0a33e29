"""``tests/inprocess.py`` answers as a real ``arena`` process does, and leaves nothing of one
command behind for the next."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot_arena import games
from tests import inprocess

ARENA = [sys.executable, "-m", "bot_arena.arena.cli.app"]


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (["leaderboard", "--db", "missing.db"], ""),  # a refusal: one error line, exit 2
        (["games", "--nope"], ""),  # a usage error: click's message, exit 2
        (["bots", "list", "--db", "sqlite:///:memory:", "--json"], ""),
        # what the command reads from its standard input: no line, then a line too short
        (["users", "add", "bo", "--password-stdin", "--db", "u.db"], ""),
        (["users", "add", "bo", "--password-stdin", "--db", "u.db"], "short\n"),
    ],
)
def test_the_same_exit_code_and_bytes_as_a_real_process(
    tmp_path: Path, args: list[str], stdin: str
) -> None:
    real = subprocess.run(
        [*ARENA, *args], cwd=tmp_path, input=stdin, capture_output=True, text=True, timeout=120
    )
    here = inprocess.run(*args, cwd=tmp_path, input=stdin)
    assert (here.returncode, here.stdout, here.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    )


def test_the_working_folder_and_environment_are_the_commands_and_then_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, str | None]] = []
    names = games.names

    def spy() -> list[str]:
        seen.append((os.getcwd(), os.environ.get("ARENA_TEST_VAR")))
        os.environ["ARENA_LEFT_BEHIND"] = "1"  # as a command may (Ray's setdefault)
        signal.signal(signal.SIGTERM, lambda *_: None)  # as a tournament does
        return names()

    monkeypatch.setattr(games, "names", spy)
    monkeypatch.delenv("ARENA_TEST_VAR", raising=False)
    before = (os.getcwd(), dict(os.environ), signal.getsignal(signal.SIGTERM))
    done = inprocess.run("games", cwd=tmp_path, env={"ARENA_TEST_VAR": "x"})
    assert done.returncode == 0 and "tictactoe" in done.stdout, done.stderr
    assert seen == [(str(tmp_path), "x")]
    assert (os.getcwd(), dict(os.environ), signal.getsignal(signal.SIGTERM)) == before


def test_a_command_that_raises_is_exit_1_with_the_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> list[str]:
        raise RuntimeError("boom")

    monkeypatch.setattr(games, "names", broken)
    done = inprocess.run("games", cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback (most recent call last)" in done.stderr
    assert done.stderr.rstrip().endswith("RuntimeError: boom"), done.stderr


def test_what_child_processes_write_to_the_inherited_descriptors_is_captured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = games.names

    def noisy() -> list[str]:
        subprocess.run(["sh", "-c", "echo child-out; echo child-err >&2"], check=True)
        return names()

    monkeypatch.setattr(games, "names", noisy)
    done: Any = inprocess.run("games", "--json", cwd=tmp_path, text=False)
    assert done.returncode == 0
    assert done.stdout.endswith(b"child-out\n") and b'"tictactoe"' in done.stdout
    assert done.stderr == b"child-err\n"


def open_files_under(folder: Path) -> list[str]:
    """The files under ``folder`` that this process holds open."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith(str(folder)):
                held.append(target)
    return held


def test_the_commands_database_connections_are_closed_after_it(tmp_path: Path) -> None:
    """As a process's exit would: nothing of the command holds its database open after it,
    and a second command sees the first one's match (the click command reused)."""
    played = inprocess.run("play", "tictactoe", "--no-show", "--db", "arena.db", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    listed = inprocess.run("matches", "--json", "--db", "arena.db", cwd=tmp_path)
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 1, listed.stderr
    assert open_files_under(tmp_path) == []
