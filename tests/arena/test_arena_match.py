"""Matches through real worker processes: the shell bot, process reuse, seeds, clocks."""

from __future__ import annotations

import io
import itertools
from typing import Any

import pytest
from arena_helpers import alive, assert_no_leftovers, fixture

from bot_arena import games
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import BotPool, play_match
from bot_arena.arena.match.record import MoveRecord, Termination
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.transport.limits import ResourceLimits

LIMITS = ResourceLimits(memory_mb=512, startup_s=5.0)
TC = TimeControl(move_time=5.0)


def replay(game: Any, moves: list[MoveRecord]) -> Any:
    state = game.initial_state()
    for m in moves:
        state = game.apply(state, game.move_from_text(state, m.move))
    return state


def test_shell_bot_plays_the_first_legal_move_every_time() -> None:
    game = games.get("tictactoe")
    refs = [fixture("first_legal.sh"), resolve("random")]
    with BotPool(LIMITS) as pool:
        record = pool.play(game, refs, time_control=TC, seed=2)
    assert record.termination is Termination.NORMAL
    state = game.initial_state()
    for m in record.moves:
        if m.seat == 0:
            assert m.move == game.format_move(game.legal_moves(state)[0])
        state = game.apply(state, game.move_from_text(state, m.move))
    assert game.is_terminal(state)
    assert [s.rank for s in record.seats] == list(games.ranks_from_utilities(game.utility(state)))
    assert_no_leftovers(pool.started_pids)


def test_record_is_consistent_with_the_game() -> None:
    game = games.get("tictactoe")
    record = play_match(
        game, [resolve("random"), resolve("random")], time_control=TC, seed=9, limits=LIMITS
    )
    state = replay(game, record.moves)
    assert game.format_position(state) == record.final_position
    assert [m.seat for m in record.moves] == [i % 2 for i in range(len(record.moves))]
    assert all(m.time_ms > 0 for m in record.moves)
    utility = game.utility(state)
    assert [s.utility for s in record.seats] == list(utility)
    assert [s.score for s in record.seats] == list(
        games.scores_from_ranks(games.ranks_from_utilities(utility))
    )
    d = record.to_dict()
    assert d["termination"] == "normal" and d["time_control"]["seats"][0]["move_time"] == 5.0
    assert {"bot", "utility", "rank", "score", "fault"} <= set(d["seats"][0])
    assert {"seat", "move", "time_ms", "info"} <= set(d["moves"][0])


def test_same_seed_same_game_fresh_or_reused() -> None:
    game = games.get("tictactoe")
    refs = [resolve("random"), resolve("random")]
    fresh = play_match(game, refs, time_control=TC, seed=42, limits=LIMITS)
    with BotPool(LIMITS) as pool:
        pool.play(game, refs, time_control=TC, seed=1)
        again = pool.play(game, refs, time_control=TC, seed=42)
    assert [m.move for m in again.moves] == [m.move for m in fresh.moves]


def test_processes_are_reused_across_a_series_and_replaced_after_a_fault() -> None:
    game = games.get("tictactoe")
    good, flaky = resolve("random"), fixture("raise_third.py")
    with BotPool(LIMITS) as pool:
        pool.play(game, [good, fixture("first_legal.py")], time_control=TC, seed=1)
        first = list(pool.last_pids)
        pool.play(game, [fixture("first_legal.py"), good], time_control=TC, seed=2)
        second = list(pool.last_pids)
        assert second == first[::-1]  # same processes, seats swapped
        assert len(pool.started_pids) == 2

        faulty = pool.play(game, [flaky, good], time_control=TC, seed=3)
        assert faulty.termination is Termination.CRASH
        crashed = pool.last_pids[0]
        assert crashed is not None and not alive(crashed)
        assert pool.last_pids[1] == first[0]  # the good bot's process lives on

        pool.play(game, [flaky, good], time_control=TC, seed=4)
        assert pool.last_pids[0] not in (crashed, None)
        assert pool.last_pids[1] == first[0]
    assert_no_leftovers(pool.started_pids)


def test_self_play_needs_two_processes() -> None:
    game = games.get("tictactoe")
    ref = resolve("random")
    with BotPool(LIMITS) as pool:
        pool.play(game, [ref, ref], time_control=TC)
        pids = list(pool.last_pids)
        pool.play(game, [ref, ref], time_control=TC)
        assert len(set(pids)) == 2 and set(pool.last_pids) == set(pids)
    assert_no_leftovers(pool.started_pids)


