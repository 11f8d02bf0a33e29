"""Connect Four: known position counts, win detection, scoring, text I/O, and a cross-check of
the bitboards against a plain 2-D board on random games."""

from __future__ import annotations

import random
from collections.abc import Hashable
from functools import cache
from itertools import combinations, pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena import games
from bot_arena.games.base import Game, GameError, GameKind
from bot_arena.games.connect4 import DRAWN, ONGOING, WON, C4State, ConnectFour

C4 = ConnectFour()


def play(text: str, game: ConnectFour = C4) -> C4State:
    return game.parse_position(text)


# --- a plain 2-D reference implementation ------------------------------------------------------
class NaiveBoard:
    """grid[col] is the list of players (0/1) in that column, bottom first."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.grid: list[list[int]] = [[] for _ in range(width)]
        self.plies = 0
        self.winner: int | None = None

    def at(self, col: int, row: int) -> int | None:
        if 0 <= col < self.width and 0 <= row < len(self.grid[col]):
            return self.grid[col][row]
        return None

    def four_through(self, col: int, row: int, who: int) -> bool:
        for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
            run = 1
            for sign in (1, -1):
                c, r = col + sign * dc, row + sign * dr
                while self.at(c, r) == who:
                    run += 1
                    c, r = c + sign * dc, r + sign * dr
            if run >= 4:
                return True
        return False

    def legal(self) -> set[int]:
        if self.winner is not None:
            return set()
        return {c for c in range(self.width) if len(self.grid[c]) < self.height}

    def play(self, col: int) -> None:
        who = self.plies % 2
        self.grid[col].append(who)
        self.plies += 1
        if self.four_through(col, len(self.grid[col]) - 1, who):
            self.winner = who

    def terminal(self) -> bool:
        return self.winner is not None or self.plies == self.width * self.height

    def utility(self) -> tuple[float, float]:
        if self.winner is None:
            return (0, 0)
        score = self.width * self.height / 2 + 1 - (self.plies + 1) // 2
        return (score, -score) if self.winner == 0 else (-score, score)

    def completing_cells(self, who: int) -> set[tuple[int, int]]:
        """Empty cells (col, row) where a stone of ``who`` would make four (gravity ignored)."""
        out = set()
        for c in range(self.width):
            for r in range(len(self.grid[c]), self.height):
                saved = self.grid[c]
                # Pretend the cell holds a stone: pad the column with a sentinel value.
                self.grid[c] = saved + [-1] * (r - len(saved)) + [who]
                if self.four_through(c, r, who):
                    out.add((c, r))
                self.grid[c] = saved
        return out


@cache
def naive_weights(width: int, height: int) -> dict[tuple[int, int], int]:
    """For every cell, the lines of four cells on the board through it, counted by listing them."""
    weights = dict.fromkeys(((c, r) for c in range(width) for r in range(height)), 0)
    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        for c0 in range(width):
            for r0 in range(height):
                cells = [(c0 + i * dc, r0 + i * dr) for i in range(4)]
                if all(0 <= c < width and 0 <= r < height for c, r in cells):
                    for cell in cells:
                        weights[cell] += 1
    return weights


def cells_of(game: ConnectFour, bitboard: int) -> set[tuple[int, int]]:
    return {
        (c, r)
        for c in range(game.width)
        for r in range(game.height)
        if bitboard >> (c * (game.height + 1) + r) & 1
    }


# --- known counts ------------------------------------------------------------------------------
def test_distinct_positions_by_ply_match_oeis_a212693() -> None:
    game = games.get("connect4")
    expected = [1, 7, 49, 238, 1120, 4263, 16422, 54859, 184275]
    level = {game.state_key(game.initial_state()): game.initial_state()}
    counts = [len(level)]
    for _ in range(len(expected) - 1):
        nxt: dict[object, C4State] = {}
        for state in level.values():
            for move in game.legal_moves(state):
                child = game.apply(state, move)
                nxt[game.state_key(child)] = child
        level = nxt
        counts.append(len(level))
    assert counts == expected


# --- rules -------------------------------------------------------------------------------------
def test_metadata_and_registry() -> None:
    game = games.get("connect4", width="5", height="4")
    assert isinstance(game, ConnectFour)
    assert (game.width, game.height, game.num_players) == (5, 4, 2)
    assert game.kind is GameKind.ZERO_SUM
    assert C4.bounds.max_each == 18 and C4.bounds.min_each == -18 and C4.bounds.max_sum == 0
    assert C4.default_depth == 6
    with pytest.raises(GameError):
        games.get("connect4", width=10)
    with pytest.raises(GameError):
        games.get("connect4", height=0)


def test_default_move_order_is_centre_first() -> None:
    assert C4.legal_moves(C4.initial_state()) == (3, 2, 4, 1, 5, 0, 6)
    assert ConnectFour(width=6).legal_moves(ConnectFour(width=6).initial_state()) == (
        2,
        3,
        1,
        4,
        0,
        5,
    )
    full_centre = play("444444")
    assert C4.legal_moves(full_centre) == (2, 4, 1, 5, 0, 6)


@pytest.mark.parametrize(
    ("moves", "winner", "stones"),
    [
        ("4455667", 0, 4),  # horizontal, bottom row
        ("445566", None, None),  # ...one stone short
        ("3344556", 0, 4),  # horizontal, columns 3-6
        ("7766554", 0, 4),  # horizontal ending at the right edge
        ("1212121", 0, 4),  # vertical, left edge
        ("71212121", 1, 4),  # vertical for the second player
        ("7676761", None, None),  # three in a column only
        ("11331212121", 0, 6),  # vertical in the top four cells of column 1
        ("1133121212", None, None),  # ...one stone short
        ("12233434474", 0, 6),  # rising diagonal from the bottom-left corner
        ("1223343447", None, None),
        ("76651554444", 0, 6),  # falling diagonal from the bottom-right corner
        ("7665155444", None, None),
    ],
)
def test_win_detection(moves: str, winner: int | None, stones: int | None) -> None:
    state = play(moves)
    if winner is None or stones is None:
        assert not C4.is_terminal(state)
        assert state[3] == ONGOING
        return
    assert state[3] == WON and C4.is_terminal(state)
    assert C4.legal_moves(state) == ()
    score = 22 - stones
    assert C4.utility(state) == ((score, -score) if winner == 0 else (-score, score))


def test_no_wrap_around_between_columns() -> None:
    # X holds rows 4-6 of column 1 and the bottom of column 2: on a board without the spare bit
    # on top of each column these four stones would be consecutive bits.
    state = play("211117171")
    assert not C4.is_terminal(state)
    x_stones = state[0] if state[2] % 2 == 0 else state[0] ^ state[1]
    assert cells_of(C4, x_stones) == {(1, 0), (0, 1), (0, 3), (0, 4), (0, 5)}
    assert not C4.is_win(x_stones)


def _is_line(cells: tuple[tuple[int, int], ...]) -> bool:
    ordered = sorted(cells)
    steps = {(b[0] - a[0], b[1] - a[1]) for a, b in pairwise(ordered)}
    return len(steps) == 1 and steps.pop() in ((1, 0), (0, 1), (1, 1), (1, -1))


def test_is_win_on_every_set_of_four_stones() -> None:
    """Exhaustive on 7x6: four stones are a win exactly when they lie on one line."""
    cells = [(c, r) for c in range(7) for r in range(6)]
    bits = {cell: 1 << (cell[0] * 7 + cell[1]) for cell in cells}
    wins = 0
    for four in combinations(cells, 4):
        board = bits[four[0]] | bits[four[1]] | bits[four[2]] | bits[four[3]]
        line = _is_line(four)
        assert C4.is_win(board) == line, four
        wins += line
    assert wins == 69  # the 69 lines of four on the 7x6 board


def test_scoring_of_full_games() -> None:
    draw = play("315366176623116216312432757344455754722547")
    assert draw[3] == DRAWN and C4.utility(draw) == (0, 0)
    assert C4.legal_moves(draw) == ()
    late = play("662437464744131221525125145155333726773766")
    assert late[3] == WON and late[2] == 42
    assert C4.utility(late) == (-1, 1)  # O wins with its 21st stone: 22 - 21
    assert "O wins" in C4.render(late) and "draw" in C4.render(draw)


def test_state_key_and_immutability() -> None:
    a = play("4453")
    b = play("4354")  # same stones, other order
    assert a == b and hash(a) == hash(b) and C4.state_key(a) == C4.state_key(b)
    assert C4.state_key(a) == a[0] + a[1]
    before = a
    C4.apply(a, 0)
    assert a == before


# --- text I/O ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bad",
    ["4458", "44x3", "0", "1111111", "12121213", "4 4", "-1"],
)
def test_parse_position_errors_are_one_line(bad: str) -> None:
    with pytest.raises(GameError) as info:
        C4.parse_position(bad)
    assert "\n" not in str(info.value)


def test_parse_position_error_messages_say_what_is_wrong() -> None:
    with pytest.raises(GameError, match="column 1 is full"):
        C4.parse_position("1111111")
    with pytest.raises(GameError, match="already won"):
        C4.parse_position("12121213")
    with pytest.raises(GameError, match="not a column"):
        C4.parse_position("4458")


def test_empty_board_texts() -> None:
    for text in ("", "start", " START "):
        assert C4.parse_position(text) == C4.initial_state()
    assert C4.format_position(C4.initial_state()) == ""


@pytest.mark.parametrize("bad", ["0", "8", "x", "", "1.5", "44"])
def test_parse_move_errors(bad: str) -> None:
    with pytest.raises(GameError):
        C4.parse_move(bad)


def test_move_text() -> None:
    assert [C4.parse_move(str(c)) for c in range(1, 8)] == list(range(7))
    assert [C4.format_move(m) for m in range(7)] == [str(c) for c in range(1, 8)]


def test_format_position_of_a_won_position_replays_the_win_last() -> None:
    # X's last stone in column 3 joined 1-2 and 4-5 into five in a row. Ending the sequence with
    # the stone in column 1 or 5 would leave four on the board one move earlier (parse rejects
    # that); only columns 2, 3 or 4 may come last.
    state = play("172746563")
    text = C4.format_position(state)
    assert C4.parse_position(text) == state
    assert text[-1] in "234" and sorted(text) == sorted("172746563")


def test_render() -> None:
    text = C4.render(play("4453"))
    lines = text.splitlines()
    assert lines[-2] == "1 2 3 4 5 6 7"
    assert lines[-3] == ". . O X X . ."
    assert lines[-4] == ". . . O . . ."
    assert lines[-1] == "X to move"


# --- bitboard helpers --------------------------------------------------------------------------
def test_masks() -> None:
    assert C4.bottom_mask == sum(1 << (7 * c) for c in range(7))
    assert C4.board_mask == sum(((1 << 6) - 1) << (7 * c) for c in range(7))
    assert C4.column_mask(2) == 0b111111 << 14
    assert C4.top_mask(2) == 1 << 19
    assert C4.bottom_mask_col(2) == 1 << 14
    assert C4.popcount(0b1011) == 3
    state = play("444444")
    assert state[1] & C4.top_mask(3)
    assert C4.possible(state[1]) == C4.bottom_mask & ~C4.column_mask(3)


# --- cross-check against the plain board -------------------------------------------------------
SIZES = [(7, 6), (4, 4), (5, 4), (6, 7), (3, 5), (9, 5)]


@settings(max_examples=100, deadline=None)
@given(size=st.sampled_from(SIZES), seed=st.integers(0, 2**32 - 1))
def test_bitboards_agree_with_a_plain_board(size: tuple[int, int], seed: int) -> None:
    width, height = size
    game = ConnectFour(width, height)
    naive = NaiveBoard(width, height)
    rng = random.Random(seed)
    state = game.initial_state()
    seen: dict[Hashable, tuple[tuple[int, ...], ...]] = {}
    while True:
        assert game.is_terminal(state) == naive.terminal()
        assert set(game.legal_moves(state)) == naive.legal()
        assert game.current_player(state) == naive.plies % 2
        mover_stones = state[0]
        other_stones = state[0] ^ state[1]
        me = naive.plies % 2
        mine = {(c, r) for c in range(width) for r, w in enumerate(naive.grid[c]) if w == me}
        assert cells_of(game, mover_stones) == mine
        assert cells_of(game, other_stones) == cells_of(game, state[1]) - mine
        key = game.state_key(state)
        grid = tuple(tuple(col) for col in naive.grid)
        assert seen.setdefault(key, grid) == grid  # keys identify positions
        assert game.parse_position(game.format_position(state)) == state
        if game.is_terminal(state):
            assert game.utility(state) == naive.utility()
            assert game.evaluate(state) == game.utility(state)
            break
        assert cells_of(game, game.winning_positions(mover_stones, state[1])) == (
            naive.completing_cells(me)
        )
        assert cells_of(game, game.possible(state[1])) == {
            (c, len(naive.grid[c])) for c in naive.legal()
        }
        v0, v1 = game.evaluate(state)
        assert v0 == -v1 and abs(v0) < game.min_win
        weights = naive_weights(width, height)
        diff = sum(
            weights[c, r] * (1 if who == 0 else -1)
            for c in range(width)
            for r, who in enumerate(naive.grid[c])
        )
        assert v0 == pytest.approx(game.min_win * diff / (abs(diff) + 32))
        move = rng.choice(game.legal_moves(state))
        before = state
        state = game.apply(state, move)
        assert game.apply(before, move) == state
        naive.play(move)


@pytest.mark.parametrize("size", [(1, 1), (4, 1), (1, 6), (3, 3), (2, 4), (1, 7), (9, 32)])
def test_tiny_and_huge_boards_stay_within_their_bounds(size: tuple[int, int]) -> None:
    game = ConnectFour(*size)
    b = game.bounds
    for seed in range(30):
        rng = random.Random(seed)
        state = game.initial_state()
        while True:
            for v in (*game.evaluate(state), *(game.utility(state) if state[3] else ())):
                assert b.min_each <= v <= b.max_each
            if game.is_terminal(state):
                break
            state = game.apply(state, rng.choice(game.legal_moves(state)))
        assert game.parse_position(game.format_position(state)) == state
    if size in ((4, 1), (1, 6), (3, 3)):
        assert b.max_each == 0  # nobody can ever make four here


def test_random_playout_matches_the_generic_loop() -> None:
    for seed in range(20):
        fast = C4.random_playout(C4.initial_state(), random.Random(seed))
        slow = Game.random_playout(C4, C4.initial_state(), random.Random(seed))
        assert fast == slow and C4.is_terminal(fast)


def test_cell_weights_are_the_classic_table() -> None:
    table = [[C4.lines_through(c, r) for c in range(7)] for r in range(6)]
    assert table[0] == table[5] == [3, 4, 5, 7, 5, 4, 3]
    assert table[1] == table[4] == [4, 6, 8, 10, 8, 6, 4]
    assert table[2] == table[3] == [5, 8, 11, 13, 11, 8, 5]
    assert sum(map(sum, table)) == 4 * 69  # every line of four counted once per cell


def test_evaluate_prefers_central_stones() -> None:
    # X: 4, 5 (weights 7 + 5), O: 1, 2 (3 + 4): X is ahead by 5.
    assert C4.evaluate(play("4152")) == pytest.approx((5 / 37, -5 / 37))
    assert C4.evaluate(play("1425"))[0] < 0
    assert C4.evaluate(play("")) == (0.0, 0.0)
