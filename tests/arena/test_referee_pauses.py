"""A referee that was stopped (SIGSTOP, Ctrl-Z) does not charge the stop to the bot that was
thinking: a resume during a move caps the move's time at its limit, and an answer not there
yet gets the limit once more from the resume, once. A bare SIGCONT (the referee was never
stopped) changes nothing.

The bots run unconfined (a confined bot cannot signal the referee at all); the stopping bot has
a child stop the referee for STOP seconds and resume it, during the bot's own move."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot_arena import games
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import BotPool
from bot_arena.arena.match.record import MatchRecord, Termination
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.transport.sandbox.mode import Mode, SandboxSettings

FIXTURES = Path(__file__).parent / "fixtures"
LIMIT = 0.5  # seconds per move (margin 0.05): a wait of 0.55 s, and 0.55 s more after a resume
SLOW = 0.8  # seconds a slow bot takes: late for one wait, in time for two
STOP = 0.3  # seconds the referee is stopped (its heartbeat calls a gap over 0.1 s a stop)


def play(bot: str, sleep: float, monkeypatch: pytest.MonkeyPatch) -> MatchRecord:
    monkeypatch.setenv("ARENA_TEST_REFEREE", str(os.getpid()))
    monkeypatch.setenv("ARENA_TEST_SLEEP", str(sleep))
    monkeypatch.setenv("ARENA_TEST_STOP", str(STOP))
    with BotPool(sandbox=SandboxSettings(Mode.OFF)) as pool:
        return pool.play(
            games.get("tictactoe"),
            [resolve(str(FIXTURES / bot)), resolve("random")],
            time_control=TimeControl(move_time=LIMIT, margin=0.05),
        )


def test_a_late_answer_without_a_pause_loses_on_time(monkeypatch: pytest.MonkeyPatch) -> None:
    record = play("sleep_then_move.py", SLOW, monkeypatch)
    assert record.seats[0].fault is not None
    assert record.seats[0].fault.termination is Termination.TIMEOUT


def test_a_move_during_which_the_referee_resumed_is_not_lost_on_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    record = play("stop_referee_then_sleep.py", SLOW, monkeypatch)
    assert record.seats[0].fault is None and record.termination is Termination.NORMAL
    mine = [m for m in record.moves if m.seat == 0]
    assert len(mine) >= 2, mine  # both stopped moves were made (each got its extra time)
    assert all(m.time_ms <= LIMIT * 1000 for m in mine)  # charged at most the limit


def test_the_extra_time_after_a_resume_is_given_once(monkeypatch: pytest.MonkeyPatch) -> None:
    record = play("stop_referee_then_sleep.py", 3 * LIMIT, monkeypatch)
    assert record.seats[0].fault is not None
    assert record.seats[0].fault.termination is Termination.TIMEOUT


def test_a_bare_sigcont_buys_no_time(monkeypatch: pytest.MonkeyPatch) -> None:
    record = play("resume_then_sleep.py", SLOW, monkeypatch)
    assert record.seats[0].fault is not None
    assert record.seats[0].fault.termination is Termination.TIMEOUT
