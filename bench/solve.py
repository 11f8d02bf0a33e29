"""Benchmark ``arena solve connect4`` on the public benchmark sets, beside the C++ reference.

    python bench/solve.py [--data DIR] [--sample N] [--seed S] [--tt-size N] [--sets A,B,...]

For each set: positions solved (every score checked against the file), mean and median time per
position, mean and median nodes, the C++ reference's published mean nodes and time, the largest
table seen against its configured size, and at the end the peak RSS of this process. Positions
are solved exactly as ``arena solve`` does (fresh table per position, best move included); the
parse happens outside the clock.

Test_L2_R2 is sampled (``--sample``, default 50, fixed seed) unless ``--sample 0``. A plain
reference measured in the same run says how fast this machine runs Python: the cost of one
``game.winning_positions`` call through the game object (a search node does about that much
work, plus the move ordering).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

from bot_arena.bots.connect4_solver import DEFAULT_TT_SIZE
from bot_arena.bots.solver import ExactSolver
from bot_arena.games.connect4 import ConnectFour

# Published figures of the C++ solver (mean nodes, mean time in seconds) per set.
REFERENCE = {
    "Test_L3_R1": (51, 6e-6),
    "Test_L2_R1": (450, 45e-6),
    "Test_L2_R2": (40_000, 5e-3),
}
TARGET = {"Test_L3_R1": 1e-3, "Test_L2_R1": 20e-3, "Test_L2_R2": 2.0}


def data_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    env = os.environ.get("ARENA_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def plain_reference(repeats: int = 5, calls: int = 20_000) -> float:
    """Seconds per ``winning_positions`` call through the game object (median of repeats)."""
    game = ConnectFour()
    state = game.parse_position("2252576253462244111563365343671351441")
    wp = game.winning_positions
    cur, mask = state[0], state[1]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            wp(cur, mask)
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def run_set(path: Path, sample: int, seed: int, tt_size: int) -> dict[str, float]:
    game = ConnectFour()
    lines = [ln.split() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    if sample and sample < len(lines):
        lines = random.Random(seed).sample(lines, sample)
    solver = ExactSolver(game, tt_size=tt_size)
    times, nodes = [], []
    wrong = 0
    largest_tt = 0
    for fields in lines:
        state = game.parse_position(fields[0])
        solver.reset()
        result = solver.solve(state)
        times.append(result.time_s)
        nodes.append(result.nodes)
        largest_tt = max(largest_tt, result.tt_entries)
        if result.score != int(fields[1]):
            wrong += 1
    return {
        "positions": len(lines),
        "wrong": wrong,
        "mean_s": statistics.fmean(times),
        "median_s": statistics.median(times),
        "max_s": max(times),
        "mean_nodes": statistics.fmean(nodes),
        "median_nodes": statistics.median(nodes),
        "largest_tt": largest_tt,
        "us_per_node": 1e6 * sum(times) / max(1, sum(nodes)),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", help="data folder (default: $ARENA_DATA or ../shared/data)")
    ap.add_argument("--sample", type=int, default=50, help="positions of Test_L2_R2 (0 = all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tt-size", type=int, default=DEFAULT_TT_SIZE)
    ap.add_argument("--sets", default="Test_L3_R1,Test_L2_R1,Test_L2_R2")
    args = ap.parse_args()
    folder = data_dir(args.data) / "connect4"
    if not folder.is_dir():
        print(f"error: {folder} not found (give --data or set ARENA_DATA)", file=sys.stderr)
        return 2
    ref = plain_reference()
    print(f"plain reference: game.winning_positions {ref * 1e6:.2f} us per call")
    print(f"table capacity: {args.tt_size} entries")
    header = (
        f"{'set':<11} {'n':>5} {'wrong':>5} {'mean':>10} {'median':>10} {'max':>9} "
        f"{'nodes':>9} {'med.nodes':>9} {'us/node':>7} {'C++ nodes':>9} {'C++ time':>9} "
        f"{'target':>7} {'max TT':>8}"
    )
    print(header)
    for name in args.sets.split(","):
        path = folder / name
        if not path.is_file():
            print(f"{name}: not found, skipped")
            continue
        sample = args.sample if name == "Test_L2_R2" else 0
        r = run_set(path, sample, args.seed, args.tt_size)
        ref_nodes, ref_time = REFERENCE.get(name, (0, 0.0))
        label = name + ("*" if sample else "")
        print(
            f"{label:<11} {r['positions']:>5} {r['wrong']:>5} {_t(r['mean_s']):>10} "
            f"{_t(r['median_s']):>10} {_t(r['max_s']):>9} {r['mean_nodes']:>9.1f} "
            f"{r['median_nodes']:>9.0f} {r['us_per_node']:>7.2f} {ref_nodes:>9} "
            f"{_t(ref_time):>9} {_t(TARGET.get(name, 0.0)):>7} {r['largest_tt']:>8}"
        )
        assert r["largest_tt"] <= args.tt_size
    if args.sample and "Test_L2_R2" in args.sets.split(","):
        print(f"* Test_L2_R2: a sample of {args.sample} positions (seed {args.seed})")
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak RSS: {peak_kb / 1024:.1f} MiB")
    return 0


def _t(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} us"


if __name__ == "__main__":
    sys.exit(main())
