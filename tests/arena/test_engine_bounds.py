"""Engines' output is bounded (issue 26): whatever a ``uci:`` or ``xboard:`` engine says (a
950 KB pv before every move, huge numbers, a flood of lines, megabyte names and options), a
game stores at most the figures of docs/security.md ("How much a game can store"), is still
played and stored, and the arena's time and memory stay bounded. The hostile engines are
written by the tests into tmp_path and run confined (the default sandbox) through the CLI."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from bot_arena import games
from bot_arena.arena.match import faults
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.engine import MAX_START_LINE, EngineSeat
from bot_arena.arena.match.pool import BotPool
from bot_arena.arena.match.record import MatchRecord, Termination
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.match.uci import parse_info
from bot_arena.arena.match.xboard import XboardSeat, parse_thinking
from bot_arena.arena.transport import protocol
from bot_arena.arena.transport.limits import ResourceLimits
from bot_arena.arena.transport.process import ReadStatus
from tests import inprocess, needs
from tests.db.dbtest import BACKENDS, database

# each test runs the arena command (tournaments, several processes): seconds a test
pytestmark = pytest.mark.slow

# docs/security.md, "How much a game can store": the most one engine's info stores (its JSON
# text, as the database writes it) and one move row beside it (the move's text, a chess move)
ENGINE_INFO_MAX = 4_923
MOVE_TEXT_MAX = 5
# a fault as stored (ASCII JSON): its message and at most four texts of evidence, cut to size,
# each character 12 bytes at worst (an astral one: two \\u escapes)
FAULT_MAX = 104 * 1024

BIG = 900_000  # characters of a hostile name, string or option (under the 1 MiB line limit)
PV_950K = " ".join(["e2e4"] * (950_000 // 5))

# A UCI engine that plays a legal move after saying far too much: a 900 KB name and author, 50
# options of 100 KB, then before each ``bestmove`` 200 info lines, a 900 KB ``info string``,
# numbers of 4,000 digits and a 950 KB pv.
HOSTILE_UCI = f"""
import sys
import chess

board = chess.Board()


def say(text):
    sys.stdout.write(text + "\\n")
    sys.stdout.flush()


for raw in sys.stdin:
    words = raw.split()
    if not words:
        continue
    if words[0] == "uci":
        say("id name " + "N" * {BIG})
        say("id author " + "A" * {BIG})
        for i in range(50):
            say(f"option name Opt{{i}}{{'x' * 100_000}} type check default false")
        say("uciok")
    elif words[0] == "isready":
        say("readyok")
    elif words[0] == "position":
        board = chess.Board()
        if "moves" in words:
            for move in words[words.index("moves") + 1:]:
                board.push_uci(move)
    elif words[0] == "go":
        for depth in range(1, 200):
            say(f"info depth {{depth}} score cp {{depth}} nodes {{depth * 100}} pv e2e4 e7e5")
        say("info string " + "S" * {BIG})
        say("info depth " + "9" * 4000 + " score cp " + "9" * 4000)
        say("info depth 30 seldepth 40 score cp 17 nodes 123456 nps 1000 time 12 pv {PV_950K}")
        say("bestmove " + next(iter(board.legal_moves)).uci())
    elif words[0] == "quit":
        break
"""

# The same in xboard: a 1 MB ``feature aaa...`` line (a word with no ``=``), a 900 KB name and
# option, then before each ``move`` 200 thinking lines, one with a 5,000-digit number and one
# with a 950 KB pv.
HOSTILE_XBOARD = f"""
import sys
import chess

board = chess.Board()


def say(text):
    sys.stdout.write(text + "\\n")
    sys.stdout.flush()


for raw in sys.stdin:
    words = raw.split()
    if not words:
        continue
    if words[0] == "protover":
        say("feature " + "a" * 1_000_000)
        say('feature myname="' + "N" * {BIG} + '"')
        say('feature option="' + "O" * {BIG} + ' -check 0"')
        say("feature setboard=1 usermove=1 ping=1 done=1")
    elif words[0] == "new":
        board = chess.Board()
    elif words[0] == "usermove":
        board.push_uci(words[1])
    elif words[0] == "ping":
        say("pong " + words[1])
    elif words[0] == "go":
        for ply in range(1, 200):
            say(f" {{ply}} {{ply}} 1 {{ply * 100}} e2e4 e7e5")
        say(" 1 " + "9" * 5000 + " 1 1 e2e4")
        say(" 30 17 12 123456 {PV_950K}")
        move = next(iter(board.legal_moves))
        board.push(move)
        say("move " + move.uci())
    elif words[0] == "quit":
        break
