"""BotPool.prestart: a tournament starts its field's processes at once; the games then use
exactly those processes, and a bot that cannot load still gets its start-up fault."""

from __future__ import annotations

from arena_helpers import assert_no_leftovers, fixture

from bot_arena import games
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import BotPool
from bot_arena.arena.match.record import Termination
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.transport.limits import ResourceLimits

LIMITS = ResourceLimits(memory_mb=512, startup_s=5.0)
TC = TimeControl(move_time=5.0)


def test_prestarted_processes_play_the_games_and_none_is_started_twice() -> None:
    game = games.get("tictactoe")
    a, b, c = resolve("random:seed=1"), resolve("random:seed=2"), resolve("random:seed=3")
    with BotPool(LIMITS) as pool:
        pool.prestart([a, b, c, a])  # each bot once, however often it is listed
        started = list(pool.started_pids)
        assert len(started) == 3
        pool.prestart([a, b])  # already idle: nothing new
        assert pool.started_pids == started
        for pair in ([a, b], [c, a], [b, c]):
            record = pool.play(game, pair, time_control=TC, seed=1)
            assert record.termination is Termination.NORMAL
            assert set(pool.last_pids) <= set(started)
        assert pool.started_pids == started
        by_bot = {ref: pool.idle[ref][0].process.pid for ref in (a, b, c)}
        assert sorted(by_bot.values()) == sorted(started)
    assert_no_leftovers(started)


def test_a_prestarted_bot_that_cannot_load_faults_in_its_game() -> None:
    game = games.get("tictactoe")
    broken, good = fixture("syntax_error.py"), resolve("random")
    with BotPool(LIMITS) as pool:
        pool.prestart([broken, good])
        record = pool.play(game, [broken, good], time_control=TC, seed=1)
        pids = list(pool.started_pids)
    fault = record.seats[0].fault
    assert fault is not None and fault.termination is Termination.STALL
    assert "SyntaxError" in fault.message
    assert record.seats[1].fault is None and record.seats[1].score == 1.0
    assert_no_leftovers(pids)
