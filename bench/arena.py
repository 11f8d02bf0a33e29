"""Arena benchmarks: per-move overhead against a bare pipe round trip, time-limit enforcement,
and isolated random-vs-random tic-tac-toe throughput. Prints medians; asserts nothing.

    python bench/arena.py [--quick]

Everything runs pinned to one core, so every round trip costs two context switches. The
baselines (see ``bare_round_trip``) are what any design with a process per bot must pay at
least: a line to a Python echo process and back with a plain write and a blocking read, and the
same with JSON decoded and encoded at both ends; each with one process, and with two taking
turns as the two seats of a match do. The arena adds what the bare trips leave out: a deadline
enforced with poll, bounded reads, every answer checked field by field, every move validated
against the referee's own state, the clock charged, the move logged.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bot_arena import games
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import BotPool, play_match
from bot_arena.arena.match.record import MoveRecord
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.transport.limits import ResourceLimits

HUNG = Path(__file__).resolve().parents[1] / "tests" / "arena" / "fixtures" / "sleep_forever.py"
ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"
# The least a JSON-lines bot can do: decode the request, encode an answer (same pipes, no game).
JSON_ECHO = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    req = json.loads(line)\n"
    "    sys.stdout.write(json.dumps({'type': 'move', 'id': req['id'], 'move': req['legal'][0]})"
    " + '\\n')\n"
    "    sys.stdout.flush()\n"
)
REQUEST = (
    b'{"type":"move","id":3,"position":"x...o....","moves":["1","5"],'
    b'"legal":["2","3","4","6","7","8","9"],"clock":{"move_time":1.0,"remaining":null,'
    b'"increment":0.0,"deadline":1.0}}\n'
)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bare_round_trip(n: int, script: str = ECHO, use_json: bool = False, procs: int = 1) -> float:
    """Median seconds for one request-sized line (the 190-byte tic-tac-toe request above) to a
    Python echo process and back: one ``os.write``, then blocking ``os.read`` until the newline;
    no poll, no deadline, no validation. With ``use_json`` both ends also decode and encode
    JSON, as any JSON-lines pair must (the echo answers a small move object). With ``procs=2``
    two such processes answer in turn, as the two seats of a match do: each request then finds
    its process's memory cold, which is part of the price of one process per seat."""
    import json

    children = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        for _ in range(procs)
    ]
    fds = []
    for proc in children:
        assert proc.stdin is not None and proc.stdout is not None
        fds.append((proc.stdin.fileno(), proc.stdout.fileno()))
    request = json.loads(REQUEST)
    times = []
    for i in range(n):
        fd_in, fd_out = fds[i % procs]
        t = time.perf_counter()
        os.write(fd_in, (json.dumps(request) + "\n").encode() if use_json else REQUEST)
        got = b""
        while not got.endswith(b"\n"):
            got += os.read(fd_out, 65536)
        if use_json:
            json.loads(got)
        times.append(time.perf_counter() - t)
    for proc in children:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    return statistics.median(times)


def arena_moves(games_n: int) -> tuple[float, float]:
    """Medians over random-vs-random tic-tac-toe moves through worker processes: the arena's
    measured request-to-answer time, and the full cycle between two logged moves (request built,
    sent, answered, validated, applied, logged)."""
    game = games.get("tictactoe")
    refs = [resolve("random"), resolve("random")]
    answer: list[float] = []
    cycle: list[float] = []
    with BotPool() as pool:
        for seed in range(games_n):
            last = [0.0]

            def on_move(move: MoveRecord, last: list[float] = last) -> None:
                now = time.perf_counter()
                if last[0]:
                    cycle.append(now - last[0])
                last[0] = now
                answer.append(move.time_ms / 1000)

            pool.play(
                game, refs, time_control=TimeControl(move_time=1.0), seed=seed, on_move=on_move
            )
    return statistics.median(answer), statistics.median(cycle)


