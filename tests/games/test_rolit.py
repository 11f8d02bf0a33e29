"""Rolit: captures, the must-capture rule, the adjacent fallback, the end, text I/O, and a
cross-check of the bitboards against a plain 2-D board on random games."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena import games
from bot_arena.games.base import GameError, GameKind
from bot_arena.games.rolit import Rolit, RolitState

DIRECTIONS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]
Grid = list[list[int | None]]


# --- a plain 2-D reference implementation ------------------------------------------------------
class NaiveRolit:
    """grid[row][col] is a colour or None; row 0 is the top row."""

    def __init__(self, size: int, players: int, neutral: bool) -> None:
        self.size, self.players = size, players
        self.grid: Grid = [[None] * size for _ in range(size)]
        h = size // 2
        centre = [(h - 1, h - 1), (h - 1, h), (h, h), (h, h - 1)]  # clockwise from top-left
        for colour, (r, c) in enumerate(centre):
            if colour < players or neutral:
                self.grid[r][c] = colour
        self.mover = 0

    def inside(self, r: int, c: int) -> bool:
        return 0 <= r < self.size and 0 <= c < self.size

    def captured_by(self, r: int, c: int, who: int) -> list[tuple[int, int]]:
        out = []
        for dr, dc in DIRECTIONS:
            line = []
            rr, cc = r + dr, c + dc
            while self.inside(rr, cc) and self.grid[rr][cc] not in (None, who):
                line.append((rr, cc))
                rr, cc = rr + dr, cc + dc
            if line and self.inside(rr, cc) and self.grid[rr][cc] == who:
                out.extend(line)
        return out

    def empties(self) -> list[tuple[int, int]]:
        n = self.size
        return [(r, c) for r in range(n) for c in range(n) if self.grid[r][c] is None]

    def legal(self) -> set[tuple[int, int]]:
        empty = self.empties()
        captures = {(r, c) for r, c in empty if self.captured_by(r, c, self.mover)}
        if captures:
            return captures
        return {
            (r, c)
            for r, c in empty
            if any(
                self.inside(r + dr, c + dc) and self.grid[r + dr][c + dc] is not None
                for dr, dc in DIRECTIONS
            )
        }

    def play(self, r: int, c: int) -> None:
        for rr, cc in self.captured_by(r, c, self.mover):
            self.grid[rr][cc] = self.mover
        self.grid[r][c] = self.mover
        self.mover = (self.mover + 1) % self.players

    def counts(self) -> list[int]:
        flat = [v for row in self.grid for v in row]
        return [flat.count(p) for p in range(self.players)]


def text_of(rows: list[str], mover: int = 0) -> str:
    return "/".join(rows) + f"@{mover}"


def grid_text(game: Rolit, state: RolitState) -> list[str]:
    return game.format_position(state).split("@")[0].split("/")


def cell(game: Rolit, move: int) -> tuple[int, int]:
    text = game.format_move(move)
    return int(text[1:]) - 1, ord(text[0]) - ord("a")


# --- setup and metadata ------------------------------------------------------------------------
def test_initial_positions() -> None:
    four = Rolit()
    assert four.format_position(four.initial_state()) == text_of(
        ["........"] * 3 + ["...01...", "...32..."] + ["........"] * 3
    )
    assert Rolit(players=3, size=4).format_position(Rolit(players=3, size=4).initial_state()) == (
        "..../.01./..2./....@0"
    )
    two = Rolit(players=2, size=6)
    assert two.format_position(two.initial_state()) == text_of(
        ["......", "......", "..01..", "......", "......", "......"]
    )
    boxed = Rolit(players=2, size=4, neutral=True)
    assert boxed.format_position(boxed.initial_state()) == "..../.01./.32./....@0"
    assert boxed.utility(boxed.initial_state()) == (1, 1)


def test_metadata_and_registry() -> None:
    game = games.get("rolit")
    assert isinstance(game, Rolit)
    assert (game.num_players, game.size) == (4, 8)
    assert game.kind is GameKind.CONSTANT_SUM
    assert (game.bounds.min_each, game.bounds.max_each, game.bounds.max_sum) == (0, 64, 64)
    three = games.get("rolit", players="3", size="6", neutral="true")
    assert isinstance(three, Rolit) and three.kind is GameKind.GENERAL_SUM
    assert three.bounds.max_sum == 36
    for bad in ({"players": 1}, {"players": 5}, {"size": 7}, {"size": 2}, {"size": 28}):
        with pytest.raises(GameError):
            games.get("rolit", **bad)


def test_first_moves_of_the_four_player_game() -> None:
    # The published walk-through of the 4-player opening (red d4, yellow e4, blue d5, green e5;
    # rows from the top): red may play d6, f4 or f6; after f4, yellow has 14 moves.
    game = Rolit()
    start = game.initial_state()
    # Red (0) at d4 captures yellow (e4) from f4, blue (d5) from d6, green (e5) from f6.
    assert {game.format_move(m) for m in game.legal_moves(start)} == {"f4", "d6", "f6"}
    after = game.apply(start, game.parse_move("f4"))
    assert grid_text(game, after)[3:5] == ["...000..", "...32..."]
    assert game.current_player(after) == 1
    # Yellow has no ball left: it may play next to any ball.
    assert len(game.legal_moves(after)) == 14


# --- captures ----------------------------------------------------------------------------------
def test_captures_in_all_eight_directions_and_of_every_colour() -> None:
    game = Rolit(players=4, size=8)
    rows = [
        "0..0..0.",
        ".1.2.2..",
        "..213...",
        "032.1230",
        "..123...",
        ".3.3.1..",
        "0..0..2.",
        ".......0",
    ]
    state = game.parse_position(text_of(rows))
    move = game.parse_move("d4")
    # Every direction from d4 holds a run of mixed colours ended by a ball of colour 0.
    assert move in game.legal_moves(state)
    after = game.apply(state, move)
    assert grid_text(game, after) == [
        "0..0..0.",
        ".0.0.0..",
        "..000...",
        "00000000",
        "..000...",
        ".0.0.0..",
        "0..0..0.",
        ".......0",
    ]
    assert game.utility(after)[0] == sum(r.count("0") for r in grid_text(game, after))


def test_only_up_to_the_nearest_own_ball_and_never_across_a_gap() -> None:
    game = Rolit(players=3, size=8)
    rows = [
        "........",
        "........",
        "........",
        "....1020",  # d4 empty; to its right 1, then 0 (the nearest own ball), 2, 0
        "....2...",  # diagonal down-right from d4: 2, then a gap
        "........",
        "...2....",
        "...0....",  # below d4: a gap, then 2, 0
    ]
    state = game.parse_position(text_of(rows))
    after = game.apply(state, game.parse_move("d4"))
    assert grid_text(game, after)[3] == "...00020"
    assert grid_text(game, after)[4:] == rows[4:]


def test_no_capture_wraps_around_the_board_edge() -> None:
    game = Rolit(players=2, size=8)
    rows = [
        "........",
        "..01....",  # the only real capture: e2
        ".......0",  # h3
        ".......0",  # h4
        "1.......",  # a5: in a row-major layout without a spare bit, a5 follows h4
        ".1......",  # b6: c7, b6, a5 would continue up-left onto h3 in that layout
        "........",
        "........",
    ]
    state = game.parse_position(text_of(rows))
    assert [game.format_move(m) for m in game.legal_moves(state)] == ["e2"]
    # b5 would capture a5 leftwards onto h4 and c7 would capture b6, a5 onto h3 if lines wrapped.
    for square in ("b5", "c7"):
        after = game.apply(state, game.parse_move(square))
        assert grid_text(game, after)[4][0] == "1" and grid_text(game, after)[5][1] == "1"


# --- move rules --------------------------------------------------------------------------------
def test_must_capture_when_a_capture_exists() -> None:
    game = Rolit(players=2, size=6)
    state = game.parse_position(
        text_of(["......", "......", "..01..", "..1...", "......", "......"])
    )
    assert {game.format_move(m) for m in game.legal_moves(state)} == {"e3", "c5"}


def test_adjacent_fallback_without_a_capture() -> None:
    game = Rolit(players=3, size=6)
    # Player 2 has no ball: it may play on any empty square next to a ball.
    state = game.parse_position(
        text_of(["......", "......", "..01..", "......", "......", "......"], 2)
    )
    expected = {"b2", "c2", "d2", "e2", "b3", "e3", "b4", "c4", "d4", "e4"}
    assert {game.format_move(m) for m in game.legal_moves(state)} == expected
    # Player 0 owns a ball but cannot capture anything either.
    lone = game.parse_position(
        text_of(["0.....", "......", "......", "......", "......", ".....1"])
    )
    assert {game.format_move(m) for m in game.legal_moves(lone)} == {
        "b1",
        "a2",
        "b2",
        "e6",
        "f5",
        "e5",
    }
    after = game.apply(lone, game.parse_move("b2"))
    assert grid_text(game, after)[1] == ".0...."


def test_default_move_order_puts_corners_first_and_squares_next_to_corners_last() -> None:
    game = Rolit(players=2, size=6)
    # Player 0 has no ball, so it may play around b2: corner, edges, interior, then the two
    # squares beside the corner (each kind in board order).
    state = game.parse_position(
        text_of(["......", ".1....", "......", "......", "......", "......"])
    )
    order = [game.format_move(m) for m in game.legal_moves(state)]
    assert order == ["a1", "c1", "a3", "c2", "b3", "c3", "b1", "a2"]


def test_game_ends_when_the_board_is_full_and_counts_sum_to_the_board() -> None:
    for players, size in ((2, 4), (3, 6), (4, 8)):
        game = Rolit(players=players, size=size)
        rng = random.Random(players)
        state = game.initial_state()
        plies = 0
        while not game.is_terminal(state):
            state = game.apply(state, rng.choice(game.legal_moves(state)))
            plies += 1
        assert plies == size * size - players
        assert game.legal_moves(state) == ()
        assert sum(game.utility(state)) == size * size
        assert "." not in game.format_position(state)


# --- text I/O ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bad",
    [
        "..../..../..../....",  # empty board
        "..../.01./.2../...",  # short row
        "..../.01./.2..@0",  # three rows
        "..../.01./.24./....@0",  # colour 4 with 3 players
        "..../.01./.3../....@0",  # colour 3 is no player's with 3 players
        "..../.01./.2../....@3",  # player 3 of 3
        "..../.01./.2../....@x",
        "..../.0x./.2../....@0",
    ],
)
def test_parse_position_errors_are_one_line(bad: str) -> None:
    game = Rolit(players=3, size=4)
    with pytest.raises(GameError) as info:
        game.parse_position(bad)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("bad", ["", "a0", "e1", "a5", "1a", "aa", "a-1", "a1b"])
def test_parse_move_errors(bad: str) -> None:
    with pytest.raises(GameError):
        Rolit(size=4).parse_move(bad)


def test_move_text_is_column_letter_and_row_from_the_top() -> None:
    game = Rolit(size=8)
    assert game.parse_move("a1") == game.square(0, 0)
    assert game.parse_move("H8") == game.square(7, 7)
    assert game.parse_move("c2") == game.square(1, 2)
    assert game.format_move(game.square(1, 2)) == "c2"
    assert game.parse_position("start") == game.parse_position("") == game.initial_state()


def test_render_shows_the_board_and_the_counts() -> None:
    game = Rolit(players=3, size=4, neutral=True)
    text = game.render(game.initial_state())
    lines = text.splitlines()
    assert lines[0].split() == ["a", "b", "c", "d"]
    assert lines[2].split() == ["2", ".", "0", "1", "."]
    assert "3 (neutral): 1" in text and "player 0 to move" in text


# --- cross-check against the plain board -------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    players=st.integers(2, 4),
    size=st.sampled_from([4, 6, 8]),
    neutral=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_bitboards_agree_with_a_plain_board(
    players: int, size: int, neutral: bool, seed: int
) -> None:
    game = Rolit(players=players, size=size, neutral=neutral)
    naive = NaiveRolit(size, players, neutral)
    rng = random.Random(seed)
    state = game.initial_state()
    while True:
        rows = grid_text(game, state)
        assert rows == ["".join("." if v is None else str(v) for v in row) for row in naive.grid]
        assert game.current_player(state) == naive.mover
        assert game.parse_position(game.format_position(state)) == state
        moves = game.legal_moves(state)
        assert {cell(game, m) for m in moves} == (naive.legal() if naive.empties() else set())
        assert game.is_terminal(state) == (not naive.empties())
        if game.is_terminal(state):
            assert list(game.utility(state)) == naive.counts()
            assert game.evaluate(state) == game.utility(state)
            if not neutral or players == 4:
                assert sum(game.utility(state)) == size * size
            break
        ev = game.evaluate(state)
        assert all(v >= 0 for v in ev) and sum(ev) <= size * size + 1e-9
        if not neutral or players == 4:
            assert sum(ev) == pytest.approx(size * size)
        move = rng.choice(moves)
        state = game.apply(state, move)
        naive.play(*cell(game, move))
