"""Read commands against long histories (issue 29): databases of 10k, 100k and 1M two-player
matches, bulk-inserted, and for each command the wall time, CPU time (user + system) and peak
RSS of a fresh ``arena`` process (``resource.getrusage`` of a small probe process whose only
child it is), median of ``--runs``.

The results are synthetic but shaped like a ladder's: bots with normally spread strengths
(sd 200 Elo), random pairings, outcomes drawn from the Elo expectation with draws, about 1% of
matches lost by a fault (a timeout or a crash, with its fault record), finish times in order,
one version per bot, every match ``done`` and confined, all of them in one round-robin
tournament (id 1) whose field is every bot. No moves are stored (the commands timed here read
none but their count). Targets at 1M matches and 1,000 bots (issue 29):
``matches --limit 50`` <= 0.3 s, ``leaderboard`` <= 2 s, ``tournament show`` <= 2 s (at 80
columns), ``report`` <= 30 s and 400 MB; ``export`` is timed too (issue 29: jsonl at least
20,000 matches/s and at most 200 MB). ``--commands`` picks some of them by name.

Each database is built once into ``--dir`` (default: the temporary folder) and reused while
it is there; ``--pg URL`` builds and times on PostgreSQL as well (a schema per size, named
``scale_<matches>_<bots>``, rebuilt when missing). To time another command, add a line to
``COMMANDS``: its arguments after ``arena`` (``--db`` is appended).

    python bench/scale.py [--sizes 10000,100000,1000000] [--bots 100,1000] [--runs 3]
                          [--dir DIR] [--pg URL]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Connection, create_engine, insert, make_url, text

from bot_arena.db import pair_totals
from bot_arena.db.models import Bot, BotVersion, Entry, Match, Seat, Tournament
from bot_arena.db.session import make_engine

ARENA = [sys.executable, "-m", "bot_arena.arena.cli.app"]
#: name -> the command's arguments after ``arena`` (the database is appended as ``--db``)
COMMANDS: dict[str, list[str]] = {
    "matches --limit 50": ["matches", "--limit", "50"],
    "leaderboard": ["leaderboard"],
    "tournament list": ["tournament", "list"],
    "tournament show 1": ["tournament", "show", "1"],
    "export -f jsonl": ["export", "-f", "jsonl"],
    "export -f csv": ["export", "-f", "csv"],
    "export -f pgn": ["export", "-f", "pgn"],
    # a file of its own: the report is written to a temporary file renamed over its target
    "report": ["report", "-o", str(Path(tempfile.gettempdir()) / "arena-scale-report.html")],
}
#: seconds of wall time
TARGETS_1M_1000 = {
    "matches --limit 50": 0.3,
    "leaderboard": 2.0,
    "tournament show 1": 2.0,
    "report": 30.0,  # and at most 400 MB peak RSS, 25 MB of HTML
}
CHUNK = 20_000  # matches per insert batch
GAME = "tictactoe"
START = datetime(2026, 1, 1, tzinfo=UTC)


def synthetic(matches: int, bots: int, seed: int = 1) -> dict[str, np.ndarray]:
    """Columns of ``matches`` results between ``bots`` bots (see the module docstring)."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(0.0, 200.0, bots)
    a = rng.integers(0, bots, matches)
    b = (a + rng.integers(1, bots, matches)) % bots
    expect = 1.0 / (1.0 + 10.0 ** ((truth[b] - truth[a]) / 400.0))
    draw = np.minimum(expect, 1.0 - expect) * 0.6
    u = rng.random(matches)
    outcome = np.where(u < expect - draw / 2, 0, np.where(u < expect + draw / 2, 1, 2))
    fault = np.where(rng.random(matches) < 0.01, rng.integers(1, 3, matches), 0)
    outcome = np.where(fault > 0, np.where(rng.random(matches) < 0.5, 0, 2), outcome)
    return {"a": a, "b": b, "outcome": outcome, "fault": fault}


