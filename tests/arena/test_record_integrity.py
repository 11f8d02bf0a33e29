"""Nothing a bot does changes its recorded result: job messages are data (a pickle or junk in the
runner's inbox is refused, runs nothing, and the runner goes on), every record is replayed before
it is stored (a forged one is refused), and resolving ``pkg.mod:attr`` runs none of the
package's code in the arena."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import pickle
import struct
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from arena_helpers import fixture

from bot_arena import games
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.pool import BotPool
from bot_arena.arena.match.record import MatchRecord, MoveRecord
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.match.verify import check_record
from bot_arena.arena.tournament import job_handle, runner, serial_loop
from bot_arena.arena.tournament.create import create
from bot_arena.arena.tournament.job import MessageError, decode_reply, encode
from bot_arena.arena.transport.limits import ResourceLimits
from bot_arena.db.session import make_engine, session_factory

TC = TimeControl(move_time=5.0)
FIELD = ["random:seed=1", "random:seed=2", "random:seed=3"]


def _tournament(folder: Path, per_pair: int = 4) -> tuple[Any, int, list[Any]]:
    engine = make_engine(f"sqlite:///{folder / 'arena.db'}")
    factory = session_factory(engine)
    refs = [resolve(s) for s in FIELD]
    tid = create(
        factory,
        games.get("tictactoe"),
        FIELD,
        refs,
        fmt="round-robin",
        games_per_group=per_pair,
        time_control=TC,
        seed=3,
        opening_plies=0,
    )
    return factory, tid, refs


def _counts(factory: Any, tid: int) -> dict[str, int]:
    from bot_arena.db import queries

    with factory() as session:
        return queries.status_counts(session, tid)


def _run(
    factory: Any, tid: int, refs: list[Any], jobs: int, log: list[str] | None = None
) -> runner.Outcome:
    """Run the tournament; its progress messages into ``log`` when given."""
    stream = io.StringIO()
    outcome = runner.Runner(factory, tid, refs, jobs=jobs, progress_stream=stream, tty=False).run()
    if log is not None:
        log.extend(stream.getvalue().splitlines())
    return outcome


# --- the verifier ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def played() -> tuple[Any, list[Any], MatchRecord]:
    """A real tic-tac-toe game between two processes, seat 0 winning."""
    game = games.get("tictactoe")
    refs = [fixture("first_legal.py"), resolve("random:seed=5")]
    with BotPool(ResourceLimits(startup_s=5.0)) as pool:
        for seed in range(50):
            record = pool.play(game, refs, time_control=TC, seed=seed)
            if record.seats[0].rank == 1 and record.seats[1].rank == 2:
                return game, refs, record
    raise AssertionError("no decisive game")


def _copy(record: MatchRecord) -> MatchRecord:
    return MatchRecord.from_dict(record.to_dict())


def test_a_real_record_passes_and_survives_its_json_round_trip(played: Any) -> None:
    game, refs, record = played
    assert check_record(game, record, refs) is None
    again = decode_reply(encode(["ok", 1, record.to_dict()]))
    assert again[2] == record
    assert check_record(game, again[2], refs) is None  # type: ignore[arg-type]


def test_records_with_faults_and_stand_ins_pass() -> None:
    """Three players (nim), a bot that crashes on its third move: its stand-in plays on."""
    game = games.get("nim")
    refs = [fixture("raise_third.py"), resolve("random:seed=1"), fixture("illegal.py")]
    with BotPool(ResourceLimits(startup_s=5.0)) as pool:
        record = pool.play(game, refs, time_control=TC, seed=2)
    assert any(m.forced for m in record.moves)
    assert check_record(game, record, refs) is None


def _forge_illegal(r: MatchRecord) -> None:
    r.moves[1] = dataclasses.replace(r.moves[1], move=r.moves[0].move)  # the square is taken


def _forge_final(r: MatchRecord) -> None:
    r.final_position = r.start_position


def _forge_early_end(r: MatchRecord) -> None:
    """Cut the game short and rewrite the final position: a NORMAL end that is not an end."""
    game = games.get("tictactoe")
    r.moves = r.moves[:2]
    state = game.initial_state()
    for m in r.moves:
        state = game.apply(state, game.parse_move(m.move))
    r.final_position = game.format_position(state)


def _forge_swap(r: MatchRecord) -> None:
    a, b = r.seats
    a.utility, b.utility, a.rank, b.rank, a.score, b.score = (
        b.utility,
        a.utility,
        b.rank,
        a.rank,
        b.score,
        a.score,
    )


def _forge_forced(r: MatchRecord) -> None:
    r.moves[0] = MoveRecord(r.moves[0].seat, r.moves[0].move, 0.0, None, forced=True)


def _forge_name(r: MatchRecord) -> None:
    r.seats[1].bot = "someone else"


@pytest.mark.parametrize(
    ("forge", "reason"),
    [
        (_forge_illegal, "is not legal"),
        (_forge_final, "final position"),
        (_forge_early_end, "not terminal"),
        (_forge_swap, "the game gives"),
        (_forge_forced, "forced move"),
        (_forge_name, "not the scheduled"),
    ],
)
def test_a_forged_record_is_refused(played: Any, forge: Any, reason: str) -> None:
    game, refs, record = played
    forged = _copy(record)
    forge(forged)
    why = check_record(game, forged, refs)
    assert why is not None and reason in why, why


def test_the_runner_does_not_store_a_forged_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--jobs 1``: the first match's record comes back with its scores swapped."""
    factory, tid, refs = _tournament(tmp_path)
    real_play = serial_loop.play
    forged_ids: list[int] = []

    def forging_play(pool: Any, game: Any, plan: Any, job: Any) -> MatchRecord:
        record = real_play(pool, game, plan, job)
        if not forged_ids and record.seats[0].rank != record.seats[1].rank:
            forged_ids.append(job.match_id)
            _forge_swap(record)
        return record

    monkeypatch.setattr(serial_loop, "play", forging_play)
    outcome = _run(factory, tid, refs, jobs=1)
    assert len(forged_ids) == 1
    refused = [t for t in outcome.failed if "record refused" in t]
    assert len(refused) == 1 and f"match {forged_ids[0]}:" in refused[0], outcome.failed
    counts = _counts(factory, tid)
    assert counts["done"] == outcome.total - 1 and outcome.played == outcome.total - 1
    # a resume plays it again, for real
    monkeypatch.setattr(serial_loop, "play", real_play)
    again = _run(factory, tid, refs, jobs=1)
    assert again.finished and not again.failed


