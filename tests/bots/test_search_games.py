"""Exact searches on real games: tic-tac-toe, the coin game, Connect Four at fixed depth."""

from __future__ import annotations

import random
from typing import Any

import pytest
from search_helpers import decide

from bot_arena import games
from bot_arena.bots.alphabeta import alphabeta
from bot_arena.bots.base import BotError, TimeBudget
from bot_arena.bots.iterative import DeepeningSearch, IterativeBot
from bot_arena.bots.minimax import minimax
from bot_arena.bots.registry import make
from bot_arena.bots.search_common import UNLIMITED
from bot_arena.bots.tt import TranspositionTable
from bot_arena.games.base import Game, GameKind


def random_positions(game: Game[Any, Any], count: int, plies: range, seed: int) -> list[Any]:
    """Non-terminal positions after a random number of random moves."""
    rng = random.Random(seed)
    out: list[Any] = []
    while len(out) < count:
        state = game.initial_state()
        for _ in range(rng.choice(plies)):
            if game.is_terminal(state):
                break
            state = game.apply(state, rng.choice(game.legal_moves(state)))
        if not game.is_terminal(state):
            out.append(state)
    return out


def test_full_tictactoe_minimax_visits_the_whole_game_tree() -> None:
    game = games.get("tictactoe")
    result = minimax(game, game.initial_state(), UNLIMITED)
    assert result.nodes == 549_946
    assert result.leaves == 255_168
    assert result.value == 0


@pytest.mark.parametrize(
    "spec", ["minimax", "alphabeta", "alphabeta:order=true", "iterative:time=0", "paranoid", "maxn"]
)
def test_tictactoe_is_a_draw_for_every_exact_bot(spec: str) -> None:
    game = games.get("tictactoe")
    info = decide(spec, game, game.initial_state()).info
    assert info is not None and info.values is not None
    assert tuple(info.values) == (0.0, 0.0)
    assert len(info.pv) == 9  # with best play the board fills up


@pytest.mark.parametrize("spec", ["minimax", "alphabeta", "iterative:time=0", "paranoid", "maxn"])
def test_four_coins_is_a_first_player_win_by_taking_one(spec: str) -> None:
    game = games.get("coins", coins=4)
    decision = decide(spec, game, game.initial_state())
    assert decision.move == 1
    assert decision.info is not None and decision.info.values == (1.0, -1.0)


def test_alphabeta_equals_minimax_on_random_tictactoe_positions() -> None:
    game = games.get("tictactoe")
    for i, state in enumerate(random_positions(game, 120, range(0, 7), seed=3)):
        depth = 1 + i % 4
        mm = minimax(game, state, depth)
        ab = alphabeta(game, state, depth)
        assert (ab.value, ab.pv[0]) == (mm.value, mm.pv[0])
        assert ab.leaves <= mm.leaves
        assert alphabeta(game, state, depth, order=True).value == mm.value


def test_alphabeta_equals_minimax_on_random_connect4_positions() -> None:
    game = games.get("connect4")
    for i, state in enumerate(random_positions(game, 40, range(0, 30), seed=4)):
        depth = 1 + i % 4
        mm = minimax(game, state, depth)
        ab = alphabeta(game, state, depth)
        assert (ab.value, ab.pv[0]) == (mm.value, mm.pv[0])
        assert ab.nodes <= mm.nodes
        assert alphabeta(game, state, depth, order=True).value == mm.value


def _minimax_value_of(game: Game[Any, Any], state: Any, move: Any, depth: int) -> float:
    child = game.apply(state, move)
    if depth == 1 or game.is_terminal(child):
        return game.evaluate(child)[0]
    return minimax(game, child, depth - 1).value


@pytest.mark.parametrize(
    ("name", "count", "plies"), [("tictactoe", 60, range(0, 6)), ("connect4", 25, range(0, 25))]
)
def test_iterative_with_tt_equals_minimax_at_fixed_depth(
    name: str, count: int, plies: range
) -> None:
    game = games.get(name)
    for i, state in enumerate(random_positions(game, count, plies, seed=5)):
        depth = 1 + i % 5
        mm = minimax(game, state, depth)
        me = game.current_player(state)
        for size in (1 << 16, 7):  # a roomy table and a tiny one full of collisions
            table = TranspositionTable(size)
            result = DeepeningSearch(game, table, me).run(state, depth)
            last = result.last
            mine = mm.value if me == 0 else -mm.value
            if result.stopped_because in ("proven", "proven win"):
                assert last.depth <= depth  # deeper searches cannot change the value
            else:
                assert (last.depth, result.stopped_because) == (depth, "max_depth")
            assert last.value == mine
            # the move is an optimal one at this depth (ties may be broken differently)
            assert _minimax_value_of(game, state, last.move, depth) == mm.value
            assert len(table) <= size


def test_iterative_tt_hits_and_table_reuse_between_moves_stay_exact() -> None:
    game = games.get("connect4")
    bot = IterativeBot(time=0, max_depth=5, tt_size=50_000)
    bot.new_game(game, 0)
    state = game.initial_state()
    hits = 0
    for state in random_positions(game, 6, range(4, 12), seed=9):
        if game.current_player(state) != 0:
            continue
        decision = bot.choose_move(game, state, TimeBudget.unlimited())
        assert decision.info is not None
        hits += decision.info.tt_hits
        assert decision.info.extra["score"] == minimax(game, state, 5).value
        assert len(bot.table) <= 50_000
    assert hits > 0