"""

# Engines that never stop talking: three processes write 64 KB of empty lines at a time, so the
# pipe holds a line whenever the arena asks for one (a read of 64 KB is 65,536 lines: the pipe
# is full again long before they are read). ``before``: before ``uciok``; ``move``: instead of its
# first move; ``after``: after its first ``bestmove``, instead of the second.
FLOOD_UCI = """
import os
import sys

import chess

WHEN = sys.argv[1]
BLOCK = b"\\n" * 65536
board = chess.Board()
goes = 0


def say(text):
    sys.stdout.write(text + "\\n")
    sys.stdout.flush()


def flood():
    for _ in range(2):
        if os.fork() == 0:
            break
    while True:
        os.write(1, BLOCK)


for raw in sys.stdin:
    words = raw.split()
    if not words:
        continue
    if words[0] == "uci":
        if WHEN == "before":
            flood()
        say("uciok")
    elif words[0] == "isready":
        say("readyok")
    elif words[0] == "position":
        board = chess.Board()
        if "moves" in words:
            for move in words[words.index("moves") + 1:]:
                board.push_uci(move)
    elif words[0] == "go":
        goes += 1
        if WHEN == "move":
            flood()
        say("bestmove " + next(iter(board.legal_moves)).uci())
        if WHEN == "after":
            flood()
"""

# An xboard engine that asks for time to start (``done=0``), then talks on.
FLOOD_XBOARD = """
import os

BLOCK = b"\\n" * 65536
for raw in iter(input, ""):
    if raw.startswith("protover"):
        print("feature done=0", flush=True)
        for _ in range(2):
            if os.fork() == 0:
                break
        while True:
            os.write(1, BLOCK)
"""

# A UCI engine whose info line is 2 MB, longer than the transport reads (MAX_LINE).
LONG_UCI = """
import sys

for raw in sys.stdin:
    words = raw.split()
    if words[:1] == ["uci"]:
        print("uciok", flush=True)
    elif words[:1] == ["isready"]:
        print("readyok", flush=True)
    elif words[:1] == ["go"]:
        print("info pv " + "e2e4 " * 400_000, flush=True)
        print("bestmove e2e4", flush=True)
"""


def arena(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` in ``cwd`` (where a record that cannot be stored is written), in this
    process (``tests/inprocess.py``)."""
    return inprocess.run(*args, cwd=cwd)


def engine(kind: str, path: Path, *args: str) -> str:
    """The spec of the engine script ``path``, by absolute paths (the sandbox's working folder
    is not the test's)."""
    return f"{kind}:{sys.executable} {path.resolve()} {' '.join(args)}".rstrip()


