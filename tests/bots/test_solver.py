"""The exact solver against known values and brute force: generic games, small Connect Four."""

from __future__ import annotations

import json
import random
from collections.abc import Hashable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena import bots, games
from bot_arena.bots.base import BotError, TimeBudget
from bot_arena.bots.connect4_solver import Connect4Solver, parse_moves
from bot_arena.bots.search_common import SearchAborted
from bot_arena.bots.solver import ExactSolver, SolverBot, SolverError
from bot_arena.games.base import Game
from bot_arena.games.tree import TreeGame

# --- brute force, written independently of the solver -------------------------------------------


def brute_values(game: Game[Any, Any], state: Any) -> tuple[float, ...]:
    """Max^n over the whole tree, no pruning, ties to the first move (minimax for 2 players)."""
    if game.is_terminal(state):
        return tuple(float(u) for u in game.utility(state))
    p = game.current_player(state)
    best: tuple[float, ...] | None = None
    for m in game.legal_moves(state):
        v = brute_values(game, game.apply(state, m))
        if best is None or v[p] > best[p]:
            best = v
    assert best is not None
    return best


def memo_minimax(game: Game[Any, Any]) -> Any:
    """Plain two-player minimax (player 0's utility) with memoisation, for larger trees."""

    @cache
    def value(state: Hashable) -> float:
        if game.is_terminal(state):
            return float(game.utility(state)[0])
        vals = [value(game.apply(state, m)) for m in game.legal_moves(state)]
        return max(vals) if game.current_player(state) == 0 else min(vals)

    return value


# --- known values -------------------------------------------------------------------------------


def test_tictactoe_is_a_draw() -> None:
    game = games.get("tictactoe")
    result = ExactSolver(game).solve(game.initial_state())
    assert result.values == (0.0, 0.0)
    assert result.score == 0.0
    assert result.move in game.legal_moves(game.initial_state())
    assert result.method == "negamax"


def test_four_coins_first_player_wins_by_taking_one() -> None:
    game = games.get("coins", coins=4)
    result = ExactSolver(game).solve(game.initial_state())
    assert result.values == (1.0, -1.0)
    assert result.move == 1


@pytest.mark.parametrize("coins", range(1, 16))
def test_coins_theory(coins: int) -> None:
    """Taking 1 or 2: the player to move loses exactly when the count is a multiple of 3."""
    game = games.get("coins", coins=coins)
    result = ExactSolver(game).solve(game.initial_state())
    assert result.score == (-1.0 if coins % 3 == 0 else 1.0)
    if coins % 3:
        assert result.move == coins % 3


def test_tictactoe_random_positions_match_brute_force() -> None:
    game = games.get("tictactoe")
    rng = random.Random(7)
    solver = ExactSolver(game)
    for _ in range(40):
        state = game.initial_state()
        for _ in range(rng.randrange(2, 7)):
            if game.is_terminal(state):
                break
            state = game.apply(state, rng.choice(game.legal_moves(state)))
        if game.is_terminal(state):
            continue
        solver.reset()
        result = solver.solve(state)
        assert result.values == brute_values(game, state)
        # the move reaches the value
        assert brute_values(game, game.apply(state, result.move)) == result.values


def test_three_player_nim_matches_brute_force() -> None:
    game = games.get("nim", players=3, piles="2,3,3")
    solver = ExactSolver(game)
    assert solver.method == "maxn"
    for text in ("2,3,3@0", "1,2,3@1", "3,3@2", "1,1,1,1@0", "0,2,2@1"):
        state = game.parse_position(text)
        result = solver.solve(state)
        assert result.values == brute_values(game, state), text


def test_textbook_trees_value_and_best_move(shared_data: Path) -> None:
    files = sorted((shared_data / "trees").glob("*.json"))
    if not files:
        pytest.skip(f"no trees in {shared_data / 'trees'}")
    for path in files:
        expected = json.loads(path.read_text(encoding="utf-8"))["expected"]
        game = games.get("tree", tree=str(path))
        result = ExactSolver(game).solve(game.initial_state())
        assert result.values[0] == expected["value"], path.name
        assert result.move == expected["best_move"], path.name