# --- the job pipe ----------------------------------------------------------------------------


class _Evil:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> Any:
        return (open, (self.path, "w"))


def _job_write_end(pid: int, inbox: int) -> str:
    """The /proc path of the job's end of the pipe whose reading end is ``inbox``: what a bot
    beside the job can open."""
    inode = os.fstat(inbox).st_ino
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with_path = f"/proc/{pid}/fd/{fd}"
        try:
            if os.readlink(with_path) == f"pipe:[{inode}]" and int(fd) > 2:
                return with_path
        except OSError:
            continue
    raise AssertionError("the job's pipe was not found")


@pytest.mark.parametrize("payload", ["pickle", "garbage"])
def test_a_hostile_message_in_the_runner_inbox_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, payload: str
) -> None:
    marker = tmp_path / f"pwned-{uuid.uuid4().hex}"
    if payload == "pickle":  # the old framing (multiprocessing.Connection): length, then pickle
        body = pickle.dumps(("ok", 1, _Evil(str(marker))))
        data = struct.pack("!i", len(body)) + body + b"\n"
        assert b"\n" in data
    else:
        data = b"\x00\xff\xfe not json {]\n"
    factory, tid, refs = _tournament(tmp_path)
    attacked: list[int] = []
    real_start = job_handle.JobHandle.start

    def start(self: job_handle.JobHandle, plan: Any) -> job_handle.JobHandle:
        handle = real_start(self, plan)
        if not attacked:  # the first job: write into its pipe as a bot beside it could
            attacked.append(self.process.pid)
            path = _job_write_end(self.process.pid, self.inbox)
            with open(path, "wb", buffering=0) as pipe:
                pipe.write(data)
        return handle

    monkeypatch.setattr(job_handle.JobHandle, "start", start)
    log: list[str] = []
    outcome = _run(factory, tid, refs, jobs=2, log=log)
    assert attacked
    assert not marker.exists(), "the runner unpickled a job's message"
    # the job counts as failed; the match it had in hand is played again by a new job (once is
    # chance: nobody charged), the ones it had not started go back in line
    failed = [t for t in log if f"job process {attacked[0]} sent a malformed message" in t]
    assert len(failed) == 1 and failed[0].endswith("playing it again"), log
    assert outcome.finished and not outcome.failed, outcome.failed
    counts = _counts(factory, tid)
    assert counts["done"] == outcome.total
    assert not any("charged" in line for line in log)


