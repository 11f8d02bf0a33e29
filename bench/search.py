"""Speed of the search bots, each beside a plain reference measured in the same run.

Run: ``python bench/search.py`` (``--depth D`` for Connect Four, ``--repeats N``, ``--quick``).
``--iterative-baseline FILE`` (a copy of ``bots/iterative.py``, e.g. the version before a change)
also times that file's iterative deepening against this tree's, paired, on the same search.

1. Fixed-depth alpha-beta on Connect Four from the empty board through the game API
   (``bots.alphabeta.alphabeta``), in nodes per second, beside a minimal hand-written negamax
   alpha-beta over raw bitboard ints with the same move order and the same evaluation formula
   (the reference checks that it visits exactly as many nodes and finds the same value, so the
   ratio compares equal work). Target (issue 3): >= 700,000 nodes/s through the API.
2. Full tic-tac-toe minimax (549,946 nodes) through the API (``bots.minimax.minimax``) beside a
   bare-int recursive minimax. Target: <= 0.7 s.
3. For information: the same Connect Four search with move ordering, and iterative deepening with
   its transposition table to the same depth; and the peak RSS of an iterative search in a fresh
   process for two table sizes (the table is a fixed list of slots, so memory follows ``tt_size``).

Every figure is the median over ``--repeats`` runs. On a shared machine wall time includes waiting
for a core, so the searches also print their CPU time; the ratios pair runs made back to back.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_REPO))

from bot_arena.bots.alphabeta import alphabeta  # noqa: E402
from bot_arena.bots.iterative import DeepeningSearch  # noqa: E402
from bot_arena.bots.minimax import minimax  # noqa: E402
from bot_arena.bots.search_common import UNLIMITED  # noqa: E402
from bot_arena.bots.tt import TranspositionTable  # noqa: E402
from bot_arena.games.registry import get as get_game  # noqa: E402


def paired_runs(
    ours: Callable[[], Any], reference: Callable[[], Any], repeats: int
) -> tuple[float, Any, float, Any, float, float, float]:
    """Time ``ours`` and ``reference`` alternately (so both see the same machine load); returns
    the median wall time and result of each, the median of the per-pair time ratios, and the
    median CPU times of both (on a shared machine wall time includes waiting for a core)."""
    t_ours, t_ref, ratios, cpu, cpu_ref = [], [], [], [], []
    r_ours = r_ref = None
    for _ in range(repeats):
        start, cpu_start = time.perf_counter(), time.process_time()
        r_ours = ours()
        a = time.perf_counter() - start
        cpu.append(time.process_time() - cpu_start)
        start, cpu_start = time.perf_counter(), time.process_time()
        r_ref = reference()
        b = time.perf_counter() - start
        cpu_ref.append(time.process_time() - cpu_start)
        t_ours.append(a)
        t_ref.append(b)
        ratios.append(a / b)
    med = statistics.median
    return med(t_ours), r_ours, med(t_ref), r_ref, med(ratios), med(cpu), med(cpu_ref)


def median_run(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


# --- the Connect Four reference: negamax alpha-beta over raw ints ---------------------------
def make_c4_reference(width: int = 7, height: int = 6) -> Callable[[int], tuple[float, int]]:
    """A self-contained Connect Four alpha-beta: bitboards, centre-first columns, the positional
    evaluation (cells weighted by the number of lines of four through them, ``22*d/(|d|+32)``
    squashed inside the smallest win) and the solver scoring for wins."""
    h1 = height + 1
    cells = width * height
    win_base = cells // 2 + 1
    min_win = win_base - (cells + 1) // 2
    bottom = [1 << (c * h1) for c in range(width)]
    top = [1 << (c * h1 + height - 1) for c in range(width)]
    order = sorted(range(width), key=lambda c: (abs(2 * c - width + 1), c))
    shifts = (h1, 1, height, height + 2)

    # weight of a cell = number of lines of four through it; one bit plane per weight bit
    weight = {}
    for c in range(width):
        for r in range(height):
            n = 0
            for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                for k in range(4):
                    c0, r0 = c - k * dc, r - k * dr
                    if all(
                        0 <= c0 + i * dc < width and 0 <= r0 + i * dr < height for i in range(4)
                    ):
                        n += 1
            weight[c * h1 + r] = n
    planes = []
    bit = 1
    while bit <= max(weight.values()):
        planes.append((bit, sum(1 << cell for cell, w in weight.items() if w & bit)))
        bit <<= 1

    nodes = 0

    def negamax(
        current: int, mask: int, plies: int, depth: int, alpha: float, beta: float
    ) -> float:
        """Value for the player to move; ``current`` holds that player's stones."""
        nonlocal nodes
        best = -1e9
        other = current ^ mask
        for col in order:
            if mask & top[col]:
                continue
            nodes += 1
            new_mask = mask | (mask + bottom[col])
            mine = current | (new_mask ^ mask)
            won = False
            for s in shifts:
                m = mine & (mine >> s)
                if m & (m >> 2 * s):
                    won = True
                    break
            if won:
                value: float = win_base - (plies + 2) // 2
            elif plies + 1 == cells:
                value = 0.0
            elif depth == 1:
                raw = 0
                for w, plane in planes:  # from the opponent's (to move next) side
                    raw += w * ((other & plane).bit_count() - (mine & plane).bit_count())
                value = 0.0 - min_win * raw / (abs(raw) + 32)
            else:
                value = -negamax(other, new_mask, plies + 1, depth - 1, -beta, -alpha)
            if value > best:
                best = value
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        return best

    def run(depth: int) -> tuple[float, int]:
        nonlocal nodes
        nodes = 1
        return negamax(0, 0, 0, depth, -1e9, 1e9), nodes

    return run


