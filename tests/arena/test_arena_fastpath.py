"""The per-move fast path says exactly what the general code says: requests built from cached
parts are the bytes ``encode(move_request(...))`` gives, answers written by hand are what
``encode`` writes, the one-call JSON reader agrees with ``json.loads``, cached position facts
equal fresh ones, and a worker that keeps its position between requests sees the position the
request names (also when the moves do not continue the last request's)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from typing import Any

import pytest
from arena_helpers import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena import games
from bot_arena.arena.match.states import StateTable, facts_of
from bot_arena.arena.match.timecontrol import Clock, TimeControl
from bot_arena.arena.transport import protocol

texts = st.text(max_size=12)  # any unicode: escapes and non-ASCII must match too
numbers = st.none() | st.floats(0.001, 1e6) | st.integers(1, 10**6)


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 10**9),
    texts,
    st.lists(texts, max_size=8),
    st.lists(texts, min_size=1, max_size=8),
    st.fixed_dictionaries(
        {"move_time": numbers, "remaining": numbers, "increment": numbers, "deadline": numbers}
    ),
)
def test_request_writer_writes_the_encoded_request(
    request_id: int, position: str, moves: list[str], legal: list[str], clock: dict[str, Any]
) -> None:
    writer = protocol.RequestWriter()
    for text in moves:
        writer.played(text)
    line = writer.line(
        request_id,
        protocol.json_str(position),
        ",".join(map(protocol.json_str, legal)),
        protocol.encode_json(clock),
    )
    expected = protocol.move_request(
        request_id=request_id, position=position, moves=moves, legal=legal, clock=clock
    )
    assert line == protocol.encode(expected)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(-5, 10**12) | st.none() | st.text(max_size=4) | st.booleans(),
    texts,
    st.none()
    | st.dictionaries(
        texts, st.integers() | texts | st.floats(allow_nan=False, allow_infinity=False)
    ),
)
def test_move_answer_is_the_encoded_answer(request_id: Any, move: str, info: Any) -> None:
    message: dict[str, Any] = {"type": "move", "id": request_id, "move": move}
    if info is not None:
        message["info"] = info
    line = protocol.move_answer(request_id, move, info)
    assert line == protocol.encode(message)
    if type(request_id) is int:
        assert protocol.decode_answer(line.rstrip(b"\n"), request_id) == protocol.MoveAnswer(
            move, info
        )


@settings(max_examples=150, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | texts,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
        max_leaves=8,
    ).map(json.dumps),
    st.sampled_from(["", " ", "\n", "\r\n", " x", "\x0b", "}", "\t "]),
    st.sampled_from(["", " ", "\n"]),
)
def test_loads_agrees_with_json_loads(text: str, after: str, before: str) -> None:
    """On JSON (finite numbers: NaN and the infinities are refused, see
    test_nonfinite_numbers.py)."""
    line = before + text + after
    try:
        expected = json.loads(line)
    except ValueError:
        with pytest.raises(ValueError):
            protocol.loads(line)
        return
    assert protocol.loads(line) == expected


def test_deeply_nested_answer_is_bad_output_not_an_arena_error() -> None:
    with pytest.raises(protocol.ProtocolError):
        protocol.decode_answer(b"[" * 200_000, 1)


@pytest.mark.parametrize(
    ("name", "params"), [("tictactoe", {}), ("connect4", {}), ("coins", {"players": 3})]
)
def test_state_table_facts_equal_fresh_ones_and_stay_bounded(
    name: str, params: dict[str, Any]
) -> None:
    game = games.get(name, **params)
    table = StateTable(limit=16)
    rng = random.Random(5)
    for _ in range(30):
        state = game.initial_state()
        while not game.is_terminal(state):
            facts = table.facts(game, state)
            fresh = facts_of(game, state)
            assert (facts.seat, facts.legal, facts.moves) == (fresh.seat, fresh.legal, fresh.moves)
            assert facts.position(game) == fresh.position(game)
            assert facts.legal_json() == fresh.legal_json()
            assert facts.seat == game.current_player(state)
            assert list(facts.legal.values()) == list(game.legal_moves(state))
            assert json.loads(f"[{facts.legal_json()}]") == list(facts.legal)
            assert json.loads(facts.position_json(game)) == game.format_position(state)
            assert len(table.known) <= 16
            state = game.apply(state, rng.choice(game.legal_moves(state)))


def test_clock_json_follows_the_clock() -> None:
    for tc in (TimeControl(move_time=0.5), TimeControl(base=2.0, increment=0.25, margin=0.0)):
        clock = Clock(tc)
        for elapsed in (0.1, 0.3, 0.0, 0.7):
            assert json.loads(clock.request_json()) == clock.request()
            assert clock.request_json() == protocol.encode_json(clock.request())
            clock.spend(elapsed)


def test_worker_keeps_the_position_and_follows_any_request() -> None:
    """Moves that continue the last request are applied to the kept position; a list that
    does not continue it, or a new game, makes the worker take the request's position."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot_arena.arena.worker", "--file", str(FIXTURES / "state_echo.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def say(message: dict[str, Any]) -> dict[str, Any]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(protocol.encode(message))
        proc.stdin.flush()
        answer: dict[str, Any] = json.loads(proc.stdout.readline())
        return answer

    def hello(kind: str, position: str) -> None:
        params = {"game": "tictactoe", "params": {}, "seat": 0, "players": 2, "seed": 1}
        message = protocol.hello(**params, position=position, first=kind == "hello")
        assert say(message)["type"] == "ready"

    def seen(request_id: int, position: str, moves: list[str]) -> str:
        answer = say(
            protocol.move_request(
                request_id=request_id,
                position=position,
                moves=moves,
                legal=["1"],
                clock={"move_time": 1.0, "remaining": None, "increment": 0.0, "deadline": 1.0},
            )
        )
        assert answer["id"] == request_id
        return str(answer["info"]["position"])

    try:
        hello("hello", ".........")
        assert seen(1, ".........", []) == "........."
        assert seen(2, "x...o....", ["1", "5"]) == "x...o...."  # two moves applied
        assert seen(3, ".x...o...", ["2", "6"]) == ".x...o..."  # another history: parsed
        assert seen(4, ".xx..oo..", ["2", "6", "3", "7"]) == ".xx..oo.."  # continues that one
        assert seen(5, ".xx..oo..", ["2", "6", "3", "7"]) == ".xx..oo.."  # nothing new
        hello("new_game", "x........")  # a start position of its own
        assert seen(1, "x...o...x", ["5", "9"]) == "x...o...x"
        hello("new_game", "x........")
        assert seen(1, "x..o.....", ["4"]) == "x..o....."  # the old game's moves are gone
        proc.stdin.write(protocol.encode(protocol.QUIT))
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()


def test_state_table_copes_with_an_unhashable_state() -> None:
    class ListGame:  # only what facts_of asks of a game; its states are lists
        def legal_moves(self, state: list[int]) -> list[int]:
            return [c for c in range(3) if c not in state]

        def format_move(self, move: int) -> str:
            return str(move)

        def format_position(self, state: list[int]) -> str:
            return ",".join(map(str, state))

        def current_player(self, state: list[int]) -> int:
            return len(state) % 2

    game: Any = ListGame()
    facts = StateTable().facts(game, [1])
    assert (facts.seat, list(facts.legal), facts.position(game)) == (1, ["0", "2"], "1")
