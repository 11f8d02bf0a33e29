"""How long ``arena tournament show`` and ``arena crosstable`` take on a big field (issue 29: at
most 2 s at 80 columns for 1,000 bots).

The database is a round-robin of ``--bots`` bots (tictactoe, ``--games`` games a pair, every
match done) built by bulk insert: a real two-bot tournament is run first (so every table, column
and stored value is the arena's own), then its bots, entries, matches and seats are replaced by
synthetic ones through SQLite's cursor. Results have a realistic shape: bot i is stronger than
bot j when i < j (a logistic chance on their distance), with draws. Each command then runs in
fresh processes (``--runs``, median), and the CPU time (user + system, ``wait4``), wall time
and peak RSS of each are printed. Asserts nothing.

    python bench/crosstable.py [--bots 1000] [--games 1] [--runs 3] [--db PATH] [--columns 80]
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARENA = [sys.executable, "-m", "bot_arena.arena.cli.app"]
COMMANDS = {
    "tournament show 1": ["tournament", "show", "1"],
    "crosstable": ["crosstable"],
}


def build_database(path: Path, bots: int, games: int) -> None:
    """A done round-robin of ``bots`` bots, ``games`` a pair, as tournament 1 of ``path``."""
    path.unlink(missing_ok=True)
    url = f"sqlite:///{path}"
    seed = ["tournament", "run", "tictactoe", "-b", "random", "-b", "alphabeta:depth=1"]
    subprocess.run(
        [*ARENA, *seed, "--db", url, "--seed", "1", "-j", "1"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    db = sqlite3.connect(path)
    db.execute("PRAGMA foreign_keys = OFF")
    version = _template(db, "bot_versions")
    match = _template(db, "matches")
    seat = _template(db, "seats")
    entry = _template(db, "tournament_entries")
    for table in ("moves", "seats", "matches", "tournament_entries", "bot_versions", "bots"):
        db.execute(f"DELETE FROM {table}")
    db.executemany(
        "INSERT INTO bots (id, name, registered, created) VALUES (?, ?, 0, ?)",
        [(i + 1, f"bot_{i:04d}", version["created"]) for i in range(bots)],
    )
    _insert(
        db,
        "bot_versions",
        version,
        [
            {
                "id": i + 1,
                "bot_id": i + 1,
                "target": f"bot_{i:04d}",
                "sha256": hashlib.sha256(str(i).encode()).hexdigest(),
            }
            for i in range(bots)
        ],
    )
    _insert(
        db,
        "tournament_entries",
        entry,
        [
            {
                "id": i + 1,
                "tournament_id": 1,
                "position": i,
                "spec": f"bot_{i:04d}",
                "bot_version_id": i + 1,
            }
            for i in range(bots)
        ],
    )
    rng = random.Random(1)
    matches: list[dict[str, object]] = []
    seats: list[dict[str, object]] = []
    for a in range(bots):
        for b in range(a + 1, bots):
            for g in range(games):
                first, second = (a, b) if g % 2 == 0 else (b, a)
                win = 1 / (1 + math.exp((first - second) / (bots / 8)))
                roll = rng.random()
                ranks = (1, 1) if abs(roll - win) < 0.1 else ((1, 2) if roll < win else (2, 1))
                mid = len(matches) + 1
                matches.append({"id": mid, "tournament_id": 1, "status": "done", "seed": mid})
                for s, (bot, rank) in enumerate(zip((first, second), ranks, strict=True)):
                    score = 0.5 if ranks[0] == ranks[1] else float(rank == 1)
                    seats.append(
                        {
                            "id": len(seats) + 1,
                            "match_id": mid,
                            "seat": s,
                            "bot_version_id": bot + 1,
                            "rank": rank,
                            "score": score,
                            "utility": score,
                            "fault": None,
                        }
                    )
    _insert(db, "matches", match, matches)
    _insert(db, "seats", seat, seats)
    db.execute("UPDATE tournaments SET settings = json_set(settings, '$.games', ?)", (games,))
    db.commit()
    db.close()


def _template(db: sqlite3.Connection, table: str) -> dict[str, object]:
    cursor = db.execute(f"SELECT * FROM {table} LIMIT 1")
    return dict(zip([c[0] for c in cursor.description], cursor.fetchone(), strict=True))


def _insert(
    db: sqlite3.Connection, table: str, template: dict[str, object], rows: list[dict[str, object]]
) -> None:
    columns = list(template)
    marks = ", ".join("?" for _ in columns)
    db.executemany(
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",
        ([{**template, **row}[c] for c in columns] for row in rows),
    )


def once(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """CPU seconds, wall seconds and peak RSS (MB) of one fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(
            f"{' '.join(argv)} failed: {proc.stderr.read().decode() if proc.stderr else ''}"
        )
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--games", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--columns", type=int, default=80)
    parser.add_argument("--db", type=Path, default=None)
    args = parser.parse_args()
    path = args.db or Path(tempfile.gettempdir()) / f"crosstable-{args.bots}-{args.games}.db"
    if not path.exists():
        start = time.perf_counter()
        build_database(path, args.bots, args.games)
        print(f"built {path} in {time.perf_counter() - start:.1f} s")
    env = {**os.environ, "COLUMNS": str(args.columns)}
    print(
        f"{args.bots} bots, {args.games} games a pair, {args.columns} columns, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    for label, command in COMMANDS.items():
        runs = [
            once([*ARENA, *command, "--db", f"sqlite:///{path}"], env) for _ in range(args.runs)
        ]
        cpu, wall, rss = (statistics.median(r[k] for r in runs) for k in range(3))
        print(f"  {label:<20} CPU {cpu:6.2f} s  wall {wall:6.2f} s  peak RSS {rss:6.0f} MB")


if __name__ == "__main__":
    main()
