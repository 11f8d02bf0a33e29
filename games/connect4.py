"""Connect Four on bitboards (width and height are parameters; default 7 wide, 6 high).

Board layout (the well-known one from bitboard solvers): column ``c`` occupies bits
``c*(H+1) .. c*(H+1)+H-1``, bottom cell first, with one spare *sentinel* bit on top of each column
that is never set. The sentinel stops shifted lines from wrapping from the top of one column into
the bottom of the next, so four-in-a-row tests are plain shifts and ands.

State: a tuple of four ints ``(current, mask, plies, outcome)``:

- ``current``: the stones of the player to move;
- ``mask``: all stones on the board (the other player's stones are ``current ^ mask``);
- ``plies``: stones played so far; player 0 (``X``, the first player) moves when it is even;
- ``outcome``: ``ONGOING`` (0) while the game goes on, ``WON`` (1) when the last move completed
  four in a row (the player *not* to move has won), ``DRAWN`` (2) when the board filled up without
  a four. ``is_terminal`` is just ``outcome != 0``.

``current + mask`` identifies the position uniquely (``state_key``): it is the mask with one extra
bit on top of every column, shifted by the stones of the player to move.

Moves are column indices ``0..W-1``; their text is the column ``1..W``. ``legal_moves`` returns
precomputed tuples, centre columns first (``3, 2, 4, 1, 5, 0, 6`` on the 7-wide board).

Position text is the standard solver notation: the columns played, 1-based, first player first
(``4453``); ``""`` or ``start`` is the empty board. A bitboard cannot remember the order in which
the stones were played, so ``format_position`` writes *some* legal move sequence that reaches the
position (it undoes stones from the tops of the columns, searching for an order in which no
earlier position already had four in a row); ``parse_position(format_position(s)) == s`` always
holds, but the text need not be the sequence that was typed in. Widths are limited to 9 so that
each move is one digit.

Utility (two-player zero-sum, the scoring of the public solver benchmark sets): a win is worth
``W*H/2 + 1 - (stones the winner placed, the winning one included)`` to the winner (``22 - stones``
on 7x6) and its negative to the loser; a draw is 0. ``evaluate`` is a cheap positional heuristic
(stones weighted by the lines of four through their cells) squashed strictly inside the smallest
win value (``|v| < 1`` on 7x6), so any proven win outranks any heuristic guess.

Search code may skip the tuples and use the public bitboard helpers on the game object:
``bottom_mask``, ``board_mask``, ``column_mask(c)``, ``top_mask(c)``, ``bottom_mask_col(c)``,
``possible(mask)``, ``winning_positions(position, mask)``, ``is_win(bitboard)``, ``popcount``,
``move_order`` and ``win_base``.
"""

from __future__ import annotations

import random
from collections.abc import Hashable
from typing import Annotated, Final

from bot_arena.games.base import Game, GameError, GameKind, Utility, UtilityBounds
from bot_arena.games.params import Between
from bot_arena.games.quoting import shown

C4State = tuple[int, int, int, int]

ONGOING: Final = 0
WON: Final = 1
DRAWN: Final = 2

MAX_WIDTH: Final = 9
MAX_HEIGHT: Final = 32


def popcount(bitboard: int) -> int:
    """Number of set bits (stones) in a bitboard."""
    return bitboard.bit_count()


