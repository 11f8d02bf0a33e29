"""The progress display: counts, rate, ETA, top of the table, fault lines, TTY vs plain."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from bot_arena import games
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.tournament.create import create
from bot_arena.arena.tournament.progress import Progress, Standings, format_duration
from bot_arena.arena.tournament.runner import Runner
from bot_arena.arena.tournament.voiding import void_matches
from bot_arena.db.models import Match, Move
from bot_arena.db.session import make_engine, session_factory


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_with_rate_eta_and_top() -> None:
    clock, out = FakeClock(), io.StringIO()
    progress = Progress(
        10, 2, Standings(["a", "b", "c", "d"]), stream=out, tty=False, interval=5.0, clock=clock
    )
    clock.now += 2.0
    progress.match_done([(0, 1.0), (1, 0.0)])  # first line: always shown
    clock.now += 2.0
    progress.match_done([(2, 0.5), (3, 0.5)])  # within the interval: no line
    clock.now += 4.0
    progress.match_done([(0, 1.0), (2, 0.0)], ["match 5 seat 1 c: timeout: late"])
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[ 3/10]  30.0%")
    assert "0.50 games/s" in lines[0] and "ETA 0:14" in lines[0]  # 7 left at 1 game / 2 s
    assert lines[1] == "fault: match 5 seat 1 c: timeout: late"
    assert lines[2].startswith("[ 5/10]  50.0%") and "0.38 games/s" in lines[2]
    assert lines[2].endswith("top: a 100.0%, d 50.0%, c 25.0%")
    assert len(lines) == 3


def test_tty_redraws_one_line_and_keeps_faults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # room for the whole line (82 characters)
    clock, out = FakeClock(), io.StringIO()
    progress = Progress(2, 0, Standings(["a", "b"]), stream=out, tty=True, clock=clock)
    clock.now += 1.0
    progress.match_done([(0, 0.5), (1, 0.5)])
    progress.match_done([(0, 0.0), (1, 1.0)], ["boom"])
    progress.close()
    text = out.getvalue()
    assert text.count("\r\x1b[K") == 3  # draw, clear for the fault, redraw
    assert "\r\x1b[Kfault: boom\n" in text
    assert text.endswith("top: b 75.0%, a 25.0%\n")
    assert "\r\x1b[K" + "#" * 10 + "." * 10 + " [1/2]" in text  # the bar, half full
    assert "#" * 20 + " [2/2]" in text


def test_durations() -> None:
    assert format_duration(0) == "0:00"
    assert format_duration(61.4) == "1:01"
    assert format_duration(3725) == "1:02:05"


def test_a_result_voided_while_in_play_is_neither_stored_nor_counted(tmp_path: Path) -> None:
    """A match the runner has read as pending is voided before its result comes back: the
    result is not stored, the progress does not count it, and a line says so."""
    factory = session_factory(make_engine(f"sqlite:///{tmp_path / 'v.db'}"))
    specs = ["random:seed=1", "random:seed=2"]
    refs = [resolve(s) for s in specs]
    tid = create(
        factory,
        games.get("tictactoe"),
        specs,
        refs,
        fmt="round-robin",
        games_per_group=4,
        time_control=TimeControl(move_time=5.0),
        seed=1,
        opening_plies=0,
    )
    with factory() as session:
        victim = session.scalars(select(Match.id).where(Match.tournament_id == tid)).all()[2]
    out = io.StringIO()
    runner = Runner(factory, tid, refs, jobs=1, progress_stream=out, tty=False)
    prepare = runner._prepare

    def prepare_then_void() -> Any:
        prepared = prepare()  # the schedule is read: the victim is among the matches to play
        with factory.begin() as session:
            void_matches(session, [victim], "voided while the runner played")
        return prepared

    runner._prepare = prepare_then_void  # type: ignore[method-assign]
    outcome = runner.run()
    assert (outcome.played, outcome.done, outcome.total) == (3, 3, 3)
    assert f"match {victim}: not stored (no longer pending)" in out.getvalue()
    with factory() as session:
        rows = session.execute(select(Match.id, Match.status).order_by(Match.id)).all()
        moves = session.scalar(
            select(func.count()).select_from(Move).where(Move.match_id == victim)
        )
    assert [s for i, s in rows if i == victim] == ["void"] and moves == 0


def test_rate_and_eta_wait_until_they_mean_something() -> None:
    """The first games' rate (one game in a few milliseconds) would promise a nonsense ETA:
    the line shows the counts alone until 2 s or 20 games of the run have passed."""
    clock, out = FakeClock(), io.StringIO()
    progress = Progress(
        100, 0, Standings(["a", "b"]), stream=out, tty=False, interval=0.0, clock=clock
    )
    clock.now += 0.01
    progress.match_done([(0, 1.0), (1, 0.0)])
    clock.now += 1.99
    progress.match_done([(0, 1.0), (1, 0.0)])
    first, second = out.getvalue().splitlines()
    assert first == "[  1/100]   1.0%  top: a 100.0%, b 0.0%"
    assert second.startswith("[  2/100]   2.0%    1.00 games/s  ETA 1:38")


def test_a_status_line_fits_the_terminal_by_whole_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    """An SPRT's state line (174 columns) on an 80-column terminal: the first fields and the
    last, never three rows; not on a terminal, the whole line."""
    fields = [f"field{i} " + "x" * 20 for i in range(7)] + ["games 20000"]
    text = " | ".join(fields)
    monkeypatch.setenv("COLUMNS", "80")
    term, plain = io.StringIO(), io.StringIO()
    Progress(10, 0, Standings(["a"]), stream=term, tty=True).status(text)
    Progress(10, 0, Standings(["a"]), stream=plain, tty=False).status(text)
    assert term.getvalue() == " | ".join([*fields[:2], "games 20000"]) + "\n"
    assert plain.getvalue() == text + "\n"
    short = Progress(10, 0, Standings(["a"]), stream=io.StringIO(), tty=True)
    short.status("LLR 1.00 | games 2")
    assert short.stream.getvalue() == "LLR 1.00 | games 2\n"  # type: ignore[attr-defined]
    monkeypatch.setenv("COLUMNS", "10")
    tiny = Progress(10, 0, Standings(["a"]), stream=io.StringIO(), tty=True)
    tiny.status(text)
    assert tiny.stream.getvalue() == "field0 xx\n"  # type: ignore[attr-defined]
