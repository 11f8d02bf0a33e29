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


def test_a_started_command_may_keep_the_session_and_write_stderr_apart(
    server: Server, tmp_path: Path
) -> None:
    """``start(..., stderr=PATH, session=False)``: the command stays in the server's session
    (as a plain ``Popen`` leaves it in its caller's), its stderr in the file given, apart from
    stdout's log; and that file is open once ``start`` returns (a pseudo-terminal's end the
    caller closes then stays held by the command)."""
    log, err = tmp_path / "out.txt", tmp_path / "err.txt"
    (tmp_path / "sleeper.py").write_text(
        "import time\n\ndef choose_move(game, state, budget):\n    time.sleep(10**6)\n"
    )
    args = ["play", "tictactoe", "--bot", "sleeper.py", "--bot", "random", "--move-time", "600"]
    started = server.start(
        [*args, "--no-save"], cwd=tmp_path, env=os.environ, log=log, stderr=err, session=False
    )
    assert os.getsid(started.pid) == os.getsid(server._started().pid) != started.pid
    assert err.exists()  # opened before start returned
    started.kill()
    assert started.wait(timeout=60) == -9
    refused = server.start(
        ["play", "--nonsense"], cwd=tmp_path, env=os.environ, log=log, stderr=err, session=False
    )
    assert refused.wait(timeout=60) == 2
    expected = fresh(["play", "--nonsense"], tmp_path)
    assert (log.read_text(), err.read_text()) == (expected.stdout, expected.stderr)


#: what a script sees of how it was started, and how it ends
PROBE = """\
import atexit, json, os, sys

import probe_helper  # found in the script's own folder, first on sys.path

atexit.register(lambda: print("atexit ran", flush=True))
print(json.dumps({
    "name": __name__, "file": __file__, "argv": sys.argv, "path0": sys.path[0],
    "path": sys.path[1:], "flags": repr(sys.flags), "cwd": os.getcwd(),
    "helper": probe_helper.__file__, "env": os.environ.get("PROBE_ENV"),
    "main": sys.modules["__main__"] is sys.modules[__name__],
    "globals": sorted((k, type(v).__name__) for k, v in globals().items() if k[:2] == "__"),
    "loader": [__loader__.name, __loader__.path], "code": sys._getframe().f_code.co_filename,
}))
raise SystemExit(sys.stdin.read() + "the end")
"""


def test_a_script_runs_as_python_runs_it(tmp_path: Path) -> None:
    """``Server.script``: the same ``__name__``, ``__file__``, ``sys.argv``, ``sys.path`` and
    ``sys.flags`` as ``python probe.py`` in its folder, the same output and status (a
    ``SystemExit`` message: on stderr, status 1), its atexit functions run."""
    (tmp_path / "probe.py").write_text(PROBE)
    (tmp_path / "probe_helper.py").write_text("")
    env = {**os.environ, "PROBE_ENV": "given"}
    scripts = Server(preload=["json"], scripts=True)
    try:
        forked = scripts.script(tmp_path / "probe.py", env=env)
    finally:
        scripts.close()
    expected = subprocess.run(
        [sys.executable, "probe.py"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        expected.returncode,
        expected.stdout,
        expected.stderr,
    )
    assert forked.returncode == 1 and forked.stderr == "the end\n"
    assert '"env": "given"' in forked.stdout and forked.stdout.endswith("atexit ran\n")
