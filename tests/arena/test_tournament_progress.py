"""The progress display: counts, rate, ETA, top of the table, fault lines, TTY vs plain."""

from __future__ import annotations

import io

from arena.progress import Progress, Standings, format_duration


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


def test_tty_redraws_one_line_and_keeps_faults() -> None:
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
