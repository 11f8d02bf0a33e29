"""kill -9 of ``arena serve --jobs 1`` (and of every process under it: its ``ladder run``, the
job, the fork server, the bots) while its ladder is in a game: after a restart every game done
before the kill is stored as it was, each game that was open is played and stored once, and
every done game has its two seats once.

The kill happens at a known point: the ladder's gated bot moves only with tokens the test
writes to a FIFO (``fixtures/gated_random.py``); once the FIFO is empty, the bot is waiting
in the middle of a game, and the test kills.

Needs the server to play ladders (``arena serve --jobs``, hserve1's ``server/ladder_play.py``);
skipped, saying so, on a tree without it."""

from __future__ import annotations

import dataclasses
import os
import signal
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import pytest

from bot_arena.arena.server.settings import ServerSettings
from bot_arena.arena.transport.process import descendants
from tests.arena.test_tournament_crash import Gate
from tests.db.dbtest import Db
from tests.server.conftest import Served, start

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        "play_ladders" not in {f.name for f in dataclasses.fields(ServerSettings)},
        reason="arena serve does not play ladders in this tree (hserve1's --jobs not merged)",
    ),
]

LIMIT_S = 180.0  # a guard against a hung run, never a guess at how long something takes


def wait_for(condition: Callable[[], bool], what: str, served: Served) -> None:
    end = time.monotonic() + LIMIT_S
    while time.monotonic() < end:
        if condition():
            return
        assert served.process.poll() is None, served.log.read_text(errors="replace")
        time.sleep(0.02)  # polling with a deadline, not a guess
    raise AssertionError(f"waited {LIMIT_S:g} s for {what}:\n{served.log.read_text()}")


def done(db: Db) -> set[int]:
    return {int(r[0]) for r in db.query("SELECT id FROM matches WHERE status = 'done'")}


def kill_all(served: Served) -> None:
    """SIGKILL to the server and everything under it at once (a crash, not a stop)."""
    pids = [served.process.pid, *descendants(served.process.pid)]
    for pid in pids:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    served.process.wait(30)
    end = time.monotonic() + LIMIT_S
    while any(os.path.exists(f"/proc/{pid}") and _alive(pid) for pid in pids[1:]):
        assert time.monotonic() < end, "processes outlived their SIGKILL"
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_kill_9_in_a_game_then_every_game_stored_once(tmp_path: Path) -> None:
    from bot_arena.arena.api.ladders import ladder_add, ladder_create
    from tests.arena.test_ladder_cli import snapshot

    path = tmp_path / "arena.db"
    db = Db(f"sqlite:///{path}")
    gate = Gate(tmp_path / "gated")
    # a long move time: the bot waiting at the gate is in its time, not faulting
    ladder_create("club", "tictactoe", move_time=600, seed=3, sandbox="off", db=str(path))
    ladder_add("club", ["random", gate.bot], sandbox="off", db=str(path))  # no gate yet
    gate.hold()
    gate.give(12)
    server = start(tmp_path, path, "--jobs", "1")
    try:
        wait_for(lambda: gate.left() == 0 and len(done(db)) >= 1, "the gate to close", server)
        open_ids = {
            int(r[0])
            for r in db.query("SELECT id FROM matches WHERE status IN ('pending', 'running')")
        }
        assert open_ids, "the ladder should have a game in play at the gate"
        kill_all(server)
    finally:
        server.stop()
    before = snapshot(db)
    still_open = {
        int(r[0]) for r in db.query("SELECT id FROM matches WHERE status IN ('pending', 'running')")
    }
    assert open_ids <= still_open | set(before)
    gate.release()
    again = start(tmp_path, path, "--jobs", "1")
    try:
        wait_for(
            lambda: still_open <= done(db) and len(done(db)) >= len(before) + 4,
            "the open games played after the restart",
            again,
        )
    finally:
        again.stop()  # the runner stops as on Ctrl-C
    after = snapshot(db)
    assert all(after[mid] == digest for mid, digest in before.items()), "a done game changed"
    assert still_open <= set(after)
    seats = db.query(
        "SELECT m.id, count(*) FROM matches m JOIN seats s ON s.match_id = m.id "
        "WHERE m.status = 'done' GROUP BY m.id"
    )
    assert {int(mid): int(n) for mid, n in seats} == {mid: 2 for mid in after}
    moves = db.query(
        "SELECT m.id, count(*), count(DISTINCT v.ply) FROM matches m JOIN moves v "
        "ON v.match_id = m.id WHERE m.status = 'done' GROUP BY m.id"
    )
    assert all(n == distinct and n >= 5 for _, n, distinct in moves)  # a whole game, once