# --- the tic-tac-toe reference: bare-int minimax ---------------------------------------------
_LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
_WON = [any(m >> a & m >> b & m >> c & 1 for a, b, c in _LINES) for m in range(512)]


def ttt_reference() -> tuple[int, int]:
    """Minimax over (x, o) bit masks from the empty board; returns (value, nodes)."""
    nodes = 0

    def search(x: int, o: int, x_to_move: bool) -> int:
        nonlocal nodes
        nodes += 1
        if _WON[x]:
            return 1
        if _WON[o]:
            return -1
        free = 0x1FF & ~(x | o)
        if not free:
            return 0
        best = -2 if x_to_move else 2
        for cell in range(9):
            bit = 1 << cell
            if free & bit:
                if x_to_move:
                    v = search(x | bit, o, False)
                    if v > best:
                        best = v
                else:
                    v = search(x, o | bit, True)
                    if v < best:
                        best = v
        return best

    return search(0, 0, True), nodes


_RSS_CHILD = """
import sys
sys.path.insert(0, {repo!r})
from bot_arena.bots.iterative import DeepeningSearch
from bot_arena.bots.tt import TranspositionTable
from bot_arena.games.registry import get
game = get("connect4")
table = TranspositionTable({size})
result = DeepeningSearch(game, table, 0).run(game.initial_state(), 10_000, {seconds})
# VmHWM: this process's peak resident set (ru_maxrss would include the parent's, from fork)
hwm = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(len(table), result.last.depth, result.nodes, hwm)
"""


def rss_with_table(size: int, seconds: float) -> tuple[int, int, int, int]:
    code = _RSS_CHILD.format(repo=str(_REPO), size=size, seconds=seconds)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    entries, depth, nodes, rss_kb = (int(x) for x in out)
    return entries, depth, nodes, rss_kb


