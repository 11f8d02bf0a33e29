"""Arena benchmarks: per-move overhead against a bare pipe round trip, time-limit enforcement,
isolated random-vs-random tic-tac-toe throughput, and what confining the bots costs (the
sandbox, docs/security.md). Prints medians; asserts nothing.

    python bench/arena.py [--quick]

Everything runs pinned to one core, so every round trip costs two context switches. The
baselines (see ``bare_round_trip``) are what any design with a process per bot must pay at
least: a line to a Python echo process and back with a plain write and a blocking read, and the
same with JSON decoded and encoded at both ends; each with one process, and with two taking
turns as the two seats of a match do. The arena adds what the bare trips leave out: a deadline
enforced with poll, bounded reads, every answer checked field by field, every move validated
against the referee's own state, the clock charged, the move logged. Those sections run the
bots as the arena does by default (``--sandbox auto``).

The last section measures the sandbox against itself in one run: the same measurements with
``--sandbox off`` and ``auto``, the two modes taking turns at every measurement (so that the
machine's drift and its other work fall on both alike): the start-up of a forked Python bot (a
built-in and a file) and of a ``cmd:`` bot (new process until its ``hello`` is answered), the
per-move cycle, and games per second through a pool; beside each, the issue's target (confined
start-up under 10 ms for forked Python bots, per move within 5%, games/s within 10%).
"""

from __future__ import annotations

import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bot_arena import games
from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import BotPool, play_match
from bot_arena.arena.match.record import Fault, MoveRecord
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.transport import protocol
from bot_arena.arena.transport.limits import ResourceLimits
from bot_arena.arena.transport.sandbox.mode import Mode, SandboxSettings
from bot_arena.games.base import Game

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "arena" / "fixtures"
HUNG = FIXTURES / "sleep_forever.py"
FILE_BOT = FIXTURES / "first_legal.py"  # a Python bot file: plays the first legal move
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
# A ``cmd:`` bot: a program that speaks the line protocol itself (a Python one, so that its own
# start-up is known: the interpreter's, with nothing imported but json).
CMD_SOURCE = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    r = json.loads(line)\n"
    "    if r['type'] == 'move':\n"
    "        answer = {'type': 'move', 'id': r['id'], 'move': r['legal'][0]}\n"
    "        print(json.dumps(answer), flush=True)\n"
    "    elif r['type'] == 'quit':\n"
    "        break\n"
    "    else:\n"
    "        print(json.dumps({'type': 'ready'}), flush=True)\n"
)
CMD_BOT = f"cmd:{shlex.quote(sys.executable)} -c {shlex.quote(CMD_SOURCE)}"
UNCONFINED = SandboxSettings(Mode.OFF)
CONFINED = SandboxSettings(Mode.AUTO)
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


def move_samples(pool: BotPool, games_n: int) -> tuple[list[float], list[float]]:
    """Every move of ``games_n`` random-vs-random tic-tac-toe games through ``pool``: the arena's
    measured request-to-answer time, and the full cycle between two logged moves (request built,
    sent, answered, validated, applied, logged)."""
    game = games.get("tictactoe")
    refs = [resolve("random"), resolve("random")]
    answer: list[float] = []
    cycle: list[float] = []
    for seed in range(games_n):
        last = [0.0]

        def on_move(move: MoveRecord, last: list[float] = last) -> None:
            now = time.perf_counter()
            if last[0]:
                cycle.append(now - last[0])
            last[0] = now
            answer.append(move.time_ms / 1000)

        pool.play(game, refs, time_control=TimeControl(move_time=1.0), seed=seed, on_move=on_move)
    return answer, cycle


def arena_moves(games_n: int) -> tuple[float, float]:
    """Medians of ``move_samples`` with a pool of the arena's default settings."""
    with BotPool() as pool:
        answer, cycle = move_samples(pool, games_n)
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


def startups(
    pool: BotPool, ref: BotRef, game: Game[Any, Any], n: int
) -> tuple[list[float], list[float]]:
    """``n`` times: seconds from asking ``pool`` for a new process of ``ref`` until its
    ``hello`` is answered (the plan, the fork or exec, the confinement, the bot loaded, the
    handshake), and from there until it is killed and reaped (for a confined bot: its unit and
    working folder removed too)."""
    hello = protocol.hello(
        game=game.name,
        params=dict(game.params),
        seat=0,
        players=game.num_players,
        seed=0,
        position=game.format_position(game.initial_state()),
    )
    up: list[float] = []
    down: list[float] = []
    for _ in range(n):
        t0 = time.perf_counter()
        seat = pool._spawn(ref)
        if isinstance(seat, Fault):
            raise RuntimeError(f"{ref.name}: {seat.message}")
        seat.start(hello)
        fault = seat.finish_start(time.monotonic() + 10.0, game)
        t1 = time.perf_counter()
        seat.kill()
        up.append(t1 - t0)
        down.append(time.perf_counter() - t1)
        if fault is not None:
            raise RuntimeError(f"{ref.name}: {fault.message}")
    return up, down