def test_bot_is_told_its_clock_and_deadline() -> None:
    game = games.get("tictactoe")
    refs = [fixture("budget_echo.py"), resolve("random")]
    tc = TimeControl(base=30.0, increment=0.5)
    record = play_match(game, refs, time_control=tc, limits=LIMITS)
    mine = [m for m in record.moves if m.seat == 0]
    assert mine[0].info == {
        "move_time": None,
        "remaining": 30.0,
        "increment": 0.5,
        "time_left": pytest.approx(30.0, abs=5.0),
    }
    for before, after in itertools.pairwise(mine):
        assert before.info is not None and after.info is not None
        # the clock went down by what the arena measured, then up by the increment
        expected = before.info["remaining"] - before.time_ms / 1000 + 0.5
        assert after.info["remaining"] == pytest.approx(expected, abs=1e-5)


def test_per_seat_time_controls_are_recorded() -> None:
    game = games.get("coins", coins=6)
    tcs = [TimeControl(move_time=4.0), TimeControl(base=20.0, increment=1.0)]
    record = play_match(
        game, [resolve("random"), resolve("random")], time_control=tcs, limits=LIMITS
    )
    assert record.time_control == {"seats": [tcs[0].to_dict(), tcs[1].to_dict()]}


def test_start_position_is_respected() -> None:
    game = games.get("coins", coins=10)
    record = play_match(
        game,
        [resolve("random"), resolve("random")],
        time_control=TC,
        start_position="3@1",
        limits=LIMITS,
    )
    assert record.start_position == "3@1"
    assert record.moves[0].seat == 1
    assert sum(int(m.move) for m in record.moves) == 3


def test_on_move_sees_every_move_in_order() -> None:
    game = games.get("tictactoe")
    seen: list[MoveRecord] = []
    record = play_match(
        game,
        [resolve("random"), resolve("random")],
        time_control=TC,
        limits=LIMITS,
        on_move=seen.append,
    )
    assert seen == record.moves


def test_module_attr_and_builtin_spec_bots() -> None:
    game = games.get("coins", coins=7)
    refs = [resolve("bot_arena.bots.random_bot:RandomBot"), resolve("random:seed=5")]
    record = play_match(game, refs, time_control=TC, limits=LIMITS)
    assert record.termination is Termination.NORMAL


def test_human_seat_asks_again_on_bad_input() -> None:
    game = games.get("coins", coins=3)
    ref = resolve("human")
    typed = io.StringIO("7\nabc\n2\n1\n")
    out = io.StringIO()
    with BotPool(LIMITS, terminal=(typed, out)) as pool:
        record = pool.play(game, [ref, fixture("first_legal.py")], time_control=TimeControl())
    # human takes 2, the bot takes 1 (its first legal move): the bot took the last coin
    assert [m.move for m in record.moves] == ["2", "1"]
    assert record.seats[1].rank == 1
    text = out.getvalue()
    assert "legal: 1 2" in text and text.count("> ") == 3


def test_module_runs_in_place_until_it_changes(tmp_path: Any) -> None:
    """An unchanged file runs where it is (``__file__`` works); a file changed after it was
    resolved runs as the resolved version, from a private copy."""
    bot = tmp_path / "whereami.py"
    bot.write_text(
        "import os\n"
        "def choose_move(game, state, budget):\n"
        "    return game.legal_moves(state)[0], {'dir': os.path.dirname(__file__), 'v': 1}\n"
    )
    ref = resolve(str(bot))
    game = games.get("coins", coins=3)
    first = play_match(game, [ref, resolve("random")], time_control=TC, limits=LIMITS)
    assert first.moves[0].info == {"dir": str(tmp_path.resolve()), "v": 1}
    bot.write_text(bot.read_text().replace("'v': 1", "'v': 2"))
    second = play_match(game, [ref, resolve("random")], time_control=TC, limits=LIMITS)
    info = second.moves[0].info
    assert info is not None and info["v"] == 1 and info["dir"] != str(tmp_path.resolve())
    assert second.seats[0].version == ref.sha256