def load_module(path: Path, name: str) -> Any:
    """The Python file ``path`` as a module of its own (imports resolve as for the installed
    package, so an old ``bots/iterative.py`` runs against today's ``tt`` and ``search_common``)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def compare_iterative(game: Any, state: Any, depth: int, repeats: int, path: Path) -> None:
    """This tree's iterative deepening beside the one in ``path`` on equal work: run in pairs,
    which of the two goes first alternating, and compared by the median of per-pair ratios."""
    baseline = load_module(path.resolve(), "bot_arena.bots._iterative_baseline")
    runs = {"this tree": DeepeningSearch, "baseline": baseline.DeepeningSearch}
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    found: dict[str, Any] = {}
    for i in range(repeats):
        for name in list(runs)[:: 1 if i % 2 == 0 else -1]:
            start, cpu_start = time.perf_counter(), time.process_time()
            found[name] = runs[name](game, TranspositionTable(1 << 18), 0).run(state, depth)
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - cpu_start)
    new, old = found["this tree"], found["baseline"]
    same = (new.nodes, new.tt_hits, new.last.value, new.last.pv) == (
        old.nodes,
        old.tt_hits,
        old.last.value,
        old.last.pv,
    )
    med = statistics.median
    print(f"\nIterative deepening to depth {depth}: this tree beside {path} (median of {repeats})")
    for name in runs:
        nodes = found[name].nodes
        print(
            f"  {name:<19}: {nodes:>9,} nodes {med(wall[name]):8.4f} s"
            f" {nodes / med(wall[name]):>11,.0f} nodes/s ({nodes / med(cpu[name]):,.0f} per CPU"
            " second)"
        )
    ratio = med(b / a for a, b in zip(wall["this tree"], wall["baseline"], strict=True))
    cpu_ratio = med(b / a for a, b in zip(cpu["this tree"], cpu["baseline"], strict=True))
    print(
        f"  speed ratio this/baseline (median of pairs): {ratio:.3f} wall, {cpu_ratio:.3f} CPU"
        f" ({'same' if same else 'DIFFERENT'} nodes, tt hits, value and PV)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=10, help="Connect Four search depth")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="depth 7, 3 repeats, no RSS runs")
    parser.add_argument(
        "--iterative-baseline",
        type=Path,
        metavar="FILE",
        help="a copy of bots/iterative.py to time against this tree's (paired runs)",
    )
    parser.add_argument(
        "--only-baseline", action="store_true", help="with --iterative-baseline: nothing else"
    )
    args = parser.parse_args()
    depth, repeats = (7, 3) if args.quick else (args.depth, args.repeats)
    if args.iterative_baseline is not None:
        c4 = get_game("connect4")
        compare_iterative(c4, c4.initial_state(), depth, repeats, args.iterative_baseline)
        if args.only_baseline:
            return

    c4 = get_game("connect4")
    start = c4.initial_state()
    print(f"Connect Four alpha-beta from the empty board, depth {depth} (median of {repeats})")
    reference = make_c4_reference()
    t_api, res, t_ref, (ref_value, ref_nodes), time_ratio, cpu_api, cpu_ref = paired_runs(
        lambda: alphabeta(c4, start, depth), lambda: reference(depth), repeats
    )
    same = "same" if (ref_nodes, ref_value) == (res.nodes, res.value) else "DIFFERENT"
    api_rate, ref_rate = res.nodes / t_api, ref_nodes / t_ref
    print(
        f"  game API alphabeta : {res.nodes:>9,} nodes {t_api:8.4f} s {api_rate:>11,.0f} nodes/s"
        f" ({res.nodes / cpu_api:,.0f} per CPU second)"
    )
    print(
        f"  raw-int reference  : {ref_nodes:>9,} nodes {t_ref:8.4f} s {ref_rate:>11,.0f} nodes/s"
        f" ({ref_nodes / cpu_ref:,.0f} per CPU second)"
    )
    print(
        f"  speed ratio API/reference: {1 / time_ratio:.2f} wall (median of pairs),"
        f" {cpu_ref / cpu_api:.2f} CPU ({same} nodes and value);"
        f" target >= 700,000 nodes/s: {'met' if api_rate >= 700_000 else 'NOT met'} (wall),"
        f" {'met' if res.nodes / cpu_api >= 700_000 else 'NOT met'} (CPU)"
    )
    t_ord, ordered = median_run(lambda: alphabeta(c4, start, depth, order=True), repeats)
    print(
        f"  with order=true    : {ordered.nodes:>9,} nodes {t_ord:8.4f} s"
        f" {ordered.nodes / t_ord:>11,.0f} nodes/s"
    )

    def iterative() -> Any:
        return DeepeningSearch(c4, TranspositionTable(1 << 18), 0).run(start, depth)

    t_id, deep = median_run(iterative, repeats)
    print(
        f"  iterative + TT     : {deep.nodes:>9,} nodes {t_id:8.4f} s"
        f" {deep.nodes / t_id:>11,.0f} nodes/s (all depths 1..{depth}, {deep.tt_hits} tt hits)"
    )

    ttt = get_game("tictactoe")
    print(f"\nFull tic-tac-toe minimax (median of {repeats})")
    t_mm, mm, t_tref, (tref_value, tref_nodes), ttt_ratio, cpu_mm, cpu_tref = paired_runs(
        lambda: minimax(ttt, ttt.initial_state(), UNLIMITED), ttt_reference, repeats
    )
    print(
        f"  game API minimax   : {mm.nodes:>9,} nodes {t_mm:8.4f} s, {cpu_mm:.4f} CPU s"
        f" (target <= 0.7 s: {'met' if t_mm <= 0.7 else 'NOT met'})"
    )
    print(
        f"  raw-int reference  : {tref_nodes:>9,} nodes {t_tref:8.4f} s, {cpu_tref:.4f} CPU s;"
        f" time ratio API/reference (median of pairs) {ttt_ratio:.2f}"
    )
    assert tref_nodes == mm.nodes and tref_value == mm.value

    if not args.quick:
        print("\nIterative deepening for 3 s on Connect Four in a fresh process (peak RSS)")
        for size in (1 << 12, 1 << 20):
            entries, reached, nodes, rss = rss_with_table(size, 3.0)
            print(
                f"  tt_size {size:>9,}: {entries:>9,} entries used, depth {reached},"
                f" {nodes:>9,} nodes, peak RSS {rss / 1024:7.1f} MiB"
            )


if __name__ == "__main__":
    main()
