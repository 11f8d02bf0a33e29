"""Chess: perft counts through the game API, special moves in text, every way a game ends, SAN,
and random games checked move by move against python-chess's own board."""

from __future__ import annotations

import random

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena import bots, games
from bot_arena.bots.base import TimeBudget
from bot_arena.games import chess as chess_game
from bot_arena.games.base import GameError, GameKind
from bot_arena.games.chess import Chess, ChessState
from bot_arena.games.connect4 import ConnectFour

G = Chess()
START_FEN = chess.STARTING_FEN
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
# White: castling both ways, en passant exd6, and the b7 pawn promotes straight or by capture.
SPECIAL = "r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1"
SHUFFLE = ["g1f3", "g8f6", "f3g1", "f6g8"]


def play(moves: list[str], start: str = "startpos", game: Chess = G) -> ChessState:
    state = game.parse_position(start)
    for text in moves:
        state = game.apply(state, game.move_from_text(state, text))
    return state


def perft(game: Chess, state: ChessState, depth: int) -> int:
    if depth == 0:
        return 1
    return sum(perft(game, game.apply(state, m), depth - 1) for m in game.legal_moves(state))


# --- metadata ----------------------------------------------------------------------------------
def test_registered_two_player_zero_sum_without_parameters() -> None:
    game = games.get("chess")
    assert isinstance(game, Chess) and "chess" in games.names()
    assert game.num_players == 2 and game.kind is GameKind.ZERO_SUM
    assert (game.bounds.min_each, game.bounds.max_each, game.bounds.max_sum) == (-1, 1, 0)
    assert dict(game.params) == {} and game == Chess()
    assert game.default_depth is not None


# --- move generation ---------------------------------------------------------------------------
def test_perft_of_the_start_position() -> None:
    start = G.initial_state()
    assert [perft(G, start, d) for d in (1, 2, 3)] == [20, 400, 8902]


def test_perft_of_kiwipete() -> None:
    state = G.parse_position(KIWIPETE)
    assert [perft(G, state, d) for d in (1, 2)] == [48, 2039]


def test_captures_and_promotions_come_first() -> None:
    moves = G.legal_moves(G.parse_position(SPECIAL))
    loud = {"h1h8", "a1a8", "e5d6"} | {f"b7{to}{p}" for to in ("a8", "b8") for p in "qrbn"}
    assert set(moves[: len(loud)]) == loud


@pytest.mark.parametrize(
    ("move", "san", "fen_after"),
    [
        ("e1g1", "O-O", "r3k2r/1P6/8/3pP3/8/8/8/R4RK1 b kq - 1 1"),
        ("e1c1", "O-O-O", "r3k2r/1P6/8/3pP3/8/8/8/2KR3R b kq - 1 1"),
        ("e5d6", "exd6", "r3k2r/1P6/3P4/8/8/8/8/R3K2R b KQkq - 0 1"),
        ("b7b8q", "b8=Q+", "rQ2k2r/8/8/3pP3/8/8/8/R3K2R b KQkq - 0 1"),
        ("b7a8n", "bxa8=N", "N3k2r/8/8/3pP3/8/8/8/R3K2R b KQk - 0 1"),
        ("b7b8r", "b8=R+", "rR2k2r/8/8/3pP3/8/8/8/R3K2R b KQkq - 0 1"),
        ("b7a8b", "bxa8=B", "B3k2r/8/8/3pP3/8/8/8/R3K2R b KQk - 0 1"),
    ],
)
def test_special_moves_round_trip_through_text(move: str, san: str, fen_after: str) -> None:
    state = G.parse_position(SPECIAL)
    assert G.format_position(state) == SPECIAL  # the en passant square is kept: it is legal
    assert move in G.legal_moves(state)
    assert G.parse_move(G.format_move(move)) == move
    assert G.move_label(state, move) == san
    after = G.apply(state, move)
    assert G.fen(after) == fen_after
    assert G.parse_position(G.format_position(after)) == after
    assert G.parse_position(f"{SPECIAL} moves {move}") == after