# --- random trees -------------------------------------------------------------------------------


def _tree(leaf: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(leaf, lambda kids: st.lists(kids, min_size=1, max_size=4), max_leaves=40)


@settings(max_examples=150, deadline=None)
@given(_tree(st.integers(-5, 5)))
def test_two_player_trees_match_minimax(data: Any) -> None:
    if not isinstance(data, list):
        data = [data]
    game = TreeGame.from_data(data)
    result = ExactSolver(game).solve(0)
    expected = brute_values(game, 0)
    assert result.values == expected
    assert isinstance(result.move, int)
    assert brute_values(game, game.apply(0, result.move))[0] == expected[0]


@settings(max_examples=100, deadline=None)
@given(
    st.integers(3, 4).flatmap(
        lambda n: _tree(
            st.lists(st.integers(0, 3), min_size=n, max_size=n).map(lambda u: {"utility": u})
        ).map(lambda root: {"players": n, "root": root if isinstance(root, list) else [root]})
    )
)
def test_n_player_trees_match_brute_force_maxn(data: Any) -> None:
    game = TreeGame.from_data(data)
    result = ExactSolver(game).solve(0)
    assert result.values == brute_values(game, 0)
    # ties go to the first move in order: the move's subtree has exactly the root's vector
    assert isinstance(result.move, int)
    assert brute_values(game, game.apply(0, result.move)) == result.values


# --- Connect Four on small boards against brute force -------------------------------------------


def _random_position(game: Game[Any, Any], rng: random.Random, plies: int) -> Any:
    while True:
        state = game.initial_state()
        for _ in range(plies):
            if game.is_terminal(state):
                break
            state = game.apply(state, rng.choice(game.legal_moves(state)))
        if not game.is_terminal(state):
            return state


@pytest.mark.parametrize(
    ("width", "height", "plies", "count"),
    [(4, 4, 4, 25), (5, 4, 9, 25), (5, 3, 4, 25), (6, 4, 13, 15)],
)
def test_small_connect4_matches_minimax(width: int, height: int, plies: int, count: int) -> None:
    """Strong solver == memoised plain minimax over the game API with the game's own scores."""
    game = games.get("connect4", width=width, height=height)
    value = memo_minimax(game)
    solver = ExactSolver(game)
    assert solver.method == "connect4"
    rng = random.Random(width * 100 + height)
    for _ in range(count):
        state = _random_position(game, rng, rng.randrange(plies, plies + 4))
        solver.reset()
        result = solver.solve(state)
        expected = value(state)
        assert result.values[0] == expected, game.format_position(state)
        assert value(game.apply(state, result.move)) == expected, game.format_position(state)


def test_small_connect4_with_symmetry_and_tiny_table() -> None:
    game = games.get("connect4", width=5, height=4)
    value = memo_minimax(game)
    tiny = ExactSolver(game, tt_size=16)
    mirrored = ExactSolver(game, symmetry=True)
    rng = random.Random(3)
    for _ in range(15):
        state = _random_position(game, rng, 8)
        expected = value(state)
        tiny_result = tiny.solve(state)
        assert tiny_result.values[0] == expected
        assert tiny_result.tt_entries <= 16
        assert mirrored.solve(state).values[0] == expected


def test_raw_solver_weak_window_gives_the_sign() -> None:
    solver = Connect4Solver(5, 4)
    game = games.get("connect4", width=5, height=4)
    value = memo_minimax(game)
    rng = random.Random(11)
    for _ in range(15):
        state = _random_position(game, rng, 8)
        solver.reset()
        weak = solver.solve(state[0], state[1], state[2], window=(-1, 1)).score
        exact = value(state) * (1 if state[2] % 2 == 0 else -1)
        assert (weak > 0) == (exact > 0) and (weak < 0) == (exact < 0)


def test_raw_solver_refuses_finished_positions() -> None:
    solver = Connect4Solver()
    cur, mask, plies = solver.play_sequence(parse_moves("1212121"))
    with pytest.raises(ValueError, match="already won"):
        solver.solve(cur, mask, plies)
    with pytest.raises(ValueError, match="full"):
        solver.play_sequence(parse_moves("1111111"))


# --- refusals and the bot -----------------------------------------------------------------------


def test_large_game_is_refused_without_node_limit() -> None:
    game = games.get("rolit")
    with pytest.raises(SolverError, match="too large"):
        ExactSolver(game)
    solver = ExactSolver(game, node_limit=500)
    with pytest.raises(SolverError, match="500 nodes"):
        solver.solve(game.initial_state())


def test_connect4_node_limit_gives_up_clearly() -> None:
    game = games.get("connect4")
    solver = ExactSolver(game, node_limit=5000)
    with pytest.raises(SolverError, match="5000 nodes"):
        solver.solve(game.parse_position("4"))
    # within the limit the answer is exact
    assert solver.solve(game.parse_position("2252576253462244111563365343671351441")).score == -1


def test_solver_bot_plays_the_solved_move() -> None:
    game = games.get("connect4")
    bot = bots.make("solver:pv=3")
    assert isinstance(bot, SolverBot)
    state = game.parse_position("2252576253462244111563365343671351441")  # score -1, set L3
    bot.new_game(game, 1)
    decision = bot.choose_move(game, state, TimeBudget.unlimited())
    info = decision.info
    assert info is not None and info.values == (1.0, -1.0)  # player 1 to move, loses by 1
    assert info.pv[0] == decision.move and 1 <= len(info.pv) <= 3
    assert info.nodes > 0 and info.extra["exact"] is True
    child = game.apply(state, decision.move)
    assert ExactSolver(game).solve(child).values == info.values


def test_solver_bot_under_a_short_budget_returns_a_legal_move() -> None:
    game = games.get("connect4")
    bot = bots.make("solver")
    state = game.parse_position("4")  # far out of reach of an exact search in 20 ms
    decision = bot.choose_move(game, state, TimeBudget.per_move(0.02))
    assert decision.move in game.legal_moves(state)
    assert decision.info is not None and decision.info.extra["exact"] is False


def test_solver_bot_refuses_large_games_up_front() -> None:
    with pytest.raises(BotError):
        bots.make("solver").new_game(games.get("rolit"), 0)


def test_connect4_timeout_carries_a_proven_move() -> None:
    solver = Connect4Solver()
    cur, mask, plies = solver.play_sequence(parse_moves("44"))
    with pytest.raises(SearchAborted, match="deadline passed") as caught:
        solver.solve(cur, mask, plies, deadline=0.0)
    assert caught.value.move is not None and caught.value.lo <= caught.value.hi


@pytest.mark.parametrize(("width", "height"), [(1, 5), (2, 4), (4, 1), (4, 2), (3, 3), (6, 2)])
def test_degenerate_boards_with_one_table_for_all_positions(width: int, height: int) -> None:
    """Boards too small for some directions; the table is kept across positions (its entries
    are facts about positions, valid in any later search)."""
    game = games.get("connect4", width=width, height=height)
    value = memo_minimax(game)
    solver = ExactSolver(game)
    rng = random.Random(width * 10 + height)
    states = [game.initial_state()]
    for _ in range(20):
        states.append(game.initial_state())
        for _ in range(rng.randrange(width * height)):
            if game.is_terminal(states[-1]):
                break
            states[-1] = game.apply(states[-1], rng.choice(game.legal_moves(states[-1])))
    for state in states:
        result = solver.solve(state)
        assert result.values[0] == value(state)
        if result.move is not None:
            assert value(game.apply(state, result.move)) == value(state)
