"""UCT Monte Carlo tree search for any number of players (max^n-style backups).

Each iteration walks down the tree choosing children by UCB1, adds one new node, plays uniformly
random moves to the end of the game and backs the terminal utility vector up the path. Every node
keeps the sum of the (normalised) utility vectors of the playouts through it; a parent judges a
child by the entry of the player who moved into the child — the player to move at the parent —
so each player steers towards its own utility, as in max^n.

Utilities are normalised to [0, 1] with ``game.bounds`` (``(u - min_each) / (max_each -
min_each)``), so the exploration constant ``c`` means the same for every utility scale.

Budget: ``iterations`` (deterministic with ``seed``) or else ``time`` seconds, capped by the
arena's ``budget.allocation()`` and its deadline less a reserve (``search_common.think_time``);
with ``time`` <= 0 and no arena limit either, 1000 iterations.
The move played is the most visited root child (ties: first in move order);
``values`` is the mean utility vector at the root in the game's own scale; ``pv`` follows the
most visited children; ``nodes`` counts tree nodes (the root included), ``leaves`` the playouts,
and ``extra`` holds ``iterations`` and ``playout_plies``.
"""

from __future__ import annotations

import gc
import math
import random
import time
from collections.abc import Callable, Hashable
from typing import Any

from bot_arena.bots.base import Bot, Decision, SearchInfo, TimeBudget
from bot_arena.bots.search_common import think_time
from bot_arena.games.base import Game


class Node:
    """One tree node; ``sums`` holds per-player sums of normalised utilities."""

    __slots__ = ("children", "moves", "player", "state", "sums", "untried", "visits")

    def __init__(self, state: Any, player: int, moves: list[Hashable], num_players: int) -> None:
        self.state = state
        self.player = player  # to move here
        self.untried = moves[::-1]  # popped from the end: expanded in move order
        self.moves: list[Hashable] = []
        self.children: list[Node] = []
        self.visits = 0
        self.sums = [0.0] * num_players


def most_visited(node: Node) -> int:
    """Index of the most visited child (first in expansion order on ties)."""
    best, best_visits = 0, -1
    for i, child in enumerate(node.children):
        if child.visits > best_visits:
            best, best_visits = i, child.visits
    return best


class MCTSBot(Bot):
    """``mcts[:iterations=N,time=S,c=C,seed=N]`` — plays every game, needs no heuristic."""

    name = "mcts"

    def __init__(
        self,
        iterations: int | None = None,
        time: float = 1.0,
        c: float = 1.4,
        seed: int | None = None,
        spec: str | None = None,
    ) -> None:
        super().__init__(spec)
        if iterations is not None and iterations < 1:
            raise ValueError(f"iterations must be >= 1, not {iterations}")
        if c < 0:
            raise ValueError(f"c must be >= 0, not {c}")
        self.iterations = iterations
        self.time = time
        self.c = c
        self.seed = seed
        self.rng = random.Random(seed)

    def new_game(self, game: Game[Any, Any], seat: int) -> None:
        self.rng = random.Random(self.seed)  # every game replays from the seed

    def choose_move(self, game: Game[Any, Any], state: Any, budget: TimeBudget) -> Decision:
        start = time.perf_counter()
        clock = budget.clock
        if self.iterations is not None:
            limit, deadline = self.iterations, math.inf
        else:
            seconds = think_time(self.time if self.time > 0 else None, budget)
            limit = 1 << 62 if seconds is not None else 1000
            deadline = clock() + seconds if seconds is not None else math.inf
        # The tree holds no reference cycle (children only), so reference counting frees it;
        # the cyclic collector, run meanwhile, would walk the whole growing tree at times (tens
        # of milliseconds on a big one, past any deadline): it is off while the search runs.
        collecting = gc.isenabled()
        gc.disable()
        try:
            root, iterations, plies = self._search(game, state, limit, deadline, clock)
        finally:
            if collecting:
                gc.enable()
        bounds = game.bounds
        span = bounds.max_each - bounds.min_each or 1.0
        values = tuple(bounds.min_each + span * s / max(root.visits, 1) for s in root.sums)
        pv: list[Hashable] = []
        node = root
        while node.children:
            i = most_visited(node)
            pv.append(node.moves[i])
            node = node.children[i]
        info = SearchInfo(
            values=values,
            pv=pv,
            depth=len(pv),
            nodes=self._count(root),
            leaves=iterations,
            time_s=time.perf_counter() - start,
            extra={"iterations": iterations, "playout_plies": plies},
        )
        return Decision(pv[0], info)

    @staticmethod
    def _count(root: Node) -> int:
        total, stack = 0, [root]
        while stack:
            node = stack.pop()
            total += 1
            stack.extend(node.children)
        return total

    def _search(
        self,
        game: Game[Any, Any],
        state: Any,
        limit: int,
        deadline: float,
        clock: Callable[[], float] = time.perf_counter,
    ) -> tuple[Node, int, int]:
        """Run UCT until ``limit`` iterations or the ``clock`` instant ``deadline``; returns the
        root, the number of iterations and of playout plies."""
        legal_moves = game.legal_moves
        apply = game.apply
        utility = game.utility
        current_player = game.current_player
        choice = self.rng.choice
        log = math.log
        sqrt = math.sqrt
        c = self.c
        n = game.num_players
        bounds = game.bounds
        low = bounds.min_each
        span = bounds.max_each - low or 1.0
        root = Node(state, current_player(state), list(legal_moves(state)), n)
        path: list[Node] = []
        iterations = plies = 0
        while iterations < limit:
            # one clock read per iteration: cheap beside a playout, and a slow game's playouts
            # (Rolit: about a millisecond) must not overrun the arena's deadline
            if iterations and clock() > deadline:
                break
            iterations += 1
            node = root
            path.clear()
            path.append(node)
            # selection: fully expanded, non-terminal nodes
            while not node.untried and node.children:
                player = node.player
                scale = c * sqrt(log(node.visits))
                best_child = node.children[0]
                best_score = -math.inf
                for child in node.children:
                    score = child.sums[player] / child.visits + scale / sqrt(child.visits)
                    if score > best_score:
                        best_child, best_score = child, score
                node = best_child
                path.append(node)
            # expansion
            if node.untried:
                move = node.untried.pop()
                child_state = apply(node.state, move)
                child = Node(
                    child_state, current_player(child_state), list(legal_moves(child_state)), n
                )
                node.moves.append(move)
                node.children.append(child)
                node = child
                path.append(node)
            # playout
            sim = node.state
            moves = legal_moves(sim)
            while moves:
                sim = apply(sim, choice(moves))
                plies += 1
                moves = legal_moves(sim)
            reward = [(u - low) / span for u in utility(sim)]
            # backup
            for visited in path:
                visited.visits += 1
                sums = visited.sums
                for p in range(n):
                    sums[p] += reward[p]
        return root, iterations, plies

    def options(self) -> dict[str, Any]:
        return {"iterations": self.iterations, "time": self.time, "c": self.c, "seed": self.seed}