def test_iterative_stops_when_the_value_is_proven() -> None:
    game = games.get("tictactoe")
    decision = decide("iterative:time=0", game, game.initial_state())
    assert decision.info is not None
    assert decision.info.extra["stopped"] == "proven"
    assert decision.info.depth <= 10


def test_depth_defaults_come_from_the_game() -> None:
    game = games.get("connect4")
    info = decide("alphabeta", game, game.initial_state()).info
    assert info is not None and info.depth == game.default_depth == 6


@pytest.mark.parametrize(
    "spec",
    [
        "minimax:depth=0",
        "alphabeta:depth=x",
        "iterative:tt_size=0",
        "maxn:bogus=1",
        "mcts:iterations=0",
    ],
)
def test_bad_bot_options_are_refused(spec: str) -> None:
    with pytest.raises(BotError):
        make(spec)


@pytest.mark.parametrize(
    ("name", "params", "depth"),
    [("connect4", {}, 5), ("tictactoe", {}, 4), ("coins", {"coins": 14, "max_take": 3}, 6)],
)
def test_table_entries_from_another_depth_never_leak_into_values(
    name: str, params: dict[str, Any], depth: int
) -> None:
    """Search later positions first, then earlier ones with the same table: the table then holds
    entries searched deeper than the new search asks for, which must not stand in for its
    fixed-depth values. (The coin game with max_take=3 also reaches one position at different
    plies within a single search.)"""
    game = games.get(name, **params)
    bot = IterativeBot(time=0, max_depth=depth, tt_size=100_000)
    bot.new_game(game, 0)
    rng = random.Random(11)
    line = [game.initial_state()]
    while len(line) < 7 and not game.is_terminal(line[-1]):
        line.append(game.apply(line[-1], rng.choice(game.legal_moves(line[-1]))))
    for state in reversed(line):
        if game.is_terminal(state) or game.current_player(state) != 0:
            continue
        decision = bot.choose_move(game, state, TimeBudget.unlimited())
        assert decision.info is not None
        assert decision.info.extra["score"] == minimax(game, state, depth).value


class ScriptedClock:
    """Reads 0.0 for the first ``calls`` reads, then jumps a million seconds per read."""

    def __init__(self, calls: int) -> None:
        self.reads = 0
        self.calls = calls

    def __call__(self) -> float:
        self.reads += 1
        return max(0, self.reads - self.calls) * 1e6


def test_an_aborted_iteration_is_thrown_away() -> None:
    game = games.get("connect4")
    state = game.initial_state()
    # alphabeta stands in for minimax here (equal values are tested above; minimax would be slow)
    values = {depth: alphabeta(game, state, depth).value for depth in range(1, 10)}
    aborted = 0
    for calls in range(2, 26):  # the clock runs out after 2, 3, ... reads
        clock = ScriptedClock(calls)
        search = DeepeningSearch(game, TranspositionTable(1 << 16), 0, clock=clock)
        result = search.run(state, UNLIMITED, seconds=100.0)
        assert result.stopped_because == "time"
        last = result.last
        assert [it.depth for it in result.iterations] == list(range(1, last.depth + 1))
        # the answer is exactly the last completed depth's, not the interrupted one's
        assert last.value == values[last.depth]
        child = game.apply(state, last.move)
        assert alphabeta(game, child, last.depth - 1).value == last.value
        aborted += result.aborted
    assert aborted > 10  # most runs were cut off inside an iteration


def test_depth_one_always_completes() -> None:
    game = games.get("connect4")
    search = DeepeningSearch(game, TranspositionTable(64), 0, clock=ScriptedClock(0))
    result = search.run(game.initial_state(), UNLIMITED, seconds=1.0)
    assert [it.depth for it in result.iterations] == [1]
    assert result.last.move in game.legal_moves(game.initial_state())


SMALL_SPECS = [
    "minimax:depth=2",
    "alphabeta:depth=3",
    "alphabeta:depth=3,order=true",
    "iterative:max_depth=3,time=0",
    "maxn:depth=2",
    "paranoid:depth=2",
    "mcts:iterations=60,seed=1",
]


@pytest.mark.parametrize("name", [n for n in games.names() if n != "tree"])
@pytest.mark.parametrize("spec", SMALL_SPECS)
def test_every_bot_plays_or_refuses_every_game(name: str, spec: str) -> None:
    game = games.get(name)
    bot = make(spec)
    two_player_only = spec.startswith(("minimax", "alphabeta"))
    if two_player_only and (game.num_players != 2 or game.kind is not GameKind.ZERO_SUM):
        with pytest.raises(BotError, match="two-player zero-sum"):
            bot.new_game(game, 0)
        return
    bot.new_game(game, 0)
    state = random_positions(game, 1, range(0, 4), seed=1)[0]
    decision = bot.choose_move(game, state, TimeBudget.unlimited())
    assert decision.move in game.legal_moves(state)
    info = decision.info
    assert info is not None and info.values is not None and len(info.values) == game.num_players
    assert info.pv[0] == decision.move and info.nodes >= 1 and info.leaves >= 1
