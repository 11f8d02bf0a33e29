"""How fast ``arena export`` streams and how much memory it holds (issue 29: ``--format jsonl``
at least 20,000 matches/s with a peak RSS of at most 200 MB, at any size).

Builds a SQLite database of ``--matches`` synthetic done matches (default 100,000) by bulk
insert (tic-tac-toe shaped: two seats, 5 to 9 moves, search info on some, a fault in one match
of 20, 50 bots in 4 tournaments), then runs ``arena export -f FMT`` for each format in a fresh
process with its output to /dev/null, and prints for each: wall and CPU seconds, matches/s (by
wall time) and the peak RSS of that process (``resource.getrusage``). ``--db PATH`` keeps the
database (it is reused while it holds the asked number of matches). Asserts nothing.

    python bench/export.py [--matches N] [--db PATH] [--formats jsonl,json,csv,pgn]
                           [--url postgresql+psycopg://...]

``--url``: the database at this SQLAlchemy URL instead (PostgreSQL: an empty database, or one
this script filled with ``--matches`` matches; refilled otherwise).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func, insert, select

from bot_arena.db.models import Base, Bot, BotVersion, Match, Move, Seat, Tournament
from bot_arena.db.session import make_engine

BATCH = 5_000


def build(url: str, matches: int, seed: int = 1) -> None:
    """``matches`` done matches in a new database at ``url``, inserted in batches."""
    rng = random.Random(seed)
    engine = make_engine(url)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    with engine.begin() as conn:
        bots = [f"bot{i:02d}" for i in range(50)]
        conn.execute(insert(Bot), [{"name": b, "registered": True} for b in bots])
        conn.execute(
            insert(BotVersion),
            [
                {"bot_id": i + 1, "kind": "builtin", "target": b, "sha256": f"{i:064x}"}
                for i, b in enumerate(bots)
            ],
        )
        conn.execute(
            insert(Tournament),
            [
                {"name": f"week {t}", "game": "tictactoe", "format": "round-robin", "seed": t}
                for t in range(1, 5)
            ],
        )
        for first in range(1, matches + 1, BATCH):
            rows: list[dict[str, Any]] = []
            seats: list[dict[str, Any]] = []
            moves: list[dict[str, Any]] = []
            for mid in range(first, min(first + BATCH, matches + 1)):
                began = start + timedelta(seconds=30 * mid)
                fault = mid % 20 == 0
                rows.append(
                    {
                        "id": mid,
                        "tournament_id": 1 + mid % 4,
                        "round": mid // 1000,
                        "game": "tictactoe",
                        "params": {},
                        "time_control": {"move_time": 0.1},
                        "players": 2,
                        "seed": mid,
                        "status": "done",
                        "termination": "timeout" if fault else "normal",
                        "fault_reason": "seat 1 (bot01): timeout: no answer" if fault else None,
                        "final_position": "x.o.x.o.x @1",
                        "started": began,
                        "finished": began + timedelta(seconds=0.4),
                        "duration_s": 0.4,
                    }
                )
                a, b = rng.sample(range(1, 51), 2)
                ranks = rng.choice(((1, 2), (2, 1), (1, 1)))
                for seat, (vid, rank) in enumerate(zip((a, b), ranks, strict=True)):
                    seats.append(
                        {
                            "match_id": mid,
                            "players": 2,
                            "seat": seat,
                            "bot_version_id": vid,
                            "utility": 1.0 if rank == 1 and ranks != (1, 1) else 0.0,
                            "rank": rank,
                            "score": 0.5 if ranks == (1, 1) else (1.0 if rank == 1 else 0.0),
                            "fault": (
                                {"termination": "timeout", "message": "no answer in 0.1 s"}
                                if fault and seat == 1
                                else None
                            ),
                        }
                    )
                for ply in range(rng.randint(5, 9)):
                    info = {"depth": 3, "score": rng.randint(-9, 9)} if ply % 2 else None
                    moves.append(
                        {
                            "match_id": mid,
                            "ply": ply,
                            "seat": ply % 2,
                            "move": str(rng.randrange(9)),
                            "time_ms": round(rng.uniform(0.1, 5.0), 3),
                            "info": info,
                            "forced": False,
                        }
                    )
            conn.execute(insert(Match), rows)
            conn.execute(insert(Seat), seats)
            conn.execute(insert(Move), moves)
    engine.dispose()


def _count(url: str) -> int:
    engine = make_engine(url)
    with engine.connect() as conn:
        n = int(conn.execute(select(func.count()).select_from(Match)).scalar_one())
    engine.dispose()
    return n


def _empty(url: str) -> None:
    """Every table of the database at ``url`` emptied (the schema stays)."""
    engine = make_engine(url)
    with engine.begin() as conn:
        for table in reversed(Base.metadata.sorted_tables):
            conn.execute(delete(table))
    engine.dispose()


def _one(fmt: str, db: str) -> None:
    """Run the export in this process, its output to /dev/null; print the measures as JSON."""
    from bot_arena.arena.cli.app import app

    devnull = os.open(os.devnull, os.O_WRONLY)
    saved = os.dup(1)
    os.dup2(devnull, 1)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 (fd 1 stays open)
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        app(["export", "-f", fmt, "--db", db], standalone_mode=False)
    finally:
        sys.stdout.flush()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        os.dup2(saved, 1)
        sys.stdout = sys.__stdout__
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({"wall": wall, "cpu": cpu, "peak_mb": peak}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--db", type=Path)
    parser.add_argument("--formats", default="jsonl,json,csv,pgn")
    parser.add_argument("--url", default=None, help="a database URL instead of a SQLite file")
    parser.add_argument("--one", nargs=2, metavar=("FORMAT", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        _one(*args.one)
        return
    path = args.db or Path(tempfile.gettempdir()) / f"arena-export-{args.matches}.db"
    url = args.url or f"sqlite:///{path}"
    if args.url is not None:
        if _count(url) != args.matches:
            _empty(url)
            t0 = time.perf_counter()
            build(url, args.matches)
            print(f"built {args.matches:,} matches in {time.perf_counter() - t0:.1f} s")
    elif not path.exists() or _count(url) != args.matches:
        path.unlink(missing_ok=True)
        t0 = time.perf_counter()
        build(url, args.matches)
        print(f"built {args.matches:,} matches in {time.perf_counter() - t0:.1f} s: {path}")
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'format':<8}{'wall s':>9}{'cpu s':>9}{'matches/s':>12}{'peak RSS MB':>13}")
    for fmt in args.formats.split(","):
        done = subprocess.run(
            [sys.executable, __file__, "--one", fmt, args.url or str(path)],
            check=True,
            capture_output=True,
            text=True,
        )
        m = json.loads(done.stdout.strip().splitlines()[-1])
        rate = args.matches / m["wall"]
        print(f"{fmt:<8}{m['wall']:>9.2f}{m['cpu']:>9.2f}{rate:>12,.0f}{m['peak_mb']:>13.1f}")


if __name__ == "__main__":
    main()
