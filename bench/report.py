"""How big and how slow ``arena report`` is, for 1,000 and 10,000 games.

    python bench/report.py [--sizes 1000,10000] [--repeats 3] [--keep FOLDER]
    python bench/report.py --bulk [--sizes 10000,100000] [--bots 200] [--games 500]

``--bulk``: each size is a database of synthetic tic-tac-toe matches bulk-inserted (random
games between ``--bots`` bots, one in fifty with a timeout), no tournament, and ``arena report
--game tictactoe`` is run once as a process of its own: wall, CPU and peak RSS of that process
(``resource.getrusage`` of the children) and the HTML's size.

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
    parser.add_argument("--bulk", action="store_true", help="Synthetic databases, bulk-inserted.")
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--games", default=None, help="arena report --games (with --bulk).")
    opts = parser.parse_args()
    if opts.bulk:
        bulk(opts)
        return
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


def bulk(opts: argparse.Namespace) -> None:
    import resource

    folder = opts.keep or Path(tempfile.mkdtemp(prefix="bench-report-"))
    folder.mkdir(parents=True, exist_ok=True)
    head = ("matches", 8), ("bots", 5), ("build s", 8), ("wall s", 7), ("CPU s", 6)
    print(" ".join(f"{t:>{w}}" for t, w in (*head, ("peak MB", 8), ("HTML MB", 8))))
    for size in (int(s) for s in opts.sizes.split(",")):
        db = folder / f"ttt-{size}-{opts.bots}.db"
        url = f"sqlite:///{db}"
        start = time.perf_counter()
        if not db.exists():
            build_bulk(url, size, opts.bots)
        built = time.perf_counter() - start
        out = folder / f"report-bulk-{size}.html"
        extra = ["--games", opts.games] if opts.games is not None else []
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        arena("report", "--game", "tictactoe", *extra, "-o", str(out), "--db", url)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        peak = after.ru_maxrss / 1024  # KiB on Linux; the largest child so far
        mb = out.stat().st_size / 1e6
        print(f"{size:>8} {opts.bots:>5} {built:>8.1f} {wall:>7.2f} {cpu:>6.2f}", end=" ")
        print(f"{peak:>8.0f} {mb:>8.2f}")


def build_bulk(url: str, size: int, nbots: int) -> None:
    """``size`` done tic-tac-toe matches between ``nbots`` bots, inserted a batch at a time
    (a small builder of this script's own: the matches are random games, so each replays)."""
    import hashlib
    import random
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import insert

    from bot_arena import games
    from bot_arena.db.models import Bot, BotVersion, Match, Move, Seat
    from bot_arena.db.session import make_engine

    rng = random.Random(29)
    game = games.get("tictactoe")
    played = []  # a few hundred distinct random games, reused
    for _ in range(300):
        state, moves = game.initial_state(), []
        while not game.is_terminal(state):
            move = rng.choice(list(game.legal_moves(state)))
            moves.append(game.format_move(move))
            state = game.apply(state, move)
        played.append((moves, game.format_position(state), tuple(game.utility(state))))
    engine = make_engine(url)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    with engine.begin() as conn:
        conn.execute(insert(Bot), [{"id": i + 1, "name": f"bot{i:04d}"} for i in range(nbots)])
        conn.execute(
            insert(BotVersion),
            [
                {
                    "id": i + 1,
                    "bot_id": i + 1,
                    "kind": "builtin",
                    "target": "random",
                    "sha256": hashlib.sha256(str(i).encode()).hexdigest(),
                }
                for i in range(nbots)
            ],
        )
        batch = 10_000
        for first in range(0, size, batch):
            matches, seats, moves = [], [], []
            for mid in range(first + 1, min(size, first + batch) + 1):
                a = rng.randrange(nbots)
                b = (a + 1 + rng.randrange(nbots - 1)) % nbots
                mv, final, util = played[mid % len(played)]
                faulty = rng.random() < 0.02
                if faulty:
                    util = (-1.0, 1.0)
                when = t0 + timedelta(seconds=mid)
                matches.append(
                    {
                        "id": mid, "game": "tictactoe", "params": {}, "time_control": {},
                        "players": 2, "seed": mid, "status": "done",
                        "termination": "timeout" if faulty else "normal",
                        "fault_reason": "seat 0 timeout" if faulty else None,
                        "final_position": final, "started": when, "finished": when,
                        "duration_s": 0.01, "sandbox": "confined",
                    }
                )  # fmt: skip
                for seat, version in enumerate((a, b)):
                    win = util[seat] > util[1 - seat]
                    draw = util[seat] == util[1 - seat]
                    seats.append(
                        {
                            "match_id": mid, "players": 2, "seat": seat,
                            "bot_version_id": version + 1, "utility": util[seat],
                            "rank": 1 if win or draw else 2,
                            "score": 0.5 if draw else 1.0 if win else 0.0,
                            "fault": {"termination": "timeout", "message": "late"}
                            if faulty and seat == 0 else None,
                        }
                    )  # fmt: skip
                for ply, text in enumerate(mv):
                    moves.append(
                        {"match_id": mid, "ply": ply, "seat": ply % 2, "move": text,
                         "time_ms": 1.0, "forced": False}
                    )  # fmt: skip
            conn.execute(insert(Match), matches)
            conn.execute(insert(Seat), seats)
            conn.execute(insert(Move), moves)
    engine.dispose()


if __name__ == "__main__":
    main()
