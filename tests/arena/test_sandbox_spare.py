"""Spare processes: the fork server confines a process ahead of time (cgroup, namespaces, mounts,
seccomp) and turns it into the pool's next bot when asked. A bot that starts in a spare must be
confined exactly like one that starts in a fresh fork; a spare that died must not cost the bot
its game; nothing a spare held may outlive the pool."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from bot_arena import games
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import BotPool
from bot_arena.arena.match.record import MoveRecord
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.transport.sandbox import cgroups, confine, support
from bot_arena.arena.transport.sandbox.mode import Mode, SandboxSettings
from tests import needs

pytestmark = pytest.mark.sandbox

LAYERS, _ = support.probe()

REPORTER = '''"""Reports, in its move's info, what its process can see and do."""
import errno, os, socket

from bot_arena.bots.base import Decision, SearchInfo


def _try(action):
    try:
        action()
        return "allowed"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))


def choose_move(game, state, budget):
    def connect():
        socket.create_connection(("127.0.0.1", {port}), timeout=2).close()

    facts = {{
        "pids": sorted(p for p in os.listdir("/proc") if p.isdigit()),
        "env": sorted(os.environ),
        "cwd_is_home": os.getcwd() == os.environ.get("HOME"),
        "read secret": _try(lambda: open({secret!r}).read()),
        "write outside": _try(lambda: open({outside!r}, "w").write("x")),
        "tcp": _try(connect),
        "socketpair": _try(lambda: socket.socketpair()),
        "signal the arena": _try(lambda: os.kill({arena}, 0)),
    }}
    return Decision(game.legal_moves(state)[0], SearchInfo(extra={{"facts": facts}}))
'''


def needs_every_layer() -> None:
    missing = set(confine.LAYERS) - LAYERS
    if missing:
        what = ", ".join(support.WHAT[m] for m in sorted(missing))
        needs.missing(needs.SANDBOX, f"this machine lacks {what}")


def wait_for(condition: Any, what: str, timeout: float = 10.0) -> Any:
    """Poll ``condition`` until it gives something truthy (a real event, with a deadline)."""
    end = time.monotonic() + timeout
    while not (found := condition()):
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)
    return found


def reporters(tmp_path: Path, port: int) -> tuple[Path, Path]:
    secret = tmp_path / "secret.txt"
    secret.write_text("the arena's secret")
    text = REPORTER.format(
        port=port, secret=str(secret), outside=str(tmp_path / "dropped.txt"), arena=os.getpid()
    )
    files = (tmp_path / "bots" / "fresh_one.py", tmp_path / "bots" / "spare_one.py")
    files[0].parent.mkdir()
    for file in files:
        file.write_text(text)
    return files


def stocked(pool: BotPool) -> tuple[int, str, cgroups.Unit]:
    """The spare the pool has stocked for its next process, once it is there: its keeper's
    pid (the one process of the reserved unit whose parent is outside it), its working
    folder and its unit."""
    reserved = pool.confiner._reserved
    assert reserved is not None and reserved[1] is not None, "no spare reserved"
    work, unit = reserved

    def keeper() -> int | None:
        pids = unit.pids()
        for pid in pids:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) not in pids and len(pids) >= 3:
                return pid
        return None

    found: int = wait_for(keeper, "the spare's keeper, init and bot in its unit")
    return found, work, unit


def test_a_bot_started_in_a_spare_is_confined_like_one_started_in_a_fresh_fork(
    tmp_path: Path,
) -> None:
    needs_every_layer()
    listener = socket.create_server(("127.0.0.1", 0))
    fresh_file, spare_file = reporters(tmp_path, listener.getsockname()[1])
    fresh, spare = resolve(str(fresh_file)), resolve(str(spare_file))
    facts: dict[int, dict[str, Any]] = {}

    def on_move(move: MoveRecord) -> None:
        assert move.info is not None
        facts.setdefault(move.seat, move.info["facts"])

    try:
        with BotPool(sandbox=SandboxSettings(Mode.ON)) as pool:
            pool.prestart([fresh])  # a fresh fork: no spare yet; one is stocked behind it
            keeper, _, _ = stocked(pool)
            pool.prestart([spare])
            assert pool.idle[spare][0].pid == keeper  # the spare became the bot
            assert pool.idle[fresh][0].pid != keeper
            record = pool.play(
                games.get("tictactoe"),
                [fresh, spare],
                time_control=TimeControl(move_time=5.0),
                on_move=on_move,
            )
    finally:
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
        listener.close()
    assert all(seat.fault is None for seat in record.seats)
    assert facts[0] == facts[1]  # confined alike
    env = [
        "HOME",
        "LANG",
        "PATH",
        "TMPDIR",
        *(["PYTHONPATH"] if "PYTHONPATH" in os.environ else []),
    ]
    expected = {
        "pids": ["1", "2"],
        "env": sorted(env),
        "cwd_is_home": True,
        "read secret": "EACCES",
        "write outside": "EROFS",
        "tcp": "EACCES",
        "socketpair": "allowed",
        "signal the arena": "ESRCH",
    }
    assert facts[1] == expected
    assert not (tmp_path / "dropped.txt").exists()


def test_a_spare_that_died_gives_way_to_a_fresh_fork(tmp_path: Path) -> None:
    needs_every_layer()
    with BotPool(sandbox=SandboxSettings(Mode.ON)) as pool:
        pool.prestart([resolve("random")])
        _, _, unit = stocked(pool)
        for pid in unit.pids():
            # a process of the unit may end between the listing and the kill (CI saw one)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not unit.pids(), "the killed spare to leave its unit")
        second = resolve("alphabeta:depth=1")
        record = pool.play(
            games.get("tictactoe"),
            [resolve("random"), second],
            time_control=TimeControl(move_time=5.0),
        )
        assert all(seat.fault is None for seat in record.seats)
        assert {move.seat for move in record.moves} == {0, 1}
        # the bot was forked afresh into the unit reserved for the spare
        assert pool.idle[second][0].pid in unit.pids()


def test_nothing_of_an_unused_spare_outlives_its_pool() -> None:
    needs_every_layer()
    with BotPool(sandbox=SandboxSettings(Mode.ON)) as pool:
        pool.prestart([resolve("random")])
        _, work, unit = stocked(pool)
        held = unit.pids()
    assert not os.path.exists(work)
    assert all(not path.exists() for path in unit.paths)
    for pid in held:
        assert not os.path.exists(f"/proc/{pid}") or "Z" in Path(f"/proc/{pid}/stat").read_text()


def test_close_all_but_keeps_descriptor_zero() -> None:
    """Descriptor 0 is what a spare's first pipe gets (it has closed 0, 1 and 2): the keeper's
    status pipe must survive its own cleanup (``os.closerange(0, 0)`` closes everything)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.dup2(w, 0)
            extra = os.dup(w)
            confine.close_all_but(0)
            ok = True
            try:
                os.fstat(extra)
                ok = False
            except OSError:
                pass
            os.write(0, b"kept" if ok else b"leak")
        finally:
            os._exit(0)
    os.close(w)
    assert os.read(r, 16) == b"kept"
    os.close(r)
    os.waitpid(pid, 0)