def rows(db: Path, query: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(query).fetchall()


def play_cli(tmp_path: Path, kind: str, script: str) -> tuple[Path, int]:
    """A game of the hostile engine ``script`` against itself through ``arena play`` (default
    sandbox, stored in SQLite after a first game of random bots): the database and its growth."""
    db = tmp_path / "arena.db"
    url = f"sqlite:///{db}"
    first = arena(tmp_path, "play", "chess", "--bot", "random", "--bot", "random",
                  "--max-moves", "10", "--db", url)  # fmt: skip
    assert first.returncode == 0, first.stderr
    before = db.stat().st_size
    path = tmp_path / f"hostile_{kind}.py"
    path.write_text(script)
    spec = engine(kind, path)
    played = arena(tmp_path, "play", "chess", "--bot", spec, "--bot", spec, "--move-time", "5",
                   "--max-moves", "15", "--db", url)  # fmt: skip
    assert played.returncode == 0, played.stdout + played.stderr
    assert "Traceback" not in played.stderr
    return db, db.stat().st_size - before


def check_stored(db: Path, growth: int) -> list[dict[str, Any]]:
    """The hostile game is stored whole, no seat at fault, and under the documented bound: each
    move's row (its text and its info) and the file's growth. Its infos, decoded."""
    (match_id, termination, sandbox, reason), *_ = rows(
        db, "SELECT id, termination, sandbox, fault_reason FROM matches ORDER BY id DESC"
    )
    assert termination in ("normal", "adjudicated") and reason is None
    if needs.required(needs.SANDBOX):
        assert sandbox == "confined"
    assert rows(db, f"SELECT fault FROM seats WHERE match_id = {match_id}") == [(None,), (None,)]
    moves = rows(db, f"SELECT move, info FROM moves WHERE match_id = {match_id} ORDER BY ply")
    assert len(moves) >= 10
    for move, info in moves:
        assert len(move) <= MOVE_TEXT_MAX and len(info) <= ENGINE_INFO_MAX
    # the file: the rows above and their indexes, in whole pages; far from 950 KB a move
    assert growth <= len(moves) * (MOVE_TEXT_MAX + ENGINE_INFO_MAX + 200) + 64 * 1024, growth
    return [json.loads(info) for _, info in moves]


# --- through the CLI: hostile engines, confined, stored under the bound -----------------------
@pytest.mark.timeout(600)
def test_a_hostile_uci_engine_is_stored_under_the_bound(tmp_path: Path) -> None:
    db, growth = play_cli(tmp_path, "uci", HOSTILE_UCI)
    for info in check_stored(db, growth):
        # the last exact info line is kept, its pv cut to MAX_PV moves
        assert info == {
            "depth": 30,
            "seldepth": 40,
            "score": {"cp": 17},
            "nodes": 123456,
            "nps": 1000,
            "time_ms": 12,
            "pv": ["e2e4"] * protocol.MAX_PV,
        }


@pytest.mark.timeout(600)
def test_a_hostile_xboard_engine_is_stored_under_the_bound(tmp_path: Path) -> None:
    db, growth = play_cli(tmp_path, "xboard", HOSTILE_XBOARD)
    for info in check_stored(db, growth):
        # the last thinking line that reads as one: the 5,000-digit line is not one
        assert info == {
            "depth": 30,
            "score": {"cp": 17},
            "time_ms": 120,
            "nodes": 123456,
            "pv": ["e2e4"] * protocol.MAX_PV,
        }


# --- time: talk that never ends is cut at the limit --------------------------------------------
def play(spec: str, move_time: float = 1.0, startup_s: float = 3.0) -> MatchRecord:
    with BotPool(ResourceLimits(startup_s=startup_s)) as pool:
        refs = [resolve(spec), resolve("random")]
        control = TimeControl(move_time=move_time)
        return pool.play(games.get("chess"), refs, time_control=control, seed=1)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("when", ["before", "move", "after"])
def test_an_engine_that_never_stops_talking_loses_at_its_limit(tmp_path: Path, when: str) -> None:
    """Before ``uciok``: a stall at the start-up limit; instead of a move, or after one: a
    loss on time at the move's (the lines after a move are read past a bounded number, the rest
    with the next answer)."""
    path = tmp_path / "flood_uci.py"
    path.write_text(FLOOD_UCI)
    # a flood before uciok stalls at the start-up limit whatever it is: a short one (the flood
    # keeps two cores busy while it lasts); an engine that must start first keeps 3 s. A flood
    # instead of the first move (White's: random has not moved) loses at any move limit: half
    # a second; after a move, random answers the flooding engine's move under the same clock
    # while the flood runs, so that one keeps 1 s
    record = play(
        engine("uci", path, when),
        move_time=0.5 if when == "move" else 1.0,
        startup_s=FLOODED_STARTUP_S if when == "before" else 3.0,
    )
    fault = record.seats[0].fault
    assert fault is not None, record.seats
    if when == "before":
        assert fault.termination is Termination.STALL
        assert_startup_stall(fault.message, "uciok", FLOODED_STARTUP_S)
    else:
        assert fault.termination is Termination.TIMEOUT
        assert fault.detail["answered"] is False
        assert len(record.moves) == (0 if when == "move" else 2)


#: the start-up limit of an engine that floods before its handshake's answer
FLOODED_STARTUP_S = 1.0


def assert_startup_stall(message: str, owed: str, limit: float) -> None:
    """A start-up stall's message: the answer owed and the time the seat had, its ``limit``
    plus the milliseconds its start took (said to a hundredth: "1s", "1.01s" on a busy
    machine), never less than the limit."""
    found = re.fullmatch(
        rf"no {re.escape(owed)} within the start-up limit \((\d+(?:\.\d+)?)s\)", message
    )
    assert found is not None, message
    assert float(found.group(1)) >= limit, message


@pytest.mark.timeout(120)
def test_an_xboard_engine_that_never_stops_talking_stalls_at_the_start(tmp_path: Path) -> None:
    path = tmp_path / "flood_xboard.py"
    path.write_text(FLOOD_XBOARD)
    fault = play(engine("xboard", path), startup_s=FLOODED_STARTUP_S).seats[0].fault
    assert fault is not None and fault.termination is Termination.STALL
    assert_startup_stall(fault.message, "feature done=1", FLOODED_STARTUP_S)


@pytest.mark.timeout(120)
def test_a_line_longer_than_the_transport_allows_is_bad_output(tmp_path: Path) -> None:
    """A 2 MB info line: a fault that quotes 200 bytes of it (the reader holds at most
    MAX_LINE and a chunk), the game stored."""
    path = tmp_path / "long_line.py"
    path.write_text(LONG_UCI)
    record = play(engine("uci", path))
    fault = record.seats[0].fault
    assert fault is not None and fault.termination is Termination.BAD_OUTPUT
    assert fault.message == f"line longer than {protocol.MAX_LINE} bytes"
    assert fault.detail["answer"].startswith("info pv e2e4")
    assert len(fault.detail["answer"]) <= 200


# --- the info rules, one at a time ----------------------------------------------------------
def test_a_uci_info_keeps_a_bounded_pv_and_numbers_in_range() -> None:
    pv = parse_info("info depth 3 pv " + " ".join(["e2e4"] * 1000))["pv"]
    assert pv == ["e2e4"] * protocol.MAX_PV
    # a word that is no move's text ends the pv: too long, or not printable ASCII
    assert parse_info("info pv e2e4 " + "x" * 17 + " e7e5")["pv"] == ["e2e4"]
    assert parse_info("info pv e2e4 " + "x" * 16 + " e7e5")["pv"] == ["e2e4", "x" * 16, "e7e5"]
    assert parse_info("info pv e2e4 é e7e5")["pv"] == ["e2e4"]
    assert parse_info("info pv e2e4 \x01 e7e5")["pv"] == ["e2e4"]
    # numbers: decimal digits within 64 bits, else the parse ends there
    top = (1 << 63) - 1
    assert parse_info(f"info depth {top} nodes 5") == {"depth": top, "nodes": 5}
    assert parse_info(f"info depth 3 nodes {top + 1} nps 5") == {"depth": 3}
    assert parse_info(f"info score cp -{top + 1} depth 2") == {}
    assert parse_info("info depth 1_000 nodes 5") == {}
    assert parse_info("info depth 3 score mate " + "9" * 4000) == {"depth": 3}
    # a line of a million words is read only so far
    assert len(protocol.info_words("info " + "x " * 500_000)) == protocol.MAX_INFO_WORDS


def test_the_largest_engine_info_is_the_documented_one() -> None:
    """The worst an engine can make each field (the longest numbers, a pv of MAX_PV moves of
    MAX_PV_MOVE characters that JSON escapes) stores exactly ENGINE_INFO_MAX bytes."""
    n = "-" + "9" * 18
    fields = " ".join(f"{f} {n}" for f in ("depth", "seldepth", "multipv", "nodes", "nps"))
    fields += f" hashfull {n} tbhits {n} time {n} score mate {n} upperbound"
    words = " ".join(['"' * protocol.MAX_PV_MOVE] * (protocol.MAX_PV + 5))
    info = parse_info(f"info {fields} pv {words}")
    assert len(json.dumps(info)) == ENGINE_INFO_MAX
    thinking = parse_thinking(f"{n[1:]} {n} {n[1:]} {n[1:]} {words}".encode())
    assert thinking is not None and len(json.dumps(thinking)) <= ENGINE_INFO_MAX


def test_a_thinking_line_keeps_a_bounded_pv_and_numbers_in_range() -> None:
    line = b" 9 -15 12 999 " + b" ".join([b"Nf3"] * 1000)
    thinking = parse_thinking(line)
    assert thinking is not None and thinking["pv"] == ["Nf3"] * protocol.MAX_PV
    # a number past 64 bits (4,300 digits and more: int() itself would raise) is no thinking
    assert parse_thinking(b" 9 " + b"9" * 5000 + b" 12 999 e2e4") is None
    assert parse_thinking(b" 9 9223372036854775808 12 999 e2e4") is None
    assert parse_thinking(b" 9 -15 12 999 e2e4 \xff e7e5") == {
        "depth": 9,
        "score": {"cp": -15},
        "time_ms": 120,
        "nodes": 999,
        "pv": ["e2e4"],
    }


def test_an_info_is_kept_by_the_size_it_is_stored_at() -> None:
    """The JSON protocol's rule, which the engines share: an info whose stored text (the
    database's ``json.dumps``, ASCII) passes MAX_INFO is dropped, however short its line; so is
    one with a number JSON has not (PostgreSQL refuses NaN and infinities)."""
    astral = "\U0001f600" * 6000  # 6,000 characters, 72,000 bytes as stored
    line = json.dumps({"type": "move", "move": "a", "info": {"s": astral}}, ensure_ascii=False)
    assert len(line) < protocol.MAX_INFO
    answer = protocol.decode_answer(line.encode())
    assert isinstance(answer, protocol.MoveAnswer)
    assert answer.info == {"dropped": f"info longer than {protocol.MAX_INFO} bytes"}
    for number in ("NaN", "Infinity", "-Infinity", "1e999", "1" * 320 + ".5", "1" * 211 + "e99"):
        raw = f'{{"type":"move","move":"a","info":{{"x":{number}}}}}'.encode()
        answer = protocol.decode_answer(raw)
        assert isinstance(answer, protocol.MoveAnswer)
        assert answer.info == {"dropped": protocol.NAN_DROPPED}, number
    # what fits is kept as it came, the largest too
    fits = {"s": "x" * (protocol.MAX_INFO - 9)}
    assert len(json.dumps(fits)) == protocol.MAX_INFO
    raw = json.dumps({"type": "move", "move": "a", "info": fits}).encode()
    kept = protocol.decode_answer(raw)
    assert isinstance(kept, protocol.MoveAnswer) and kept.info == fits
    kept = protocol.decode_answer(b'{"type":"move","move":"a","info":{"e":1e300,"d":2}}')
    assert isinstance(kept, protocol.MoveAnswer) and kept.info == {"e": 1e300, "d": 2}


def test_a_fault_is_stored_cut_to_size() -> None:
    """A message and every text of the evidence are cut, whoever built them: the protocol's
    error quoting a bot's 1 MB answer id, an engine's options, its stderr."""
    line = json.dumps({"type": "move", "move": "a", "id": "x" * 1_000_000})
    with pytest.raises(protocol.ProtocolError) as caught:
        protocol.decode_answer(line.encode(), expect_id=1)
    fault = faults.bad_output(f"unparseable answer: {caught.value}", caught.value.text)
    assert len(fault.message) <= faults.MAX_MESSAGE + 40
    fault = faults.crash(
        "x", stderr_tail="e" * 10**6, exception="y" * 10**6, incidents=["z" * 10**6]
    )
    assert all(len(json.dumps(v)) <= faults.MAX_EVIDENCE + 40 for v in fault.detail.values())
    # what the stored form comes to at worst: every text of the evidence 12 bytes a character
    text = "\U0001f600" * 10**5
    worst = faults.stall(text, text, answer=text, stderr_tail=text, exception=text)
    assert len(json.dumps(worst.to_dict())) <= FAULT_MAX


def test_an_engine_option_list_is_cut_in_the_refusal(tmp_path: Path) -> None:
    path = tmp_path / "hostile_uci.py"
    path.write_text(HOSTILE_UCI)
    record = play(engine("uci", path) + " option.Nope=1", startup_s=10.0)
    fault = record.seats[0].fault
    assert fault is not None and fault.termination is Termination.STALL
    assert fault.message.startswith("the engine has no option 'Nope' (it offers: Opt0xxx")
    assert len(fault.message) <= faults.MAX_MESSAGE + 40


class _Lines:
    """A process that says ``lines`` then the word awaited (for ``EngineSeat._wait_for``)."""

    def __init__(self, lines: list[bytes]) -> None:
        self.lines = lines

    def read_line(self, deadline: float | None) -> tuple[ReadStatus, bytes]:
        return ReadStatus.LINE, self.lines.pop(0)


def test_what_an_engine_says_before_it_is_ready_is_kept_cut_to_size() -> None:
    import time

    seat = EngineSeat.__new__(EngineSeat)
    seat.heard, seat.unheard = [], None  # nothing read ahead (``__init__``'s)
    seat.process = _Lines([b"option name " + b"x" * BIG] * 3 + [b"uciok"])  # type: ignore[assignment]
    kept = seat._wait_for("uciok", time.monotonic() + 60)
    assert isinstance(kept, list) and len(kept) == 3
    assert all(len(line) == MAX_START_LINE for line in kept)


def test_what_an_engine_says_ahead_of_its_start_is_kept_cut_and_counted_with_the_rest() -> None:
    """Lines read ahead of a start (``_hear``, which never waits: here two lines, then
    nothing) are cut as the start's own and count toward its MAX_START_LINES; what ended the
    reading ahead (the output's end, a line too long) is the start's first read."""
    import time

    from bot_arena.arena.match.engine import MAX_START_LINES

    seat = EngineSeat.__new__(EngineSeat)
    seat.heard, seat.unheard = [], None
    big = b"option name " + b"x" * BIG
    seat.process = _Lines([big, big])  # type: ignore[assignment]
    seat.process.lines.append(b"")  # read as the end of what has come (below)
    ahead = seat.process.read_line

    def now(deadline: float | None) -> tuple[ReadStatus, bytes]:
        status, raw = ahead(deadline)
        return (ReadStatus.TIMEOUT, b"") if raw == b"" else (status, raw)

    seat.process.read_line = now  # type: ignore[method-assign]
    assert seat._hear("uciok") is False
    assert [len(line) for line in seat.heard] == [MAX_START_LINE] * 2
    seat.process = _Lines([b"option name o"] * (MAX_START_LINES + 5) + [b"uciok"])  # type: ignore[assignment]
    kept = seat._wait_for("uciok", time.monotonic() + 60)
    assert isinstance(kept, list) and len(kept) == MAX_START_LINES
    assert kept[:2] == [big.decode()[:MAX_START_LINE]] * 2 and seat.heard == []
    seat.unheard = (ReadStatus.LINE, b"uciok")  # what the reading ahead stopped at
    seat.process = _Lines([b"option name late", b"uciok"])  # type: ignore[assignment]
    assert seat._wait_for("uciok", time.monotonic() + 60) == []
    assert seat.unheard is None and len(seat.process.lines) == 2  # taken first, nothing read


@pytest.mark.timeout(60)
def test_xboard_features_are_read_in_linear_time_and_kept_cut_to_size() -> None:
    """A 1 MB ``feature`` word without ``=`` (a pattern that backtracked from every position
    would take hours) and a 900 KB option name: read at once, the name kept cut."""
    import time

    seat = XboardSeat.__new__(XboardSeat)
    seat.features, seat.offered = {}, set()
    seat.process = _Lines(  # type: ignore[assignment]
        [
            b"feature " + b"a" * 1_000_000,
            b'feature option="' + b"O" * BIG + b' -check 0" ping=1',
            b"feature done=1",
        ]
    )
    assert seat._features(time.monotonic() + 60) is None
    assert seat.features == {"ping": "1"}
    (name,) = seat.offered
    assert name == "O" * MAX_START_LINE


# A bot of the JSON protocol whose info holds numbers JSON has not (Python's json writes them as
# NaN and Infinity; PostgreSQL's json type refuses them).
NOT_FINITE_BOT = """
def choose_move(game, state, budget):
    info = {"score": float("inf"), "low": float("-inf"), "odd": float("nan"), "depth": 1}
    return game.legal_moves(state)[0], info
"""


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kind", BACKENDS)
def test_an_info_that_is_not_finite_is_stored_dropped(tmp_path: Path, kind: str) -> None:
    """Through ``arena play`` on either database: the game is stored, the info as a note
    (PostgreSQL refused the whole match before)."""
    bot = tmp_path / "not_finite.py"
    bot.write_text(NOT_FINITE_BOT)
    with database(kind, tmp_path, ready=True) as url:
        played = arena(
            tmp_path, "play", "tictactoe", "--bot", str(bot), "--bot", "random", "--db", url
        )
        assert played.returncode == 0, played.stdout + played.stderr
        engine = create_engine(url)
        try:
            with engine.connect() as conn:
                stored = conn.execute(text("SELECT seat, info FROM moves ORDER BY ply")).all()
        finally:
            engine.dispose()
    infos = [json.loads(i) if isinstance(i, str) else i for seat, i in stored if seat == 0]
    assert infos and all(i == {"dropped": protocol.NAN_DROPPED} for i in infos)
