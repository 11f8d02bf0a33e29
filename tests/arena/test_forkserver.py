"""The fork server: workers forked from it behave as exec'd ones (exit codes, working folder,
environment, nothing inherited), a tournament job's bots die with the job, and a pool whose
server is gone falls back to starting workers with exec. Real processes throughout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from arena_helpers import alive, assert_no_leftovers, fixture, wait_until

from bot_arena import games
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import BotPool, TimeControl
from bot_arena.arena.match.record import Termination
from bot_arena.arena.tournament.job import Job, Plan, encode, write_all
from bot_arena.arena.tournament.job_handle import JOB_MODULE, JOB_TARGET
from bot_arena.arena.transport.forkserver_client import ForkServer, ForkServerError, wait_for_exit
from bot_arena.arena.transport.process import BotProcess, descendants
from bot_arena.arena.transport.sandbox.mode import Mode, SandboxSettings

WORKER = [sys.executable, "-P", "-m", "bot_arena.arena.worker"]
MODES = pytest.mark.parametrize("mode", [Mode.AUTO, Mode.OFF], ids=["default", "off"])
# reports through its move info (stored in the record): nothing written, works confined
PROBE = (
    "import os\n"
    "def choose_move(game, state, budget):\n"
    "    fds = sorted(int(f) for f in os.listdir('/proc/self/fd'))\n"
    "    targets = {f: os.readlink(f'/proc/self/fd/{f}') for f in fds if os.path.exists(\n"
    "        f'/proc/self/fd/{f}')}\n"
    "    return game.legal_moves(state)[0], {\n"
    "        'cwd': os.getcwd(), 'fds': targets, 'sid': os.getsid(0), 'pid': os.getpid(),\n"
    "        'ppid': os.getppid(), 'env': dict(os.environ)}\n"
)


def _stat(pid: int) -> tuple[int, int]:
    """(parent, session) of a live process, from /proc outside any sandbox."""
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    fields = stat[stat.rfind(b")") + 2 :].split()
    return int(fields[1]), int(fields[3])


@MODES
def test_a_forked_worker_starts_clean_in_the_requested_folder_and_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: Mode
) -> None:
    """Unconfined, the fork runs in the referee's folder with its environment; confined, in
    its own private working folder with the clean environment of its plan (none of the
    referee's variables). Either way it is the server's child in a session of its own, and
    holds no descriptor of the referee's or the server's."""
    bot = tmp_path / "probe.py"
    bot.write_text(PROBE)
    folder = tmp_path / "work"
    folder.mkdir()
    leaked = os.open(str(tmp_path / "referee-only"), os.O_CREAT | os.O_WRONLY)  # must not leak
    try:
        with BotPool(sandbox=SandboxSettings(mode)) as pool:
            server = pool._forkserver()
            assert server is not None and server.process is not None
            # asked for after the server started: the fork gets the referee's, not the server's
            monkeypatch.chdir(folder)
            monkeypatch.setenv("PROBE_REFEREE_VAR", "from the referee")
            record = pool.play(games.get("tictactoe"), [resolve(str(bot)), resolve("random")])
            assert record.termination is Termination.NORMAL
            worker = pool.last_pids[0]
            assert worker is not None
            # seen from outside: forked by the server, not exec'd by the referee, and the
            # leader of its own session (as with start_new_session)
            assert _stat(worker) == (server.process.pid, worker)
            confined = pool.confiner.active
        probe = record.moves[0].info
        assert probe is not None and record.moves[0].seat == 0
    finally:
        os.close(leaked)
    if confined:  # its pid, parent and session are its own namespace's: checked outside
        env = probe["env"]
        assert env["HOME"] == env["TMPDIR"] == probe["cwd"] != str(folder)
        assert set(env) <= {"PATH", "LANG", "PYTHONPATH", "HOME", "TMPDIR"}
    else:
        assert probe["cwd"] == str(folder)
        assert probe["env"].get("PROBE_REFEREE_VAR") == "from the referee"
        assert probe["ppid"] == server.process.pid  # forked by the server
        assert (probe["pid"], probe["sid"]) == (worker, worker)
    targets = probe["fds"].values()
    assert not any("referee-only" in t for t in targets)
    assert not any(t.startswith("socket:") for t in targets)  # not the server's channels
    assert not any(t.startswith("anon_inode:") for t in targets)  # nor its pidfds


@pytest.mark.parametrize("forked", [True, False], ids=["forked", "exec"])
@pytest.mark.parametrize(
    ("name", "detail"),
    [("exit3.py", {"exit_code": 3}), ("segfault.py", {"exit_code": -11, "signal": "SIGSEGV"})],
)
def test_both_ways_of_starting_a_worker_report_the_same_exit(
    forked: bool, name: str, detail: dict[str, object]
) -> None:
    with BotPool(forkserver=forked) as pool:
        record = pool.play(games.get("tictactoe"), [fixture(name), resolve("random")])
        assert (pool._server is not None) is forked
    fault = record.seats[0].fault
    assert record.termination is Termination.CRASH and fault is not None
    assert {k: fault.detail.get(k) for k in detail} == detail
    assert_no_leftovers(pool.started_pids)


def test_the_pool_falls_back_to_exec_when_its_server_is_gone() -> None:
    game = games.get("tictactoe")
    bots = [resolve("random:seed=1"), resolve("random:seed=2")]
    with BotPool() as pool:
        server = pool._forkserver()
        assert server is not None and server.process is not None
        server.process.kill()
        assert wait_for_exit(server.process, 30) is not None
        record = pool.play(game, bots)
        assert record.termination is Termination.NORMAL
        assert pool._server is None and not pool.use_forkserver
        assert all(p is not None and alive(p) for p in pool.last_pids)
    assert_no_leftovers(pool.started_pids)


def test_a_dead_server_answers_every_request_with_an_error() -> None:
    server = ForkServer()
    assert server.process is not None
    server.process.kill()
    server.process.wait()
    with pytest.raises(ForkServerError):
        server.spawn(["--builtin", "random"])
    server.close()


def thinking(root: int) -> int | None:
    """The process under ``root`` whose thread is named ``arena-thinking`` (the fixture bot
    inside ``choose_move``), read from /proc outside any sandbox; None while there is none."""
    for pid in descendants(root):
        try:
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
            names = {(task / "comm").read_bytes().strip() for task in tasks}
        except OSError:
            continue
        if b"arena-thinking" in names:
            return pid
    return None


@MODES
def test_the_bots_of_a_killed_job_die_with_it(mode: Mode) -> None:
    """A job process SIGKILLed while its bot thinks (it would never read its closed pipe): the
    server sees the job's channel close and kills every worker the job started (confined: the
    keepers, and with them everything in their namespaces)."""
    server = ForkServer(preload=[JOB_MODULE])
    assert server.process is not None
    to_job_r, to_job_w = os.pipe()
    from_job_r, from_job_w = os.pipe()
    job = server.spawn_job(JOB_TARGET, to_job_r, from_job_w)
    try:
        refs = (fixture("thinking_named.py"), resolve("random"))
        tc = TimeControl(move_time=300.0)
        plan = Plan("tictactoe", {}, refs, tc, sandbox=SandboxSettings(mode))
        write_all(to_job_w, encode({"plan": plan.to_dict()}))
        write_all(to_job_w, encode({"job": Job(1, (0, 1), None, 7).to_dict()}))

        def bots() -> list[int]:
            return [p for p in descendants(server.process.pid) if p != job.pid]  # type: ignore[union-attr]

        assert wait_until(lambda: thinking(server.process.pid), 60), "never asked"  # type: ignore[union-attr]
        workers = bots()
        assert thinking(server.process.pid) in workers
        os.kill(job.pid, signal.SIGKILL)
        assert wait_for_exit(job, 30) == -signal.SIGKILL
        assert wait_until(lambda: not any(alive(p) for p in workers), 30), (
            f"bots {[p for p in workers if alive(p)]} outlived their job"
        )
        # the server itself goes on serving
        process = BotProcess([*WORKER, "--builtin", "random"], forkserver=server)
        process.kill()
    finally:
        os.close(to_job_w)
        os.close(from_job_r)
        server.close()
    assert not alive(server.process.pid)


def test_the_server_leaves_python_chess_to_the_workers_that_play_chess() -> None:
    """Every fork server starts at least once per match; importing python-chess (about 60 ms)
    ahead of its workers would slow every game's first start for the chess games' sake."""
    code = (
        "import sys\n"
        "from bot_arena.arena.worker.forkserver_server import preload\n"
        "preload()\n"
        "print('chess' in sys.modules, 'bot_arena.games.connect4' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]  # the other built-in games are preloaded
