"""The finished match the writer tests store (``test_writer_parity``, ``test_sqlite_play``):
one record holding every value the column types convert."""

from __future__ import annotations

from typing import Any

from bot_arena.arena.match.record import Fault, MatchRecord, MoveRecord, SeatResult, Termination

T0 = 1_767_225_600.123457  # a fixed start time with microseconds


def written_record(
    names: list[str],
    plies: int,
    *,
    tc: dict[str, Any],
    params: dict[str, Any],
    shift: float = 0.0,
    **extra: Any,
) -> MatchRecord:
    """A finished match of ``names`` with a fault on the last seat, search info, a forced move,
    a negative measured time (stored as 0) and the values the column types convert (JSON,
    timestamps); ``extra`` are more of MatchRecord's fields (a start position, an
    adjudication)."""
    seats = len(names)
    results = [
        SeatResult(name, 1.0 - i, i + 1, 1.0 if i == 0 else 0.0, None)
        for i, name in enumerate(names)
    ]
    results[-1].fault = Fault(Termination.TIMEOUT, "late ✓", {"overrun_ms": 12.5, "n": [1, None]})
    return MatchRecord(
        game="coins",
        params=params,
        start_position=extra.pop("start_position", "4@0"),
        seats=results,
        moves=[
            MoveRecord(
                ply % seats,
                str(1 + ply % 2),
                -0.25 if ply == 1 else 0.5 + ply,
                {"depth": ply, "pv": ["1", "2"], "note": "é"} if ply % 2 == 0 else None,
                forced=ply == 2,
            )
            for ply in range(plies)
        ],
        termination=Termination.TIMEOUT,
        final_position="0@1",
        started=T0 + shift,
        finished=T0 + shift + 1.000001,
        time_control=tc,
        **extra,
    )
