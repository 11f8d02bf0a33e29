"""The arena against fastchess (issue 32): the same stockfish pair (Threads=1, Hash=16), the same
EPD book taken in order, game pairs with colours swapped, each tool run as its users run it
(``arena tournament run``; ``fastchess ... -pgnout``). Prints medians and ratios against
fastchess measured in the same run, rounds alternating between the two; asserts nothing.

1. Fixed nodes (``--nodes``, default 5000), one game at a time, ``--max-moves`` 60: the games
   must be identical move for move (checked: start, White, every move; a difference is said and
   the script exits 1); wall-time ratio arena/fastchess (target <= 1.0) and CPU-time ratio
   (user+sys of the tool and its engines: what to compare when the machine is shared).
2. A 1+0.01 clock (``--max-moves`` 60 too), two games at once, ``--clock-games`` (default
   100; 0 leaves this part out) games: losses on time of each (target 0 for the arena) and
   the wall-time ratio. Margins: the arena's default (50 ms) and fastchess's
   ``timemargin=50``, so both forgive the same lateness.

fastchess is not packaged: build it from its public source (github.com/Disservin/fastchess,
``make``) and name the binary in ``$FASTCHESS``; without it the arena is measured alone, and
the script says so.

    FASTCHESS=/path/to/fastchess python bench/engines.py [--quick] [--rounds N] [--games N]
        [--nodes N] [--clock-games N]

The wall-time ratio is only worth reading on a quiet machine (load average below 1, nothing
else running: under load each of the arena's wake-ups per move waits for a core, and the
ratio says more about the load than about either tool). The measurement to make there, about
12 minutes::

    git clone https://github.com/Disservin/fastchess /tmp/fastchess && make -C /tmp/fastchess -j2
    uptime && FASTCHESS=/tmp/fastchess/fastchess python bench/engines.py --games 20 \
        --rounds 5 --clock-games 100
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn
from uci import find_stockfish, option  # the same helper, one home (a sibling script)

# positions after the first moves of common openings (the book both tools take in order)
BOOK = [
    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -",
    "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -",
    "rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq -",
    "rnbqkb1r/pppppppp/5n2/8/3P4/8/PPP1PPPP/RNBQKBNR w KQkq -",
    "rnbqkbnr/pppp1ppp/4p3/8/3PP3/8/PPP2PPP/RNBQKBNR b KQkq -",
    "rnbqkbnr/pp1ppppp/2p5/8/3PP3/8/PPP2PPP/RNBQKBNR b KQkq -",
    "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq -",
    "rnbqkbnr/pppppp1p/6p1/8/3PP3/8/PPP2PPP/RNBQKBNR b KQkq -",
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq -",
    "rnbqkbnr/ppp2ppp/4p3/3p4/3PP3/8/PPP2PPP/RNBQKBNR w KQkq -",
]
OPTIONS = ["option.Threads=1", "option.Hash=16"]
MAX_MOVES = 60


@dataclass
class Played:
    """One tool's run: its games as (start FEN's four fields, White, UCI moves), how each
    ended, and its times."""

    games: list[tuple[str, str, tuple[str, ...]]]
    timeouts: int
    wall: float
    cpu: float  # user+sys of the tool and everything it started


# The arena as its users run it: an installed package's modules are compiled once, at install
# (pip's default), and read from their bytecode at every start. With $PYTHONDONTWRITEBYTECODE
# set (as in the team's shells) and a checkout's bytecode older than its sources, every run
# compiled the modules changed since (82 of them at 9a41bf7, about 0.1 s of CPU on the way to
# the first game) where fastchess starts at once: the bytecode is made once, before the runs
# (``compile_package``), and the arena's runs may write it (bench/startup.py does the same).
ARENA_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def compile_package() -> None:
    """Bring the bytecode of the arena's modules up to date (untimed), as an install would."""
    found = importlib.util.find_spec("bot_arena.arena")  # an editable install's path hook
    assert found is not None and found.origin is not None  # lists no folder: its file's does
    root = Path(found.origin).parent.parent
    folders = [str(root / name) for name in ("arena", "bots", "db", "games")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], env=ARENA_ENV, check=True)


def timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Run ``argv`` to its end (``env``: its environment, else this one's): its wall time and
    the CPU time of it and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        print(done.stdout[-1500:], done.stderr[-1500:])
        sys.exit(f"{Path(argv[0]).name} failed (exit {done.returncode})")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def epd4(fen: str) -> str:
    return " ".join(fen.split()[:4])


def arena(engine: str, folder: Path, games: int, limits: list[str], jobs: int) -> Played:
    db = f"sqlite:///{folder / 'arena.db'}"
    Path(folder / "arena.db").unlink(missing_ok=True)
    cli = [sys.executable, "-m", "bot_arena.arena.cli.app"]
    bots = []
    for name in ("a", "b"):
        bots += ["--bot", " ".join([f"uci:{engine}", f"name={name}", *OPTIONS])]
    argv = [*cli, "tournament", "run", "chess", *bots, "--games", str(games), *limits]
    argv += ["--openings", "book.epd", "--jobs", str(jobs), "--db", db, "--seed", "1", "--json"]
    wall, cpu = timed(argv, folder, ARENA_ENV)
    out = subprocess.run(
        [*cli, "export", "--format", "jsonl", "--db", db],
        capture_output=True,
        text=True,
        check=True,
    )
    records = [json.loads(line) for line in out.stdout.splitlines()]
    played = [
        (
            epd4(r["start_position"]),
            r["seats"][0]["bot"],
            tuple(m["move"] for m in r["moves"]),
        )
        for r in records
    ]
    ends = Counter(r["termination"] for r in records)
    return Played(played, ends.get("timeout", 0), wall, cpu)


def fastchess(
    binary: str, engine: str, folder: Path, games: int, each: list[str], jobs: int
) -> Played:
    """fastchess over the same pair and book: ``each``: its ``-each`` limits (``tc=``,
    ``nodes=``); ``-maxmoves MAX_MOVES`` as the arena's ``--max-moves``."""
    pgn = folder / "fastchess.pgn"
    pgn.unlink(missing_ok=True)
    argv = [binary]
    for name in ("a", "b"):
        argv += ["-engine", f"cmd={engine}", f"name={name}"]
    argv += ["-each", "proto=uci", *OPTIONS, *each, "-maxmoves", str(MAX_MOVES)]
    argv += ["-openings", "file=book.epd", "format=epd", "order=sequential"]
    argv += ["-rounds", str(games // 2), "-repeat", "-concurrency", str(jobs)]
    argv += ["-pgnout", f"file={pgn}", "notation=uci"]
    wall, cpu = timed(argv, folder)
    played = []
    timeouts = 0
    with open(pgn, encoding="utf-8") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            board = game.board()
            moves = tuple(m.uci() for m in game.mainline_moves())
            played.append((epd4(board.fen()), game.headers["White"], moves))
            if re.search(r"time forfeit", game.headers.get("Termination", ""), re.I):
                timeouts += 1
    return Played(played, timeouts, wall, cpu)


def rounds_of(runs: list[Played]) -> tuple[float, float]:
    return statistics.median(r.wall for r in runs), statistics.median(r.cpu for r in runs)


def fixed_nodes(engine: str, binary: str | None, folder: Path, games: int, rounds: int) -> bool:
    nodes = option("--nodes", "5000")
    ours: list[Played] = []
    theirs: list[Played] = []
    arena_limits = ["--nodes", nodes, "--move-time", "30", "--max-moves", str(MAX_MOVES)]
    fc_limits = [f"nodes={nodes}", "tc=inf"]
    for _ in range(rounds):  # alternating, so that a change in the machine's load hits both
        ours.append(arena(engine, folder, games, arena_limits, 1))
        if binary is not None:
            theirs.append(fastchess(binary, engine, folder, games, fc_limits, 1))
    print(f"1. fixed nodes ({nodes}), one game at a time, {games} games, median of {rounds}")
    wall, cpu = rounds_of(ours)
    print(f"   arena      wall {wall:7.2f} s   cpu {cpu:7.2f} s")
    if binary is None:
        print("   fastchess  not measured ($FASTCHESS unset): the arena alone")
        return True
    fwall, fcpu = rounds_of(theirs)
    print(f"   fastchess  wall {fwall:7.2f} s   cpu {fcpu:7.2f} s")
    verdict = "met" if wall / fwall <= 1.0 else "NOT met"
    print(f"   ratio arena/fastchess: wall {wall / fwall:.3f} (target <= 1.0: {verdict}),")
    print(f"   cpu {cpu / fcpu:.3f}")
    same = all(Counter(a.games) == Counter(f.games) for a, f in zip(ours, theirs, strict=True))
    if same:
        print(f"   games identical move for move: yes ({len(ours[0].games)} a round)")
    else:
        only = set(ours[0].games) ^ set(theirs[0].games)
        print(f"   games identical move for move: NO ({len(only)} differ), e.g.:")
        for start, white, moves in sorted(only)[:2]:
            print(f"     {start} {white}: {' '.join(moves[:12])} ...")
    return same


def clocked(engine: str, binary: str | None, folder: Path, games: int) -> None:
    clock = "1+0.01"
    ours = arena(engine, folder, games, ["--clock", clock, "--max-moves", str(MAX_MOVES)], 2)
    print(f"2. clock {clock}, two games at once, {games} games")
    print(f"   arena      wall {ours.wall:7.2f} s   cpu {ours.cpu:7.2f} s   losses on time "
          f"{ours.timeouts} (target 0: {'met' if ours.timeouts == 0 else 'NOT met'})")  # fmt: skip
    if binary is None:
        print("   fastchess  not measured ($FASTCHESS unset): the arena alone")
        return
    theirs = fastchess(binary, engine, folder, games, [f"tc={clock}", "timemargin=50"], 2)
    print(f"   fastchess  wall {theirs.wall:7.2f} s   cpu {theirs.cpu:7.2f} s   losses on time "
          f"{theirs.timeouts}")  # fmt: skip
    print(f"   ratio arena/fastchess: wall {ours.wall / theirs.wall:.3f}, "
          f"cpu {ours.cpu / theirs.cpu:.3f}")  # fmt: skip


def main() -> None:
    quick = "--quick" in sys.argv
    engine = find_stockfish()
    binary = os.environ.get("FASTCHESS") or None
    if binary is not None and not os.access(binary, os.X_OK):
        sys.exit(f"$FASTCHESS={binary!r} is not an executable file")
    games = int(option("--games", "4" if quick else "20"))
    rounds = int(option("--rounds", "1" if quick else "3"))
    clock_games = int(option("--clock-games", "10" if quick else "100"))
    if games % 2 or clock_games % 2:
        sys.exit("--games and --clock-games must be even (game pairs)")
    print(f"stockfish {engine}; fastchess {binary or '(not given: arena alone)'}")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    compile_package()
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-engines-"))
    try:
        (folder / "book.epd").write_text("\n".join(BOOK) + "\n")
        same = fixed_nodes(engine, binary, folder, games, rounds)
        if clock_games:  # --clock-games 0: part 1 alone
            clocked(engine, binary, folder, clock_games)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
