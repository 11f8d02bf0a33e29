"""Real processes, real faults: every misbehaving bot is classified, loses, and leaves nothing
running. Outcomes are asserted, never durations."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from arena_helpers import alive, assert_no_leftovers, fixture

from bot_arena import games
from bot_arena.arena.match.botref import COMMAND, BotRef, sha256_text
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import BotPool
from bot_arena.arena.match.record import MatchRecord, Termination
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.transport.limits import ResourceLimits
from bot_arena.arena.transport.sandbox.mode import Mode, SandboxSettings

LIMITS = ResourceLimits(memory_mb=256, startup_s=3.0)
MOVE = TimeControl(move_time=0.3)  # for the bots that never answer
GENEROUS = TimeControl(move_time=20.0)  # for the others: their fault must not race a clock

# fixture, offender seat, termination, detail that must be present, text that must appear in it
CASES: list[tuple[str, int, Termination, str, Any]] = [
    ("sleep_forever.py", 0, Termination.TIMEOUT, "overrun_ms", None),
    ("busy_loop.py", 1, Termination.TIMEOUT, "overrun_ms", None),
    ("raise_third.py", 0, Termination.CRASH, "exception", "third move is cursed"),
    ("exit3.py", 1, Termination.CRASH, "exit_code", 3),
    ("os_exit0.py", 0, Termination.CRASH, "exit_code", 0),
    ("segfault.py", 1, Termination.CRASH, "signal", "SIGSEGV"),
    ("illegal.py", 1, Termination.ILLEGAL_MOVE, "position", None),
    ("unparseable.py", 0, Termination.BAD_OUTPUT, "answer", "banana"),
    ("junk.sh", 1, Termination.BAD_OUTPUT, "answer", "e2e4 please"),
    ("flood_line.sh", 0, Termination.BAD_OUTPUT, "answer", "xxxx"),
    ("double_answer_cmd.py", 1, Termination.BAD_OUTPUT, "answer", '"type": "move"'),
    ("memory_hog.py", 0, Termination.CRASH, "exception", "MemoryError"),
    ("syntax_error.py", 1, Termination.STALL, "exception", "SyntaxError"),
    ("import_missing.py", 0, Termination.STALL, "exception", "arena_no_such_module_xyz"),
    ("no_bot.py", 1, Termination.STALL, "exception", "no bot found"),
]


def play(
    offender: str, seat: int, limits: ResourceLimits = LIMITS
) -> tuple[MatchRecord, list[int]]:
    refs = [resolve("random"), resolve("random")]
    if offender.startswith("cmd:"):  # as resolved while it could run (gone since: a stall)
        command = offender[4:]
        refs[seat] = BotRef(offender, COMMAND, command, None, sha256_text(command))
    else:
        refs[seat] = fixture(offender)
    with BotPool(limits) as pool:
        tcs = [GENEROUS, GENEROUS]  # the well-behaved opponent never races a clock
        if offender in ("sleep_forever.py", "busy_loop.py"):
            tcs[seat] = MOVE
        record = pool.play(games.get("tictactoe"), refs, time_control=tcs, seed=11)
    return record, pool.started_pids


def check_lost(record: MatchRecord, seat: int, termination: Termination) -> None:
    assert record.termination is termination
    offender, winner = record.seats[seat], record.seats[1 - seat]
    assert offender.fault is not None and offender.fault.termination is termination
    assert winner.fault is None
    assert (winner.rank, winner.score, offender.rank, offender.score) == (1, 1.0, 2, 0.0)
    assert winner.utility > offender.utility


@pytest.mark.parametrize(("name", "seat", "termination", "key", "evidence"), CASES)
def test_fault_is_classified_and_costs_only_the_match(
    name: str, seat: int, termination: Termination, key: str, evidence: Any
) -> None:
    record, pids = play(name, seat)
    check_lost(record, seat, termination)
    fault = record.seats[seat].fault
    assert fault is not None
    assert key in fault.detail
    if isinstance(evidence, str):
        assert evidence in str(fault.detail[key])
    elif evidence is not None:
        assert fault.detail[key] == evidence
    assert_no_leftovers(pids)
    # the move log holds only moves the arena accepted, all legal from the start
    game = games.get("tictactoe")
    state = game.initial_state()
    for move in record.moves:
        state = game.apply(state, game.move_from_text(state, move.move))
    assert game.format_position(state) == record.final_position


def test_timeout_names_the_overrun_and_the_limit() -> None:
    record, _ = play("sleep_forever.py", 0)
    fault = record.seats[0].fault
    assert fault is not None
    assert fault.detail["limit_s"] == 0.3
    assert fault.detail["answered"] is False
    assert fault.detail["overrun_ms"] >= 0.0


def test_illegal_move_carries_the_move_and_the_position() -> None:
    record, _ = play("illegal.py", 1)
    fault = record.seats[1].fault
    assert fault is not None
    game = games.get("tictactoe")
    state = game.parse_position(fault.detail["position"])
    assert fault.detail["position"] == record.final_position
    assert game.parse_move(fault.detail["move"]) not in game.legal_moves(state)


def test_module_that_never_loads_stalls_at_the_startup_limit() -> None:
    # a module that never finishes loading never shakes hands, whatever the limit: 1 s of it
    limits = ResourceLimits(memory_mb=256, startup_s=1.0)
    record, pids = play("never_loads.py", 0, limits)
    check_lost(record, 0, Termination.STALL)
    fault = record.seats[0].fault
    assert fault is not None and fault.detail["reason"] == "no handshake"
    assert record.moves == []
    assert_no_leftovers(pids)


def test_missing_command_stalls_with_exit_code() -> None:
    """A program gone between the spec's check (``resolve`` refuses one that cannot be run,
    tests/arena/test_bot_versions.py) and the start of its process: a stall, nothing left."""
    record, pids = play("cmd:/nonexistent/arena-bot", 1)
    check_lost(record, 1, Termination.STALL)
    fault = record.seats[1].fault
    assert fault is not None and fault.detail["exit_code"] == 127
    assert "/nonexistent/arena-bot" in fault.detail["stderr_tail"]
    assert_no_leftovers(pids)


def _named_processes(name: str) -> list[int]:
    """Live processes whose argv[0] is ``name``, from /proc/*/cmdline (seen from outside)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv0 = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if argv0 == name.encode() and alive(int(entry)):
                found.append(int(entry))
    return found


@pytest.mark.parametrize("mode", [Mode.AUTO, Mode.OFF], ids=["default", "off"])
def test_forked_child_is_killed_with_the_pool(mode: Mode) -> None:
    """The bot forks a child that execs ``sleep`` under a unique name (reported in its move
    info): alive while the pool is, gone with it, confined (its namespace, its unit) or not
    (its process group)."""
    refs = [fixture("fork_child.py"), resolve("random")]
    with BotPool(LIMITS, sandbox=SandboxSettings(mode)) as pool:
        record = pool.play(games.get("tictactoe"), refs, time_control=GENEROUS, seed=11)
        assert record.termination is Termination.NORMAL
        names = {m.info["child"] for m in record.moves if m.seat == 0 and m.info}
        assert len(names) == 1, record.moves
        children = _named_processes(names.pop())
        assert len(children) == 1, "the bot's child is not running"
    assert not alive(children[0])
    assert_no_leftovers(pool.started_pids)


def test_flooding_stdout_and_stderr_does_not_block_the_bot() -> None:
    refs = [fixture("flood.py"), resolve("random")]
    with BotPool(LIMITS) as pool:
        record = pool.play(
            games.get("tictactoe"), refs, time_control=TimeControl(move_time=10.0), seed=3
        )
        seat = pool.idle[refs[0]][0]
        assert seat.process.stderr.total > 5 * 1024 * 1024  # it all went to the log ...
        assert seat.process.stderr.size < 200 * 1024  # ... of which only a tail is kept
    assert record.termination is Termination.NORMAL
    assert all(s.fault is None for s in record.seats)
    assert_no_leftovers(pool.started_pids)


def test_printing_bot_plays_a_normal_match_and_reports_info() -> None:
    refs = [fixture("printer.py"), resolve("random")]
    with BotPool(LIMITS) as pool:
        record = pool.play(games.get("tictactoe"), refs, time_control=TimeControl(move_time=5))
    assert record.termination is Termination.NORMAL
    mine = [m for m in record.moves if m.seat == 0]
    assert mine and all(m.info and m.info["depth"] == 1 and m.info["nodes"] == 7 for m in mine)
    assert_no_leftovers(pool.started_pids)


def test_three_players_offender_last_and_random_stand_in() -> None:
    game = games.get("coins", coins=15, players=3, max_take=2)
    refs = [resolve("random"), fixture("exit3.py"), resolve("random")]
    with BotPool(LIMITS) as pool:
        record = pool.play(game, refs, time_control=GENEROUS, seed=5)
    assert record.termination is Termination.CRASH
    assert record.seats[1].rank == 3 and record.seats[1].score == 0.0
    assert record.seats[1].fault is not None
    forced = [m for m in record.moves if m.forced]
    assert forced and all(m.seat == 1 for m in forced)
    assert all(not m.forced for m in record.moves if m.seat != 1)
    # the game was played to its end and the others are ranked by its utilities
    state = game.initial_state()
    for move in record.moves:
        state = game.apply(state, game.move_from_text(state, move.move))
    assert game.is_terminal(state)
    u = game.utility(state)
    r0, r2 = record.seats[0].rank, record.seats[2].rank
    assert (r0 < r2) == (u[0] > u[2]) and (r0 == r2) == (u[0] == u[2])
    assert min(r0, r2) == 1
    assert sum(s.score for s in record.seats) == pytest.approx(1.5)
    assert_no_leftovers(pool.started_pids)