def test_en_passant_square_is_written_only_when_the_capture_is_legal() -> None:
    after = play(["e2e4"])  # no black pawn can take on e3
    assert G.format_position(after) == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    # Typed with the square or without, it is the same position and the same state.
    assert G.parse_position(G.format_position(after)) == after
    assert G.parse_position(G.format_position(after).replace(" - 0", " e3 0")) == after


# --- the end of the game -----------------------------------------------------------------------
def test_fools_mate_is_checkmate_for_black() -> None:
    before = play(["f2f3", "e7e5", "g2g4"])
    assert G.move_label(before, "d8h4") == "Qh4#"
    state = G.apply(before, "d8h4")
    assert G.is_terminal(state) and G.legal_moves(state) == ()
    assert G.outcome_reason(state) == "checkmate"
    assert G.utility(state) == (-1.0, 1.0) and G.evaluate(state) == (-1.0, 1.0)
    assert G.render(state).splitlines()[-1] == "checkmate: Black wins"


def test_white_mates_too() -> None:
    state = play(["a1a8"], "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    assert G.outcome_reason(state) == "checkmate" and G.utility(state) == (1.0, -1.0)


def test_stalemate() -> None:
    state = G.parse_position("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
    assert G.is_terminal(state) and G.outcome_reason(state) == "stalemate"
    assert G.utility(state) == (0.0, 0.0) and G.legal_moves(state) == ()
    # ...and reached by a move; the check next door is not one.
    before = G.parse_position("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1")
    assert G.outcome_reason(G.apply(before, "f1f7")) == "stalemate"
    assert G.outcome_reason(G.apply(before, "f1f8")) == "checkmate"
    assert G.outcome_reason(G.apply(before, "f1f6")) is None


@pytest.mark.parametrize(
    ("fen", "ended"),
    [
        ("8/8/8/4k3/8/8/8/4K3 w - - 0 1", True),  # K v K
        ("8/8/8/4k3/8/8/8/2B1K3 w - - 0 1", True),  # KB v K
        ("8/8/8/4k3/8/8/8/1N2K3 b - - 0 1", True),  # KN v K
        ("8/8/8/4k3/8/8/8/R3K3 w - - 0 1", False),  # KR v K
        ("8/8/8/4k3/8/8/4P3/4K3 w - - 0 1", False),  # KP v K
        ("8/8/8/4k3/8/8/8/2B1KB2 w - - 0 1", False),  # bishops on both colours
        ("8/8/8/1b2k3/8/8/8/2B1K3 w - - 0 1", False),  # ...of both sides
    ],
)
def test_insufficient_material(fen: str, ended: bool) -> None:
    state = G.parse_position(fen)
    assert G.is_terminal(state) == ended
    assert G.outcome_reason(state) == ("insufficient material" if ended else None)
    assert (G.legal_moves(state) == ()) == ended


def test_a_capture_that_leaves_bare_kings_ends_the_game() -> None:
    state = play(["e1d2"], "8/8/8/4k3/8/8/3q4/4K3 w - - 0 1")
    assert G.outcome_reason(state) == "insufficient material"
    assert G.utility(state) == (0.0, 0.0)


def test_fifty_move_rule() -> None:
    start = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 99 80"
    assert not G.is_terminal(G.parse_position(start))
    quiet = play(["a1a7"], start)
    assert G.outcome_reason(quiet) == "fifty moves" and G.legal_moves(quiet) == ()
    assert G.utility(quiet) == (0.0, 0.0) and G.render(quiet).endswith("draw by fifty moves")
    assert G.outcome_reason(play(["h2h3"], start)) is None  # a pawn move resets the clock
    assert G.outcome_reason(play(["a1a8"], start)) == "checkmate"  # mate comes first


def test_threefold_repetition_by_knight_shuffles() -> None:
    start = G.initial_state()
    twice = play(SHUFFLE * 2)
    moves_text = " ".join(SHUFFLE * 2)
    assert G.outcome_reason(twice) == "threefold repetition"
    assert G.is_terminal(twice) and G.legal_moves(twice) == ()
    assert G.utility(twice) == (0.0, 0.0) and G.evaluate(twice) == (0.0, 0.0)
    # One ply earlier Black could claim the draw (python-chess's can_claim_*), yet the game goes
    # on, as in cutechess: only a third occurrence on the board ends it.
    almost = play((SHUFFLE * 2)[:-1])
    assert not G.is_terminal(almost)
    assert G.board(almost).can_claim_threefold_repetition()
    # The history survives the round trip; the plain FEN of the same position does not end.
    text = G.format_position(twice)
    assert text == f"{START_FEN} moves {moves_text}"
    back = G.parse_position(text)
    assert back == twice and G.is_terminal(back) and G.format_position(back) == text
    assert G.fen(twice).split()[:4] == G.fen(start).split()[:4]  # the clocks differ
    plain = G.parse_position(G.fen(twice))
    assert plain != twice and not G.is_terminal(plain)
    # A fresh game object (nothing cached) replays the history and agrees.
    assert Chess().outcome_reason(twice) == "threefold repetition"


def test_moves_after_the_end_are_refused() -> None:
    text = f"startpos moves {' '.join(SHUFFLE * 2)} g1f3"
    with pytest.raises(GameError, match=r"game is over \(threefold repetition\)"):
        G.parse_position(text)


# --- states ------------------------------------------------------------------------------------
def test_history_is_part_of_the_state_until_an_irreversible_move() -> None:
    a = play(["g1f3", "g8f6", "b1c3", "b8c6"])
    b = play(["b1c3", "b8c6", "g1f3", "g8f6"])
    assert G.fen(a) == G.fen(b) and a != b  # their intermediate positions differ
    after_a, after_b = G.apply(a, "e2e4"), G.apply(b, "e2e4")
    assert after_a == after_b and hash(after_a) == hash(after_b)
    assert after_a.moves == () and G.format_position(after_a) == G.fen(after_a)
    king_walk = play(["e2e4", "e7e5", "e1e2"])  # losing the castling rights is irreversible too
    assert king_walk.moves == ()


def test_apply_leaves_the_state_alone() -> None:
    state = play(["e2e4"])
    text = G.format_position(state)
    children = {G.apply(state, m) for m in G.legal_moves(state)}
    assert len(children) == len(G.legal_moves(state))
    assert G.format_position(state) == text and state == play(["e2e4"])


def test_a_tiny_cache_gives_the_same_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chess_game, "CACHE_NODES", 3)
    small = Chess()
    rng = random.Random(7)
    state = G.initial_state()
    while not G.is_terminal(state):
        assert small.legal_moves(state) == G.legal_moves(state)
        state = G.apply(state, rng.choice(G.legal_moves(state)))
        assert small.outcome_reason(state) == G.outcome_reason(state)
        assert small.evaluate(state) == G.evaluate(state)
    assert len(small._new) <= 3 and len(small._old) <= 3


# --- text --------------------------------------------------------------------------------------
def test_start_position_texts() -> None:
    for text in ("", "startpos", START_FEN, f"  {START_FEN}  "):
        assert G.parse_position(text) == G.initial_state()
    assert G.format_position(G.initial_state()) == START_FEN
    assert G.parse_position("startpos moves e2e4 e7e5") == play(["e2e4", "e7e5"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("@@ not a position @@", "not a FEN"),
        ("8/8/8/8/8/8/8/8 w - - 0 1", "no white king"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1", "bad castling rights"),
        ("7k/8/5QK1/8/8/8/8/8 w - - 0 1", "opposite check"),
        ("startpos moves e2e5", "move 1 'e2e5' cannot be played: it is not legal"),
        ("startpos moves e2e4 zz", "move 2 'zz' cannot be played: it is not a UCI move"),
    ],
)
def test_bad_positions_are_one_line_game_errors(text: str, message: str) -> None:
    with pytest.raises(GameError, match=message) as info:
        G.parse_position(text)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "bad", ["", "e2", "e2e9", "i2i4", "0000", "Q@e4", "e7e8k", "e7e8p", "e2-e4"]
)
def test_bad_moves_are_game_errors(bad: str) -> None:
    with pytest.raises(GameError):
        G.parse_move(bad)


def test_move_text_is_uci() -> None:
    assert G.parse_move(" E2E4 ") == "e2e4" and G.parse_move("e7e8Q") == "e7e8q"
    assert G.format_move("e1g1") == "e1g1"
    assert G.move_from_text(G.initial_state(), "g1f3") == "g1f3"
    with pytest.raises(GameError, match="illegal move"):
        G.move_from_text(G.initial_state(), "e1g1")


def test_san_labels() -> None:
    start = G.initial_state()
    assert [G.move_label(start, m) for m in ("g1f3", "e2e4", "b1a3")] == ["Nf3", "e4", "Na3"]
    promote = G.parse_position("3r3k/4P3/8/8/8/8/8/4K3 w - - 0 1")
    assert G.move_label(promote, "e7d8q") == "exd8=Q+"
    assert G.move_label(promote, "e7e8n") == "e8=N"
    with pytest.raises(GameError, match="not legal"):
        G.move_label(start, "e2e5")


def test_default_move_label_is_the_move_text() -> None:
    c4 = ConnectFour()
    assert c4.move_label(c4.initial_state(), 3) == "4"


def test_render() -> None:
    lines = G.render(play(["e2e4"])).splitlines()
    assert lines[0] == "8 r n b q k b n r"
    assert lines[4] == "4 . . . . P . . ."
    assert lines[7] == "1 R N B Q K B N R"
    assert lines[8] == "  a b c d e f g h"
    assert lines[9] == "Black to move"
    assert G.render(play(["e2e4", "f7f6", "d1h5"])).endswith("Black to move (in check)")


# --- evaluation and bots -----------------------------------------------------------------------
def test_evaluate_counts_material_from_whites_side() -> None:
    assert G.evaluate(G.initial_state()) == (0.0, 0.0)
    up_a_queen = G.parse_position("4k3/8/8/8/8/8/8/3QK3 b - - 0 1")
    assert G.evaluate(up_a_queen) == pytest.approx((9 / 19, -9 / 19))
    # Black: rook and knight against a pawn, 8 - 1 = 7 ahead.
    black_ahead = G.parse_position("4k3/8/8/8/8/8/4P3/rn2K3 w - - 0 1")
    assert G.evaluate(black_ahead) == pytest.approx((-7 / 17, 7 / 17))


def test_alphabeta_finds_mate_in_one() -> None:
    state = G.parse_position("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    bot = bots.make("alphabeta:depth=2")
    bot.new_game(G, 0)
    decision = bot.choose_move(G, state, TimeBudget.per_move(10.0))
    assert decision.move == "a1a8"
    assert G.outcome_reason(G.apply(state, decision.move)) == "checkmate"


# --- cross-check against python-chess ----------------------------------------------------------
def expected_reason(board: chess.Board) -> str | None:
    """The end of the game by python-chess's own board, in cutechess's order."""
    if board.is_checkmate():
        return "checkmate"
    if board.is_stalemate():
        return "stalemate"
    if board.is_insufficient_material():
        return "insufficient material"
    if board.is_fifty_moves():
        return "fifty moves"
    if board.is_repetition(3):
        return "threefold repetition"
    return None


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_agree_with_python_chess(seed: int) -> None:
    rng = random.Random(seed)
    game = Chess()
    board = chess.Board()
    state = game.initial_state()
    while True:
        text = game.format_position(state)
        back = game.parse_position(text)
        assert back == state and hash(back) == hash(state) and state == state
        assert game.format_position(back) == text
        assert game.fen(state) == board.fen()
        assert game.current_player(state) == (0 if board.turn == chess.WHITE else 1)
        reason = expected_reason(board)
        assert game.outcome_reason(state) == reason
        legal = game.legal_moves(state)
        assert sorted(legal) == ([] if reason else sorted(m.uci() for m in board.legal_moves))
        if reason is not None:
            outcome = board.outcome(claim_draw=True)
            assert outcome is not None
            expected = {True: (1.0, -1.0), False: (-1.0, 1.0), None: (0.0, 0.0)}[outcome.winner]
            assert game.utility(state) == game.evaluate(state) == expected
            break
        v0, v1 = game.evaluate(state)
        assert -1 < v0 < 1 and v0 == -v1
        move = rng.choice(legal)
        assert game.move_label(state, move) == board.san(chess.Move.from_uci(move))
        state = game.apply(state, move)
        board.push_uci(move)
