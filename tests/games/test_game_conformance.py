"""One conformance suite for every registered game: the invariants search code relies on.

Each case is a game with one parameter set. A built-in game whose module is not importable (yet)
is skipped; every other registered game (third-party ones included) runs with its defaults.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot_arena import games
from bot_arena.games.base import Game, GameError, GameKind
from bot_arena.games.registry import _BUILTIN

# (game, params, most plies a game can last or None); tree params name a file made below.
CASES: list[tuple[str, dict[str, Any], int | None]] = [
    ("coins", {}, 4),
    ("coins", {"players": 3}, 4),
    ("coins", {"coins": 9, "max_take": 3, "players": 4}, 9),
    ("tictactoe", {}, 9),
    ("connect4", {}, 42),
    ("connect4", {"width": 4, "height": 4}, 16),
    ("connect4", {"width": 5, "height": 3}, 15),
    ("tree", {"tree": "two-player"}, 3),
    ("tree", {"tree": "three-player"}, 3),
    ("tree", {"tree": "general-sum"}, 2),
    ("nim", {"players": 2}, 12),
    ("nim", {}, 12),
    ("nim", {"players": 4, "piles": "2,3,1,2"}, 8),
    ("nim", {"players": 3, "piles": "0,0"}, 0),
    ("rolit", {"players": 3}, 64),
    ("rolit", {"players": 4}, 64),
    ("rolit", {"players": 2, "size": 4}, 16),
    ("rolit", {"players": 3, "size": 6, "neutral": True}, 36),
    # Chess ends at the 100th half-move without a capture or pawn move, and there are at most
    # 126 of those (16 pawns x 6 steps, 30 captures): (126 + 1) x 100 plies. Random games end
    # far sooner (about 350 plies; insufficient material or the fifty-move rule, mostly).
    ("chess", {}, 12_700),
]

TREES: dict[str, Any] = {
    "two-player": {
        "players": 2,
        "name": "ignored",
        "root": [
            [3, 12, {"player": 0, "children": [8, -4], "eval": 2}],
            {"player": 1, "children": [2, 4, 6], "eval": [1, -1]},
            [14, 5, 2],
        ],
    },
    "three-player": {
        "players": 3,
        "root": [
            [[{"utility": [1, 2, 3]}, {"utility": [3, 3, 0]}], {"utility": [6, 0, 0]}],
            {"player": 2, "children": [{"utility": [2, 2, 2]}, [{"utility": [0, 1, 5]}]]},
        ],
    },
    "general-sum": {
        "players": 3,
        "root": [[{"utility": [1, 0, 0]}, {"utility": [5, 5, 5]}], {"utility": [0, -2, 9]}],
    },
}

GENERIC_CAP = 10_000


def _all_cases() -> Iterator[Any]:
    covered = {name for name, _, _ in CASES}
    for name, params, plies in CASES:
        label = ",".join(f"{k}={v}" for k, v in params.items())
        yield pytest.param((name, params, plies), id=f"{name}[{label}]")
    # Games registered later (entry points, games not listed above): their defaults.
    for name in games.names():
        if name not in covered:
            yield pytest.param((name, {}, None), id=f"{name}[defaults]")


@pytest.fixture(scope="module")
def tree_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("trees")
    for stem, data in TREES.items():
        (folder / f"{stem}.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def _make(name: str, params: dict[str, Any], tree_dir: Path) -> Game[Any, Any]:
    target = _BUILTIN.get(name)
    if target is not None and importlib.util.find_spec(target.partition(":")[0]) is None:
        pytest.skip(f"game {name!r}: module {target} is not in this checkout yet")
    if name == "tree":
        params = {"tree": str(tree_dir / f"{params['tree']}.json")}
    try:
        return games.get(name, **params)
    except GameError as exc:
        if params:
            raise
        pytest.skip(f"{name} cannot be made with default parameters: {exc}")


@pytest.fixture(params=list(_all_cases()))
def case(request: pytest.FixtureRequest, tree_dir: Path) -> tuple[Game[Any, Any], int | None]:
    """A case's game, made once a module and shared by its tests, so the states they walk (the
    same seeded games, :func:`_played`) are read from the game's own cache as when each test
    played them itself: a new game object (an equal one) rebuilt each from its root (chess:
    up to 100 pushes a state)."""
    name, params, plies = request.param
    key = (name, json.dumps(params, sort_keys=True))
    game = _GAMES.get(key)
    if game is None:
        game = _GAMES[key] = _make(name, params, tree_dir)
    return game, plies


_GAMES: dict[tuple[str, str], Game[Any, Any]] = {}


def _cap(plies: int | None) -> int:
    return GENERIC_CAP if plies is None else plies


def _playout_states(game: Game[Any, Any], seed: int, cap: int) -> list[Any]:
    """States of one uniformly random game, the terminal one last; fails past ``cap`` plies."""
    rng = random.Random(seed)
    state = game.initial_state()
    seen = [state]
    while not game.is_terminal(state):
        assert len(seen) <= cap, f"{game!r}: random playout longer than {cap} plies"
        state = game.apply(state, rng.choice(list(game.legal_moves(state))))
        seen.append(state)
    return seen


# each random game played once a process: (game, seed, cap) -> its states. The tests of a case
# walk the same seeded games (seeds 0 to 24 among them); played again by each test, they were
# most of this file's CPU (chess: 65 playouts where 25 differ), set-up and not the subject (each
# test still asks the game itself what it checks of every state). States are immutable values
# (test_apply_never_mutates_and_states_compare_by_value checks it) and the game's parameters
# make its key, so a state met again is the state played.
_PLAYED: dict[tuple[Game[Any, Any], int, int], list[Any]] = {}


def _played(game: Game[Any, Any], seed: int, cap: int) -> list[Any]:
    """:func:`_playout_states`, played once a process."""
    key = (game, seed, cap)
    states = _PLAYED.get(key)
    if states is None:
        states = _PLAYED[key] = _playout_states(game, seed, cap)
    return states


def _playouts(game: Game[Any, Any], plies: int | None, count: int = 12) -> Iterator[Any]:
    for seed in range(count):
        yield from _played(game, seed, _cap(plies))


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def test_metadata_is_consistent(case: tuple[Game[Any, Any], int | None]) -> None:
    game, _ = case
    n, b = game.num_players, game.bounds
    assert isinstance(n, int) and n >= 1
    assert isinstance(game.kind, GameKind)
    assert b.min_each <= b.max_each
    assert n * b.min_each <= b.max_sum + 1e-9 <= n * b.max_each + 2e-9
    if game.kind is GameKind.ZERO_SUM:
        assert n == 2 and b.max_sum == 0 and b.min_each == -b.max_each
    assert game.default_depth is None or game.default_depth >= 1
    assert isinstance(game.name, str) and game.name in games.names()


def test_params_make_an_equal_game(case: tuple[Game[Any, Any], int | None]) -> None:
    game, _ = case
    again = games.get(game.name, **game.params)
    as_text = games.get(game.name, **{k: str(v) for k, v in game.params.items()})
    assert again == game and as_text == game
    assert hash(again) == hash(game)
    assert again.initial_state() == game.initial_state()


def test_unknown_parameter_is_a_game_error(case: tuple[Game[Any, Any], int | None]) -> None:
    game, _ = case
    with pytest.raises(GameError, match="unknown parameter"):
        games.get(game.name, **game.params, no_such_parameter="1")


def test_badly_typed_parameters_are_game_errors(case: tuple[Game[Any, Any], int | None]) -> None:
    game, _ = case
    typed = [
        p.name
        for p in games.registry.parameters(game.name).values()
        if str(p.annotation).split(" ")[0] in ("int", "float", "bool")
    ]
    for key in typed:
        with pytest.raises(GameError, match=key):
            games.get(game.name, **{**game.params, key: "not-a-value"})


def test_garbage_text_is_a_game_error(case: tuple[Game[Any, Any], int | None]) -> None:
    game, _ = case
    for bad in ("@@ not a position @@", "x:y:z?", "-1,-1@q"):
        with pytest.raises(GameError):
            game.parse_position(bad)
        with pytest.raises(GameError):
            game.parse_move(bad)


def test_terminal_iff_no_legal_moves(case: tuple[Game[Any, Any], int | None]) -> None:
    game, plies = case
    for state in _playouts(game, plies):
        moves = list(game.legal_moves(state))
        assert game.is_terminal(state) == (not moves), game.format_position(state)
        assert len(set(moves)) == len(moves), "legal moves repeat"
        assert 0 <= game.current_player(state) < game.num_players


def test_utilities_within_bounds_and_sum_as_declared(
    case: tuple[Game[Any, Any], int | None],
) -> None:
    game, plies = case
    b = game.bounds
    ends = 0
    for state in _playouts(game, plies, count=25):
        if not game.is_terminal(state):
            continue
        ends += 1
        u = game.utility(state)
        assert isinstance(u, tuple) and len(u) == game.num_players
        assert all(b.min_each - 1e-9 <= v <= b.max_each + 1e-9 for v in u), u
        total = sum(u)
        if game.kind is GameKind.ZERO_SUM:
            assert _close(total, 0.0), u
        elif game.kind is GameKind.CONSTANT_SUM:
            assert _close(total, b.max_sum), (u, b.max_sum)
        else:
            assert total <= b.max_sum + 1e-9
    assert ends == 25


def test_evaluate_is_a_vector_on_the_utility_scale(
    case: tuple[Game[Any, Any], int | None],
) -> None:
    game, plies = case
    b = game.bounds
    for state in _playouts(game, plies, count=6):
        e = game.evaluate(state)
        assert isinstance(e, tuple) and len(e) == game.num_players
        assert all(isinstance(v, int | float) for v in e)
        assert all(b.min_each - 1e-9 <= v <= b.max_each + 1e-9 for v in e), e
        if game.is_terminal(state):
            assert e == game.utility(state)
        if game.kind is GameKind.ZERO_SUM:
            assert _close(e[0], -e[1])


def test_apply_never_mutates_and_states_compare_by_value(
    case: tuple[Game[Any, Any], int | None],
) -> None:
    game, plies = case
    for state in _playouts(game, plies, count=4):
        before = copy.deepcopy(state)
        text = game.format_position(state)
        children = []
        for move in list(game.legal_moves(state))[:12]:
            child = game.apply(state, move)
            assert child == game.apply(state, move)
            assert hash(child) == hash(game.apply(state, move))
            children.append(child)
        assert state == before and hash(state) == hash(before)
        assert game.format_position(state) == text
        assert len(set(children)) == len(children), "different moves gave equal states"
        assert hash(game.state_key(state)) == hash(game.state_key(before))


def test_position_and_move_text_round_trip(case: tuple[Game[Any, Any], int | None]) -> None:
    game, plies = case
    for state in _playouts(game, plies, count=8):
        text = game.format_position(state)
        back = game.parse_position(text)
        assert back == state and hash(back) == hash(state), text
        assert game.format_position(back) == text
        assert game.current_player(back) == game.current_player(state)
        for move in game.legal_moves(state):
            move_text = game.format_move(move)
            assert game.parse_move(move_text) == move
            assert game.move_from_text(state, move_text) == move
        assert game.render(state).strip()


def test_random_playouts_end_within_the_bound(case: tuple[Game[Any, Any], int | None]) -> None:
    game, plies = case
    cap = _cap(plies)
    for seed in range(40):
        end = game.random_playout(game.initial_state(), random.Random(seed))
        assert game.is_terminal(end)
    lengths = [len(_played(game, seed, cap)) - 1 for seed in range(10)]
    assert max(lengths) <= cap


# Move sequences (as text) that reach the same position by different orders.
TRANSPOSITIONS: list[tuple[str, dict[str, Any], list[str], list[str]]] = [
    ("tictactoe", {}, ["1", "5", "9", "3"], ["9", "3", "1", "5"]),
    ("coins", {"coins": 7}, ["1", "2", "1"], ["2", "1", "1"]),
    ("coins", {"coins": 7, "players": 3}, ["1", "2", "2"], ["2", "1", "2"]),
    ("nim", {}, ["1:1", "2:1", "3:1"], ["3:1", "2:1", "1:1"]),
    ("nim", {"players": 2}, ["1:3", "2:2"], ["2:2", "1:3"]),
    ("connect4", {}, ["1", "2", "3"], ["3", "2", "1"]),
    ("connect4", {}, ["4", "4", "5", "3"], ["5", "3", "4", "4"]),
    # Chess: move orders differ until a pawn move; no earlier position can recur after it.
    (
        "chess",
        {},
        ["g1f3", "g8f6", "b1c3", "b8c6", "e2e4"],
        ["b1c3", "b8c6", "g1f3", "g8f6", "e2e4"],
    ),
]


def _play(game: Game[Any, Any], moves: list[str]) -> Any:
    state = game.initial_state()
    for text in moves:
        state = game.apply(state, game.move_from_text(state, text))
    return state


@pytest.mark.parametrize(
    ("name", "params", "first", "second"),
    TRANSPOSITIONS,
    ids=[f"{t[0]}-{'.'.join(t[2])}" for t in TRANSPOSITIONS],
)
def test_transpositions_compare_equal(
    name: str, params: dict[str, Any], first: list[str], second: list[str], tree_dir: Path
) -> None:
    game = _make(name, params, tree_dir)
    a, b = _play(game, first), _play(game, second)
    assert a == b and hash(a) == hash(b)
    assert game.format_position(a) == game.format_position(b)
    assert hash(game.state_key(a)) == hash(game.state_key(b))


def test_every_built_in_game_has_explicit_cases() -> None:
    assert set(_BUILTIN) <= {name for name, _, _ in CASES}
