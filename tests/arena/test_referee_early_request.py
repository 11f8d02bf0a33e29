"""The referee's early request (issue 32): a seat whose request needs no facts of the position
(a chess engine's: the moves so far and the clocks) is sent it before the referee works out the
legal moves and the position's text, which it does while the bot thinks; the judgement is the
one every seat gets (an illegal move ends the game before the opponent is asked anything, a
late answer loses on time)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot_arena import games
from bot_arena.arena.match.adjudication import Adjudication
from bot_arena.arena.match.botref import COMMAND, BotRef, sha256_text
from bot_arena.arena.match.record import MatchRecord, Termination
from bot_arena.arena.match.referee import play_game
from bot_arena.arena.match.seat import MoveWait, ProcessSeat, Reply
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.transport.protocol import MoveRequest


def named(name: str) -> BotRef:
    return BotRef(f"cmd:{name}", COMMAND, name, None, sha256_text(name))


class Early(ProcessSeat):
    """A seat that takes its request without the position's facts, answering from a script of
    (move text, elapsed seconds); it logs what each request held when it was sent and when its
    answer was read (no process behind it)."""

    request_without_facts = True

    def __init__(self, name: str, script: list[tuple[str, float]]) -> None:
        self.ref = named(name)
        self.games = 1
        self.script = iter(script)
        self.log: list[tuple[str, int, list[str]]] = []
        self.killed = False

    def post(self, request: MoveRequest, hard_limit: float | None) -> MoveWait | Reply:
        self.log.append(("post", len(request.moves), list(request.legal)))
        return MoveWait(hard_limit)

    def collect(self, wait: MoveWait, request: MoveRequest) -> Reply:
        self.log.append(("collect", len(request.moves), list(request.legal)))
        move, elapsed = next(self.script)
        return Reply(elapsed, move)

    def kill(self) -> None:
        self.killed = True


class Asked:
    """The same script through ``ask`` with the whole request, as a Python bot's seat gets it."""

    def __init__(self, name: str, script: list[tuple[str, float]]) -> None:
        self.ref = named(name)
        self.games = 1
        self.script = iter(script)
        self.killed = False

    def ask(self, game: Any, state: Any, request: MoveRequest, hard_limit: Any) -> Reply:
        assert json.loads(request.line)["legal"] == list(request.legal)
        move, elapsed = next(self.script)
        return Reply(elapsed, move)

    def kill(self) -> None:
        self.killed = True


def run(seats: list[Any], tc: TimeControl) -> MatchRecord:
    game = games.get("coins", coins=7, max_take=3)
    refs = [s.ref for s in seats]
    start = game.initial_state()
    return play_game(game, refs, seats, [tc, tc], start, seed=1, faults=[None, None])


def same(a: MatchRecord, b: MatchRecord) -> None:
    """Equal records but for the times they were played."""
    left, right = a.to_dict(), b.to_dict()
    for record in (left, right):
        del record["started"], record["finished"], record["duration_s"]
    assert left == right


def test_the_request_is_sent_before_the_facts_and_judged_against_them() -> None:
    script_a = [("2", 0.01), ("1", 0.01), ("1", 0.01)]
    script_b = [("1", 0.01), ("2", 0.01)]
    a, b = Early("a", script_a), Early("b", script_b)
    tc = TimeControl(move_time=1.0, margin=0.05)
    record = run([a, b], tc)
    assert [m.move for m in record.moves] == ["2", "1", "1", "2", "1"]
    assert record.termination is Termination.NORMAL
    # sent with no legal moves yet; read once the referee had them (7 coins, take 1 to 3)
    assert a.log[:2] == [("post", 0, []), ("collect", 0, ["1", "2", "3"])]
    assert b.log[:2] == [("post", 1, []), ("collect", 1, ["1", "2", "3"])]
    assert all(not legal for kind, _, legal in a.log + b.log if kind == "post")
    same(record, run([Asked("a", script_a), Asked("b", script_b)], tc))


