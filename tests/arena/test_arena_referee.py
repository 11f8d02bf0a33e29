"""The referee's judgement with scripted seats (no processes): late answers, clocks, faults in
two- and three-player games, ranks and scores."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from arena_helpers import fixture
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena import games
from bot_arena.arena.match.botref import COMMAND, BotRef, sha256_text
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import play_match
from bot_arena.arena.match.record import Fault, Termination
from bot_arena.arena.match.referee import final_ranks, play_game
from bot_arena.arena.match.seat import Reply
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.transport.limits import ResourceLimits
from bot_arena.arena.transport.protocol import MoveRequest


def named(name: str) -> BotRef:
    """A stand-in seat's identity (no program behind it: these seats answer in-process)."""
    return BotRef(f"cmd:{name}", COMMAND, name, None, sha256_text(name))


class Scripted:
    """A seat that answers from a script of (move text, elapsed seconds)."""

    killed = False

    def __init__(self, name: str, script: list[tuple[str, float]]) -> None:
        self.ref = named(name)
        self.script: Iterator[tuple[str, float]] = iter(script)
        self.requests: list[dict[str, Any]] = []

    def ask(self, game: Any, state: Any, request: MoveRequest, hard_limit: Any) -> Reply:
        message = json.loads(request.line)  # the request as the bot would read it
        assert message["id"] == request.id and message["legal"] == list(request.legal)
        self.requests.append(message)
        move, elapsed = next(self.script)
        return Reply(elapsed, move)

    def kill(self) -> None:
        self.killed = True  # the referee's verdict on a late answer: not kept for another game


def run(game: Any, seats: list[Scripted], tc: TimeControl) -> Any:
    n = game.num_players
    refs = [s.ref for s in seats]
    start = game.initial_state()
    return play_game(game, refs, seats, [tc] * n, start, seed=1, faults=[None] * n)


def test_answer_inside_the_margin_counts_and_a_later_one_loses() -> None:
    game = games.get("coins", coins=5)
    a = Scripted("a", [("1", 0.24), ("1", 0.3)])
    b = Scripted("b", [("1", 0.01)] * 3)
    record = run(game, [a, b], TimeControl(move_time=0.2, margin=0.05))
    assert [m.move for m in record.moves] == ["1", "1"]
    assert record.termination is Termination.TIMEOUT
    fault = record.seats[0].fault
    assert fault is not None and fault.detail["overrun_ms"] == pytest.approx(100.0)
    assert fault.detail["answered"] is True and fault.detail["limit_s"] == 0.2
    assert a.killed and not b.killed
    assert (record.seats[0].rank, record.seats[1].rank) == (2, 1)
    assert record.moves[0].time_ms == pytest.approx(240.0)


def test_clock_runs_down_and_flags() -> None:
    game = games.get("coins", coins=9)
    a = Scripted("a", [("1", 0.4), ("1", 0.4), ("1", 0.4)])
    b = Scripted("b", [("1", 0.0)] * 4)
    record = run(game, [a, b], TimeControl(base=1.0, increment=0.1, margin=0.0))
    remaining = [r["clock"]["remaining"] for r in a.requests]
    assert remaining == pytest.approx([1.0, 0.7, 0.4])
    assert record.termination is Termination.TIMEOUT and record.seats[0].fault is not None


def test_bad_and_illegal_move_texts() -> None:
    game = games.get("coins", coins=1, max_take=2)
    illegal = run(game, [Scripted("a", [("2", 0.0)]), Scripted("b", [])], TimeControl())
    assert illegal.termination is Termination.ILLEGAL_MOVE
    fault = illegal.seats[0].fault
    assert fault is not None and fault.detail == {"move": "2", "position": "1@0", "ply": 0}
    junk = run(game, [Scripted("a", [("x", 0.0)]), Scripted("b", [])], TimeControl())
    assert junk.termination is Termination.BAD_OUTPUT
    spaced = run(game, [Scripted("a", [(" 1 ", 0.0)]), Scripted("b", [])], TimeControl())
    assert spaced.termination is Termination.NORMAL and spaced.moves[0].move == "1"


def test_three_players_stand_in_and_ranks() -> None:
    game = games.get("coins", coins=6, players=3, max_take=1)
    # seat 1 answers "2", not a move when max_take=1: the stand-in takes its turns
    seats = [
        Scripted("a", [("1", 0.0)] * 2),
        Scripted("b", [("2", 0.0)]),
        Scripted("c", [("1", 0.0)] * 2),
    ]
    record = run(game, seats, TimeControl())
    assert [(m.seat, m.forced) for m in record.moves] == [
        (0, False),
        (1, True),
        (2, False),
        (0, False),
        (1, True),
        (2, False),
    ]
    # seat 2 took the last coin: rank 1; seat 0 rank 2; the offender last
    assert [s.rank for s in record.seats] == [2, 3, 1]
    assert [s.score for s in record.seats] == [0.5, 0.0, 1.0]
    assert record.termination is Termination.BAD_OUTPUT


