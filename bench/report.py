"""How big and how slow ``arena report`` is, for 1,000 and 10,000 games.

    python bench/report.py [--sizes 1000,10000] [--repeats 3] [--keep FOLDER]

For each size, a real Connect Four round-robin of four bots (random, random seeded, alpha-beta
depth 1 and 2: search info in every other move, the moves of whole games) is played into a
fresh SQLite database (``--jobs 2``), then ``arena report`` is run ``--repeats`` times as a
process of its own: the median wall time and the file's size, and the time split between
reading the database and the rest (from one in-process build).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)  # bench/ holds scripts named like packages (bench/games.py)

FIELD = ["random", "random:seed=9", "alphabeta:depth=1", "alphabeta:depth=2"]


def arena(*args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "bot_arena.arena.cli.app", *args],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="Leave the databases here.")
    opts = parser.parse_args()
    folder = opts.keep or Path(tempfile.mkdtemp(prefix="bench-report-"))
    folder.mkdir(parents=True, exist_ok=True)
    pairs = len(FIELD) * (len(FIELD) - 1) // 2
    print(f"{'games':>7} {'report s (median)':>18} {'read s':>8} {'build s':>8} {'MB':>7}")
    for size in (int(s) for s in opts.sizes.split(",")):
        per_pair = max(2, size // pairs // 2 * 2)
        db = folder / f"c4-{size}.db"
        url = f"sqlite:///{db}"
        if not db.exists():
            args = ["tournament", "run", "connect4", "--games", str(per_pair), "--jobs", "2"]
            for bot in FIELD:
                args += ["--bot", bot]
            arena(*args, "--seed", "1", "--db", url)
        out = folder / f"report-{size}.html"
        walls = []
        for _ in range(opts.repeats):
            start = time.perf_counter()
            arena("report", "--tournament", "1", "-o", str(out), "--db", url)
            walls.append(time.perf_counter() - start)
        read_s, build_s = split(url)
        games = per_pair * pairs
        mb = out.stat().st_size / 1e6
        wall = statistics.median(walls)
        print(f"{games:>7} {wall:>18.2f} {read_s:>8.2f} {build_s:>8.2f} {mb:>7.2f}")


def split(url: str) -> tuple[float, float]:
    """Seconds to read the report's data and to make the page, in this process."""
    from bot_arena.arena.report.data import collect
    from bot_arena.arena.report.page import render_page
    from bot_arena.db.session import make_engine, session_factory

    factory = session_factory(make_engine(url))
    start = time.perf_counter()
    with factory() as session:
        report = collect(session, tournament_id=1)
    mid = time.perf_counter()
    render_page(report)
    return mid - start, time.perf_counter() - mid


if __name__ == "__main__":
    main()
