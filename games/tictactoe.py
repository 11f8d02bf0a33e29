"""Tic-tac-toe on 3x3, built for speed: a search walks its whole tree in well under a second.

Cells are numbered 0..8 row by row inside the program and 1..9 in text (``1`` top left, ``9``
bottom right); moves are tried in cell order, the textbook order, so node counts match lectures.

A state is one int: bits 0-8 are x's cells, bits 9-17 o's, bit 18 is set when o is to move.
x (player 0) moves first. Utility is +1 / -1 / 0 for player 0 (zero-sum).

Position text: nine cells row by row, ``x``, ``o`` or ``.`` (``x.o.x...o``; spaces, ``/`` and
``|`` may separate them), or a list of moves from the empty board as cells 1-9, x first
(``519``, ``5,1,9``). ``format_position`` always writes the nine-cell form.

``evaluate`` is the classic workshop scoring, from player 0's side: per line, a completed line
scores 1000, two of x's marks with the third cell empty 10, one x mark with two empty cells 1, and
o's lines the same with the sign turned. It is divided by 1000 so that it shares the utility's
scale (a completed line is worth a win); ``workshop_score`` returns the raw integer.
"""

from __future__ import annotations

from bot_arena.games.base import Game, GameError, GameKind, Utility, UtilityBounds
from bot_arena.games.quoting import shown

TicTacToeState = int

_O_SHIFT = 9
_TURN = 1 << 18
_FULL = 0x1FF
LINES: tuple[tuple[int, int, int], ...] = (
    (0, 1, 2),
    (3, 4, 5),
    (6, 7, 8),
    (0, 3, 6),
    (1, 4, 7),
    (2, 5, 8),
    (0, 4, 8),
    (2, 4, 6),
)
_LINE_MASKS = tuple((1 << a) | (1 << b) | (1 << c) for a, b, c in LINES)

# Tables indexed by a 9-bit cell mask.
_WON: tuple[bool, ...] = tuple(
    any(mask & line == line for line in _LINE_MASKS) for mask in range(512)
)
_FREE: tuple[tuple[int, ...], ...] = tuple(
    tuple(c for c in range(9) if not occupied >> c & 1) for occupied in range(512)
)
# What a move adds to the state int: [side to move][cell]; it also flips the turn bit.
_STEP: tuple[tuple[int, ...], tuple[int, ...]] = (
    tuple((1 << c) + _TURN for c in range(9)),
    tuple((1 << (c + _O_SHIFT)) - _TURN for c in range(9)),
)
_LINE_SCORE = (0, 1, 10, 1000)  # by the number of one side's marks in an otherwise open line

_WIN0: Utility = (1.0, -1.0)
_WIN1: Utility = (-1.0, 1.0)
_DRAW: Utility = (0.0, 0.0)
_EMPTY_CHARS = frozenset(".-_")


class _MovesTable(dict[int, tuple[int, ...]]):
    """Legal moves by state, filled on first sight; empty exactly at terminal states.

    A game has at most 5,478 legal positions, so remembering them all costs little and turns
    both ``legal_moves`` and ``is_terminal`` into one dict lookup.
    """

    def __missing__(self, state: int) -> tuple[int, ...]:
        x, o = state & _FULL, state >> _O_SHIFT & _FULL
        moves = () if _WON[x] or _WON[o] else _FREE[x | o]
        self[state] = moves
        return moves


def _parse_cell(text: str) -> int:
    t = text.strip()
    if len(t) != 1 or t not in "123456789":
        raise GameError(f"tictactoe: move {shown(text)} is not a cell 1-9")
    return int(t) - 1