# --- pkg.mod:attr ----------------------------------------------------------------------------


def test_resolving_a_module_spec_runs_none_of_its_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"pkg_{uuid.uuid4().hex[:8]}"
    marker = tmp_path / "init-ran"
    package = tmp_path / name
    package.mkdir()
    # Run anywhere, the package's code leaves a mark: a file, where the process may write one
    # (a confined worker may not: a write outside its working folder), and in every case a
    # module constant its bot reports in its move info (stored in the record).
    (package / "__init__.py").write_text(
        "import os\n"
        "INIT_RAN = True\n"
        "try:\n"
        f"    open({str(marker)!r}, 'a').write(str(os.getpid()))\n"
        "except OSError:\n"
        "    pass\n"
    )
    (package / "mybot.py").write_text(
        "from . import INIT_RAN\n\n\n"
        "def choose_move(game, state, budget):\n"
        "    return game.legal_moves(state)[0], {'init_ran': INIT_RAN}\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    ref = resolve(f"{name}.mybot:choose_move")
    assert ref.source is not None and "choose_move" in ref.source
    assert not marker.exists(), "the package's __init__.py ran in the arena process"
    assert name not in sys.modules
    # the bot's own worker imports the package (that is where its code may run)
    with BotPool(ResourceLimits(startup_s=5.0)) as pool:
        record = pool.play(games.get("tictactoe"), [ref, resolve("random")], time_control=TC)
    assert record.seats[0].fault is None, record.seats[0].fault
    mine = [m for m in record.moves if m.seat == 0]
    assert mine and all(m.info == {"init_ran": True} for m in mine)
    assert name not in sys.modules


@pytest.mark.parametrize(
    "forge",
    [
        lambda d: d.update(started=10**400),  # too large for a float
        lambda d: d["moves"][0].update(time_ms=10**400),
        lambda d: d["moves"][0].update(time_ms="INF"),  # written as 1e999: read as infinity
        lambda d: d["moves"][0].update(info={"value": "NAN"}),  # written as NaN
        lambda d: d["moves"][0].update(info={"value": "INF"}),  # stored, it would be Infinity
        lambda d: d["moves"][0].update(info={"nodes": 10**400}),  # beyond a double
        lambda d: d["moves"][0].update(seat=True),
        lambda d: d["moves"][0].update(seat=0.0),
        lambda d: d["moves"][0].update(move=5),
        lambda d: d["moves"][0].update(info=[1]),
        lambda d: d["moves"][0].update(forced=None),
        lambda d: d["moves"][0].update(forced=1),
        lambda d: d["moves"][0].pop("seat"),
        lambda d: d["moves"].__setitem__(0, [0, "a1", 1.0]),
    ],
)
def test_a_malformed_record_is_a_message_error_never_a_crash(played: Any, forge: Any) -> None:
    """Whatever a job writes into a record's fields, decoding it raises MessageError (the job
    failed), nothing else: the moves' fast path refuses what the field-by-field checks do."""
    _, _, record = played
    data = record.to_dict()
    forge(data)
    line = json.dumps(["ok", 1, data]).replace('"INF"', "1e999").replace('"NAN"', "NaN").encode()
    with pytest.raises(MessageError):
        decode_reply(line)


def test_a_move_decodes_the_same_on_either_path(played: Any) -> None:
    """An int time (not what a referee writes) takes the checked path: the same value."""
    _, _, record = played
    data = record.to_dict()
    data["moves"][0]["time_ms"] = 3
    again = decode_reply(json.dumps(["ok", 1, data]).encode())[2]
    assert again.moves[0] == dataclasses.replace(record.moves[0], time_ms=3.0)  # type: ignore[union-attr]
    assert again.moves[1:] == record.moves[1:]  # type: ignore[union-attr]
