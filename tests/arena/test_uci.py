"""``uci:`` bots: chess engines spoken to in UCI over the arena's own pipes, clocks and fault
classes. A scripted fake engine (fixtures/fake_uci.py) for every fault; real stockfish when it
is installed (Debian puts it in /usr/games)."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any, cast

import pytest

from bot_arena import games
from bot_arena.arena.match.adjudication import Adjudication
from bot_arena.arena.match.botref import UCI, BotSpecError
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.engines import split_engine
from bot_arena.arena.match.pool import BotPool
from bot_arena.arena.match.record import MatchRecord, MoveRecord, Termination
from bot_arena.arena.match.timecontrol import Clock, TimeControl
from bot_arena.arena.match.uci import START_FEN as START
from bot_arena.arena.match.uci import UciSeat, go_command, parse_info, position_command
from bot_arena.arena.transport.limits import ResourceLimits
from bot_arena.arena.transport.protocol import MoveRequest
from bot_arena.arena.transport.sandbox.mode import Mode, SandboxSettings
from tests import needs

# real chess engines and engine tournaments: seconds a test
pytestmark = pytest.mark.slow

FAKE = Path(__file__).parent / "fixtures" / "fake_uci.py"
FIRST_LEGAL = str(Path(__file__).parent / "fixtures" / "first_legal.py")
STOCKFISH = shutil.which("stockfish", path=os.environ.get("PATH", "") + os.pathsep + "/usr/games")
needs_stockfish = needs.skip_unless(
    STOCKFISH is not None, needs.ENGINES, "stockfish is not installed (apt-get install stockfish)"
)


def fake(mode: str, *args: str) -> str:
    return f"uci:{sys.executable} {FAKE} {mode} {' '.join(args)}".rstrip()


def play(
    white: str,
    black: str = FIRST_LEGAL,
    tc: TimeControl | None = None,
    startup_s: float = 5.0,
    pool: BotPool | None = None,
) -> MatchRecord:
    """One game of chess, ``white`` against ``black`` (specs), in a pool of its own or
    ``pool``."""
    chess = games.get("chess")
    refs = [resolve(white), resolve(black)]
    control = tc or TimeControl(move_time=2.0)
    if pool is not None:
        return pool.play(chess, refs, time_control=control, seed=1)
    with BotPool(ResourceLimits(startup_s=startup_s)) as own:
        return own.play(chess, refs, time_control=control, seed=1)


# --- the protocol's text ---------------------------------------------------------------------
def test_info_lines_become_search_info() -> None:
    line = (
        "info depth 6 seldepth 3 multipv 1 score cp -110 upperbound nodes 920 nps 230000 "
        "hashfull 0 tbhits 0 time 4 pv d2d4 a7a6"
    )
    assert parse_info(line) == {
        "depth": 6,
        "seldepth": 3,
        "multipv": 1,
        "score": {"cp": -110, "bound": "upper"},
        "nodes": 920,
        "nps": 230000,
        "hashfull": 0,
        "tbhits": 0,
        "time_ms": 4,
        "pv": ["d2d4", "a7a6"],
    }
    assert parse_info("info depth 12 score mate -3 pv e2e4")["score"] == {"mate": -3}
    assert parse_info("info string depth 9 is a lie") == {}
    assert parse_info("info depth x nodes 5") == {}  # a malformed number ends the parse


def test_position_and_go_commands() -> None:
    start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
    assert position_command(start, []) == "position startpos"
    assert position_command(start, ["e2e4", "e7e5"]) == "position startpos moves e2e4 e7e5"
    other = "8/8/8/8/8/8/6k1/4K2R w K - 0 1"
    assert position_command(other, ["e1g1"]) == f"position fen {other} moves e1g1"
    # a start with its repetition history (the chess game's ``FEN moves ...``) keeps it
    assert position_command(f"{other} moves h1h2", ["g2g3"]) == (
        f"position fen {other} moves h1h2 g2g3"
    )
    white, black = Clock(TimeControl(base=60, increment=0.5)), Clock(TimeControl(base=30))
    white.spend(1.25)
    assert go_command([white, black], 0) == "go wtime 59250 btime 30000 winc 500 binc 0"
    limited = Clock(TimeControl(move_time=0.25, depth=8, nodes=5000))
    assert go_command([limited, limited], 1) == "go movetime 250 depth 8 nodes 5000"


class Unread:
    """A process stand-in that takes every line (the seat's text is what is tested)."""

    def send(self, data: bytes, deadline: float) -> bool:
        return True


def test_the_position_sent_grows_with_the_game_and_starts_again_with_the_next() -> None:
    seat = UciSeat(resolve(fake("normal")), cast(Any, Unread()))
    clock = Clock(TimeControl(move_time=1.0))
    other = "8/8/8/8/8/8/6k1/4K2R w K - 0 1"
    starts = [START, f"{other} moves h1h2", other, START]
    played = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"]
    for start in starts:  # each a game of its own on the same process: its own list of moves
        seat.start({"type": "new_game", "position": start, "seat": 0})
        moves: list[MoveRecord] = []
        for text in [*played, None]:
            request = MoveRequest(len(moves) + 1, b"", {}, 1.0, [clock, clock], moves)
            line = seat.move_request(request).splitlines()[0]
            assert line == position_command(start, [m.move for m in moves])
            if text is not None:
                moves.append(MoveRecord(len(moves) % 2, text, 1.0))
        del moves[2:]  # a list that went back (no referee does this): made again whole
        request = MoveRequest(9, b"", {}, 1.0, [clock, clock], moves)
        assert seat.move_request(request).splitlines()[0] == position_command(start, played[:2])


def test_a_spec_reads_command_and_options() -> None:
    ref = resolve(f'uci:{sys.executable} {FAKE} good option.Hash=16 "option.Skill Level=3"')
    assert ref.kind == UCI and ref.name.startswith("uci:")
    argv, options = split_engine(ref.target)
    assert argv == [sys.executable, str(FAKE), "good"]
    assert options == [("Hash", "16"), ("Skill Level", "3")]
    other = resolve(f'uci:{sys.executable} {FAKE} good option.Hash=16 "option.Skill Level=4"')
    assert other.sha256 != ref.sha256  # an option is part of the version
    for bad in ("uci:", "uci:option.Hash=1", f"uci:{FAKE} option.Hash", "uci:no-such-engine-x"):
        with pytest.raises(BotSpecError):
            resolve(bad)


# --- a fake engine, for each way an engine can fail ---------------------------------------------
def test_a_uci_engine_plays_a_whole_game_with_its_search_info() -> None:
    record = play(fake("good"))  # against first_legal: 18 plies (random's games ran long)
    assert record.termination is Termination.NORMAL and len(record.moves) > 10
    ours = [m for m in record.moves if m.seat == 0]
    assert all(m.info is not None and m.info["depth"] == 7 for m in ours)
    first = ours[0].info
    assert first == {
        "depth": 7,
        "seldepth": 9,
        "score": {"cp": -23},
        "nodes": 4242,
        "nps": 100000,
        "time_ms": 42,
        "pv": [record.moves[0].move],
    }
    assert record.seats[0].fault is None and record.seats[1].fault is None


def test_a_game_of_engines_makes_no_position_text_a_move(monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine is sent the moves so far, not the position: the referee judges its answers
    against the legal moves without making the position's text (a chess FEN, about 55 us a
    ply; ``states.StateFacts``), which only a Python bot's request needs."""
    from bot_arena.games.chess import Chess

    texts: list[object] = []
    made = Chess.format_position

    def counted(self: Chess, state: object) -> str:
        texts.append(state)
        return made(self, state)  # type: ignore[arg-type]

    monkeypatch.setattr(Chess, "format_position", counted)
    record = play(fake("good"), fake("good"))
    assert record.termination is Termination.NORMAL and len(record.moves) > 10
    assert len(texts) <= 3, len(texts)  # the start (pool, referee) and the end, none a move


#: the start-up limit of the fake engines that stall at the start: one that never says uciok
#: stalls whatever the limit (its length is not what is tested): 1 s; one that says it at once
#: (it imports no python-chess) and never readyok must have said it within the limit: 2 s
STALL_STARTUP_S = {"never_uciok": 1.0, "never_ready": 2.0}


@pytest.mark.parametrize(
    ("mode", "args", "termination", "words"),
    [
        ("never_uciok", (), Termination.STALL, "no uciok within the start-up limit"),
        ("never_ready", (), Termination.STALL, "no readyok within the start-up limit"),
        ("illegal", (), Termination.ILLEGAL_MOVE, "illegal move 'a1a8'"),
        ("garbage", (), Termination.BAD_OUTPUT, "unparseable move 'hello'"),
        ("hang", ("1",), Termination.TIMEOUT, "no answer within 0.5s"),
        ("exit", ("2",), Termination.CRASH, "exited with code 3"),
    ],
)
def test_every_engine_fault_is_classified(
    mode: str, args: tuple[str, ...], termination: Termination, words: str
) -> None:
    # Only the limit a case is about is short: the start-up limit for the engines that stall at
    # the start, the move's for the one that hangs. Every other answer has a minute, so what is
    # classified is the engine's fault, never a loaded machine's slow start or first move (at
    # load 15-27, a 1 s start-up limit turned the illegal, garbage, hang and exit cases into
    # stalls: a Python engine importing python-chess had not said uciok). The start-up limits
    # of the two that stall are STALL_STARTUP_S.
    tc = TimeControl(move_time=0.5, margin=0.5) if mode == "hang" else TimeControl(move_time=60)
    record = play(fake(mode, *args), tc=tc, startup_s=STALL_STARTUP_S.get(mode, 60.0))
    fault = record.seats[0].fault
    assert fault is not None and record.termination is termination, record.seats
    assert words in fault.message, fault.message
    assert record.seats[0].rank == 2 and record.seats[1].rank == 1
    if mode == "exit":
        assert fault.detail["exit_code"] == 3
        assert "fake engine: giving up" in fault.detail["stderr_tail"]


def test_an_answer_after_the_limit_and_margin_loses_on_time_within_it_does_not() -> None:
    # told 0.3 s with 1 s of grace: an answer after 0.6 s stands, one after 1.5 s loses. The
    # engine is late on its first two answers, then plays on at once: late on each of its nine
    # moves, the game waited 5.4 s for the same two cases (every move has a fresh limit)
    late = fake("late", "0.6", "2")
    record = play(late, tc=TimeControl(move_time=0.3, margin=1.0))
    assert all(m.time_ms >= 600 for m in record.moves[:4] if m.seat == 0)  # they came late
    assert record.seats[0].fault is None and record.termination is Termination.NORMAL
    record = play(fake("late", "1.5"), tc=TimeControl(move_time=0.3, margin=0.2))
    fault = record.seats[0].fault
    assert fault is not None and fault.termination is Termination.TIMEOUT
    assert fault.detail["answered"] is False and fault.detail["overrun_ms"] >= 200


def test_noise_and_an_info_flood_are_read_past() -> None:
    for engine in (fake("silent_lines"), fake("flood", "20000")):
        # against first_legal (18 plies; random's games ran to 673): the noise is the subject
        record = play(engine, tc=TimeControl(move_time=5.0))
        assert record.termination is Termination.NORMAL, record.seats
        assert record.moves[0].info is not None and record.moves[0].info["nodes"] == 4242


def test_an_option_the_engine_does_not_offer_is_refused_at_the_start() -> None:
    record = play(fake("good") + " option.Threads=2")
    fault = record.seats[0].fault
    assert fault is not None and fault.termination is Termination.STALL
    assert fault.message == "the engine has no option 'Threads' (it offers: Hash, Skill Level)"


def test_options_clocks_and_reuse_as_the_engine_sees_them(tmp_path: Path) -> None:
    log = tmp_path / "engine.log"
    spec = fake("log", str(log)) + ' "option.skill level=3" option.Hash=8'
    tc = TimeControl(base=60, increment=1.0)
    # unconfined: the engine writes its log where the test reads it
    with BotPool(ResourceLimits(startup_s=5.0), sandbox=SandboxSettings(Mode.OFF)) as pool:
        # resolved once: the log is a file the command names, so its version changes with it
        refs = [resolve(spec), resolve(FIRST_LEGAL)]
        first, second = (
            pool.play(games.get("chess"), refs, time_control=tc, seed=1) for _ in range(2)
        )
    lines = log.read_text().splitlines()
    assert lines[0] == "uci" and lines.count("uci") == 1  # one process for both games
    assert lines[1:5] == [
        "setoption name Skill Level value 3",  # the engine's own spelling of the name
        "setoption name Hash value 8",
        "ucinewgame",
        "isready",
    ]
    assert lines.count("ucinewgame") == 2 and lines.count("isready") == 2
    assert lines[5] == "position startpos"
    assert lines[6] == "go wtime 60000 btime 60000 winc 1000 binc 1000"
    moves = [m.move for m in first.moves]
    assert f"position startpos moves {' '.join(moves[:2])}" in lines
    assert first.termination is Termination.NORMAL and second.termination is Termination.NORMAL


def test_two_engines_set_their_options_at_the_same_time(tmp_path: Path) -> None:
    """The first game's handshakes overlap: each engine is sent its options and ``isready``
    before the arena waits for either's ``readyok`` (pool._start calls every seat's
    ``advance_start`` first). Each fake engine here answers ``isready`` only once both have
    received one, so handshakes made one after the other would leave the first engine
    unanswered until the start-up limit: a stall."""
    meet = tmp_path / "meet"
    meet.mkdir()
    specs = [fake("meet", str(meet / name)) + " option.Hash=8" for name in ("a", "b")]
    with BotPool(ResourceLimits(startup_s=10.0), sandbox=SandboxSettings(Mode.OFF)) as pool:
        refs = [resolve(spec) for spec in specs]
        record = pool.play(games.get("chess"), refs, time_control=TimeControl(move_time=2.0))
    assert [seat.fault for seat in record.seats] == [None, None]
    assert sorted(p.name for p in meet.iterdir()) == ["a.ready", "b.ready"]
    assert record.termination is not Termination.STALL and record.moves


def test_a_uci_engine_plays_chess_only() -> None:
    with BotPool(ResourceLimits(startup_s=5.0)) as pool:
        record = pool.play(games.get("tictactoe"), [resolve(fake("good")), resolve("random")])
    fault = record.seats[0].fault
    assert fault is not None and fault.message == "a UCI engine plays chess, not tictactoe"


# --- stockfish ----------------------------------------------------------------------------------
@needs_stockfish
def test_stockfish_at_a_fixed_node_count_plays_the_same_game_twice() -> None:
    spec = f"uci:{STOCKFISH} option.Threads=1 option.Hash=16"
    tc = TimeControl(move_time=60.0, nodes=2000)  # the node limit always comes first
    # 40 moves a game (80 plies): played out, the game ran to 209 plies each time
    rules = Adjudication(max_moves=40)
    games_played: list[Any] = []
    for _ in range(2):
        with BotPool(ResourceLimits(startup_s=10.0)) as pool:
            refs = [resolve(spec), resolve(spec)]
            record = pool.play(
                games.get("chess"), refs, time_control=tc, seed=3, adjudication=rules
            )
        assert all(s.fault is None for s in record.seats), record.seats
        games_played.append([m.move for m in record.moves])
        assert record.moves[0].info is not None and record.moves[0].info["nodes"] >= 2000
    assert games_played[0] == games_played[1] and len(games_played[0]) > 20


# --- through the command line -------------------------------------------------------------------
def test_an_engine_is_registered_and_plays_by_its_name(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bot_arena.arena.cli.app import app

    runner = CliRunner()
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    spec = fake("good") + " option.Hash=8"
    added = runner.invoke(app, ["bots", "add", spec, "-n", "fakey", "-g", "chess", "--db", db])
    assert added.exit_code == 0, added.output
    assert added.stdout.startswith("fakey: new version 1")
    shown = runner.invoke(app, ["bots", "show", "fakey", "--json", "--db", db])
    version = json_of(shown.stdout)["versions"][0]
    assert version["kind"] == "uci" and version["target"].endswith("good option.Hash=8")
    played = runner.invoke(  # against first_legal: a short game (random's ran long)
        app, ["play", "chess", "--bot", "fakey", "--bot", FIRST_LEGAL, "--json", "--db", db]
    )
    assert played.exit_code == 0, played.output
    record = json_of(played.stdout)
    assert record["seats"][0]["bot"] == "fakey" and record["termination"] == "normal"
    refused = runner.invoke(app, ["bots", "add", spec, "-n", "f2", "-g", "tictactoe", "--db", db])
    assert refused.exit_code == 2 and "a UCI engine plays chess, not tictactoe" in refused.output


def json_of(text: str) -> Any:
    import json

    return json.loads(text)


@needs_stockfish
def test_a_tournament_of_stockfish_at_two_skill_levels_ranks_them(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bot_arena.arena.cli.app import app

    weak = f'uci:{STOCKFISH} option.Threads=1 "option.Skill Level=0"'
    strong = f'uci:{STOCKFISH} option.Threads=1 "option.Skill Level=20"'
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    args = ["tournament", "run", "chess", "--bot", weak, "--bot", strong, "--games", "4"]
    # 5000 nodes a move (20,000 cost four times the CPU): Skill Level 20 beat 0 in each of
    # 6 games at 3000 nodes (load 16; games of 34-90 plies)
    rules = ["--nodes", "5000", "--move-time", "10"]
    result = CliRunner().invoke(app, [*args, *rules, "--db", db, "--json", "-j", "2"])
    assert result.exit_code == 0, result.output
    summary = json_of(result.stdout)
    standings = summary["standings"]
    assert [s["bot"] for s in standings] == [strong, weak], standings
    assert standings[0]["points"] >= 3 and all(not s["faults"] for s in standings)


def test_an_engine_talking_before_it_is_ready_is_read_but_not_kept() -> None:
    """What an engine says before ``uciok`` is kept up to MAX_START_LINES lines (a hostile
    engine's talk cannot fill the arena's memory): an option announced past them is not one."""
    from bot_arena.arena.match.engine import MAX_START_LINES

    assert MAX_START_LINES == 1000
    early = play(fake("chatty", "5000") + " option.Extra10=true")  # against first_legal
    assert early.seats[0].fault is None and early.termination is Termination.NORMAL
    late = play(fake("chatty", "5000") + " option.Extra4999=true")
    fault = late.seats[0].fault
    assert fault is not None and fault.termination is Termination.STALL
    assert fault.message.startswith("the engine has no option 'Extra4999' (it offers: ")


@pytest.mark.parametrize("protocol", ["uci", "xboard"])
def test_an_engine_is_confined_like_every_bot(tmp_path: Path, protocol: str) -> None:
    """Confined (``--sandbox on``), an engine that writes beside the test cannot: the file the
    unconfined runs of this suite write (the engines' logs) never appears."""
    from bot_arena.arena.transport.sandbox.mode import SandboxUnavailable

    log = tmp_path / "engine.log"
    script = FAKE if protocol == "uci" else Path(__file__).parent / "fixtures" / "fake_xboard.py"
    args = f"log {log}" if protocol == "uci" else str(log)
    refs = [resolve(f"{protocol}:{sys.executable} {script} {args}"), resolve("random")]
    try:
        with BotPool(ResourceLimits(startup_s=5.0), sandbox=SandboxSettings(Mode.ON)) as pool:
            record = pool.play(games.get("chess"), refs, time_control=TimeControl(move_time=2))
    except SandboxUnavailable as exc:
        needs.missing(needs.SANDBOX, f"bots cannot be fully confined here: {exc}")
    assert not log.exists()
    fault = record.seats[0].fault
    assert fault is not None and fault.termination is Termination.STALL, record.seats


def _logged(log: Path, line: str, within: float = 30.0) -> bool:
    """Whether the engine's log (each line it read) holds ``line`` within ``within`` s."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if log.exists() and line in log.read_text().splitlines():
            return True
        time.sleep(0.02)
    return False


def test_an_engine_started_ahead_is_sent_uci_at_once_and_once(tmp_path: Path) -> None:
    """``BotPool.prestart`` greets a UCI engine as it spawns it: ``uci`` reaches the engine
    before any game is asked for (lost, the engine would wait for the first game's start), and
    the first start does not send it again; the rest of the handshake is as before."""
    log = tmp_path / "engine.log"
    # unconfined: the engine writes its log where the test reads it
    with BotPool(ResourceLimits(startup_s=30.0), sandbox=SandboxSettings(Mode.OFF)) as pool:
        refs = [resolve(fake("log", str(log)) + " option.Hash=8"), resolve(FIRST_LEGAL)]
        pool.prestart(refs)
        assert _logged(log, "uci"), "no uci before the first game"
        tc = TimeControl(move_time=5.0)
        records = [pool.play(games.get("chess"), refs, time_control=tc, seed=1) for _ in "ab"]
    assert [r.termination for r in records] == [Termination.NORMAL] * 2, records[0].seats
    lines = log.read_text().splitlines()
    assert lines.count("uci") == 1, lines  # sent ahead, not again at the start
    assert lines[:4] == ["uci", "setoption name Hash value 8", "ucinewgame", "isready"]
    assert lines[4].startswith("position "), lines
    assert lines.count("ucinewgame") == 2 and lines.count("isready") == 2


@pytest.mark.parametrize(
    ("mode", "option", "message"),
    [
        ("never_uciok", "", "no uciok within the start-up limit (1"),
        ("never_ready", "", "no readyok within the start-up limit (2"),
        ("good", " option.Threads=2", "the engine has no option 'Threads' (it offers: Hash,"),
    ],
)
def test_an_engine_started_ahead_has_its_start_checked_as_any(
    mode: str, option: str, message: str
) -> None:
    """Greeted ahead, an engine's start keeps its checks, faults and limit: the limit counts
    from the game's start, not from the greeting (half a second before it here: counted from
    the greeting, the start would give up half a second early), and the message says the limit
    it had (STALL_STARTUP_S; 2 s for the refused option)."""
    limit = STALL_STARTUP_S.get(mode, 2.0)
    with BotPool(ResourceLimits(startup_s=limit)) as pool:
        refs = [resolve(fake(mode) + option), resolve(FIRST_LEGAL)]
        pool.prestart(refs)
        started = list(pool.started_pids)
        time.sleep(0.5)
        pool.hear_ahead()  # what has come is read ahead: the start finds the same
        began = time.monotonic()
        record = pool.play(games.get("chess"), refs, time_control=TimeControl(move_time=2.0))
        took = time.monotonic() - began
        assert pool.last_pids == started  # the processes started ahead
    fault = record.seats[0].fault
    assert fault is not None and fault.termination is Termination.STALL, record.seats
    assert fault.message.startswith(message), fault.message
    if mode.startswith("never_"):
        assert limit <= fault.detail["startup_s"] < limit + 1.0, fault.detail
        assert took >= limit  # the whole limit, from the start


def test_an_engine_started_ahead_has_its_options_set_ahead_once(tmp_path: Path) -> None:
    """``BotPool.hear_ahead`` (a run's steps before its first game) reads a greeted engine's
    ``uciok`` without waiting and sends its options, ``ucinewgame`` and ``isready`` then (not
    taken ahead, the engine reads them only with the first game); the start sends them no
    more and waits for the ``readyok``: the engine is told the same lines, once."""
    log = tmp_path / "engine.log"
    with BotPool(ResourceLimits(startup_s=30.0), sandbox=SandboxSettings(Mode.OFF)) as pool:
        refs = [resolve(fake("log", str(log)) + " option.Hash=8"), resolve(FIRST_LEGAL)]
        pool.prestart(refs)
        end = time.monotonic() + 30.0
        while time.monotonic() < end and "isready" not in _lines(log):
            pool.hear_ahead()  # never waits
            time.sleep(0.02)
        assert _lines(log) == ["uci", "setoption name Hash value 8", "ucinewgame", "isready"]
        tc = TimeControl(move_time=5.0)
        records = [pool.play(games.get("chess"), refs, time_control=tc, seed=1) for _ in "ab"]
    assert [r.termination for r in records] == [Termination.NORMAL] * 2, records[0].seats
    lines = _lines(log)
    assert lines[:4] == ["uci", "setoption name Hash value 8", "ucinewgame", "isready"]
    assert lines[4].startswith("position "), lines
    assert lines.count("setoption name Hash value 8") == 1, lines
    assert lines.count("ucinewgame") == 2 and lines.count("isready") == 2, lines


def test_an_option_refused_ahead_is_the_start_s_fault_nothing_sent(tmp_path: Path) -> None:
    """Read ahead, an option the engine does not offer sends nothing (no option, no
    ``isready``) and leaves the process to its first start, which is refused as ever."""
    log = tmp_path / "engine.log"
    with BotPool(ResourceLimits(startup_s=30.0), sandbox=SandboxSettings(Mode.OFF)) as pool:
        refs = [resolve(fake("log", str(log)) + " option.Threads=2"), resolve(FIRST_LEGAL)]
        pool.prestart(refs)
        started = list(pool.started_pids)
        seat = pool.idle[refs[0]][0]
        end = time.monotonic() + 30.0
        while time.monotonic() < end and cast(UciSeat, seat).offered is None:
            pool.hear_ahead()
            time.sleep(0.02)
        assert cast(UciSeat, seat).offered is not None, "uciok never read ahead"
        # a line of the test's own, which the engine ignores, after whatever the reading ahead
        # wrote: one pipe, in order, so once the engine has logged it, it has logged all that
        # came before it (no wait on a guess)
        assert seat.process.send(MARK + b"\n", time.monotonic() + 5.0)
        end = time.monotonic() + 30.0
        while time.monotonic() < end and MARK.decode() not in _lines(log):
            time.sleep(0.02)
        assert _lines(log) == ["uci", MARK.decode()]
        record = pool.play(games.get("chess"), refs, time_control=TimeControl(move_time=5.0))
        assert pool.last_pids == started  # the process started ahead is the one refused
    fault = record.seats[0].fault
    assert fault is not None and fault.termination is Termination.STALL
    assert fault.message == "the engine has no option 'Threads' (it offers: Hash, Skill Level)"
    assert _lines(log) == ["uci", MARK.decode()]


MARK = b"test-mark"  # no UCI command: the fake engine logs it and does nothing


def _lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []
