"""A fork server given back (``ForkServer.release``) is kept for its thread's next pool of the
same kind, with every process it had started killed; one that died idle, another kind's, another
thread's or a forked child's is never taken up. Real servers and bots throughout."""

from __future__ import annotations

import os
import threading

import pytest
from arena_helpers import alive, assert_no_leftovers, wait_until

from bot_arena import games
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import BotPool
from bot_arena.arena.match.record import Termination
from bot_arena.arena.transport import forkserver_client
from bot_arena.arena.transport.forkserver_client import start_forkserver, wait_for_exit
from bot_arena.arena.transport.process import descendants
from bot_arena.arena.transport.sandbox.mode import Mode, SandboxSettings

BOTS = ["random:seed=1", "random:seed=2"]
WAIT_S = 30.0  # a bound on waits for the kernel, never a guess at how long it takes


@pytest.fixture(autouse=True)
def nothing_kept() -> object:
    """Each test starts and ends with no server kept in this thread."""
    forkserver_client.close_kept()
    yield None
    forkserver_client.close_kept()


def _server_pid(pool: BotPool) -> int:
    server = pool._forkserver()
    assert server is not None and server.process is not None
    return server.process.pid


@pytest.mark.parametrize("mode", [Mode.AUTO, Mode.OFF], ids=["default", "off"])
def test_the_next_pool_of_the_thread_takes_up_the_server_the_last_gave_back(mode: Mode) -> None:
    """Two pools one after the other: the second plays on the first one's server process (no
    new interpreter), the first one's bots all gone, and it gives it back in turn."""
    game = games.get("tictactoe")
    bots = [resolve(spec) for spec in BOTS]
    with BotPool(sandbox=SandboxSettings(mode)) as first:
        pid = _server_pid(first)
        assert first.play(game, bots).termination is Termination.NORMAL
    assert_no_leftovers(first.started_pids)
    assert [s.process.pid for s in forkserver_client.kept_servers() if s.process] == [pid]
    with BotPool(sandbox=SandboxSettings(mode)) as second:
        assert _server_pid(second) == pid
        assert forkserver_client.kept_servers() == []
        assert second.play(game, bots).termination is Termination.NORMAL
    assert_no_leftovers(second.started_pids)
    assert [s.process.pid for s in forkserver_client.kept_servers() if s.process] == [pid]


def test_a_server_given_back_has_killed_every_process_it_started() -> None:
    """Given back while its bots still run (idle seats, and with confined bots the spare made
    for the next one): each is killed, as the server's end would have, and the server lives."""
    game = games.get("tictactoe")
    with BotPool(sandbox=SandboxSettings(Mode.AUTO)) as pool:
        server = pool._forkserver()
        assert server is not None and server.process is not None
        pool.play(game, [resolve(spec) for spec in BOTS])
        started = descendants(server.process.pid)
        assert started  # the two idle seats (and a spare when confined)
        assert set(pool.started_pids) <= set(started)
        server.release()
        assert wait_until(lambda: not any(alive(p) for p in started), WAIT_S), [
            p for p in started if alive(p)
        ]
        assert server.process.poll() is None and server in forkserver_client.kept_servers()
        pool.idle.clear()  # its seats are dead already
        pool._server = None


def test_a_server_that_died_idle_is_closed_not_taken_up() -> None:
    server = start_forkserver()
    assert server is not None and server.process is not None
    server.release()
    server.process.kill()
    assert wait_for_exit(server.process, WAIT_S) is not None
    fresh = start_forkserver()
    assert fresh is not None and fresh is not server and server.closed
    fresh.close()


def test_only_a_server_of_the_same_kind_is_taken_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kind is the preloaded modules and the environment (this process's as it is at the
    start, when none is given: a changed ``PYTHONPATH`` would not be the server's)."""
    plain = start_forkserver()
    assert plain is not None
    plain.release()
    other_env = start_forkserver(env={"PATH": os.defpath})
    assert other_env is not None and other_env is not plain
    other_env.release()
    monkeypatch.setenv("ARENA_KEEP_TEST", "changed")
    changed = start_forkserver()
    assert changed is not None and changed not in (plain, other_env)
    changed.close()
    monkeypatch.delenv("ARENA_KEEP_TEST")
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "another test (call)")  # as at the next test
    assert start_forkserver() is plain
    assert start_forkserver(env={"PATH": os.defpath}) is other_env
    plain.close()
    other_env.close()


def test_at_most_kept_max_servers_are_kept_the_longest_idle_ended_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(forkserver_client, "KEPT_MAX", 2)
    kinds = [None, {"PATH": os.defpath}, {"PATH": "/bin"}]
    servers = [start_forkserver(env=env) for env in kinds]
    assert all(server is not None for server in servers)
    first, second, third = servers
    assert first is not None and second is not None and third is not None
    first.release()
    second.release()
    assert forkserver_client.kept_servers() == [first, second]
    third.release()  # two kept already: the one given back first is ended to make room
    assert forkserver_client.kept_servers() == [second, third] and first.closed
    assert first.process is not None and first.process.poll() is not None  # ended and reaped
    assert start_forkserver(env={"PATH": "/bin"}) is third  # the newest kind is taken up
    third.close()


def test_a_second_server_of_a_kind_kept_already_is_ended() -> None:
    first, second = start_forkserver(), start_forkserver()
    assert first is not None and second is not None and first is not second
    first.release()
    second.release()
    assert forkserver_client.kept_servers() == [first] and second.closed


def test_another_threads_server_is_never_taken_up_and_dies_with_its_thread() -> None:
    """A server dies with the thread that started it (its parent-death signal): kept in that
    thread, it is never handed to another."""
    theirs: list[forkserver_client.ForkServer] = []

    def other_thread() -> None:
        with BotPool() as pool:  # a game played: the server is up (its parent-death signal set)
            pool.play(games.get("tictactoe"), [resolve(spec) for spec in BOTS])
            theirs.append(pool._server)  # type: ignore[arg-type]
        assert theirs == forkserver_client.kept_servers()

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert len(theirs) == 1 and theirs[0].process is not None
    assert forkserver_client.kept_servers() == []  # kept in that thread, not this one
    assert wait_for_exit(theirs[0].process, WAIT_S) is not None  # died with its thread
    ours = start_forkserver()
    assert ours is not None and ours is not theirs[0]
    ours.close()


def test_a_forked_child_takes_up_none_of_its_parents_servers() -> None:
    server = start_forkserver()
    assert server is not None
    server.release()
    pid = os.fork()
    if pid == 0:  # the child: nothing kept, and the parent's server untouched by its exit
        os._exit(0 if forkserver_client.kept_servers() == [] else 1)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert start_forkserver() is server and server.reusable()
    server.close()