class ConnectFour(Game[C4State, int]):
    name = "connect4"
    description = "Connect Four on bitboards; positions are solver move strings like 4453"
    default_depth = 6

    def __init__(
        self,
        width: Annotated[int, Between(1, MAX_WIDTH)] = 7,
        height: Annotated[int, Between(1, MAX_HEIGHT)] = 6,
    ) -> None:
        self.width = width
        self.height = height
        self.num_players = 2
        self.kind = GameKind.ZERO_SUM
        self.params = {"width": width, "height": height}
        cells = width * height
        self.cells = cells
        #: A win scores ``win_base - stones of the winner`` (22 on 7x6).
        self.win_base: float = cells // 2 + 1 if cells % 2 == 0 else cells / 2 + 1
        # A four needs a line of four cells and four stones of one player (ply 7 or later).
        can_win = max(width, height) >= 4 and (cells + 1) // 2 >= 4
        fastest = self.win_base - 4 if can_win else 0.0
        slowest = self.win_base - (cells + 1) // 2
        self.bounds = UtilityBounds(min_each=-fastest, max_each=fastest, max_sum=0.0)
        #: The smallest score a win can have; heuristics stay strictly inside it.
        self.min_win = slowest

        h1 = height + 1
        self._h1 = h1
        #: Bits of the bottom cell of every column.
        self.bottom_mask = sum(1 << (c * h1) for c in range(width))
        #: Bits of every playable cell (sentinels excluded).
        self.board_mask = self.bottom_mask * ((1 << height) - 1)
        self._bottom = tuple(1 << (c * h1) for c in range(width))
        self._top = tuple(1 << (c * h1 + height - 1) for c in range(width))
        self._column = tuple(((1 << height) - 1) << (c * h1) for c in range(width))
        self._top_all = sum(self._top)
        #: Columns in the default search order: centre first, left before right on ties.
        self.move_order = tuple(sorted(range(width), key=lambda c: (abs(2 * c - width + 1), c)))
        # Legal moves per "which columns are full", keyed by mask & (top cells of all columns).
        self._moves: dict[int, tuple[int, ...]] = {}
        for full in range(1 << width):
            key = sum(self._top[c] for c in range(width) if full >> c & 1)
            self._moves[key] = tuple(c for c in self.move_order if not full >> c & 1)
        # Shifts that step along a line: vertical, horizontal, and the two diagonals.
        self._shifts = (1, h1, height, height + 2)
        self._line_shifts = (h1, 2 * h1, height, 2 * height, height + 2, 2 * height + 4)
        # evaluate(): each cell weighs the number of lines of four through it (3..13 on 7x6),
        # stored as bit planes so a weighted stone count is a few popcounts.
        weight = {(c, r): self.lines_through(c, r) for c in range(width) for r in range(height)}
        self._planes = (
            ()
            if not can_win
            else tuple(
                (1 << k, plane)
                for k in range(max(weight.values()).bit_length())
                if (plane := sum(1 << (c * h1 + r) for (c, r), w in weight.items() if w >> k & 1))
            )
        )

    # --- bitboard helpers for search code ----------------------------------------------------
    popcount = staticmethod(popcount)

    def lines_through(self, col: int, row: int) -> int:
        """How many lines of four cells on the board contain the cell (``evaluate``'s weight)."""
        count = 0
        for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
            for back in range(4):
                c0, r0 = col - back * dc, row - back * dr
                c3, r3 = c0 + 3 * dc, r0 + 3 * dr
                cols_inside = min(c0, c3) >= 0 and max(c0, c3) < self.width
                rows_inside = min(r0, r3) >= 0 and max(r0, r3) < self.height
                count += cols_inside and rows_inside
        return count

    def column_mask(self, col: int) -> int:
        """All cells of column ``col``."""
        return self._column[col]

    def top_mask(self, col: int) -> int:
        """The top cell of column ``col`` (set in ``mask`` exactly when the column is full)."""
        return self._top[col]

    def bottom_mask_col(self, col: int) -> int:
        """The bottom cell of column ``col``."""
        return self._bottom[col]

    def possible(self, mask: int) -> int:
        """The cells where a stone would land now, one per column that is not full."""
        return (mask + self.bottom_mask) & self.board_mask

    def is_win(self, bitboard: int) -> bool:
        """Whether ``bitboard`` holds four in a row in any direction."""
        for s in self._shifts:
            m = bitboard & (bitboard >> s)
            if m & (m >> (2 * s)):
                return True
        return False

    def winning_positions(self, position: int, mask: int) -> int:
        """Empty cells (playable now or not) that would complete four for ``position``'s owner."""
        p = position
        r = (p << 1) & (p << 2) & (p << 3)  # vertical: three below
        for s in self._shifts[1:]:
            a = (p << s) & (p << 2 * s)
            r |= a & (p << 3 * s)
            r |= a & (p >> s)
            b = (p >> s) & (p >> 2 * s)
            r |= b & (p << s)
            r |= b & (p >> 3 * s)
        return r & (self.board_mask ^ mask)

    # --- rules -------------------------------------------------------------------------------
    def initial_state(self) -> C4State:
        return (0, 0, 0, ONGOING)

    def current_player(self, state: C4State) -> int:
        return state[2] & 1

    def legal_moves(self, state: C4State) -> tuple[int, ...]:
        if state[3]:
            return ()
        return self._moves[state[1] & self._top_all]

    def apply(self, state: C4State, move: int) -> C4State:
        current, mask, plies, _ = state
        new_mask = mask | (mask + self._bottom[move])
        other = current ^ mask
        plies += 1
        if plies >= 7:  # the mover has four stones or more
            p = new_mask ^ other  # the mover's stones, the new one included
            h, h2, d1, d12, d2, d22 = self._line_shifts
            m = p & (p >> h)
            if m & (m >> h2):
                return (other, new_mask, plies, WON)
            m = p & (p >> 1)
            if m & (m >> 2):
                return (other, new_mask, plies, WON)
            m = p & (p >> d1)
            if m & (m >> d12):
                return (other, new_mask, plies, WON)
            m = p & (p >> d2)
            if m & (m >> d22):
                return (other, new_mask, plies, WON)
            if plies == self.cells:
                return (other, new_mask, plies, DRAWN)
        elif plies == self.cells:
            return (other, new_mask, plies, DRAWN)
        return (other, new_mask, plies, ONGOING)

    def is_terminal(self, state: C4State) -> bool:
        return state[3] != ONGOING

    def utility(self, state: C4State) -> Utility:
        if state[3] != WON:
            return (0, 0)
        plies = state[2]
        score = self.win_base - (plies + 1) // 2
        # The winner made the last move: player 0 when plies is odd.
        return (score, -score) if plies & 1 else (-score, score)

    def evaluate(self, state: C4State) -> Utility:
        """Positional heuristic: every stone weighs the number of lines of four through its cell
        (the classic table, centre cells most); ``d`` = player 0's total minus player 1's,
        squashed to ``min_win * d / (|d| + 32)``, strictly inside every win's score.

        It is deliberately cheap (a handful of popcounts, about the cost of one ``apply``): leaves
        are most of a fixed-depth search, and tactics (threats) are left to the search itself.
        """
        current, mask, plies, outcome = state
        if outcome:
            return self.utility(state)
        other = current ^ mask
        raw = 0
        for weight, plane in self._planes:
            raw += weight * ((current & plane).bit_count() - (other & plane).bit_count())
        v = self.min_win * raw / (abs(raw) + 32)
        if plies & 1:  # player 1 to move: turn to player 0's view
            v = 0.0 - v
        return (v, 0.0 - v)

    def state_key(self, state: C4State) -> Hashable:
        return state[0] + state[1]

    def random_playout(self, state: C4State, rng: random.Random) -> C4State:
        """Same moves as the generic loop for the same ``rng``, without the method calls."""
        choice = rng.choice
        moves = self._moves
        top_all = self._top_all
        apply = self.apply
        while not state[3]:
            state = apply(state, choice(moves[state[1] & top_all]))
        return state

    # --- text I/O ----------------------------------------------------------------------------
    def parse_move(self, text: str) -> int:
        t = text.strip()
        if not (t.isdigit() and 1 <= int(t) <= self.width):
            raise GameError(f"connect4: move {shown(text)} is not a column 1..{self.width}")
        return int(t) - 1

    def format_move(self, move: int) -> str:
        return str(move + 1)

    def parse_position(self, text: str) -> C4State:
        t = text.strip()
        state = self.initial_state()
        if t.lower() == "start":
            return state
        for i, ch in enumerate(t, 1):
            if not ("1" <= ch <= "9" and int(ch) <= self.width):
                raise GameError(
                    f"connect4: position {shown(t)}: {shown(ch)} at move {i} "
                    f"is not a column 1..{self.width}"
                )
            col = int(ch) - 1
            if state[3] == WON:
                raise GameError(
                    f"connect4: position {shown(t)}: the game was already won at move {i - 1}"
                )
            if state[1] & self._top[col]:
                raise GameError(f"connect4: position {shown(t)}: column {ch} is full at move {i}")
            state = self.apply(state, col)
        return state

    def format_position(self, state: C4State) -> str:
        return "".join(str(c + 1) for c in self.move_sequence(state))

    def move_sequence(self, state: C4State) -> list[int]:
        """A legal sequence of columns (0-based) from the empty board to ``state``.

        Stones are taken off the tops of columns, last mover's first, alternating; the first
        stone removed from a won position must break every four (no earlier position may be
        won). Dead ends (no top stone of the right colour) are backtracked, remembering failed
        masks, so the search stays small.
        """
        current, mask, plies, outcome = state
        # Stones of the player who made ply k: last mover for k == plies, alternating down.
        last = current ^ mask
        owners = (current, last)  # ply k was played by owners[1] when plies - k is even
        failed: set[int] = set()
        out: list[int] = []

        def undo(m: int, k: int) -> bool:
            if k == 0:
                return True
            if m in failed:
                return False
            owner = owners[(plies - k) & 1 ^ 1]
            for col in reversed(self.move_order):
                column = m & self._column[col]
                if not column:
                    continue
                top = 1 << (column.bit_length() - 1)
                if not top & owner:
                    continue
                rest = m ^ top
                if k == plies and outcome == WON and self.is_win(owner & rest):
                    continue
                if undo(rest, k - 1):
                    out.append(col)
                    return True
            failed.add(m)
            return False

        if not undo(mask, plies):  # unreachable for states made by parse_position and apply
            raise GameError("connect4: no move sequence reaches this position")
        return out

    def render(self, state: C4State) -> str:
        current, mask, plies, outcome = state
        first = current if plies % 2 == 0 else current ^ mask
        rows = []
        for r in range(self.height - 1, -1, -1):
            cells = []
            for c in range(self.width):
                bit = 1 << (c * self._h1 + r)
                cells.append("." if not mask & bit else "X" if first & bit else "O")
            rows.append(" ".join(cells))
        rows.append(" ".join(str(c + 1) for c in range(self.width)))
        if outcome == WON:
            rows.append(f"{'X' if plies % 2 else 'O'} wins with {(plies + 1) // 2} stones")
        elif outcome == DRAWN:
            rows.append("draw: the board is full")
        else:
            rows.append(f"{'X' if plies % 2 == 0 else 'O'} to move")
        return "\n".join(rows)
