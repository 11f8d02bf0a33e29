"""Strong exact solver for Connect Four on raw bitboards (any width and height).

The design is the classic one for this game: negamax with alpha-beta on a null window, the root
score found by a binary search between the smallest and largest possible scores ("iterative
narrowing"), a transposition table of upper and lower bounds, and only *non-losing* moves ever
searched, ordered by how many winning threats they create (ties centre first).

Board layout (the standard one, shared with :mod:`games.connect4`): column ``c`` occupies bits
``c*(H+1) .. c*(H+1)+H-1``, bottom row first, plus one empty sentinel bit on top, so shifts that
run off a column hit an empty bit. A position is ``(current, mask, plies)``: ``current`` holds the
stones of the player to move, ``mask`` all stones.

Score convention (that of the benchmark sets): for the player to move, 0 for a draw; a win scores
``K - s`` where ``s`` is the number of stones the winner has placed when its winning stone lands
(that stone included) and ``K = (W*H+1)//2 + 1`` (22 on the 7x6 board); a loss is the negative of
the opponent's win score. (On boards with an odd number of cells :mod:`games.connect4` scores
wins half a point lower; :mod:`bots.solver` converts, the order of outcomes being the same.)

Node counts equal those of the published C++ solver of the same design (51 and 449 per position
on average on Test_L3_R1 and Test_L2_R1, against its 51 and 450), so the remaining gap is the
cost per node, which three tricks keep small:

* the threats every candidate move would create (the ordering key) are computed for all columns
  at once, by laying ``W`` copies of the board side by side in one big integer, with gaps wide
  enough that no shift reaches a neighbouring copy, and running the threat formula once;
* those threats are exactly the opponent threats of the child position, so each child receives
  them as an argument instead of computing them: a node that returns early does no threat work;
* the search is a closure over local constants, one function for inner nodes and one for the root
  (the root also remembers which move proved its bound, so the best move costs no extra search).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bot_arena.bots.search_common import SearchAborted

Window = tuple[int, int] | None

#: Default transposition-table capacity in entries: about 90 bytes each in CPython (a dict slot
#: and the key int), so a full default table takes about 95 MB.
DEFAULT_TT_SIZE = 1 << 20


#: The message of the solvers' :class:`SearchAborted` (deadline and node limit alike; the
#: generic searches of :mod:`bots.solver` say the same).
TIMEOUT_MESSAGE = "connect4 solver: deadline passed"


@dataclass(frozen=True, slots=True)
class Solution:
    """The result of one exact solve.

    ``move`` is a column (0-based) that reaches ``score``, or ``None`` when no move is asked for
    or the position is over. ``nodes`` counts positions entered by the search (the root
    included, every narrowing pass counted); ``tt_entries`` is the table size at the end.
    """

    score: int
    move: int | None
    nodes: int
    time_s: float
    tt_entries: int


class Connect4Solver:
    """Exact solver for one board size; reusable across positions.

    ``tt_size`` bounds the transposition table (entries); when it is full it is emptied, so the
    memory stays within the configured size. ``symmetry`` keys mirror-image positions the same:
    that only pays near the empty board, where mirror images meet; on the mid- and end-game
    benchmark sets it saves no node and costs about half as much again per node.
    """

    def __init__(
        self,
        width: int = 7,
        height: int = 6,
        tt_size: int = DEFAULT_TT_SIZE,
        symmetry: bool = False,
    ) -> None:
        if width < 1 or height < 1:
            raise ValueError("connect4 solver: width and height must be positive")
        if width > 15:
            raise ValueError("connect4 solver: at most 15 columns")
        if tt_size < 1:
            raise ValueError("connect4 solver: tt_size must be positive")
        self.width = width
        self.height = height
        self.tt_size = tt_size
        self.symmetry = symmetry
        h1 = height + 1
        self.bottom = sum(1 << (c * h1) for c in range(width))
        self.board = self.bottom * ((1 << height) - 1)
        self.column_masks = tuple(((1 << height) - 1) << (c * h1) for c in range(width))
        self.top_masks = tuple(1 << (height - 1 + c * h1) for c in range(width))
        # Centre first, left before right among equals: 3, 2, 4, 1, 5, 0, 6 on seven columns.
        order = [width // 2 + (1 - 2 * (i % 2)) * ((i + 1) // 2) for i in range(width)]
        self.order = tuple(order)
        self.cells = width * height
        self.win_base = (self.cells + 1) // 2 + 1
        self.tt: dict[int, int] = {}
        self.nodes = 0
        self._deadline: float | None = None
        self._clock: Callable[[], float] = time.perf_counter
        self._node_limit: int | None = None
        self._search = self._build()

    # --- public API ----------------------------------------------------------------------------
    def reset(self) -> None:
        """Empty the transposition table (a fresh, reproducible search)."""
        self.tt.clear()

    def solve(
        self,
        current: int,
        mask: int,
        plies: int,
        *,
        want_move: bool = True,
        deadline: float | None = None,
        window: tuple[int, int] | None = None,
        node_limit: int | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> Solution:
        """The exact score of a position that is not over (nobody has four, the board not full).

        ``deadline`` (an instant of ``clock``, ``time.perf_counter`` unless given) makes the
        search raise :class:`~bot_arena.bots.search_common.SearchAborted` when passed (its
        ``reason`` ``"time"``), and so does ``node_limit`` (checked every 2048 nodes) when
        exceeded (``"nodes"``); its ``lo``/``hi`` bound the score as far as proven, ``move`` is
        the best column found so far (one reaching at least ``lo``) or ``None``.
        ``window=(lo, hi)`` asks only whether the score is below, inside or above: the result is
        exact inside, and otherwise a bound on the side where it fell ("weak" solving is
        ``(-1, 1)``).
        """
        start = time.perf_counter()
        self.nodes = 0
        self._deadline = deadline
        self._clock = clock
        self._node_limit = node_limit
        score, move = self._search(current, mask, plies, want_move, window)
        return Solution(score, move, self.nodes, time.perf_counter() - start, len(self.tt))

    def threats(self, stones: int, mask: int) -> int:
        """Empty cells that would complete four for the owner of ``stones``."""
        return _threat_function(self.height + 1)(stones) & (self.board ^ mask)

    def possible(self, mask: int) -> int:
        """One bit per non-full column: the cell where the next stone there lands."""
        return (mask + self.bottom) & self.board

    def is_win(self, stones: int) -> bool:
        """Whether ``stones`` contain four in a row."""
        return _has_four(stones, self.height + 1)

    def play_sequence(self, moves: Iterable[int]) -> tuple[int, int, int]:
        """``(current, mask, plies)`` after the 0-based columns ``moves`` from the empty board.

        Raises ValueError on a full column, a column out of range or a move after a win.
        """
        current = mask = plies = 0
        for col in moves:
            if not 0 <= col < self.width:
                raise ValueError(f"column {col + 1} is out of range")
            if mask & self.top_masks[col]:
                raise ValueError(f"column {col + 1} is full")
            if _has_four(current ^ mask, self.height + 1):
                raise ValueError("the game is already over")
            move = (mask + self.bottom) & self.column_masks[col]
            current ^= mask
            mask |= move
            plies += 1
        return current, mask, plies

    def mirror_key(self, key: int) -> int:
        """The key (or any bitboard) of the mirror-image position (columns reversed)."""
        h1 = self.height + 1
        w = self.width
        col = (1 << h1) - 1
        out = 0
        for c in range(w):
            out |= ((key >> (c * h1)) & col) << ((w - 1 - c) * h1)
        return out

    # --- the search ----------------------------------------------------------------------------
    def _build(self) -> Callable[[int, int, int, bool, Window], tuple[int, int | None]]:
        """Compile the search for this board into closures over local constants."""
        width, height = self.width, self.height
        h1 = height + 1
        span = width * h1
        stride = span + 3 * (h1 + 1)  # no shift of the threat formula crosses into a neighbour
        rep = sum(1 << (c * stride) for c in range(width))
        diag = sum(self.column_masks[c] << (c * stride) for c in range(width))
        low = (1 << span) - 1
        board = self.board
        bottom = self.bottom
        cells = self.cells
        base = self.win_base
        colmask = self.column_masks
        order = self.order
        threats_of = _threat_function(h1)
        # A move's sort key packs, high to low: threats it creates, 15 - its column's place in
        # `order` (centre first on ties), and the threats themselves (the child's opponent
        # threats, handed down so the child need not compute them). Key bits above `span`:
        rank_low = {c: 15 - r for r, c in enumerate(order)}
        # Per column in centre-first order: (column mask, its copy's shift, rank bits).
        columns = tuple((colmask[c], c * stride, rank_low[c] << span) for c in order)
        # Rank bits -> column mask; 0 (never a real rank) stands for "the only move".
        by_rank = [0] * 16
        for c in order:
            by_rank[rank_low[c]] = colmask[c]
        by_rank[0] = board
        low_to_mask = tuple(by_rank)
        s1, s2, s3 = h1, 2 * h1, 3 * h1
        d1, d2, d3 = height, 2 * height, 3 * height
        e1, e2, e3 = h1 + 1, 2 * (h1 + 1), 3 * (h1 + 1)
        tt = self.tt
        tt_get = tt.get
        tt_cap = self.tt_size
        symmetry = self.symmetry
        mirror = self.mirror_key
        solver = self
        perf = time.perf_counter
        check_every = 2047
        nodes = 0
        deadline = float("inf")
        node_limit = float("inf")

        def negamax(cur: int, mask: int, plies: int, alpha: int, r: int) -> int:
            """Null-window search: is the score above ``alpha``? Fail-soft: a result above
            ``alpha`` is a lower bound of the score, one at or below it an upper bound.

            Every search here has a null window (``beta == alpha + 1``), so only ``alpha`` is
            passed: a bound that would raise alpha already reaches beta and returns.
            ``r``: the empty cells where the opponent's stone would complete four. Invariant:
            the player to move cannot win at once (the parent's move was non-losing).
            """
            nonlocal nodes
            nodes += 1
            if not nodes & check_every and (nodes > node_limit or perf() > deadline):
                raise SearchAborted("nodes" if nodes > node_limit else "time", TIMEOUT_MESSAGE)
            possible = (mask + bottom) & board
            forced = possible & r
            if forced:
                if forced & (forced - 1):
                    return (plies + 1) // 2 + 1 - base  # two threats: the opponent wins next
                possible = forced
            nonlosing = possible & ~(r >> 1)
            if not nonlosing:
                return (plies + 1) // 2 + 1 - base
            if plies >= cells - 2:
                return 0
            v = (plies + 1) // 2 + 2 - base  # the opponent cannot win with its next stone
            if v > alpha:
                return v
            key = cur + mask
            if symmetry:
                m = mirror(key)
                if m < key:
                    key = m
            e = tt_get(key)
            if e is not None:
                v = e >> 1
                if e & 1:  # lower bound
                    if v > alpha:
                        return v
                elif v <= alpha:  # upper bound
                    return v
            v = base - plies // 2 - 2  # nor can the player to move
            if v <= alpha:
                return v
            empty = board ^ mask
            several = nonlosing & (nonlosing - 1)
            # Several moves: the threats each would create, all columns at once, one board copy
            # each. A single move: no ordering, just the threats it creates.
            p = ((cur * rep) | ((nonlosing * rep) & diag)) if several else (cur | nonlosing)
            t = (p << 1) & (p << 2) & (p << 3)
            a1 = p << s1
            a2 = p << s2
            b1 = p >> s1
            b2 = p >> s2
            t |= (a1 & a2 & ((p << s3) | b1)) | (b1 & b2 & (a1 | (p >> s3)))
            a1 = p << d1
            a2 = p << d2
            b1 = p >> d1
            b2 = p >> d2
            t |= (a1 & a2 & ((p << d3) | b1)) | (b1 & b2 & (a1 | (p >> d3)))
            a1 = p << e1
            a2 = p << e2
            b1 = p >> e1
            b2 = p >> e2
            t |= (a1 & a2 & ((p << e3) | b1)) | (b1 & b2 & (a1 | (p >> e3)))
            if several:
                keys = [
                    ((x.bit_count() << 4 << span) | rk | x)
                    for cm, sh, rk in columns
                    if nonlosing & cm
                    for x in ((t >> sh) & empty,)
                ]
                keys.sort(reverse=True)
            else:
                keys = [t & empty]
            nxt = cur ^ mask
            plies += 1
            child_alpha = -alpha - 1
            for k in keys:
                score = -negamax(
                    nxt,
                    mask | (nonlosing & low_to_mask[(k >> span) & 15]),
                    plies,
                    child_alpha,
                    k & low,
                )
                if score > alpha:
                    if len(tt) >= tt_cap:
                        tt.clear()
                    tt[key] = (score << 1) | 1
                    return score
            if len(tt) >= tt_cap:
                tt.clear()
            tt[key] = alpha << 1
            return alpha

        def root_moves(cur: int, mask: int) -> list[tuple[int, int]]:
            """Non-losing moves in search order: (column, the threats it creates)."""
            empty = board ^ mask
            r = threats_of(cur ^ mask) & empty
            possible = (mask + bottom) & board
            forced = possible & r
            if forced:
                if forced & (forced - 1):
                    return []
                possible = forced
            nonlosing = possible & ~(r >> 1)
            keyed = []
            for c in order:
                move = nonlosing & colmask[c]
                if move:
                    made = threats_of(cur | move) & empty
                    keyed.append(((made.bit_count() << 4) | rank_low[c], c, made))
            keyed.sort(reverse=True)
            return [(c, made) for _, c, made in keyed]

        def search(
            cur: int, mask: int, plies: int, want_move: bool, window: Window
        ) -> tuple[int, int | None]:
            nonlocal nodes, deadline, node_limit, perf
            perf = solver._clock
            nodes = 0
            deadline = float("inf") if solver._deadline is None else solver._deadline
            node_limit = float("inf") if solver._node_limit is None else solver._node_limit
            try:
                result = _solve(cur, mask, plies, want_move, window)
            finally:
                solver.nodes = nodes
            return result

        def _solve(
            cur: int, mask: int, plies: int, want_move: bool, window: Window
        ) -> tuple[int, int | None]:
            nonlocal nodes
            if _has_four(cur ^ mask, h1):
                raise ValueError("the position is already won")
            if plies >= cells:
                raise ValueError("the board is full")
            nodes += 1
            win_now = threats_of(cur) & (board ^ mask) & ((mask + bottom) & board)
            if win_now:
                col = next(c for c in order if win_now & colmask[c])
                return base - plies // 2 - 1, col
            moves = root_moves(cur, mask)
            if not moves:
                # Every move loses at once; any legal column will do.
                col = next(c for c in order if not mask & solver.top_masks[c])
                return (plies + 1) // 2 + 1 - base, col
            if plies >= cells - 2:
                return 0, moves[0][0]
            nodes -= 1  # the narrowing passes count the root themselves
            # Every non-losing move reaches this bound (the opponent cannot win at once).
            best, proven = moves[0][0], (plies + 1) // 2 + 2 - base
            # The window starts at the scores of losing or winning at once (both excluded now):
            # the classic bounds, whose midpoints make the probes.
            lo = (plies + 1) // 2 + 1 - base
            hi = base - plies // 2 - 1
            if window is not None:
                lo = max(lo, window[0])
                hi = min(hi, window[1])
            while lo < hi:
                med = lo + (hi - lo) // 2
                if med <= 0 and -(-lo // 2) < med:
                    med = -(-lo // 2)  # halve towards zero: probe near the draw first
                elif med >= 0 and hi // 2 > med:
                    med = hi // 2
                try:
                    r, move = root(cur, mask, plies, moves, med)
                except SearchAborted as stop:
                    raise SearchAborted(
                        stop.reason, TIMEOUT_MESSAGE, lo=lo, hi=hi, move=best
                    ) from None
                if r <= med:
                    hi = r
                else:
                    lo = r
                    if move is not None:
                        best, proven = move, r
            if not want_move:
                return lo, None
            if proven < lo:  # the bound came from the table: find a move that reaches it
                nxt = cur ^ mask
                for col, made in moves:
                    child_mask = mask | ((mask + bottom) & colmask[col])
                    try:
                        v = negamax(nxt, child_mask, plies + 1, -lo, made)
                    except SearchAborted as stop:
                        raise SearchAborted(
                            stop.reason, TIMEOUT_MESSAGE, lo=lo, hi=hi, move=best
                        ) from None
                    if v <= -lo:
                        best = col
                        break
            return lo, best

        def root(
            cur: int, mask: int, plies: int, moves: list[tuple[int, int]], alpha: int
        ) -> tuple[int, int | None]:
            """Null-window pass at the root (is the score above ``alpha``?), as ``negamax``,
            also returning the move that proved a result above ``alpha``."""
            nonlocal nodes
            nodes += 1
            v = (plies + 1) // 2 + 2 - base
            if v > alpha:
                return v, None
            key = cur + mask
            if symmetry:
                key = min(key, mirror(key))
            e = tt_get(key)
            if e is not None:
                v = e >> 1
                if (v > alpha) if e & 1 else (v <= alpha):
                    return v, None
            v = base - plies // 2 - 2
            if v <= alpha:
                return v, None
            nxt = cur ^ mask
            for col, made in moves:
                child_mask = mask | ((mask + bottom) & colmask[col])
                score = -negamax(nxt, child_mask, plies + 1, -alpha - 1, made)
                if score > alpha:
                    if len(tt) >= tt_cap:
                        tt.clear()
                    tt[key] = (score << 1) | 1
                    return score, col
            if len(tt) >= tt_cap:
                tt.clear()
            tt[key] = alpha << 1
            return alpha, None

        return search


def _threat_function(h1: int) -> Callable[[int], int]:
    """Cells (not yet masked to empty ones) that complete four for ``stones``; board-agnostic."""
    s1, s2, s3 = h1, 2 * h1, 3 * h1
    d1, d2, d3 = h1 - 1, 2 * (h1 - 1), 3 * (h1 - 1)
    e1, e2, e3 = h1 + 1, 2 * (h1 + 1), 3 * (h1 + 1)

    def threats(p: int) -> int:
        r = (p << 1) & (p << 2) & (p << 3)
        for x1, x2, x3 in ((s1, s2, s3), (d1, d2, d3), (e1, e2, e3)):
            a1, a2, b1, b2 = p << x1, p << x2, p >> x1, p >> x2
            r |= (a1 & a2 & ((p << x3) | b1)) | (b1 & b2 & (a1 | (p >> x3)))
        return r

    return threats


def _has_four(stones: int, h1: int) -> bool:
    for shift in (1, h1 - 1, h1, h1 + 1):
        m = stones & (stones >> shift)
        if m & (m >> (2 * shift)):
            return True
    return False


def parse_moves(text: str, width: int = 7) -> list[int]:
    """``"4453"`` -> ``[3, 3, 4, 2]`` (solver notation, columns 1-based, one digit each)."""
    out = []
    for ch in text.strip():
        if not ch.isdigit() or not 1 <= int(ch) <= width:
            raise ValueError(f"bad column {ch!r} in {text!r}")
        out.append(int(ch) - 1)
    return out
