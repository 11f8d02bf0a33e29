"""Tic-tac-toe: the known tree counts, text forms, the workshop evaluation, invalid positions."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena import games
from bot_arena.games.base import GameError
from bot_arena.games.tictactoe import LINES, TicTacToe


@pytest.fixture(scope="module")
def game() -> TicTacToe:
    g = games.get("tictactoe")
    assert isinstance(g, TicTacToe)
    return g


def _walk(game: TicTacToe, state: int) -> tuple[int, int]:
    """(nodes, complete games) below and including ``state``, through the API only."""
    if game.is_terminal(state):
        return 1, 1
    nodes, leaves = 1, 0
    for move in game.legal_moves(state):
        n, leaf = _walk(game, game.apply(state, move))
        nodes += n
        leaves += leaf
    return nodes, leaves


def test_full_game_tree_has_549946_nodes_and_255168_games(game: TicTacToe) -> None:
    assert _walk(game, game.initial_state()) == (549_946, 255_168)


def test_game_outcomes_split_as_known(game: TicTacToe) -> None:
    # Of the 255,168 games x wins 131,184, o wins 77,904, and 46,080 are drawn.
    counts: dict[tuple[float, ...], int] = {(1.0, -1.0): 0, (-1.0, 1.0): 0, (0.0, 0.0): 0}
    stack = [game.initial_state()]
    while stack:
        s = stack.pop()
        if game.is_terminal(s):
            counts[game.utility(s)] += 1
        else:
            stack.extend(game.apply(s, m) for m in game.legal_moves(s))
    assert counts == {(1.0, -1.0): 131_184, (-1.0, 1.0): 77_904, (0.0, 0.0): 46_080}


def _reachable(game: TicTacToe) -> set[int]:
    seen = {game.initial_state()}
    frontier = [game.initial_state()]
    while frontier:
        s = frontier.pop()
        for m in game.legal_moves(s):
            child = game.apply(s, m)
            if child not in seen:
                seen.add(child)
                frontier.append(child)
    return seen


def test_5478_distinct_legal_positions_and_parse_accepts_exactly_those(game: TicTacToe) -> None:
    reachable = _reachable(game)
    assert len(reachable) == 5478
    assert len({game.format_position(s) for s in reachable}) == 5478
    accepted = set()
    for cells in itertools.product("xo.", repeat=9):
        try:
            accepted.add(game.parse_position("".join(cells)))
        except GameError:
            continue
    assert accepted == reachable


def _minimax(game: TicTacToe, state: int) -> float:
    if game.is_terminal(state):
        return game.utility(state)[0]
    values = [_minimax(game, game.apply(state, m)) for m in game.legal_moves(state)]
    return max(values) if game.current_player(state) == 0 else min(values)


def test_perfect_play_draws_and_known_positions_are_solved(game: TicTacToe) -> None:
    assert _minimax(game, game.initial_state()) == 0
    # x in a corner, o on an adjacent edge: x wins.
    assert _minimax(game, game.parse_position("x o . / . . . / . . .")) == 1
    # o to move can block; o's only saving moves are known.
    state = game.parse_position("x........")
    saving = [
        game.format_move(m)
        for m in game.legal_moves(state)
        if _minimax(game, game.apply(state, m)) == 0
    ]
    assert saving == ["5"]


def test_moves_are_cells_in_textbook_order(game: TicTacToe) -> None:
    assert list(game.legal_moves(game.initial_state())) == list(range(9))
    s = game.parse_position("5,1")
    assert [game.format_move(m) for m in game.legal_moves(s)] == list("2346789")
    assert game.current_player(s) == 0
    assert game.format_position(s) == "o...x...."


def test_move_list_forms_agree(game: TicTacToe) -> None:
    board = game.parse_position("o...x...x")
    for text in ("519", "5,1,9", " 5 1 9 ", "o..|.x.|..x", "O . . / . X . / . . X"):
        assert game.parse_position(text) == board
    assert game.parse_position("") == game.initial_state() == game.parse_position(".........")
    assert game.current_player(board) == 1


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("xx.......", "has 2 x and 0 o"),
        ("o........", "has 0 x and 1 o"),
        ("xxxooo...", "play after"),
        ("xxxoo.o..", "play after x"),
        ("ooox.xx.x", "play after o"),
        ("55", "the cell is taken"),
        ("1425367", "the game is over"),
        ("10", "not a cell 1-9"),
        ("xo", "neither"),
        ("xo.xo.xo.x", "neither"),
        ("abcdefghi", "neither"),
    ],
)
def test_bad_positions_are_one_line_game_errors(game: TicTacToe, text: str, why: str) -> None:
    with pytest.raises(GameError, match=why) as info:
        game.parse_position(text)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("text", ["0", "10", "a1", "", "x", "1 2"])
def test_bad_moves_are_game_errors(game: TicTacToe, text: str) -> None:
    with pytest.raises(GameError):
        game.parse_move(text)


def test_illegal_move_in_a_position(game: TicTacToe) -> None:
    s = game.parse_position("5")
    with pytest.raises(GameError, match="illegal move"):
        game.move_from_text(s, "5")


def _workshop_by_hand(board: str) -> int:
    """The classic scoring written out directly from the 9-character board."""
    score = 0
    for line in LINES:
        cells = [board[i] for i in line]
        for mark, sign in (("x", 1), ("o", -1)):
            other = "o" if mark == "x" else "x"
            if other in cells:
                continue
            n = cells.count(mark)
            score += sign * {0: 0, 1: 1, 2: 10, 3: 1000}[n]
    return score


def test_workshop_scores_of_known_positions(game: TicTacToe) -> None:
    assert game.workshop_score(game.initial_state()) == 0
    assert game.workshop_score(game.parse_position("....x....")) == 4  # centre: 4 lines
    assert game.workshop_score(game.parse_position("x........")) == 3  # corner: 3 lines
    assert game.workshop_score(game.parse_position(".x.......")) == 2  # edge: 2 lines
    # x at 1 and 5, o at 9: four open x singles, x's diagonal blocked, two open o singles.
    assert game.workshop_score(game.parse_position("x...x...o")) == 1 + 1 + 1 + 1 + 1 - 1 - 1
    # x's full top row, o's open pair in the middle row, x's open single in column 3.
    assert game.workshop_score(game.parse_position("xxxoo....")) == 1000 - 10 + 1
    # x pair open on the top row (10), x single in column 3 (1), o singles in the middle row,
    # bottom row and middle column (-1 each); the diagonals and column 1 are mixed (0).
    assert game.workshop_score(game.parse_position("x.x.o.o..")) == 10 + 1 - 1 - 1 - 1


def _all_positions(game: TicTacToe) -> Iterator[int]:
    yield from _reachable(game)


def test_evaluate_is_the_workshop_score_on_the_utility_scale(game: TicTacToe) -> None:
    for s in _all_positions(game):
        v = game.evaluate(s)
        if game.is_terminal(s):
            assert v == game.utility(s)
            continue
        raw = _workshop_by_hand(game.format_position(s))
        assert game.workshop_score(s) == raw
        assert v == (raw / 1000, -raw / 1000)
        assert abs(v[0]) < 0.1  # strictly below any win or loss


@settings(max_examples=60, deadline=None)
@given(st.permutations(range(9)), st.integers(0, 9))
def test_move_lists_and_boards_round_trip(order: list[int], length: int) -> None:
    game = TicTacToe()
    state = game.initial_state()
    played = []
    for cell in order[:length]:
        if game.is_terminal(state):
            break
        state = game.apply(state, cell)
        played.append(str(cell + 1))
    assert game.parse_position("".join(played)) == state
    assert game.parse_position(",".join(played)) == state
    assert game.parse_position(game.format_position(state)) == state
    assert game.render(state).count("\n") == 3


def test_render_shows_board_and_outcome(game: TicTacToe) -> None:
    text = game.render(game.parse_position("xxxoo...."))
    assert text.splitlines()[0].split()[:3] == ["x", "x", "x"]
    assert "x wins" in text
    assert "draw" in game.render(game.parse_position("xoxxoxoxo"))
    assert "o to move" in game.render(game.parse_position("5"))