def enforcement(trials: int, move_time: float, margin: float) -> list[float]:
    """Seconds from the opponent's move being logged (the hung bot's request follows at once)
    until play() returns with the hung bot lost on time."""
    game = games.get("tictactoe")
    refs = [resolve("random"), resolve(str(HUNG))]
    out = []
    with BotPool(ResourceLimits(startup_s=10)) as pool:
        for seed in range(trials):
            mark = [0.0]

            def on_move(move: MoveRecord, mark: list[float] = mark) -> None:
                mark[0] = time.perf_counter()

            record = pool.play(
                game,
                refs,
                time_control=TimeControl(move_time, margin=margin),
                seed=seed,
                on_move=on_move,
            )
            out.append(time.perf_counter() - mark[0])
            assert record.termination.value == "timeout", record.termination
    return out


def throughput(seconds: float) -> tuple[float, float]:
    """Games per second, random vs random tic-tac-toe, pinned to one core: with a pool (processes
    reused across the series) and with fresh processes per game."""
    game = games.get("tictactoe")
    refs = [resolve("random"), resolve("random")]
    tc = TimeControl(move_time=1.0)
    n, t0 = 0, time.perf_counter()
    with BotPool() as pool:
        while time.perf_counter() - t0 < seconds:
            pool.play(game, refs, time_control=tc, seed=n)
            n += 1
    pooled = n / (time.perf_counter() - t0)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        play_match(game, refs, time_control=tc, seed=n)
        n += 1
    fresh = n / (time.perf_counter() - t0)
    return pooled, fresh


def main() -> None:
    quick = "--quick" in sys.argv
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # children inherit it
    reps = 3 if not quick else 1
    bare = statistics.median(bare_round_trip(2000) for _ in range(reps))
    bare2 = statistics.median(bare_round_trip(2000, procs=2) for _ in range(reps))
    bare_json = statistics.median(bare_round_trip(2000, JSON_ECHO, True) for _ in range(reps))
    bare_json2 = statistics.median(
        bare_round_trip(2000, JSON_ECHO, True, procs=2) for _ in range(reps)
    )
    answers, cycles = zip(
        *(arena_moves(100 if not quick else 20) for _ in range(reps)), strict=True
    )
    ans, cyc = statistics.median(answers), statistics.median(cycles)
    print("per move (medians, one core, worker processes, random vs random tic-tac-toe)")
    print("  baselines: write a request line, blocking read of the answer line (no poll, no")
    print("  deadline, no validation); 'two' = two processes answering in turn, like two seats")
    print(f"  bare pipe round trip, one python echo:  {bare * 1e3:.3f} ms")
    print(f"  bare pipe round trip, two echoes:       {bare2 * 1e3:.3f} ms")
    print(f"  bare JSON-lines round trip, one bot:    {bare_json * 1e3:.3f} ms")
    print(f"  bare JSON-lines round trip, two bots:   {bare_json2 * 1e3:.3f} ms")
    print(f"  arena request->answer (time_ms):        {ans * 1e3:.3f} ms")
    print(f"  arena full move cycle (logged->logged): {cyc * 1e3:.3f} ms")
    print(
        f"  full cycle over: one echo {cyc / bare:.2f}x, two echoes {cyc / bare2:.2f}x, "
        f"JSON-lines one {cyc / bare_json:.2f}x, two {cyc / bare_json2:.2f}x"
    )
    print(
        f"  request->answer over: one echo {ans / bare:.2f}x, "
        f"JSON-lines two bots {ans / bare_json2:.2f}x"
    )
    print(f"  arena overhead over the bare trip:      {(cyc - bare) * 1e3:.3f} ms")

    move_time, margin = 0.2, 0.05
    lat = enforcement(50 if not quick else 10, move_time, margin)
    budget = move_time + margin + 0.03
    print(f"time-limit enforcement, move time {move_time}s, margin {margin}s, {len(lat)} trials")
    print(
        f"  hung bot lost, match moved on after: p50 {statistics.median(lat) * 1e3:.1f} ms, "
        f"p99 {pct(lat, 0.99) * 1e3:.1f} ms, max {max(lat) * 1e3:.1f} ms "
        f"(target <= {budget * 1e3:.0f} ms)"
    )

    pooled, fresh = throughput(5.0 if not quick else 1.0)
    print("throughput, random vs random tic-tac-toe, isolated processes, one core")
    print(f"  pooled (processes reused): {pooled:.1f} games/s")
    print(f"  fresh processes per game:  {fresh:.1f} games/s")


if __name__ == "__main__":
    main()