def _rows(
    columns: dict[str, np.ndarray], first_id: int, versions: list[int]
) -> Iterator[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """(match rows, seat rows) a chunk at a time."""
    ranks = {0: (1, 2), 1: (1, 1), 2: (2, 1)}
    kinds = {1: "timeout", 2: "crash"}
    total = len(columns["a"])
    for start in range(0, total, CHUNK):
        matches: list[dict[str, Any]] = []
        seats: list[dict[str, Any]] = []
        stop = min(start + CHUNK, total)
        a, b = columns["a"][start:stop].tolist(), columns["b"][start:stop].tolist()
        outcome = columns["outcome"][start:stop].tolist()
        faults = columns["fault"][start:stop].tolist()
        for i, (x, y, o, f) in enumerate(zip(a, b, outcome, faults, strict=True)):
            match_id = first_id + start + i
            finished = START + timedelta(seconds=match_id)
            loser = 1 if o == 0 else 0
            matches.append(
                {
                    "id": match_id,
                    "tournament_id": 1,
                    "round": 0,
                    "game": GAME,
                    "params": {},
                    "time_control": {},
                    "players": 2,
                    "seed": match_id,
                    "opening": "",
                    "status": "done",
                    "termination": kinds[f] if f else "normal",
                    "fault_reason": f"seat {loser}: {kinds[f]}" if f else None,
                    "started": finished - timedelta(seconds=0.5),
                    "finished": finished,
                    "duration_s": 0.5,
                    "sandbox": "confined",
                }
            )
            for seat, (bot, rank) in enumerate(zip((x, y), ranks[o], strict=True)):
                fault = (
                    {"termination": kinds[f], "detail": "synthetic"}
                    if f and seat == loser
                    else None
                )
                seats.append(
                    {
                        "match_id": match_id,
                        "players": 2,
                        "seat": seat,
                        "bot_version_id": versions[bot],
                        "utility": {1: 1.0, 2: -1.0}[rank] if o != 1 else 0.0,
                        "rank": rank,
                        "score": 0.5 if o == 1 else (1.0 if rank == 1 else 0.0),
                        "fault": fault,
                    }
                )
        yield matches, seats


def build(url: str, matches: int, bots: int) -> float:
    """Fill the empty database at ``url`` (schema made by our migrations); seconds taken."""
    began = time.perf_counter()
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(
                insert(Bot),
                [{"id": i + 1, "name": f"bot{i:04d}", "registered": False} for i in range(bots)],
            )
            conn.execute(
                insert(BotVersion),
                [
                    {
                        "id": i + 1,
                        "bot_id": i + 1,
                        "kind": "builtin",
                        "target": f"bot{i:04d}",
                        "sha256": hashlib.sha256(f"bot{i}".encode()).hexdigest(),
                    }
                    for i in range(bots)
                ],
            )
            conn.execute(
                insert(Tournament),
                [
                    {
                        "id": 1,
                        "name": "scale",
                        "game": GAME,
                        "params": {},
                        "time_control": {},
                        "format": "round-robin",
                        "settings": {"games": 2},
                        "seed": 1,
                        "status": "done",
                        "created": START,
                        "finished": START + timedelta(seconds=matches + 1),
                    }
                ],
            )
            conn.execute(
                insert(Entry),
                [
                    {
                        "tournament_id": 1,
                        "position": i,
                        "spec": f"bot{i:04d}",
                        "bot_version_id": i + 1,
                    }
                    for i in range(bots)
                ],
            )
        versions = list(range(1, bots + 1))
        for match_rows, seat_rows in _rows(synthetic(matches, bots), 1, versions):
            with engine.begin() as conn:
                if engine.dialect.name == "sqlite":  # the driver's executemany: 10x quicker
                    _driver_insert(conn, "matches", match_rows)
                    _driver_insert(conn, "seats", seat_rows)
                else:
                    conn.execute(insert(Match), match_rows)
                    conn.execute(insert(Seat), seat_rows)
        with engine.begin() as conn:  # what the writers keep, summed once for the bulk rows
            for fill in pair_totals.FILLS:
                conn.exec_driver_sql(fill)
        if engine.dialect.name == "postgresql":
            # VACUUM as well: a database written for weeks has been vacuumed by autovacuum,
            # one bulk-loaded a minute ago has no visibility map, so every index-only scan
            # reads the heap too (issue 29: the leaderboard's count of done matches, a
            # parallel seq scan of 1M rows, 0.32-0.38 s; vacuumed, an index-only scan,
            # 0.10-0.13 s)
            with engine.connect() as conn:
                auto = conn.execution_options(isolation_level="AUTOCOMMIT")
                auto.exec_driver_sql("VACUUM ANALYZE")
    finally:
        engine.dispose()
    return time.perf_counter() - began


def _driver_insert(conn: Connection, table: str, rows: list[dict[str, Any]]) -> None:
    """``rows`` into a SQLite ``table`` by the driver's executemany, each value stored as
    SQLAlchemy stores it there (JSON as text, NULL for None, timestamps as naive UTC text)."""

    def stored(value: Any) -> Any:
        if isinstance(value, dict):
            return json.dumps(value)
        if isinstance(value, datetime):
            return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        return value

    names = list(rows[0])
    marks = ", ".join("?" for _ in names)
    conn.exec_driver_sql(
        f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})",
        [tuple(stored(row[n]) for n in names) for row in rows],
    )


