"""tests/forked_cli.py: a fork answers as ``python -m bot_arena.arena.cli.app`` would, within
the memory and the time it is given."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.forked_cli import Server


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    made = Server()
    yield made
    made.close()


def fresh(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot_arena.arena.cli.app", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "args",
    [["play", "--nonsense"], ["rate", "/dev/zero"], ["games"], ["nosuchcommand"]],
)
def test_a_fork_prints_and_exits_as_a_fresh_process(
    server: Server, tmp_path: Path, args: list[str]
) -> None:
    forked = server.run(args, cwd=tmp_path, env=os.environ)
    expected = fresh(args, tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        expected.returncode,
        expected.stdout,
        expected.stderr,
    )


def test_the_working_folder_and_environment_are_the_ones_given(
    server: Server, tmp_path: Path
) -> None:
    (tmp_path / "r.csv").write_text("white,black,result\n" + "a,b,1-0\n" * 200_000)  # 1.6 MB
    env = {**os.environ, "ARENA_MAX_RESULTS_MB": "1"}
    done = server.run(["rate", "r.csv"], cwd=tmp_path, env=env)
    assert done.returncode == 2 and "larger than its limit of 1 MiB" in done.stderr


def test_the_memory_cap_holds_and_the_timeout_kills(server: Server, tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("white,black,result\na,b,1-0\n")
    capped = server.run(["rate", "r.csv", "--json"], cwd=tmp_path, env=os.environ, memory_bytes=1)
    assert capped.returncode != 0  # not one more byte: the command cannot even import numpy
    (tmp_path / "sleeper.py").write_text(
        "import time\n\ndef choose_move(game, state, budget):\n    time.sleep(10**6)\n"
    )
    waits = ["play", "tictactoe", "--bot", "sleeper.py", "--bot", "random", "--move-time"]
    with pytest.raises(subprocess.TimeoutExpired):  # it would wait 600 s for the first move
        server.run([*waits, "600", "--no-save"], cwd=tmp_path, env=os.environ, timeout=1.0)
    after = server.run(["rate", "r.csv", "--json"], cwd=tmp_path, env=os.environ)
    assert after.returncode == 0, after.stderr  # the server goes on after a kill


def test_a_started_command_leads_its_session_until_killed(server: Server, tmp_path: Path) -> None:
    """``start``: the command runs on while the caller polls, leads a session of its own (as
    ``Popen(..., start_new_session=True)``), writes stdout and stderr into one log, and a
    SIGKILL is its status (-9), as ``Popen.wait`` says it; the server goes on after it."""
    (tmp_path / "sleeper.py").write_text(
        "import time\n\ndef choose_move(game, state, budget):\n    time.sleep(10**6)\n"
    )
    args = ["play", "tictactoe", "--bot", "sleeper.py", "--bot", "random"]
    log = tmp_path / "log.txt"
    started = server.start(
        [*args, "--move-time", "600", "--no-save"], cwd=tmp_path, env=os.environ, log=log
    )
    assert started.poll() is None
    assert os.getsid(started.pid) == started.pid and started.pid != server._started().pid
    with pytest.raises(subprocess.TimeoutExpired):
        started.wait(timeout=0.2)
    started.kill()
    assert started.wait(timeout=60) == -9 and started.poll() == -9
    refused = server.start(["play", "--nonsense"], cwd=tmp_path, env=os.environ, log=log)
    assert refused.wait(timeout=60) == 2
    expected = fresh(["play", "--nonsense"], tmp_path)
    assert log.read_text() == expected.stdout + expected.stderr  # stderr into the same log
