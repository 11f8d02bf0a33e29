"""Rolit: the multi-player Othello variant (Goliath), 2-4 players, on bitboards.

Rules (those of the published game, with the documented setup choice below):

- The board is ``size`` x ``size`` (default 8; even, 4..26). Players ``0..N-1`` (default 4)
  move in that order, always; nobody ever passes.
- Setup: the four centre squares, clockwise from the top-left one (``d4, e4, e5, d5`` on 8x8),
  hold one ball each of colours 0, 1, 2, 3 in that order. Every player starts with one ball.
  With 2 or 3 players the published game still puts all four colours in the centre, the unused
  ones belonging to nobody; by default (``neutral=False``) we leave those squares empty instead,
  so that every ball on the full board belongs to a player and the game is constant-sum. With
  ``neutral=True`` the unused colours are placed as in the box: *neutral* balls that any player
  can capture and that score for nobody (the game is then general-sum).
- A move places one ball of the mover's colour on an empty square. If the mover can *capture*
  anywhere, the move must capture: the new ball and another ball of the mover's colour bracket a
  straight line (any of the 8 directions) of one or more balls of *any* other colours with no gap;
  all bracketed balls in every such line turn to the mover's colour (only up to the nearest own
  ball in each direction).
- If no capture exists anywhere (for instance the mover has no ball left), the ball may go on any
  empty square next to (8-neighbourhood) an occupied one. So while the board is not full there is
  always a legal move.
- The game ends when the board is full. Utility: each player's number of balls (the sum is
  ``size*size`` without neutral balls).

Bitboards: one int per colour. Square (row ``r`` from the top, column ``c``) is bit
``r*(size+1) + c``; bit column ``size`` of every row is a spare sentinel that is never set, so
shifting a line sideways off the board lands on it instead of wrapping to the next row. Moves are
those bit indices; their text is algebraic ``d3``: column letter ``a..`` from the left, row
``1..`` from the *top* (Othello's convention).

State: a tuple ``(to_move, occupied, board_0, ..., board_{K-1})`` with one board per colour on
the board (``K = N``, or 4 with ``neutral``); ``occupied`` is the union of the boards.

Position text: the rows from the top, separated by ``/``, one character per square (``.`` empty,
``0``-``3`` a colour), then ``@P`` for the player to move, e.g. (4x4, 4 players)
``..../.01./.32./....@0``; ``start`` or ``""`` is the initial position.

Legal moves come in a static positional order: corners, then edges, interior squares, and last
the squares next to a corner (they hand the corner to someone else).
"""

from __future__ import annotations

import re
from typing import Annotated, Final

from bot_arena.games.base import Game, GameError, GameKind, Utility, UtilityBounds
from bot_arena.games.params import Between
from bot_arena.games.quoting import shown

RolitState = tuple[int, ...]

MAX_SIZE: Final = 26
_MOVE_RE = re.compile(r"([a-z])([0-9]+)")


