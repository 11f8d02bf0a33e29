"""UCI engines through the arena: stockfish against stockfish (Threads=1, Hash=16). Prints
medians and ratios against baselines measured in the same run; asserts nothing.

1. Per-move overhead. On one stockfish process, taking turns: the bare UCI round trip
   (``isready``/``readyok`` written and read on the same pipes with plain blocking calls), the
   bare move (``position ... moves ...`` + ``go depth 1`` until ``bestmove``, the same way),
   and the arena's move (``UciSeat.ask`` on the same request: poll deadlines, bounded reads, the
   request decoded, the info kept and parsed). The arena's overhead per move is its median
   minus the bare move's (target: under 0.2 ms).
2. A tournament: ``--games`` games at ``--clock`` (default 2+0.02) with ``--jobs`` (default 2),
   as ``arena tournament run`` plays them: games per hour and losses on time (target: none for
   engines that use their clock normally).

    python bench/uci.py [--quick] [--games N] [--clock BASE+INC] [--jobs N] [--rounds N]
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bot_arena import games
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.record import MoveRecord
from bot_arena.arena.match.timecontrol import Clock, TimeControl
from bot_arena.arena.match.uci import UciSeat
from bot_arena.arena.transport import protocol
from bot_arena.arena.transport.process import BotProcess

OPENING = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]


def option(name: str, default: str) -> str:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def find_stockfish() -> str:
    found = shutil.which("stockfish", path=os.environ.get("PATH", "") + os.pathsep + "/usr/games")
    if found is None:
        sys.exit("stockfish is not installed (apt-get install stockfish)")
    return found


def read_until(proc: subprocess.Popen[bytes], word: bytes) -> None:
    assert proc.stdout is not None
    while not proc.stdout.readline().startswith(word):
        pass


def overhead(engine: str, rounds: int) -> None:
    """Bare round trip, bare move and arena move, taking turns on one engine process."""
    spec = f"uci:{engine} option.Threads=1 option.Hash=16"
    ref = resolve(spec)
    chess = games.get("chess")
    process = BotProcess([engine])
    seat = UciSeat(ref, process)
    seat.start(protocol.hello(game="chess", params={}, seat=0, players=2, seed=0, position=""))
    assert seat.finish_start(time.monotonic() + 10, chess) is None
    proc = process.proc
    clocks = [Clock(TimeControl(move_time=10.0, depth=1))] * 2
    state = chess.initial_state()
    for move in OPENING:
        state = chess.apply(state, move)
    line = protocol.RequestWriter()
    for move in OPENING:
        line.played(move)
    played = [MoveRecord(i % 2, move, 0.0) for i, move in enumerate(OPENING)]
    request = protocol.MoveRequest(
        1, line.line(1, '""', "", clocks[0].request_json()), {}, 10.0, clocks, played
    )
    bare_go = (
        "position startpos moves " + " ".join(OPENING) + "\ngo movetime 10000 depth 1\n"
    ).encode()
    assert proc.stdin is not None
    trips: list[float] = []
    bare_moves: list[float] = []
    arena_moves: list[float] = []
    for _ in range(rounds):
        start = time.perf_counter()
        os.write(process.fd_in, b"isready\n")
        _, raw = process.read_line(time.monotonic() + 5)
        trips.append(time.perf_counter() - start)
        assert raw == b"readyok", raw
        start = time.perf_counter()
        os.write(process.fd_in, bare_go)
        while not process.read_line(time.monotonic() + 5)[1].startswith(b"bestmove"):
            pass
        bare_moves.append(time.perf_counter() - start)
        start = time.perf_counter()
        reply = seat.ask(chess, state, request, 11.0)
        arena_moves.append(time.perf_counter() - start)
        assert reply.fault is None and reply.move, reply
    seat.ask_quit(time.monotonic() + 1)
    seat.finish_quit(time.monotonic() + 2)
    trip, bare, ours = (statistics.median(x) * 1e3 for x in (trips, bare_moves, arena_moves))
    print(f"per move, median of {rounds} (stockfish, go depth 1 from the Ruy Lopez)")
    print(f"  bare UCI round trip (isready/readyok)   {trip:8.3f} ms")
    print(f"  bare move (position + go, bestmove)     {bare:8.3f} ms  1.00x")
    print(f"  arena move (UciSeat.ask)                {ours:8.3f} ms  {ours / bare:.2f}x")
    verdict = "met" if ours - bare < 0.2 else "NOT met"
    extra = ours - bare
    print(f"  arena overhead per move                 {extra:8.3f} ms  target < 0.2: {verdict}")


def tournament(engine: str, games_n: int, clock: str, jobs: int) -> None:
    spec = f"uci:{engine} option.Threads=1 option.Hash=16"
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-uci-"))
    db = f"sqlite:///{folder / 'bench.db'}"
    argv = [sys.executable, "-m", "bot_arena.arena.cli.app", "tournament", "run", "chess"]
    # stockfish's default overhead: the same engine under a name of its own
    twin = spec + " 'option.Move Overhead=10'"
    argv += ["--bot", spec, "--bot", twin, "--games", str(games_n)]
    argv += ["--clock", clock, "--jobs", str(jobs), "--db", db, "--seed", "1", "--json"]
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        print(done.stderr[-2000:])
        sys.exit(f"the tournament failed (exit {done.returncode})")
    export = subprocess.run(
        [sys.executable, "-m", "bot_arena.arena.cli.app", "export", "--db", db],
        capture_output=True,
        text=True,
        check=True,
    )
    import json

    records = json.loads(export.stdout)
    ends = Counter(r["termination"] for r in records)
    plies = statistics.median(len(r["moves"]) for r in records)
    print(f"tournament: {len(records)} games at {clock}, --jobs {jobs}, {wall:.1f} s")
    print(f"  games/hour {len(records) / wall * 3600:8.0f}   median plies {plies:.0f}")
    print(f"  terminations {dict(ends)}")
    timeouts = ends.get("timeout", 0)
    print(f"  losses on time {timeouts}  target 0: {'met' if timeouts == 0 else 'NOT met'}")
    shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    quick = "--quick" in sys.argv
    engine = find_stockfish()
    overhead(engine, int(option("--rounds", "50" if quick else "300")))
    tournament(
        engine,
        int(option("--games", "4" if quick else "20")),
        option("--clock", "2+0.02"),
        int(option("--jobs", "2")),
    )


if __name__ == "__main__":
    main()