def test_final_ranks_rules() -> None:
    game = games.get("coins", coins=3, players=3)
    state = game.initial_state()
    crash = Fault(Termination.CRASH, "x")
    # everyone faulted before a move: all share the last place, which is the first
    assert final_ranks(game, state, [crash, crash, crash])[1] == (1, 1, 1)
    two = games.get("coins", coins=3)
    utility, ranks = final_ranks(two, two.initial_state(), [None, crash])
    assert (utility, ranks) == ((1.0, -1.0), (1, 2))


def test_entry_point_forms(tmp_path: Any) -> None:
    game = games.get("tictactoe")
    limits = ResourceLimits(memory_mb=512, startup_s=5.0)
    tc = TimeControl(move_time=10.0)
    forms = fixture("forms.py")
    ambiguous = play_match(game, [forms, resolve("random")], time_control=tc, limits=limits)
    fault = ambiguous.seats[0].fault
    assert fault is not None and fault.termination is Termination.STALL
    assert "several bot classes" in fault.message
    path = forms.target
    text = play_match(
        game,
        [resolve(f"{path}:TextBot"), resolve(f"{path}:PairBot")],
        time_control=tc,
        limits=limits,
        seed=3,
    )
    assert text.termination is Termination.NORMAL
    assert text.moves[0].move == "9" and text.moves[1].move == "1"
    assert text.moves[1].info is not None and isinstance(text.moves[1].info["seed"], int)


def test_cpu_limit_kills_a_spinning_bot() -> None:
    limits = ResourceLimits(memory_mb=512, startup_s=5.0, cpu_s=1)
    record = play_match(
        games.get("tictactoe"),
        [fixture("busy_loop.py"), resolve("random")],
        time_control=TimeControl(move_time=60.0),
        limits=limits,
    )
    fault = record.seats[0].fault
    assert fault is not None and fault.termination is Termination.CRASH
    assert fault.detail["signal"] in ("SIGXCPU", "SIGKILL")


class Chaotic:
    """A seat that plays legal moves but, with the given odds, answers illegal, junk or late."""

    killed = False

    def __init__(self, name: str, rng: Any, odds: float) -> None:
        self.ref = named(name)
        self.rng = rng
        self.odds = odds

    def ask(self, game: Any, state: Any, request: MoveRequest, hard_limit: Any) -> Reply:
        legal = list(request.legal)
        if self.rng.random() < self.odds:
            return self.rng.choice([Reply(0.0, "99"), Reply(0.0, "junk"), Reply(5.0, legal[0])])
        return Reply(0.001, self.rng.choice(legal))

    def kill(self) -> None:
        self.killed = True  # the referee's verdict on a late answer: not kept for another game


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 4),
    st.integers(0, 2**31),
    st.lists(st.sampled_from([0.0, 0.1, 0.5]), min_size=4, max_size=4),
)
def test_referee_invariants_under_random_faults(players: int, seed: int, odds: list[float]) -> None:
    rng = random.Random(seed)
    game = games.get("coins", coins=9, players=players, max_take=3)
    seats = [Chaotic(f"s{i}", rng, odds[i]) for i in range(players)]
    record = run(game, seats, TimeControl(move_time=1.0, margin=0.05))
    offenders = [i for i, s in enumerate(record.seats) if s.fault is not None]
    # every logged move replays legally to the recorded final position
    state = game.initial_state()
    for m in record.moves:
        assert m.seat == game.current_player(state)
        state = game.apply(state, game.move_from_text(state, m.move))
    assert game.format_position(state) == record.final_position
    assert sum(s.score for s in record.seats) == pytest.approx(players / 2)
    if not offenders:
        assert record.termination is Termination.NORMAL and game.is_terminal(state)
        return
    assert record.termination is not Termination.NORMAL
    fine = [i for i in range(players) if i not in offenders]
    assert all(record.seats[i].rank == (len(fine) + 1 if fine else 1) for i in offenders)
    assert all(record.seats[i].rank <= len(fine) for i in fine)
    if players == 2:
        assert len(offenders) == 1 and not any(m.forced for m in record.moves)
    else:
        assert game.is_terminal(state)  # the stand-in finished the game
        forced_seats = {m.seat for m in record.moves if m.forced}
        assert forced_seats <= set(offenders)