def sqlite_database(folder: Path, matches: int, bots: int) -> str:
    path = folder / f"arena-scale-{matches}-{bots}.db"
    if not path.exists():
        partial = path.with_name(path.name + ".part")
        partial.unlink(missing_ok=True)
        seconds = build(f"sqlite:///{partial}", matches, bots)
        partial.rename(path)  # only a whole database is reused
        print(f"built {path} in {seconds:.1f} s", flush=True)
    return str(path)


def pg_database(base: str, matches: int, bots: int) -> str:
    schema = f"scale_{matches}_{bots}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            found = conn.execute(
                text(
                    "SELECT 1 FROM information_schema.tables"
                    " WHERE table_schema = :s AND table_name = 'matches'"
                ),
                {"s": schema},
            ).first()
            done = (
                found is not None
                and conn.exec_driver_sql(f"SELECT count(*) FROM {schema}.matches").scalar()
                == matches
            )
            if not done:
                conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
                conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    finally:
        admin.dispose()
    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    full = url.render_as_string(hide_password=False)
    if not done:
        print(f"built PostgreSQL {schema} in {build(full, matches, bots):.1f} s", flush=True)
    return full


#: Runs a command and prints its (wall s, CPU s, peak RSS KB). A fork of this (large) bench
#: process would count the bench's own pages in the command's peak RSS until its exec, so the
#: command is started by this small interpreter instead.
_PROBE = """
import resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(code, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
"""


def once(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one run of ``argv``."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, env=env
    )
    code, wall, cpu, rss = done.stdout.split()
    if code != "0":
        raise SystemExit(f"{' '.join(argv)}: failed: {done.stderr[-300:]}")
    return float(wall), float(cpu), float(rss) / 1024


def measure(name: str, db: str, runs: int, env: dict[str, str]) -> tuple[float, float, float]:
    argv = [*ARENA, *COMMANDS[name], "--db", db]
    once(argv, env)  # warm the file cache
    samples = [once(argv, env) for _ in range(runs)]
    wall, cpu, rss = (statistics.median(s[i] for s in samples) for i in range(3))
    return wall, cpu, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--bots", default="100,1000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--pg", default=None, help="a PostgreSQL URL to time as well")
    parser.add_argument(
        "--commands", default=",".join(COMMANDS), help="names of COMMANDS to time, by commas"
    )
    options = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "ARENA_DB")}
    env["COLUMNS"] = "80"
    print(f"load averages (1, 5, 15 min): {os.getloadavg()}")
    print(f"{'backend':<10} {'matches':>9} {'bots':>5}  {'command':<22}", end="")
    print(f" {'wall s':>7} {'cpu s':>7} {'peak MB':>8}")
    for matches in map(int, options.sizes.split(",")):
        for bots in map(int, options.bots.split(",")):
            dbs = {"sqlite": sqlite_database(options.dir, matches, bots)}
            if options.pg:
                dbs["postgresql"] = pg_database(options.pg, matches, bots)
            for backend, db in dbs.items():
                for name in options.commands.split(","):
                    wall, cpu, rss = measure(name, db, options.runs, env)
                    line = f"{backend:<10} {matches:>9,} {bots:>5}  {name:<22}"
                    line += f" {wall:7.2f} {cpu:7.2f} {rss:8.0f}"
                    target = TARGETS_1M_1000.get(name)
                    if target is not None and matches == 1_000_000 and bots == 1000:
                        line += f"  target <= {target:g} s: " + (
                            "met" if wall <= target else "NOT met"
                        )
                    print(line, flush=True)


if __name__ == "__main__":
    main()
