"""Iterative deepening alpha-beta with a transposition table, under a time budget.

Depth 1, 2, 3, ... are searched in turn until one of these holds:

- the time is up (the bot's ``time`` option, capped by the arena's ``budget.allocation()`` and
  its deadline less a reserve: ``search_common.think_time``); a search that runs out of time
  mid-iteration is aborted (the clock is read every 256 nodes)
  and **its partial result is discarded**: the answer is always the best move of the last
  *completed* depth. (A partial iteration's first root move is the previous best move, so keeping
  it would rarely change anything, and a value from an unfinished search is no value at all.)
  Depth 1 is never aborted, so there is always an answer.
- more than half of the time is gone after an iteration: the next one, which takes several times
  longer, would most likely be thrown away;
- ``max_depth`` is reached;
- the value is *proven*: the last iteration used no horizon evaluation at all (every leaf it saw
  was terminal, so deeper searches cannot change anything), or the best root move is a proven
  line to the best utility the game allows (a forced win).

Searches run for the root player ``me`` (maximised at ``me``'s nodes, minimised elsewhere): in a
two-player zero-sum game that is alpha-beta; with more players it is the paranoid search.

Move ordering: the root searches the previous iteration's best move first; inner nodes try the
transposition table's best move first, and the previous principal variation is written into the
table as hints before each iteration, so the PV is always searched first.

The transposition table (``bots.tt``) is keyed by ``game.state_key(state)`` and bounded to
``tt_size`` entries. Every node asks it through ``TranspositionTable.lookup`` and stores through
``TranspositionTable.store``, the table's own rules: an entry's value is used only when it was
searched to exactly the remaining depth (or proven), and a bound only when it decides the node by
itself, so the value at depth *d* is always the fixed-depth minimax value at depth *d*. The table
is kept between the moves of a game (fixed-depth values are properties of positions) and cleared
by ``new_game``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from bot_arena.bots.base import Bot, Decision, SearchInfo, TimeBudget
from bot_arena.bots.search_common import (
    INF,
    MAX_PLY,
    UNLIMITED,
    Line,
    SearchAborted,
    line_to_list,
    pv_end_vector,
    think_time,
    zero_sum_vector,
)
from bot_arena.bots.tt import DEFAULT_SIZE, EXACT, LOWER, UPPER, TranspositionTable
from bot_arena.games.base import Game, GameKind

CHECK_EVERY = 256  # nodes between two reads of the clock (under a millisecond in Rolit)


@dataclass(slots=True)
class Iteration:
    """The result of one completed depth."""

    depth: int
    value: float
    move: Hashable
    pv: list[Hashable]
    proven: bool


@dataclass(slots=True)
class DeepeningResult:
    iterations: list[Iteration] = field(default_factory=list)
    nodes: int = 0
    leaves: int = 0
    cutoffs: int = 0
    tt_hits: int = 0
    aborted: bool = False
    stopped_because: str = ""

    @property
    def last(self) -> Iteration:
        return self.iterations[-1]


class DeepeningSearch:
    """One iterative-deepening search over a given table; see the module docstring."""

    def __init__(
        self,
        game: Game[Any, Any],
        table: TranspositionTable,
        me: int,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        """``clock`` is read for the time limit (the bot passes its budget's; tests a fake)."""
        self.game = game
        self.clock = clock
        self.table = table
        self.me = me
        self.nodes = 0
        self.leaves = 0
        self.cutoffs = 0
        self.tt_hits = 0
        self.deadline = INF
        self._win_proven = False

    def run(
        self, state: Any, max_depth: int = UNLIMITED, seconds: float | None = None
    ) -> DeepeningResult:
        start = self.clock()
        deadline = INF if seconds is None else start + seconds
        table = self.table
        table.new_search()
        game = self.game
        best_utility = game.bounds.max_each
        result = DeepeningResult()
        root_moves = list(game.legal_moves(state))
        depth = 0
        while depth < max_depth:
            depth += 1
            self.deadline = INF if depth == 1 else deadline
            if result.iterations:
                self._write_hints(state, result.last.pv)
            try:
                done = self._root(state, root_moves, depth)
            except SearchAborted:
                result.aborted = True
                result.stopped_because = "time"
                break
            result.iterations.append(done)
            root_moves.remove(done.move)
            root_moves.insert(0, done.move)
            if done.proven:
                result.stopped_because = "proven"
                break
            if self._win_proven and done.value >= best_utility:
                result.stopped_because = "proven win"
                break
            if seconds is not None and self.clock() - start > seconds / 2:
                result.stopped_because = "time"
                break
        else:
            result.stopped_because = "max_depth"
        result.nodes = self.nodes
        result.leaves = self.leaves
        result.cutoffs = self.cutoffs
        result.tt_hits = self.tt_hits
        return result

    def _write_hints(self, state: Any, pv: list[Hashable]) -> None:
        """Make sure each position along the last PV offers its PV move to the next iteration."""
        game, table = self.game, self.table
        for move in pv:
            table.hint(game.state_key(state), move)
            state = game.apply(state, move)

    def _root(self, state: Any, moves: list[Hashable], depth: int) -> Iteration:
        """Search every root move: beta stays infinite, alpha is the best value so far."""
        search, lines, counters = self._make_search()
        apply = self.game.apply
        alpha = best = -INF
        best_move: Hashable = moves[0]
        best_line: Line = None
        best_proven = all_proven = True
        try:
            for move in moves:
                before = counters()[4]
                value = search(apply(state, move), depth - 1, alpha, INF, 1)
                proven = counters()[4] == before
                all_proven = all_proven and proven
                if value > best:
                    best = value
                    best_move = move
                    best_line = (move, lines[1])
                    best_proven = proven
                    alpha = max(alpha, value)
        finally:
            nodes, leaves, cutoffs, tt_hits, _ = counters()
            self.nodes += nodes + 1  # + the root
            self.leaves += leaves
            self.cutoffs += cutoffs
            self.tt_hits += tt_hits
        self._win_proven = best_proven
        pv = self._extend_pv(state, line_to_list(best_line), depth)
        return Iteration(depth, best, best_move, pv, all_proven)

    def _extend_pv(self, state: Any, pv: list[Hashable], depth: int) -> list[Hashable]:
        """A PV cut short by a table hit continues along the table's best moves."""
        game, table = self.game, self.table
        for move in pv:
            state = game.apply(state, move)
        seen = set()
        while len(pv) < depth and not game.is_terminal(state):
            key = game.state_key(state)
            entry = table.probe(key)
            if entry is None or entry.move is None or key in seen or entry.flag != EXACT:
                break
            seen.add(key)
            pv.append(entry.move)
            state = game.apply(state, entry.move)
        return pv

    def _make_search(self) -> tuple[Any, list[Line], Any]:
        """The recursive search as a closure over local bindings (hot code)."""
        game = self.game
        legal_moves = game.legal_moves
        apply = game.apply
        utility = game.utility
        evaluate = game.evaluate
        current_player = game.current_player
        state_key = game.state_key
        perf_counter = self.clock
        lookup = self.table.lookup
        store = self.table.store
        deadline = self.deadline
        me = self.me
        lines: list[Line] = [None] * (MAX_PLY + 2)
        nodes = leaves = cutoffs = tt_hits = horizon = 0
        next_check = CHECK_EVERY

        def counters() -> tuple[int, int, int, int, int]:
            return nodes, leaves, cutoffs, tt_hits, horizon

        def search(state: Any, depth: int, alpha: float, beta: float, ply: int) -> float:
            nonlocal nodes, leaves, cutoffs, tt_hits, horizon, next_check
            nodes += 1
            if nodes >= next_check:
                if perf_counter() > deadline:
                    raise SearchAborted
                next_check = nodes + CHECK_EVERY
            if depth == 0:
                leaves += 1
                horizon += 1
                lines[ply] = None
                return evaluate(state)[me]
            key = state_key(state)
            cutoff, value, proven, hash_move, index = lookup(key, depth, alpha, beta)
            if cutoff:
                tt_hits += 1
                if not proven:
                    horizon += 1
                lines[ply] = None
                return value
            moves = legal_moves(state)
            if not moves:
                leaves += 1
                lines[ply] = None
                return utility(state)[me]
            if hash_move is not None and hash_move != moves[0]:
                # the table's move first, the others in their order (legal moves are distinct;
                # a list and remove/insert cost a third of a filtered copy)
                moves = list(moves)
                try:  # noqa: SIM105 (contextlib.suppress costs more than the whole reorder)
                    moves.remove(hash_move)
                except ValueError:  # not among them (never for a true key): it goes first anyway
                    pass
                moves.insert(0, hash_move)
            horizon_before = horizon
            alpha_in = alpha
            beta_in = beta
            best_move = None
            if depth == 1:  # the children are horizon leaves: evaluated without a call each
                count = len(moves)
                if current_player(state) == me:
                    best = -INF
                    for move in moves:
                        value = evaluate(apply(state, move))[me]
                        if value > best:
                            best = value
                            best_move = move
                            if value > alpha:
                                alpha = value
                                if alpha >= beta:
                                    if move != moves[-1]:
                                        cutoffs += 1
                                        count = moves.index(move) + 1
                                    break
                else:
                    best = INF
                    for move in moves:
                        value = evaluate(apply(state, move))[me]
                        if value < best:
                            best = value
                            best_move = move
                            if value < beta:
                                beta = value
                                if alpha >= beta:
                                    if move != moves[-1]:
                                        cutoffs += 1
                                        count = moves.index(move) + 1
                                    break
                if best_move is not None:  # the line is the best move (set once, not per better)
                    lines[ply] = (best_move, None)
                nodes += count
                leaves += count
                horizon += count
            else:
                remaining = depth - 1
                child_ply = ply + 1
                best_line: Line = None
                if current_player(state) == me:
                    best = -INF
                    for move in moves:
                        value = search(apply(state, move), remaining, alpha, beta, child_ply)
                        if value > best:
                            best = value
                            best_move = move
                            best_line = lines[child_ply]
                            if value > alpha:
                                alpha = value
                                if alpha >= beta:
                                    if move != moves[-1]:
                                        cutoffs += 1
                                    break
                else:
                    best = INF
                    for move in moves:
                        value = search(apply(state, move), remaining, alpha, beta, child_ply)
                        if value < best:
                            best = value
                            best_move = move
                            best_line = lines[child_ply]
                            if value < beta:
                                beta = value
                                if alpha >= beta:
                                    if move != moves[-1]:
                                        cutoffs += 1
                                    break
                if best_move is not None:  # the line, made once (not at every better move)
                    lines[ply] = (best_move, best_line)
            if best <= alpha_in:
                flag = UPPER
            elif best >= beta_in:
                flag = LOWER
            else:
                flag = EXACT
            store(key, depth, flag, best, best_move, horizon == horizon_before, index)
            return best

        return search, lines, counters


class IterativeBot(Bot):
    """``iterative[:time=S,max_depth=N,tt_size=N]`` — ID alpha-beta with a transposition table.

    ``time`` <= 0 means no time limit of its own (the arena's budget still applies);
    ``max_depth`` None deepens until the time is up or the value is proven (the game's
    ``default_depth`` does not apply: this bot is limited by time); ``tt_size`` bounds the table's
    entries. ``values`` is ``(v, -v)`` in two-player zero-sum games, else the static value at the
    end of the principal variation; ``extra`` holds ``score`` (the root player's value) and why
    deepening ``stopped``.
    """

    name = "iterative"

    def __init__(
        self,
        time: float = 1.0,
        max_depth: int | None = None,
        tt_size: int = DEFAULT_SIZE,
        spec: str | None = None,
    ) -> None:
        super().__init__(spec)
        if max_depth is not None and max_depth < 1:
            raise ValueError(f"max_depth must be >= 1, not {max_depth}")
        if tt_size < 1:
            raise ValueError(f"tt_size must be >= 1, not {tt_size}")
        self.time = time
        self.max_depth = max_depth
        self.tt_size = tt_size
        self.table = TranspositionTable(tt_size)
        self._me: int | None = None

    def new_game(self, game: Game[Any, Any], seat: int) -> None:
        self.table.clear()
        self._me = None

    def choose_move(self, game: Game[Any, Any], state: Any, budget: TimeBudget) -> Decision:
        me = game.current_player(state)
        if self._me != me:  # table values are from one player's point of view
            self.table.clear()
            self._me = me
        seconds = think_time(self.time if self.time > 0 else None, budget)
        start = time.perf_counter()
        search = DeepeningSearch(game, self.table, me, clock=budget.clock)
        result = search.run(state, self.max_depth or UNLIMITED, seconds)
        last = result.last
        if game.num_players == 2 and game.kind is GameKind.ZERO_SUM:
            values: tuple[float, ...] = zero_sum_vector(last.value, me)
        else:
            values = tuple(pv_end_vector(game, state, last.pv))
        info = SearchInfo(
            values=values,
            pv=last.pv,
            depth=last.depth,
            nodes=result.nodes,
            leaves=result.leaves,
            cutoffs=result.cutoffs,
            tt_hits=result.tt_hits,
            time_s=time.perf_counter() - start,
        )
        info.extra["stopped"] = result.stopped_because
        info.extra["score"] = last.value
        return Decision(last.move, info)

    def options(self) -> dict[str, Any]:
        return {"time": self.time, "max_depth": self.max_depth, "tt_size": self.tt_size}
