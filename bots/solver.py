"""Exact solving: the game-theoretic value of a position, searched to the end of the game.

:class:`ExactSolver` picks the strongest exact search that fits the game:

- ``connect4`` — the dedicated bitboard solver in :mod:`bots.connect4_solver` (null-window
  negamax with iterative narrowing, bound table, threat ordering);
- any other two-player zero-sum game — negamax with alpha-beta (fail-soft) and a transposition
  table of exact / lower / upper entries keyed by ``game.state_key``, the root window set to the
  game's utility bounds (a proven best possible result ends the search at once);
- N-player and general-sum games — max^n to the end, memoised per state; ties go to the first
  move in the game's move order, so the value vector is deterministic.

Games whose ``default_depth`` is not ``None`` declare that searching to the end is out of reach;
they are refused up front unless a ``node_limit`` is given. With a ``node_limit`` any search
(Connect Four's too: its early positions are out of reach in Python) stops with a
:class:`SolverError` once it has visited that many positions. Games are assumed acyclic (no
position repeats), as all built-in games are.

:class:`SolverBot` (``solver`` in the bot registry) plays the solved best move and reports the
exact value vector, the principal variation (``pv`` plies long, each ply a further solve with
the warm table), nodes and time; if its time allocation runs out it plays the best move found so
far and says ``"exact": false``.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from bot_arena.bots.base import Bot, BotError, Decision, SearchInfo, TimeBudget
from bot_arena.bots.connect4_solver import DEFAULT_TT_SIZE, TIMEOUT_MESSAGE, Connect4Solver
from bot_arena.bots.search_common import SearchAborted
from bot_arena.bots.tt import EXACT, LOWER, UPPER
from bot_arena.games.base import Game, GameKind


class SolverError(BotError):
    """The position cannot be solved exactly here (too large, too deep, over the node limit)."""


@dataclass(slots=True)
class SolveResult:
    """One solved position.

    ``values`` has one entry per player; ``score`` is the entry of ``player`` (to move). ``move``
    is a best move (``None`` at a terminal position), ``pv`` the principal variation as far as it
    was asked for. ``nodes`` counts positions entered (root included), all passes together.
    """

    values: tuple[float, ...]
    player: int
    move: Hashable | None
    nodes: int
    time_s: float
    method: str
    pv: list[Hashable] = field(default_factory=list)
    tt_entries: int = 0

    @property
    def score(self) -> float:
        return self.values[self.player]


class ExactSolver:
    """Solves positions of one game; keeps its transposition table between calls unless reset.

    ``tt_size`` bounds every table (entries; a full table is emptied). ``symmetry`` lets the
    Connect Four solver share entries between mirror-image positions.
    """

    def __init__(
        self,
        game: Game[Any, Any],
        *,
        tt_size: int = DEFAULT_TT_SIZE,
        symmetry: bool = False,
        node_limit: int | None = None,
    ) -> None:
        if tt_size < 1:
            raise SolverError("solver: tt_size must be positive")
        if node_limit is not None and node_limit < 1:
            raise SolverError("solver: node_limit must be positive")
        self.game = game
        self.tt_size = tt_size
        self.node_limit = node_limit
        self._c4: Connect4Solver | None = None
        self._tt: dict[Hashable, Any] = {}
        dims = _connect4_dims(game)
        if dims is not None:
            self.method = "connect4"
            self._c4 = Connect4Solver(*dims, tt_size=tt_size, symmetry=symmetry)
        elif game.num_players == 2 and game.kind is GameKind.ZERO_SUM:
            self.method = "negamax"
        else:
            self.method = "maxn"
        if self._c4 is None and game.default_depth is not None and node_limit is None:
            raise SolverError(
                f"solver: {game.name} is too large to solve exactly (the game searches "
                f"{game.default_depth} plies by default); give a node limit "
                "(--max-nodes N, solver:max_nodes=N) to try anyway"
            )

    def reset(self) -> None:
        """Forget every table entry (fresh, reproducible node counts)."""
        self._tt.clear()
        if self._c4 is not None:
            self._c4.reset()

    @property
    def tt_entries(self) -> int:
        return len(self._c4.tt) if self._c4 is not None else len(self._tt)

    def solve(
        self,
        state: Any,
        *,
        want_move: bool = True,
        pv_length: int = 1,
        deadline: float | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> SolveResult:
        """The exact value of ``state`` and a best move.

        ``deadline`` is an instant of ``clock`` (``time.perf_counter`` unless given; bots pass
        their budget's); past it the search raises
        :class:`~bot_arena.bots.search_common.SearchAborted` (``reason`` ``"time"``; its ``move``
        attribute holds the best move found so far, if any). Over the node limit it raises
        :class:`SolverError`.
        ``pv_length`` > 1 extends the principal variation by solving the successive positions.
        """
        start = time.perf_counter()
        first = self._solve_one(state, want_move, deadline, clock)
        pv = [] if first.move is None else [first.move]
        nodes = first.nodes
        current = state
        while want_move and len(pv) < pv_length and pv:
            current = self.game.apply(current, pv[-1])
            if self.game.is_terminal(current):
                break
            try:
                follow = self._solve_one(current, True, deadline, clock)
            except SearchAborted:
                break  # the value and move are exact already; the line just stays short
            nodes += follow.nodes
            assert follow.move is not None
            pv.append(follow.move)
        first.pv = pv
        first.nodes = nodes
        first.time_s = time.perf_counter() - start
        first.tt_entries = self.tt_entries
        return first

    # --- one position ------------------------------------------------------------------------
    def _solve_one(
        self, state: Any, want_move: bool, deadline: float | None, clock: Callable[[], float]
    ) -> SolveResult:
        game = self.game
        player = game.current_player(state)
        start = time.perf_counter()
        if game.is_terminal(state):
            values = tuple(float(v) for v in game.utility(state))
            return SolveResult(values, player, None, 1, time.perf_counter() - start, "terminal")
        try:
            if self._c4 is not None:
                return self._solve_connect4(state, player, want_move, deadline, clock, start)
            if self.method == "negamax":
                return self._solve_negamax(state, player, deadline, clock, start)
            return self._solve_maxn(state, player, deadline, clock, start)
        except RecursionError:
            raise SolverError(
                f"solver: {game.name} is too deep to solve by recursion here"
            ) from None

    def _solve_connect4(
        self,
        state: Any,
        player: int,
        want_move: bool,
        deadline: float | None,
        clock: Callable[[], float],
        start: float,
    ) -> SolveResult:
        assert self._c4 is not None
        current, mask, plies = state[0], state[1], state[2]
        limit = self.node_limit
        try:
            sol = self._c4.solve(
                current,
                mask,
                plies,
                want_move=want_move,
                deadline=deadline,
                clock=clock,
                node_limit=limit,
            )
        except SearchAborted as stop:
            if stop.reason == "nodes":
                self._stopped(stop)
            raise
        score: float = sol.score
        if self._c4.cells % 2 and score:  # odd boards: the game scores wins half a point lower
            score -= math.copysign(0.5, score)
        values = (score, -score) if player == 0 else (-score, score)
        return SolveResult(
            values, player, sol.move, sol.nodes, time.perf_counter() - start, "connect4"
        )

    def _limits(self, deadline: float | None) -> tuple[int, float]:
        limit = self.node_limit if self.node_limit is not None else sys.maxsize
        return limit, (math.inf if deadline is None else deadline)

    def _solve_negamax(
        self,
        state: Any,
        player: int,
        deadline: float | None,
        clock: Callable[[], float],
        start: float,
    ) -> SolveResult:
        game = self.game
        moves_of = game.legal_moves
        apply = game.apply
        terminal = game.is_terminal
        utility = game.utility
        mover = game.current_player
        key_of = game.state_key
        tt = self._tt
        tt_get = tt.get
        cap = self.tt_size
        limit, stop_at = self._limits(deadline)
        nodes = 0

        def negamax(s: Any, alpha: float, beta: float) -> float:
            nonlocal nodes
            nodes += 1
            if nodes > limit:
                raise SearchAborted("nodes")
            if not nodes & 1023 and clock() > stop_at:
                raise SearchAborted("time")
            p = mover(s)
            if terminal(s):
                return float(utility(s)[p])
            key = key_of(s)
            entry = tt_get(key)
            if entry is not None:
                flag, v = entry
                if flag == EXACT:
                    return v  # type: ignore[no-any-return]
                if flag == LOWER:
                    if v > alpha:
                        alpha = v
                elif v < beta:
                    beta = v
                if alpha >= beta:
                    return v  # type: ignore[no-any-return]
            alpha0 = alpha
            best = -math.inf
            for m in moves_of(s):
                child = apply(s, m)
                if mover(child) == p:
                    v = negamax(child, alpha, beta)
                else:
                    v = -negamax(child, -beta, -alpha)
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
                        if alpha >= beta:
                            break
            if len(tt) >= cap:
                tt.clear()
            flag = UPPER if best <= alpha0 else LOWER if best >= beta else EXACT
            tt[key] = (flag, best)
            return best

        lo, hi = _window(game)
        best_move: Hashable | None = None
        alpha = lo
        value = -math.inf
        try:
            nodes += 1
            for m in moves_of(state):
                child = apply(state, m)
                if mover(child) == player:
                    v = negamax(child, alpha, hi)
                else:
                    v = -negamax(child, -hi, -alpha)
                if v > value:
                    value, best_move = v, m
                    if v > alpha:
                        alpha = v
                        if alpha >= hi:
                            break
        except SearchAborted as stop:
            self._stopped(stop)
        values = tuple(value if p == player else -value for p in range(2))
        return SolveResult(values, player, best_move, nodes, time.perf_counter() - start, "negamax")

    def _solve_maxn(
        self,
        state: Any,
        player: int,
        deadline: float | None,
        clock: Callable[[], float],
        start: float,
    ) -> SolveResult:
        game = self.game
        moves_of = game.legal_moves
        apply = game.apply
        terminal = game.is_terminal
        utility = game.utility
        mover = game.current_player
        key_of = game.state_key
        tt = self._tt
        tt_get = tt.get
        cap = self.tt_size
        limit, stop_at = self._limits(deadline)
        nodes = 0

        def maxn(s: Any) -> tuple[float, ...]:
            nonlocal nodes
            nodes += 1
            if nodes > limit:
                raise SearchAborted("nodes")
            if not nodes & 1023 and clock() > stop_at:
                raise SearchAborted("time")
            if terminal(s):
                return tuple(float(u) for u in utility(s))
            key = key_of(s)
            known: tuple[float, ...] | None = tt_get(key)
            if known is not None:
                return known
            p = mover(s)
            best: tuple[float, ...] | None = None
            for m in moves_of(s):
                v = maxn(apply(s, m))
                if best is None or v[p] > best[p]:
                    best = v
            assert best is not None
            if len(tt) >= cap:
                tt.clear()
            tt[key] = best
            return best

        best_values: tuple[float, ...] | None = None
        best_move: Hashable | None = None
        try:
            nodes += 1
            for m in moves_of(state):
                v = maxn(apply(state, m))
                if best_values is None or v[player] > best_values[player]:
                    best_values, best_move = v, m
        except SearchAborted as stop:
            self._stopped(stop)
        assert best_values is not None
        return SolveResult(
            best_values, player, best_move, nodes, time.perf_counter() - start, "maxn"
        )

    def _stopped(self, stop: SearchAborted) -> NoReturn:
        """Out of time: abort with no move (an unfinished root proves none); over the node
        limit: give up with a :class:`SolverError`."""
        if stop.reason == "time":
            raise SearchAborted("time", TIMEOUT_MESSAGE) from None
        raise SolverError(
            f"solver: {self.game.name}: gave up after {self.node_limit} nodes (node limit)"
        ) from None


def _connect4_dims(game: Game[Any, Any]) -> tuple[int, int] | None:
    """``(width, height)`` when ``game`` is Connect Four (the bitboard solver reads its states)."""
    try:
        from bot_arena.games.connect4 import ConnectFour
    except ImportError:  # pragma: no cover - the game ships with the package
        return None
    if isinstance(game, ConnectFour):
        return game.width, game.height
    return None


def _window(game: Game[Any, Any]) -> tuple[float, float]:
    """The root window: the game's declared utility range (finite ones only)."""
    lo, hi = float(game.bounds.min_each), float(game.bounds.max_each)
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        return -math.inf, math.inf
    return lo, hi


class SolverBot(Bot):
    """Plays the exact best move; see the module docstring."""

    name = "solver"

    def __init__(
        self,
        tt_size: int = DEFAULT_TT_SIZE,
        symmetry: bool = False,
        pv: int = 1,
        max_nodes: int | None = None,
        spec: str | None = None,
    ) -> None:
        super().__init__(spec)
        if pv < 1:
            raise BotError("solver: pv must be >= 1")
        self.tt_size = tt_size
        self.symmetry = symmetry
        self.pv = pv
        self.max_nodes = max_nodes
        self._solver: ExactSolver | None = None

    def options(self) -> dict[str, Any]:
        return {
            "tt_size": self.tt_size,
            "symmetry": self.symmetry,
            "pv": self.pv,
            "max_nodes": self.max_nodes,
        }

    def _solver_for(self, game: Game[Any, Any]) -> ExactSolver:
        if self._solver is None or self._solver.game != game:
            self._solver = ExactSolver(
                game, tt_size=self.tt_size, symmetry=self.symmetry, node_limit=self.max_nodes
            )
        return self._solver

    def new_game(self, game: Game[Any, Any], seat: int) -> None:
        # Refuse up front; table entries are facts about positions, so they stay valid.
        self._solver_for(game)

    def choose_move(self, game: Game[Any, Any], state: Any, budget: TimeBudget) -> Decision:
        solver = self._solver_for(game)
        allocation = budget.allocation()
        clock = budget.clock
        deadline = None if allocation is None else clock() + allocation
        start = time.perf_counter()
        try:
            result = solver.solve(state, pv_length=self.pv, deadline=deadline, clock=clock)
        except SearchAborted as stop:
            move = stop.move if stop.move is not None else game.legal_moves(state)[0]
            info = SearchInfo(
                pv=[move],
                time_s=time.perf_counter() - start,
                extra={"exact": False, "method": solver.method},
            )
            return Decision(move, info)
        info = SearchInfo(
            values=result.values,
            pv=list(result.pv),
            depth=len(result.pv),
            nodes=result.nodes,
            time_s=result.time_s,
            extra={"exact": True, "method": result.method, "tt_entries": result.tt_entries},
        )
        return Decision(result.move, info)
