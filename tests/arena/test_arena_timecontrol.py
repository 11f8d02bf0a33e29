"""Time controls and the per-seat clock arithmetic (no processes, no waiting)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena.arena.match.timecontrol import TimeControl, TimeControlError, per_seat, seats_dict


@pytest.mark.parametrize(
    ("move_time", "clock", "expected"),
    [
        (0.1, None, TimeControl(move_time=0.1)),
        (None, "60+0.5", TimeControl(base=60.0, increment=0.5)),
        (None, "300", TimeControl(base=300.0)),
        (None, " 1.5 + .25 ", TimeControl(base=1.5, increment=0.25)),
        (2.0, "60+1", TimeControl(move_time=2.0, base=60.0, increment=1.0)),
        (None, None, TimeControl()),
    ],
)
def test_parse(move_time: float | None, clock: str | None, expected: TimeControl) -> None:
    assert TimeControl.parse(move_time, clock) == expected


@pytest.mark.parametrize(
    ("move_time", "clock"),
    [(None, "60+"), (None, "abc"), (None, "-5+1"), (0.0, None), (-1.0, None), (None, "0+1")],
)
def test_parse_refuses(move_time: float | None, clock: str | None) -> None:
    with pytest.raises(TimeControlError):
        TimeControl.parse(move_time, clock)


def test_describe_and_dict_round_trip() -> None:
    tc = TimeControl.parse(0.5, "60+0.5", margin=0.1)
    assert tc.describe() == "move 0.5s 60+0.5"
    assert TimeControl().describe() == "unlimited"
    assert TimeControl.from_dict(tc.to_dict()) == tc


def test_per_seat() -> None:
    a, b = TimeControl(move_time=1.0), TimeControl(base=5.0)
    assert per_seat(a, 3) == (a, a, a)
    assert per_seat([a, b], 2) == (a, b)
    with pytest.raises(TimeControlError):
        per_seat([a], 2)
    assert seats_dict([a, b]) == {"seats": [a.to_dict(), b.to_dict()]}


def test_fixed_move_time_clock() -> None:
    clock = TimeControl(move_time=0.2, margin=0.05).clock()
    assert clock.limit() == 0.2 and clock.hard_limit() == pytest.approx(0.25)
    assert clock.overrun(0.25) is None  # inside the margin
    assert clock.overrun(0.3) == pytest.approx(0.1)
    clock.spend(0.19)
    assert clock.limit() == 0.2 and clock.request()["remaining"] is None


@settings(max_examples=100, deadline=None)
@given(
    st.floats(0.1, 100),
    st.floats(0, 5),
    st.lists(st.floats(0, 10), min_size=1, max_size=20),
)
def test_fischer_clock_accounting(base: float, inc: float, spent: list[float]) -> None:
    """remaining = base - time used + increments, while every move is in time; a move is a
    loss exactly when it exceeds the time left plus the margin."""
    clock = TimeControl(base=base, increment=inc, margin=0.05).clock()
    expected = base
    for elapsed in spent:
        assert clock.request()["deadline"] == pytest.approx(expected)
        over = clock.overrun(elapsed)
        if elapsed > expected + 0.05:
            assert over == pytest.approx(elapsed - expected)
            return
        assert over is None
        clock.spend(elapsed)
        expected = max(0.0, expected - elapsed) + inc
        assert clock.remaining == pytest.approx(expected)


def test_move_time_caps_the_clock() -> None:
    clock = TimeControl(move_time=1.0, base=10.0).clock()
    assert clock.limit() == 1.0
    clock.spend(9.5)
    assert clock.limit() == pytest.approx(0.5)