class Rolit(Game[RolitState, int]):
    name = "rolit"
    description = "multi-player Othello (2-4 players): capture if you can, else play adjacent"
    default_depth = 3

    def __init__(
        self,
        players: Annotated[int, Between(2, 4)] = 4,
        size: Annotated[int, Between(4, MAX_SIZE)] = 8,
        neutral: bool = False,
    ) -> None:
        if size % 2:
            raise GameError(f"rolit: size must be even, not {size}")
        self.num_players = players
        self.size = size
        self.neutral = neutral
        self.params = {"players": players, "size": size, "neutral": neutral}
        self.colours = 4 if neutral else players
        cells = size * size
        self.cells = cells
        self.kind = GameKind.GENERAL_SUM if self.colours > players else GameKind.CONSTANT_SUM
        self.bounds = UtilityBounds(min_each=0.0, max_each=float(cells), max_sum=float(cells))

        w = size + 1
        self._w = w
        self.board_mask = sum(1 << (r * w + c) for r in range(size) for c in range(size))
        # Steps along a line; each is used as a left shift and as a right shift.
        self._steps = (1, w - 1, w, w + 1)
        half = size // 2
        self._centre = (
            self.square(half - 1, half - 1),
            self.square(half - 1, half),
            self.square(half, half),
            self.square(half, half - 1),
        )
        corners = [self.square(r, c) for r in (0, size - 1) for c in (0, size - 1)]
        self.corner_mask = sum(1 << b for b in corners)
        self._rays_up, self._rays_down = self._make_rays()
        groups = [0] * 5
        for r in range(size):
            for c in range(size):
                edge_r, edge_c = r in (0, size - 1), c in (0, size - 1)
                near_r, near_c = r in (1, size - 2), c in (1, size - 2)
                if edge_r and edge_c:
                    kind = 0  # corner
                elif (edge_r and near_c) or (edge_c and near_r) or (near_r and near_c):
                    kind = 4  # next to a corner
                elif edge_r or edge_c:
                    kind = 1  # edge
                else:
                    kind = 2  # interior
                groups[kind] |= 1 << self.square(r, c)
        # Legal moves come out group by group, each group in board order.
        self._groups = tuple(g for g in groups if g)
        self._initial = self._make_initial()

    def _make_rays(self) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
        """Per square, the lines of at least two squares leading away from it to the edge,
        split by whether the bit index grows along the line or shrinks."""
        size = self.size
        up: list[tuple[int, ...]] = []
        down: list[tuple[int, ...]] = []
        for sq in range(size * self._w):
            r0, c0 = divmod(sq, self._w)
            grows: list[int] = []
            shrinks: list[int] = []
            for dr, dc in ((0, 1), (1, -1), (1, 0), (1, 1)):
                for sign in (1, -1):
                    ray, r, c = 0, r0 + sign * dr, c0 + sign * dc
                    while c0 < size and 0 <= r < size and 0 <= c < size:
                        ray |= 1 << self.square(r, c)
                        r, c = r + sign * dr, c + sign * dc
                    if ray.bit_count() >= 2:
                        (grows if sign > 0 else shrinks).append(ray)
            up.append(tuple(grows))
            down.append(tuple(shrinks))
        return tuple(up), tuple(down)

    def square(self, row: int, col: int) -> int:
        """Bit index (the move) of the square in ``row`` (from the top) and ``col``."""
        return row * self._w + col

    def _make_initial(self) -> RolitState:
        boards = [0] * self.colours
        for colour in range(self.colours):
            boards[colour] = 1 << self._centre[colour]
        occupied = 0
        for b in boards:
            occupied |= b
        return (0, occupied, *boards)

    # --- rules -------------------------------------------------------------------------------
    def initial_state(self) -> RolitState:
        return self._initial

    def current_player(self, state: RolitState) -> int:
        return state[0]

    def is_terminal(self, state: RolitState) -> bool:
        return state[1] == self.board_mask

    def capture_mask(self, own: int, occupied: int) -> int:
        """Empty squares where a ball of ``own``'s colour would capture something."""
        others = occupied ^ own
        empty = self.board_mask ^ occupied
        moves = 0
        for s in self._steps:
            front = (own << s) & others
            while front:
                front <<= s
                moves |= front & empty
                front &= others
            front = (own >> s) & others
            while front:
                front >>= s
                moves |= front & empty
                front &= others
        return moves

    def adjacent_mask(self, occupied: int) -> int:
        """Empty squares next to an occupied one (the fallback when nothing can be captured)."""
        near = 0
        for s in self._steps:
            near |= (occupied << s) | (occupied >> s)
        return near & (self.board_mask ^ occupied)

    def move_mask(self, state: RolitState) -> int:
        """The legal moves as a bitboard (0 at a terminal state)."""
        occupied = state[1]
        if occupied == self.board_mask:
            return 0
        return self.capture_mask(state[2 + state[0]], occupied) or self.adjacent_mask(occupied)

    def legal_moves(self, state: RolitState) -> tuple[int, ...]:
        m = self.move_mask(state)
        out = []
        for group in self._groups:
            g = m & group
            while g:
                low = g & -g
                out.append(low.bit_length() - 1)
                g ^= low
        return tuple(out)

    def flips(self, own: int, others: int, move: int) -> int:
        """Balls of ``others`` that a ball of ``own``'s colour placed on ``move`` would capture.

        Along each line away from the square, the first square that is not an opponent's ball
        decides: if it is one of the mover's own, every ball before it is captured.
        """
        flipped = 0
        for ray in self._rays_up[move]:
            stop = ray & ~others
            first = stop & -stop  # nearest square: the lowest bit
            if first & own:
                flipped |= ray & (first - 1)
        for ray in self._rays_down[move]:
            stop = ray & ~others
            if stop:
                first = 1 << (stop.bit_length() - 1)  # nearest square: the highest bit
                if first & own:
                    flipped |= ray & -(first << 1)
        return flipped

    def apply(self, state: RolitState, move: int) -> RolitState:
        player = state[0]
        occupied = state[1]
        own = state[2 + player]
        bit = 1 << move
        captured = self.flips(own, occupied ^ own, move)
        new = list(state)
        new[0] = player + 1 if player + 1 < self.num_players else 0
        new[1] = occupied | bit
        if captured:
            keep = ~captured
            for i in range(2, len(new)):
                new[i] &= keep
        new[2 + player] = own | captured | bit
        return tuple(new)

    def counts(self, state: RolitState) -> tuple[int, ...]:
        """Balls of every colour on the board (neutral colours included, after the players)."""
        return tuple(b.bit_count() for b in state[2:])

    def utility(self, state: RolitState) -> Utility:
        return tuple(b.bit_count() for b in state[2 : 2 + self.num_players])

    def evaluate(self, state: RolitState) -> Utility:
        """Ball counts (corners count triple: they never change colour again) scaled to the
        board: each player's share of the weighted balls times ``size*size``."""
        if state[1] == self.board_mask:
            return self.utility(state)
        corners = self.corner_mask
        weights = [b.bit_count() + 2 * (b & corners).bit_count() for b in state[2:]]
        total = sum(weights)
        scale = self.cells / total
        return tuple(w * scale for w in weights[: self.num_players])

    # --- text I/O ----------------------------------------------------------------------------
    def parse_move(self, text: str) -> int:
        m = _MOVE_RE.fullmatch(text.strip().lower())
        if m is not None:
            col = ord(m.group(1)) - ord("a")
            row = int(m.group(2)) - 1
            if 0 <= col < self.size and 0 <= row < self.size:
                return self.square(row, col)
        last = chr(ord("a") + self.size - 1)
        raise GameError(f"rolit: move {shown(text)} is not a square a1..{last}{self.size}")

    def format_move(self, move: int) -> str:
        row, col = divmod(move, self._w)
        return f"{chr(ord('a') + col)}{row + 1}"

    def parse_position(self, text: str) -> RolitState:
        t = text.strip()
        if t.lower() in ("", "start"):
            return self._initial
        board, at, player_text = t.partition("@")
        player = 0
        if at:
            if not (player_text.isdigit() and int(player_text) < self.num_players):
                raise GameError(
                    f"rolit: position {shown(t)}: player to move must be 0..{self.num_players - 1}"
                )
            player = int(player_text)
        rows = board.split("/")
        if len(rows) != self.size:
            raise GameError(f"rolit: position {shown(t)}: expected {self.size} rows separated by /")
        boards = [0] * self.colours
        for r, row in enumerate(rows):
            if len(row) != self.size:
                raise GameError(
                    f"rolit: position {shown(t)}: row {r + 1} is not {self.size} squares"
                )
            for c, ch in enumerate(row):
                if ch == ".":
                    continue
                if not (ch.isdigit() and int(ch) < self.colours):
                    last = self.colours - 1
                    raise GameError(
                        f"rolit: position {shown(t)}: {shown(ch)} is not '.' or a colour 0..{last}"
                    )
                boards[int(ch)] |= 1 << self.square(r, c)
        occupied = 0
        for b in boards:
            occupied |= b
        if not occupied:
            raise GameError(f"rolit: position {shown(t)}: the board needs at least one ball")
        return (player, occupied, *boards)

    def _char_rows(self, state: RolitState) -> list[list[str]]:
        rows = [["."] * self.size for _ in range(self.size)]
        for colour, b in enumerate(state[2:]):
            while b:
                low = b & -b
                row, col = divmod(low.bit_length() - 1, self._w)
                rows[row][col] = str(colour)
                b ^= low
        return rows

    def format_position(self, state: RolitState) -> str:
        board = "/".join("".join(row) for row in self._char_rows(state))
        return f"{board}@{state[0]}"

    def render(self, state: RolitState) -> str:
        letters = " ".join(chr(ord("a") + c) for c in range(self.size))
        lines = [f"    {letters}"]
        for r, row in enumerate(self._char_rows(state)):
            lines.append(f"{r + 1:>3} {' '.join(row)}")
        counts = self.counts(state)
        shown = ", ".join(
            f"{colour}: {n}" if colour < self.num_players else f"{colour} (neutral): {n}"
            for colour, n in enumerate(counts)
        )
        lines.append(f"balls {shown}")
        if self.is_terminal(state):
            lines.append("the board is full")
        else:
            lines.append(f"player {state[0]} to move")
        return "\n".join(lines)