class TicTacToe(Game[TicTacToeState, int]):
    name = "tictactoe"
    description = "3x3 noughts and crosses; x (player 0) moves first"

    def __init__(self) -> None:
        self.num_players = 2
        self.kind = GameKind.ZERO_SUM
        self.bounds = UtilityBounds(min_each=-1.0, max_each=1.0, max_sum=0.0)
        self.params = {}
        self.default_depth = None
        self._moves = _MovesTable()

    # --- rules -------------------------------------------------------------------------------
    def initial_state(self) -> TicTacToeState:
        return 0

    def current_player(self, state: TicTacToeState) -> int:
        return state >> 18

    def legal_moves(self, state: TicTacToeState) -> tuple[int, ...]:
        return self._moves[state]

    def apply(self, state: TicTacToeState, move: int) -> TicTacToeState:
        return state + _STEP[state >> 18][move]

    def is_terminal(self, state: TicTacToeState) -> bool:
        return not self._moves[state]

    def utility(self, state: TicTacToeState) -> Utility:
        if _WON[state & _FULL]:
            return _WIN0
        if _WON[state >> _O_SHIFT & _FULL]:
            return _WIN1
        return _DRAW

    def winner(self, state: TicTacToeState) -> int | None:
        """Player 0 or 1 when that player has a line, else None."""
        if _WON[state & _FULL]:
            return 0
        if _WON[state >> _O_SHIFT & _FULL]:
            return 1
        return None

    def workshop_score(self, state: TicTacToeState) -> int:
        """The classic line scoring from player 0's side (1000 / 10 / 1 per line, see module)."""
        x, o = state & _FULL, state >> _O_SHIFT & _FULL
        score = 0
        for line in _LINE_MASKS:
            mine, theirs = x & line, o & line
            if mine and not theirs:
                score += _LINE_SCORE[mine.bit_count()]
            elif theirs and not mine:
                score -= _LINE_SCORE[theirs.bit_count()]
        return score

    def evaluate(self, state: TicTacToeState) -> Utility:
        if not self._moves[state]:
            return self.utility(state)
        v = self.workshop_score(state) / 1000.0
        return (v, -v)

    # --- text --------------------------------------------------------------------------------
    def parse_move(self, text: str) -> int:
        """A cell ``1``-``9``, row by row from the top left."""
        return _parse_cell(text)

    def format_move(self, move: int) -> str:
        return str(move + 1)

    def parse_position(self, text: str) -> TicTacToeState:
        """Nine cells row by row (``x``, ``o``, ``.``; ``/``, ``|`` and spaces are ignored), e.g.
        ``x.o/.x./..o``, or a move list of cells 1-9 from the empty board, x first: ``519``,
        ``5,1,9`` or ``5 1 9``. The empty string is the empty board. Boards that no game can
        reach (wrong counts, both sides with a line, play after a win) are refused."""
        raw = text.strip()
        compact = "".join(ch for ch in raw if ch not in " /|,").lower()
        if compact == "" or compact.isdigit():
            return self._from_moves(compact, raw)
        if len(compact) != 9 or any(ch not in "xo" and ch not in _EMPTY_CHARS for ch in compact):
            raise GameError(
                f"tictactoe: position {shown(text)} is neither 9 cells of x/o/. nor a move list 1-9"
            )
        x = sum(1 << i for i, ch in enumerate(compact) if ch == "x")
        o = sum(1 << i for i, ch in enumerate(compact) if ch == "o")
        nx, no = x.bit_count(), o.bit_count()
        if nx not in (no, no + 1):
            raise GameError(
                f"tictactoe: position {shown(text)} has {nx} x and {no} o (x moves first)"
            )
        if _WON[x] and (_WON[o] or nx == no):
            raise GameError(f"tictactoe: position {shown(text)} has play after x completed a line")
        if _WON[o] and nx != no:
            raise GameError(f"tictactoe: position {shown(text)} has play after o completed a line")
        return x | o << _O_SHIFT | (_TURN if nx > no else 0)

    def _from_moves(self, digits: str, text: str) -> TicTacToeState:
        state = self.initial_state()
        for ch in digits:
            cell = _parse_cell(ch)
            if cell not in self._moves[state]:
                why = "the game is over" if not self._moves[state] else "the cell is taken"
                raise GameError(f"tictactoe: move list {shown(text)}: cannot play {ch}, {why}")
            state = self.apply(state, cell)
        return state

    def format_position(self, state: TicTacToeState) -> str:
        return "".join(self._cell_char(state, c) for c in range(9))

    @staticmethod
    def _cell_char(state: TicTacToeState, cell: int) -> str:
        if state >> cell & 1:
            return "x"
        if state >> (cell + _O_SHIFT) & 1:
            return "o"
        return "."

    def render(self, state: TicTacToeState) -> str:
        rows = []
        for r in range(3):
            marks = " ".join(self._cell_char(state, 3 * r + c) for c in range(3))
            guide = " ".join(str(3 * r + c + 1) for c in range(3))
            rows.append(f" {marks}    {guide}")
        if not self._moves[state]:
            w = self.winner(state)
            rows.append("draw" if w is None else f"{'xo'[w]} wins (player {w})")
        else:
            p = self.current_player(state)
            rows.append(f"{'xo'[p]} to move (player {p})")
        return "\n".join(rows)
