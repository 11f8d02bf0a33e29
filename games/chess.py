"""Chess, with the rules of python-chess (the ``chess`` package): White is player 0, Black 1.

Moves are UCI strings (``e2e4``, ``e7e8q``, castling ``e1g1``): ``format_move`` is the identity
and ``parse_move`` checks the shape. ``legal_moves`` lists captures and promotions first (a cheap
ordering that helps alpha-beta), then the quiet moves, each group in python-chess's order.
``move_label`` gives SAN (``Nf3``, ``O-O``, ``exd8=Q+``, ``Qh4#``).

The game ends, as cutechess adjudicates it (``WesternBoard::result``), at the first of these
(checked in this order):

- checkmate (the side to move lost) or stalemate;
- insufficient material (python-chess's ``is_insufficient_material``: neither side could ever
  mate, judged by the material and the colours of the bishops);
- the fifty-move rule: 100 half-moves without a capture or a pawn move (``is_fifty_moves``);
- threefold repetition: the position (pieces, side to move, castling rights, a legal en passant
  capture) is on the board for the third time since the last irreversible move
  (``is_repetition(3)``).

The last two are draws a player may *claim*; cutechess ends the game as soon as the claim is
true on the board (``m_reversibleMoveCount >= 100``, ``repeatCount() >= 2``), and so do we.
python-chess's ``can_claim_*`` would end it one move earlier too, when the player to move *could*
make the repetition or the 100th half-move with their next move: cutechess does not, nor do we.
A drawn-by-rule position has no legal moves (the game API's "empty exactly when terminal").

Utilities: a win is (1, -1) or (-1, 1), a draw (0, 0). ``evaluate`` counts material from
White's side (P=1, N=B=3, R=5, Q=9) and squashes the difference ``d`` to ``d / (|d| + 10)``
(a pawn is about 0.09, a queen 0.47), strictly inside (-1, 1) so that any mate outranks any
material, as connect4 keeps its heuristic inside the smallest win.

State: :class:`ChessState`, an immutable value of two fields,

- ``root``: the position after the last irreversible move (a capture, a pawn move, a move that
  loses castling rights or an en passant right), or the given/start position, as a tuple of
  python-chess's bitboards, side to move, cleaned castling rights, en passant square (only when
  the capture is legal) and the two clocks: exactly the information of its FEN;
- ``moves``: the UCI moves played since then (at most 100 of them: the fifty-move rule ends the
  game first).

That is everything the rules need (the earlier positions can never recur, so threefold
repetition is decidable), and equal histories compare equal. Two orders of the same moves are
*different* states until the next irreversible move (their intermediate positions differ, and
those count for repetitions later); after it they are the same state.

Trade-off, measured with python-chess 1.11: ``Board.fen()`` costs about 55 us and
``Board(fen)`` about 110 us, against about 10 us for copying a board and pushing a move, so
neither the state nor ``apply`` holds or computes a FEN: the root is the board's own integers
(about 2 us to take), and FEN text is made only for ``format_position``. The python-chess board
of each state, with the positions since the root (for repetitions), the legal moves and the
game's end once known, lives in a cache on the game object: two generations of at most
``CACHE_NODES`` states each, about 1.4 KB a state (a search looks each state up right after
making it). A state that has dropped out of the cache is rebuilt by replaying its moves from the
root (at most 100 pushes). ``apply`` + ``legal_moves`` then cost about 80 us (median over random
games), three quarters of it python-chess's own work: about 48 us generating the legal moves and
13 us copying the board and pushing the move.

Position text: a FEN, or ``FEN moves m1 m2 ...`` (UCI's own form), ``startpos`` for the start
position (also ``startpos moves ...``, and the empty string). ``format_position`` writes the plain
FEN when no move has been played since the root, else ``ROOT-FEN moves ...`` so that the
repetition history survives the round trip.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import chess

from bot_arena.games.base import Game, GameError, GameKind, Utility, UtilityBounds
from bot_arena.games.quoting import cut, shown

#: A position as the integers of a python-chess board: white's and black's pieces, side to move
#: (True for White), pawns, knights, bishops, rooks, queens, kings, cleaned castling rights, the
#: en passant square (only when the capture is legal), the half-move clock and the move number.
Position = tuple[int, int, bool, int, int, int, int, int, int, int, int | None, int, int]
#: What makes two positions the same for repetitions: a Position without its two clocks.
PositionKey = tuple[int, int, bool, int, int, int, int, int, int, int, int | None]

CHECKMATE: Final = "checkmate"
STALEMATE: Final = "stalemate"
INSUFFICIENT_MATERIAL: Final = "insufficient material"
FIFTY_MOVES: Final = "fifty moves"
THREEFOLD_REPETITION: Final = "threefold repetition"

#: States per cache generation (two generations are kept; see the module docstring).
CACHE_NODES: Final = 8_192

_WHITE_WINS: Utility = (1.0, -1.0)
_BLACK_WINS: Utility = (-1.0, 1.0)
_DRAW: Utility = (0.0, 0.0)
_PROMOTIONS = frozenset("qrbn")
_START_WORDS = frozenset(("", "start", "startpos"))


@dataclass(frozen=True, slots=True)
class ChessState:
    """A position with its history since the last irreversible move (see the module docstring).

    Make states with the game (``initial_state``, ``apply``, ``parse_position``), not by hand.
    """

    root: Position
    moves: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"ChessState({_fen(self.root)!r}, moves={self.moves!r})"


def _snapshot(board: chess.Board) -> Position:
    """The board's position as integers (the information of its FEN, normalised like it):
    ``_key`` and the two move clocks."""
    return (*_key(board), board.halfmove_clock, board.fullmove_number)


def _key(board: chess.Board) -> PositionKey:
    """The position for repetitions: ``_snapshot`` without the clocks (python-chess's own key)."""
    occupied_co = board.occupied_co
    return (
        occupied_co[chess.WHITE],
        occupied_co[chess.BLACK],
        board.turn,
        board.pawns,
        board.knights,
        board.bishops,
        board.rooks,
        board.queens,
        board.kings,
        board.clean_castling_rights(),
        board.ep_square if board.has_legal_en_passant() else None,
    )


def _board_at(root: Position) -> chess.Board:
    """A new board (empty move stack) set up at ``root``."""
    board = chess.Board(None)
    (
        white,
        black,
        board.turn,
        board.pawns,
        board.knights,
        board.bishops,
        board.rooks,
        board.queens,
        board.kings,
        board.castling_rights,
        board.ep_square,
        board.halfmove_clock,
        board.fullmove_number,
    ) = root
    board.occupied_co[chess.WHITE] = white
    board.occupied_co[chess.BLACK] = black
    board.occupied = white | black
    return board


def _fen(root: Position) -> str:
    return _board_at(root).fen()


# UCI text <-> python-chess moves, filled on first use (a few thousand entries at most).
_MOVES: dict[str, chess.Move] = {}
_TEXTS: dict[int, str] = {}
_PARSED: dict[str, str] = {}  # parse_move's answers, by the lowercased text


def _move(text: str) -> chess.Move:
    move = _MOVES.get(text)
    if move is None:
        move = _MOVES[text] = chess.Move.from_uci(text)
    return move


def _text(move: chess.Move) -> str:
    code = move.from_square << 9 | move.to_square << 3 | (move.promotion or 0)
    text = _TEXTS.get(code)
    if text is None:
        text = _TEXTS[code] = move.uci()
    return text


class _Node:
    """What the game knows about one state: its board (never changed once made), the positions
    since the root for repetitions, how often the current one occurred, and, once asked for,
    the legal moves and the reason the game ended."""

    __slots__ = ("board", "history", "judged", "moves", "reason", "repeats")

    def __init__(self, board: chess.Board, history: tuple[PositionKey, ...], repeats: int) -> None:
        self.board = board
        self.history = history
        self.repeats = repeats
        self.moves: tuple[str, ...] | None = None
        self.judged = False
        self.reason: str | None = None


class Chess(Game[ChessState, str]):
    name = "chess"
    description = "Chess (python-chess rules); moves in UCI, positions as FEN [moves ...]"
    default_depth = 3

    def __init__(self) -> None:
        self.num_players = 2
        self.kind = GameKind.ZERO_SUM
        self.bounds = UtilityBounds(min_each=-1.0, max_each=1.0, max_sum=0.0)
        self.params = {}
        self._new: dict[ChessState, _Node] = {}
        self._old: dict[ChessState, _Node] = {}
        self._initial = self._root_state(chess.Board())

    # --- the cache -----------------------------------------------------------------------------
    def _node(self, state: ChessState) -> _Node:
        node = self._new.get(state)
        if node is None:
            node = self._old.get(state)
            if node is None:
                node = self._replay(state)
            self._keep(state, node)
        return node

    def _keep(self, state: ChessState, node: _Node) -> None:
        if len(self._new) >= CACHE_NODES:
            self._old = self._new
            self._new = {}
        self._new[state] = node

    @staticmethod
    def _replay(state: ChessState) -> _Node:
        board = _board_at(state.root)
        key = _key(board)
        history: tuple[PositionKey, ...] = (key,)
        repeats = 1
        for text in state.moves:
            board.push(_move(text))
            key = _key(board)
            repeats = history.count(key) + 1
            history += (key,)
        board.clear_stack()
        return _Node(board, history, repeats)

    def _known(self, state: ChessState) -> bool:
        return state in self._new or state in self._old

    def _root_state(self, board: chess.Board) -> ChessState:
        """The state of ``board``'s position with no history (``board`` is not kept)."""
        state = ChessState(_snapshot(board))
        if not self._known(state):
            own = board.copy(stack=False)
            self._keep(state, _Node(own, (_key(own),), 1))
        return state

    @staticmethod
    def _judge(node: _Node, has_moves: bool | None = None) -> str | None:
        """Why the game ended at ``node`` (None: it goes on); cutechess's order of checks."""
        if not node.judged:
            board = node.board
            if has_moves is None:
                has_moves = any(board.generate_legal_moves())
            reason: str | None = None
            if not has_moves:
                reason = CHECKMATE if board.is_check() else STALEMATE
            elif board.is_insufficient_material():
                reason = INSUFFICIENT_MATERIAL
            elif board.halfmove_clock >= 100:
                reason = FIFTY_MOVES
            elif node.repeats >= 3:
                reason = THREEFOLD_REPETITION
            node.reason = reason
            node.judged = True
        return node.reason

    # --- rules -------------------------------------------------------------------------------
    def initial_state(self) -> ChessState:
        return self._initial

    def current_player(self, state: ChessState) -> int:
        # The root's side to move, flipped once per move since.
        return (not state.root[2]) ^ (len(state.moves) & 1)

    def legal_moves(self, state: ChessState) -> tuple[str, ...]:
        node = self._node(state)
        moves = node.moves
        if moves is None:
            board = node.board
            targets = board.occupied_co[not board.turn]
            # A pawn's move to the en passant square is a capture. (The board may keep a square
            # where no capture is legal; only a legal one is part of the position.)
            ep = board.ep_square if board.has_legal_en_passant() else None
            pawns = board.pawns
            first: list[str] = []
            rest: list[str] = []
            texts = _TEXTS
            for move in board.generate_legal_moves():
                to, promotion = move.to_square, move.promotion
                text = texts.get(move.from_square << 9 | to << 3 | (promotion or 0)) or _text(move)
                if targets >> to & 1 or promotion or (to == ep and pawns >> move.from_square & 1):
                    first.append(text)
                else:
                    rest.append(text)
            ended = self._judge(node, bool(first or rest)) is not None
            moves = node.moves = () if ended else (*first, *rest)
        return moves

    def apply(self, state: ChessState, move: str) -> ChessState:
        node = self._node(state)
        chess_move = _move(move)
        if node.board.is_irreversible(chess_move):
            # Nothing before the new position can recur: it becomes the root.
            board = node.board.copy(stack=False)
            board.push(chess_move)
            board.clear_stack()
            root = _snapshot(board)
            child = ChessState(root)
            if not self._known(child):
                self._keep(child, _Node(board, (root[:11],), 1))
            return child
        child = ChessState(state.root, (*state.moves, move))
        if not self._known(child):  # made before (a search that comes back): nothing to do
            board = node.board.copy(stack=False)
            board.push(chess_move)
            board.clear_stack()
            key = _key(board)
            history = node.history
            self._keep(child, _Node(board, (*history, key), history.count(key) + 1))
        return child

    def is_terminal(self, state: ChessState) -> bool:
        return self._judge(self._node(state)) is not None

    def outcome_reason(self, state: ChessState) -> str | None:
        """Why the game ended: ``"checkmate"``, ``"stalemate"``, ``"insufficient material"``,
        ``"fifty moves"`` or ``"threefold repetition"``; None while it goes on."""
        return self._judge(self._node(state))

    def utility(self, state: ChessState) -> Utility:
        node = self._node(state)
        if self._judge(node) != CHECKMATE:
            return _DRAW
        return _BLACK_WINS if node.board.turn == chess.WHITE else _WHITE_WINS

    def evaluate(self, state: ChessState) -> Utility:
        """Material from White's side, ``d / (|d| + 10)``; the utility at the end of the game."""
        node = self._node(state)
        reason = self._judge(node)
        if reason is not None:
            if reason != CHECKMATE:
                return _DRAW
            return _BLACK_WINS if node.board.turn == chess.WHITE else _WHITE_WINS
        board = node.board
        white = board.occupied_co[chess.WHITE]
        black = board.occupied_co[chess.BLACK]
        pawns, knights, bishops = board.pawns, board.knights, board.bishops
        rooks, queens = board.rooks, board.queens
        diff = (
            (pawns & white).bit_count()
            - (pawns & black).bit_count()
            + 3 * ((knights & white).bit_count() - (knights & black).bit_count())
            + 3 * ((bishops & white).bit_count() - (bishops & black).bit_count())
            + 5 * ((rooks & white).bit_count() - (rooks & black).bit_count())
            + 9 * ((queens & white).bit_count() - (queens & black).bit_count())
        )
        v = diff / (abs(diff) + 10)
        return (v, 0.0 - v)

    # --- text I/O ----------------------------------------------------------------------------
    def parse_move(self, text: str) -> str:
        """A UCI move, ``e2e4`` or ``e7e8q`` (castling is the king's move, ``e1g1``)."""
        t = text.strip().lower()
        known = _PARSED.get(t)
        if known is not None:
            return known
        try:
            move = chess.Move.from_uci(t)
        except ValueError:
            raise GameError(
                f"chess: move {shown(text)} is not a UCI move like e2e4 or e7e8q"
            ) from None
        if not move or move.drop is not None:
            raise GameError(
                f"chess: move {shown(text)} is not a move of a piece (null move or drop)"
            )
        if move.promotion is not None and t[4] not in _PROMOTIONS:
            raise GameError(f"chess: move {shown(text)} promotes to a king or a pawn")
        known = _PARSED[t] = _text(move)
        return known

    def format_move(self, move: str) -> str:
        return move

    def move_label(self, state: ChessState, move: str) -> str:
        """SAN: ``Nf3``, ``O-O``, ``exd8=Q+``, ``Qh4#``."""
        if move not in self.legal_moves(state):
            where = shown(self.format_position(state))
            raise GameError(f"chess: move {shown(move)} is not legal in position {where}")
        return self._node(state).board.copy(stack=False).san(_move(move))

    def parse_position(self, text: str) -> ChessState:
        """``FEN``, ``FEN moves m1 m2 ...``, ``startpos [moves ...]`` (or empty: the start)."""
        words = text.split()
        if "moves" in words:
            at = words.index("moves")
            words, moves = words[:at], words[at + 1 :]
        else:
            moves = []
        fen = " ".join(words)
        if fen.lower() in _START_WORDS:
            state = self._initial
        else:
            try:
                board = chess.Board(fen)
            except ValueError as exc:
                raise GameError(f"chess: position {shown(fen)} is not a FEN: {cut(exc)}") from None
            status = board.status()
            if status != chess.STATUS_VALID:
                problems = ", ".join(
                    (flag.name or "").lower().replace("_", " ")
                    for flag in chess.Status
                    if flag & status
                )
                raise GameError(f"chess: position {shown(fen)} is not a legal position: {problems}")
            state = self._root_state(board)
        for number, word in enumerate(moves, 1):
            try:
                move = self.parse_move(word)
            except GameError:
                move = ""
            if move not in self.legal_moves(state):
                reason = self.outcome_reason(state)
                why = (
                    "it is not a UCI move"
                    if not move
                    else f"the game is over ({reason})"
                    if reason
                    else "it is not legal there"
                )
                raise GameError(
                    f"chess: position {shown(text.strip())}: move {number} {shown(word)} "
                    f"cannot be played: {why}"
                )
            state = self.apply(state, move)
        return state

    def format_position(self, state: ChessState) -> str:
        fen = _fen(state.root)
        if not state.moves:
            return fen
        return f"{fen} moves {' '.join(state.moves)}"

    def render(self, state: ChessState) -> str:
        """python-chess's ASCII board (White in capitals) with coordinates, then who is to move
        or how the game ended."""
        board = self._node(state).board
        rows = [f"{8 - i} {line}" for i, line in enumerate(str(board).splitlines())]
        rows.append("  a b c d e f g h")
        reason = self.outcome_reason(state)
        mover, other = ("White", "Black") if board.turn == chess.WHITE else ("Black", "White")
        if reason == CHECKMATE:
            rows.append(f"checkmate: {other} wins")
        elif reason is not None:
            rows.append(f"draw by {reason}")
        else:
            rows.append(f"{mover} to move{' (in check)' if board.is_check() else ''}")
        return "\n".join(rows)

    # --- python-chess views ------------------------------------------------------------------
    def fen(self, state: ChessState) -> str:
        """The FEN of the current position."""
        return self._node(state).board.fen()

    def board(self, state: ChessState) -> chess.Board:
        """A new python-chess board (the caller's to change) at the root with the moves since
        played on it, so that python-chess's own repetition checks see the history."""
        board = _board_at(state.root)
        for text in state.moves:
            board.push(_move(text))
        return board
