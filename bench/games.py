"""Speed of the game layer: random playouts per game and a full tic-tac-toe tree walk.

Run: ``python bench/games.py`` (``--repeats N``, ``--quick`` for a short run).

Everything goes through the game API (``is_terminal``, ``legal_moves``, ``apply``, ``utility``)
the way search code calls it. Each figure is the median of several repeats, and each target sits
next to a baseline measured in the same run: the same work written as a bare Python loop over raw
ints with no game objects, so the ratio shows what the API costs on this machine today.

Targets (issue 2): Connect Four random playouts >= 25,000 games/s; the full tic-tac-toe tree
(549,946 nodes) walked with minimax in <= 1 s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from bot_arena.games.base import Game, GameError
from bot_arena.games.registry import get as get_game

PLAYOUT_GAMES: list[tuple[str, dict[str, Any]]] = [
    ("coins", {"coins": 21, "max_take": 3}),
    ("tictactoe", {}),
    ("connect4", {}),
    ("nim", {"players": 3, "piles": "3,4,5"}),
    ("rolit", {"players": 4}),
    ("rolit", {"players": 3, "size": 6}),
]


CPU_TIMES: dict[int, float] = {}  # id(fn) -> median CPU seconds of the last median_times call


def median_times(fns: list[Callable[[], object]], repeats: int) -> tuple[list[float], list[object]]:
    """Median wall seconds of each function, the functions taking turns within every repeat so
    that a busy machine slows them alike (the API figure and its baseline stay comparable).
    The median CPU seconds (process time, which excludes waiting for a core on the shared
    machine) go to ``CPU_TIMES``."""
    times: list[list[float]] = [[] for _ in fns]
    cpu: list[list[float]] = [[] for _ in fns]
    results: list[object] = [None] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start, start_cpu = time.perf_counter(), time.process_time()
            results[i] = fn()
            times[i].append(time.perf_counter() - start)
            cpu[i].append(time.process_time() - start_cpu)
    for fn, c in zip(fns, cpu, strict=True):
        CPU_TIMES[id(fn)] = statistics.median(c)
    return [statistics.median(t) for t in times], results


# --- random playouts -------------------------------------------------------------------------
def api_playouts(game: Game[Any, Any], count: int, seed: int) -> int:
    """``count`` uniformly random games through legal_moves/apply/is_terminal; total plies."""
    rng = random.Random(seed)
    choice = rng.choice
    legal, apply, terminal = game.legal_moves, game.apply, game.is_terminal
    start = game.initial_state()
    plies = 0
    for _ in range(count):
        state = start
        while not terminal(state):
            state = apply(state, choice(legal(state)))
            plies += 1
        game.utility(state)
    return plies


def builtin_playouts(game: Game[Any, Any], count: int, seed: int) -> int:
    """The same with the game's own ``random_playout`` (which a game may specialise)."""
    rng = random.Random(seed)
    start = game.initial_state()
    for _ in range(count):
        game.utility(game.random_playout(start, rng))
    return count


def bare_connect4_playouts(count: int, seed: int, width: int = 7, height: int = 6) -> int:
    """Baseline: random Connect Four games as a bare loop over two int bitboards."""
    rng = random.Random(seed)
    choice = rng.choice
    h1 = height + 1
    shifts = (1, h1, h1 - 1, h1 + 1)
    plies = 0
    for _ in range(count):
        boards = [0, 0]
        next_bit = [c * h1 for c in range(width)]
        open_cols = list(range(width))
        player = 0
        while open_cols:
            col = choice(open_cols)
            board = boards[player] | (1 << next_bit[col])
            boards[player] = board
            next_bit[col] += 1
            plies += 1
            if next_bit[col] == col * h1 + height:
                open_cols.remove(col)
            won = False
            for s in shifts:
                pair = board & (board >> s)
                if pair & (pair >> 2 * s):
                    won = True
                    break
            if won:
                break
            player ^= 1
    return plies


# --- tic-tac-toe tree ------------------------------------------------------------------------
def api_minimax_walk(game: Game[Any, Any]) -> tuple[float, int]:
    """Minimax over the whole tree through the API: (root value for player 0, nodes)."""
    terminal, legal, apply, utility, player = (
        game.is_terminal,
        game.legal_moves,
        game.apply,
        game.utility,
        game.current_player,
    )
    nodes = 0

    def value(state: Any) -> float:
        nonlocal nodes
        nodes += 1
        if terminal(state):
            u: float = utility(state)[0]
            return u
        children = [value(apply(state, m)) for m in legal(state)]
        return max(children) if player(state) == 0 else min(children)

    return value(game.initial_state()), nodes


_LINES = (0o7, 0o70, 0o700, 0o111, 0o222, 0o444, 0o421, 0o124)
_WON = tuple(any(m & line == line for line in _LINES) for m in range(512))
_FREE = tuple(tuple(c for c in range(9) if not occ >> c & 1) for occ in range(512))