def games_per_second(pool: BotPool, n: int, first_seed: int) -> float:
    """Random vs random tic-tac-toe through ``pool``, processes reused (a tournament's way)."""
    game = games.get("tictactoe")
    refs = [resolve("random"), resolve("random")]
    tc = TimeControl(move_time=1.0)
    t0 = time.perf_counter()
    for seed in range(first_seed, first_seed + n):
        pool.play(game, refs, time_control=tc, seed=seed)
    return n / (time.perf_counter() - t0)


def sandbox_costs(quick: bool) -> None:
    """Confined (``--sandbox auto``) against unconfined (``off``), measured in one run, each mode
    with its own pool kept for the whole run. The modes take turns at every measurement (one
    start-up of each, a few games of each, ...), in an order that flips every round (ABBA), so
    that the machine's drift and its neighbours' load fall on both alike; medians over all."""
    rounds = 4 if quick else 20
    per_round = 2 if quick else 5  # start-ups of each bot per mode and round
    move_games = 3 if quick else 10
    tourney_games = 20 if quick else 100
    game = games.get("tictactoe")
    bots = {
        "forked Python bot (built-in random)": resolve("random"),
        "forked Python bot (a .py file)": resolve(str(FILE_BOT)),
        "cmd: bot (python -c, line protocol)": resolve(CMD_BOT),
    }
    modes = {"off": UNCONFINED, "auto": CONFINED}
    up: dict[tuple[str, str], list[float]] = {(m, b): [] for m in modes for b in bots}
    down: dict[tuple[str, str], list[float]] = {(m, b): [] for m in modes for b in bots}
    answer: dict[str, list[float]] = {m: [] for m in modes}
    cycle: dict[str, list[float]] = {m: [] for m in modes}
    rate: dict[str, list[float]] = {m: [] for m in modes}
    pools = {mode: BotPool(sandbox=settings) for mode, settings in modes.items()}
    try:
        level, missing = pools["auto"].sandbox_level, pools["auto"].sandbox_missing
        for pool in pools.values():  # warm up: fork servers started, first imports done
            for ref in bots.values():
                startups(pool, ref, game, 2)
            games_per_second(pool, 5, 0)
        for r in range(rounds):
            order = list(modes) if r % 2 == 0 else list(reversed(modes))
            for label, ref in bots.items():
                for _ in range(per_round):
                    for mode in order:
                        u, d = startups(pools[mode], ref, game, 1)
                        up[(mode, label)] += u
                        down[(mode, label)] += d
            for mode in order:
                a, c = move_samples(pools[mode], move_games)
                answer[mode] += a
                cycle[mode] += c
            for mode in order:
                rate[mode].append(games_per_second(pools[mode], tourney_games, 1000 * (r + 1)))
    finally:
        for pool in pools.values():
            pool.close()

    def row(what: str, off: float, auto: float, unit: str, target: str) -> None:
        scale, fmt = (1e3, ".2f") if unit == "ms" else (1.0, ".0f")
        if unit == "ms" and max(off, auto) < 1e-3:
            fmt = ".3f"
        line = (
            f"  {what:<38} {off * scale:>8{fmt}} {unit:<5} {auto * scale:>8{fmt}} {unit:<5}"
            f" {auto / off:>5.2f}x  {target}"
        )
        print(line.rstrip())

    def met(ok: bool) -> str:
        return "met" if ok else "NOT met"

    med = statistics.median
    print(
        f"sandbox: confined (--sandbox auto) vs unconfined (off), one core, {rounds} rounds,"
        " the modes taking turns"
    )
    what = ", missing " + ", ".join(missing) if missing else " (every layer)"
    print(f"  auto confines bots on this machine as: {level}{what}")
    print(f"  {'':<38} {'off':>14} {'auto':>14} {'ratio':>6}  target (issue)")
    print(f"  start-up, new process until its hello is answered ({rounds * per_round} each):")
    for label in bots:
        off, auto = med(up[("off", label)]), med(up[("auto", label)])
        target = f"+{(auto - off) * 1e3:.1f} ms"
        if not label.startswith("cmd"):
            target += f"; auto < 10 ms: {met(auto < 0.010)}"
        row(label, off, auto, "ms", target)
    print("  then killed and reaped (with auto: the unit and working folder removed):")
    for label in bots:
        row(label, med(down[("off", label)]), med(down[("auto", label)]), "ms", "")
    print(f"  per move, random vs random tic-tac-toe ({len(cycle['auto'])} moves each):")
    off, auto = med(cycle["off"]), med(cycle["auto"])
    target = f"within 5%: {met(auto <= 1.05 * off)}"
    row("full move cycle (logged->logged)", off, auto, "ms", target)
    row("request->answer (time_ms)", med(answer["off"]), med(answer["auto"]), "ms", "")
    off, auto = med(rate["off"]), med(rate["auto"])
    paired = med(a / o for o, a in zip(rate["off"], rate["auto"], strict=True))
    print(f"  tournament throughput, pooled, {tourney_games} games per round (median of rounds):")
    target = f"within 10%: {met(auto >= 0.9 * off)} (round by round: {paired:.2f}x)"
    row("random vs random tic-tac-toe", off, auto, "g/s", target)


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

    sandbox_costs(quick)


if __name__ == "__main__":
    main()
