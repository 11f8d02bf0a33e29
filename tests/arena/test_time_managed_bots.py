"""The time-managed built-in bots (``iterative``, ``mcts``) never lose on time in real matches.

Both are left at their own ``time`` option (1 s), far above every limit here, so what stops their
search is the arena's budget: a bot that ignored it would overrun by a wide margin on its first
move. They play each other in worker processes, so every move of both seats is checked, in both
seat orders, under a short fixed move time (``BotPool``: both orders in each game, the second
game in the processes of the first, as a series plays) and under a short Fischer clock (the
``arena play --clock`` command line: one game a case, each case in the other seat order, so each
bot plays each seat on the clock once), in games long enough for the clock to matter. Each bot
thinks for nearly its whole budget, so a game costs its clocks' time in CPU: the two clock
games the cases once also played in the other seat order (2.4 to 3.3 s of CPU and 6 s of the
file's wall at load 10) showed nothing that the fixed move time's both orders and the other
clock case do not.

Why this holds on a loaded machine, with the default margin (0.05 s): both bots think for
``search_common.think_time``, at most 80% of the deadline the worker computed when the request
arrived (a 10 ms reserve at 0.05 s per move: the reserve scales with the move time) and, on a
clock, at most ``remaining / 30 + 0.8 * increment`` (under 0.09 s at 2+0.02, and never half of
what is left). ``mcts`` reads the clock before every iteration (a random playout: about a
millisecond on an 8x8 Rolit board) with the cyclic collector off; ``iterative`` every 256 nodes
(under a millisecond in Connect Four, about 3 ms on an 8x8 Rolit board) and starts no new depth
after half of its time. So the answer is ready well inside the margin on top of the move time,
even when the bot's core is shared with another busy process; only one bot thinks at a time.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from bot_arena import games
from bot_arena.arena.cli.app import app
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import BotPool
from bot_arena.arena.match.timecontrol import DEFAULT_MARGIN, TimeControl

# each test plays tournaments or whole games through separate processes: seconds a test
pytestmark = pytest.mark.slow

TIME_MANAGED = ("iterative", "mcts")
# (seed, bots in seat order): both bots play both seats
SERIES = [(1, ["iterative", "mcts"]), (2, ["mcts", "iterative"])]
# why iterative may stop deepening ("max_depth" cannot happen: no max_depth is given)
STOP_REASONS = {"time", "proven", "proven win"}


def slowest(record: dict[str, Any]) -> str:
    """The slowest move of each seat, for a failure message."""
    worst: dict[int, dict[str, Any]] = {}
    for ply, move in enumerate(record["moves"]):
        if move["seat"] not in worst or move["time_ms"] > worst[move["seat"]]["time_ms"]:
            worst[move["seat"]] = {"ply": ply, **move}
    return "; ".join(
        f"seat {seat} ({record['seats'][seat]['bot']}): {m['time_ms']:.1f} ms at ply {m['ply']},"
        f" info {m['info']}"
        for seat, m in sorted(worst.items())
    )


def check_in_time_and_searched(record: dict[str, Any], plies: int, tc: dict[str, Any]) -> None:
    """The match ended on the board (no loss on time, no fault of any kind), lasted at least
    ``plies`` plies under the time control ``tc`` (the default margin), and every move of both
    bots came from a real search that the budget, not the bot's own option, stopped."""
    faults = [s["fault"] for s in record["seats"]]
    assert record["termination"] != "timeout", f"{faults}\nslowest moves: {slowest(record)}"
    assert record["termination"] == "normal", faults
    assert faults == [None, None]
    assert record["time_control"]["seats"] == [tc, tc]
    assert len(record["moves"]) >= plies, record["moves"]
    game = games.get(record["game"], **record["params"])
    state = game.parse_position(record["start_position"])
    for move in record["moves"]:
        state = game.apply(state, game.move_from_text(state, move["move"]))
    assert game.is_terminal(state)
    names = [s["bot"] for s in record["seats"]]
    assert sorted(names) == sorted(TIME_MANAGED)
    stopped_on_time = False
    for ply, move in enumerate(record["moves"]):
        info, bot = move["info"], names[move["seat"]]
        where = f"ply {ply} ({bot}): {info}"
        assert info is not None, where
        assert info["depth"] >= 1 and info["nodes"] > 0 and info["time_s"] > 0, where
        if bot == "iterative":
            assert info["stopped"] in STOP_REASONS, where
            stopped_on_time = stopped_on_time or info["stopped"] == "time"
        else:
            assert info["iterations"] >= 1, where
    assert stopped_on_time, "iterative never ran into its time limit: the limit was not tested"


GAMES = {  # name, params, fewest plies of a finished game
    "connect4": ("connect4", {}, 7),
    "rolit6": ("rolit", {"players": 2, "size": 6}, 32),  # Rolit ends with the board full
    "rolit8": ("rolit", {"players": 2, "size": 8}, 60),
}


@pytest.mark.parametrize("case", ["connect4", "rolit6"])
def test_a_short_fixed_move_time_is_never_overrun(case: str) -> None:
    name, params, plies = GAMES[case]
    game = games.get(name, **params)
    tc = TimeControl(move_time=0.05)
    assert tc.margin == DEFAULT_MARGIN
    with BotPool() as pool:  # one pool: the second game reuses the processes, as a series does
        for seed, bots in SERIES:
            record = pool.play(game, [resolve(b) for b in bots], time_control=tc, seed=seed)
            check_in_time_and_searched(record.to_dict(), plies, tc.to_dict())


# each clock case in one seat order, the two cases in both
CLOCK_CASES = [("connect4", SERIES[0]), ("rolit8", SERIES[1])]


@pytest.mark.parametrize(("case", "series"), CLOCK_CASES, ids=[c for c, _ in CLOCK_CASES])
def test_a_short_game_clock_is_never_overrun(case: str, series: tuple[int, list[str]]) -> None:
    """2 s for the whole game plus 0.02 s a move: 21 (Connect Four) or 30 (8x8 Rolit) moves a
    seat, so a bot that spent its clock evenly over ten moves would lose on time."""
    name, params, plies = GAMES[case]
    tc = {"move_time": None, "base": 2.0, "increment": 0.02, "margin": DEFAULT_MARGIN}
    seed, bots = series
    args = ["play", name, "--clock", "2+0.02", "--seed", str(seed), "--json", "--no-save"]
    for key, value in params.items():
        args += ["--param", f"{key}={value}"]
    for bot in bots:
        args += ["--bot", bot]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    check_in_time_and_searched(json.loads(result.stdout), plies, tc)