def bare_minimax_walk() -> tuple[float, int]:
    """Baseline: the same minimax as a bare recursion over two 9-bit ints."""
    nodes = 0

    def value(x: int, o: int, x_to_move: bool) -> float:
        nonlocal nodes
        nodes += 1
        if _WON[x]:
            return 1.0
        if _WON[o]:
            return -1.0
        free = _FREE[x | o]
        if not free:
            return 0.0
        if x_to_move:
            return max(value(x | 1 << c, o, False) for c in free)
        return min(value(x, o | 1 << c, True) for c in free)

    return value(0, 0, True), nodes


def api_count_walk(game: Game[Any, Any]) -> int:
    """Nodes of the whole tree through is_terminal/legal_moves/apply, nothing else."""
    terminal, legal, apply = game.is_terminal, game.legal_moves, game.apply

    def count(state: Any) -> int:
        if terminal(state):
            return 1
        return 1 + sum([count(apply(state, m)) for m in legal(state)])

    return count(game.initial_state())


def bare_count_walk() -> int:
    """Baseline for :func:`api_count_walk`: the bare recursion over two 9-bit ints."""

    def count(x: int, o: int, x_to_move: bool) -> int:
        if _WON[x] or _WON[o]:
            return 1
        if x_to_move:
            return 1 + sum([count(x | 1 << c, o, False) for c in _FREE[x | o]])
        return 1 + sum([count(x, o | 1 << c, True) for c in _FREE[x | o]])

    return count(0, 0, True)


def _label(name: str, params: dict[str, Any]) -> str:
    return f"{name}({','.join(f'{k}={v}' for k, v in params.items())})"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="repeats per figure (median)")
    parser.add_argument("--quick", action="store_true", help="fewer games per repeat")
    args = parser.parse_args()
    repeats = args.repeats
    count = 400 if args.quick else 2000
    sys.setrecursionlimit(10_000)

    print(f"random playouts, {count} games per repeat (rolit: a tenth), median of {repeats}")
    print(f"{'game':<34} {'API loop':>14} {'(cpu)':>10} {'random_playout':>16} {'plies/game':>11}")
    c4_rate = bare_rate = c4_cpu = bare_cpu = 0.0
    for name, params in PLAYOUT_GAMES:
        label = _label(name, params)
        try:
            game = get_game(name, **params)
        except GameError as exc:
            print(f"{label:<34} unavailable: {exc}")
            continue
        n = count // 10 if name == "rolit" else count
        fns: list[Callable[[], object]] = [
            partial(api_playouts, game, n, 1),
            partial(builtin_playouts, game, n, 1),
        ]
        if name == "connect4" and not params:
            fns.append(partial(bare_connect4_playouts, n, 1))
        (t_api, t_own, *t_bare), (plies, *_) = median_times(fns, repeats)
        cpu_rate = n / CPU_TIMES[id(fns[0])]
        assert isinstance(plies, int)
        print(
            f"{label:<34} {n / t_api:>10,.0f} g/s {cpu_rate:>10,.0f} {n / t_own:>12,.0f} g/s"
            f" {plies / n:>11.1f}"
        )
        if t_bare:
            c4_rate, bare_rate = n / t_api, n / t_bare[0]
            c4_cpu, bare_cpu = cpu_rate, n / CPU_TIMES[id(fns[2])]
    if c4_rate:
        print(
            f"{'connect4 bare int loop (baseline)':<34} {bare_rate:>10,.0f} g/s {bare_cpu:>10,.0f}"
        )
        verdict = "met" if c4_rate >= 25_000 else "MISSED"
        cpu_verdict = "met" if c4_cpu >= 25_000 else "MISSED"
        print(
            f"connect4 API loop / bare loop: {c4_rate / bare_rate:.2f} wall, "
            f"{c4_cpu / bare_cpu:.2f} cpu; >= 25,000 g/s: {verdict} (wall), {cpu_verdict} (cpu)"
        )

    print(f"\ntic-tac-toe full tree, median of {repeats}")
    ttt = get_game("tictactoe")
    walks: list[Callable[[], object]] = [
        partial(api_count_walk, ttt),
        bare_count_walk,
        partial(api_minimax_walk, ttt),
        bare_minimax_walk,
    ]
    (t_cnt, t_cnt_raw, t_api, t_raw), (n_cnt, n_cnt_raw, api, raw) = median_times(walks, repeats)
    c_cnt, c_cnt_raw, c_api, c_raw = (CPU_TIMES[id(fn)] for fn in walks)
    assert n_cnt == n_cnt_raw == 549_946, (n_cnt, n_cnt_raw)
    assert api == raw == (0.0, 549_946), (api, raw)
    print(f"{'':<18} {'API wall':>9} {'(cpu)':>7} {'bare wall':>10} {'(cpu)':>7} {'API/bare':>9}")
    for label, a, ca, b, cb in (
        ("node count walk", t_cnt, c_cnt, t_cnt_raw, c_cnt_raw),
        ("minimax walk", t_api, c_api, t_raw, c_raw),
    ):
        print(f"{label:<18} {a:>7.3f} s {ca:>7.3f} {b:>8.3f} s {cb:>7.3f} {a / b:>9.2f}")
    verdict = (
        f"{'met' if t_api <= 1 else 'MISSED'} (wall), {'met' if c_api <= 1 else 'MISSED'} (cpu)"
    )
    print(f"549,946 nodes; minimax walk <= 1 s: {verdict}")


if __name__ == "__main__":
    main()