def test_an_illegal_move_ends_the_game_before_the_opponent_is_asked() -> None:
    # 7 coins: a takes 3, b takes 3, and a's 3 of the 1 left is no legal move
    script_a, script_b = [("3", 0.01), ("3", 0.01)], [("3", 0.01), ("1", 0.01)]
    a, b = Early("a", script_a), Early("b", script_b)
    tc = TimeControl(move_time=1.0, margin=0.05)
    record = run([a, b], tc)
    assert record.termination is Termination.ILLEGAL_MOVE
    assert record.seats[0].fault is not None and record.seats[0].rank == 2
    assert [m.move for m in record.moves] == ["3", "3"]
    assert [kind for kind, _, _ in b.log] == ["post", "collect"]  # never asked again
    same(record, run([Asked("a", script_a), Asked("b", script_b)], tc))


@pytest.mark.parametrize("elapsed", [0.26, 0.5])
def test_a_late_answer_loses_on_time_as_any_seat_s(elapsed: float) -> None:
    a, b = Early("a", [("1", 0.01), ("1", elapsed)]), Early("b", [("1", 0.01)])
    tc = TimeControl(move_time=0.2, margin=0.05)
    record = run([a, b], tc)
    assert record.termination is Termination.TIMEOUT and a.killed and not b.killed
    fault = record.seats[0].fault
    assert fault is not None and fault.detail["answered"] is True
    assert [m.move for m in record.moves] == ["1", "1"]
    asked = [Asked("a", [("1", 0.01), ("1", elapsed)]), Asked("b", [("1", 0.01)])]
    same(record, run(asked, tc))


class Unread(Early):
    """An Early seat whose answers leave their search info unread (as a UCI engine's do), each
    read logged in ``events`` with the posts of every seat."""

    def __init__(self, name: str, script: list[tuple[str, float]], events: list[str]) -> None:
        super().__init__(name, script)
        self.events = events

    def post(self, request: MoveRequest, hard_limit: float | None) -> MoveWait | Reply:
        self.events.append(f"post {len(request.moves)}")
        return super().post(request, hard_limit)

    def collect(self, wait: MoveWait, request: MoveRequest) -> Reply:
        reply = super().collect(wait, request)
        ply = len(request.moves)

        def read() -> dict[str, Any]:
            self.events.append(f"read {ply}")
            return {"score": {"cp": -50 * ply}, "depth": ply}

        reply.unread = read
        return reply


def unread_pair(events: list[str]) -> list[Any]:
    a = Unread("a", [("1", 0.01)] * 4, events)
    b = Unread("b", [("1", 0.01)] * 3, events)
    return [a, b]


def test_a_move_s_info_is_read_once_the_next_request_is_sent() -> None:
    events: list[str] = []
    record = run(unread_pair(events), TimeControl(move_time=1.0, margin=0.05))
    assert [m.info for m in record.moves] == [
        {"score": {"cp": -50 * ply}, "depth": ply} for ply in range(7)
    ]
    # each move's info read after the next request went out; the last one's at the end
    later = [x for ply in range(1, 7) for x in (f"post {ply}", f"read {ply - 1}")]
    assert events == ["post 0", *later, "read 6"]


def test_a_move_s_info_is_read_before_the_next_request_when_something_reads_it() -> None:
    tc = TimeControl(move_time=1.0, margin=0.05)
    order = [x for ply in range(7) for x in (f"post {ply}", f"read {ply}")]
    events: list[str] = []
    seen: list[Any] = []
    game = games.get("coins", coins=7, max_take=3)
    seats = unread_pair(events)
    refs = [s.ref for s in seats]
    start = game.initial_state()
    record = play_game(
        game, refs, seats, [tc, tc], start, seed=1, faults=[None, None], on_move=seen.append
    )
    assert events == order and all(m.info is not None for m in seen)
    # a rule that reads scores (resign after 2 own moves at -100 or worse: a's at plies 2, 4)
    events.clear()
    resign = Adjudication.parse(None, "movecount=2,score=100", None)
    record = play_game(
        game, refs, unread_pair(events), [tc, tc], start, seed=1, faults=[None, None],
        adjudication=resign,
    )  # fmt: skip
    assert record.termination is Termination.ADJUDICATED
    assert events == order[: 2 * 5]
