"""Bots that attack the arena's own processes (possible only unconfined, ``--sandbox off``):
the offender is charged, nobody else; the tournament ends with every match stored.

Real hostile bots (``fixtures/incidents``) SIGKILL or SIGSTOP the job process that referees
them, or SIGKILL the fork server they were forked from, on their first move of every game, in
real tournaments run by the CLI: with ``--jobs 2`` (the runner watches its job processes) and
``--jobs 1`` (the runner referees itself)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests import needs
from tests.forked_cli import commands

# each test runs the arena command (tournaments, several processes): seconds a test
pytestmark = pytest.mark.slow

INCIDENTS = Path(__file__).resolve().parent / "fixtures" / "incidents"
RUN_TIMEOUT = 300.0  # seconds: a bound for a hung run, far above a normal one (10-30 s)
GAMES = 2  # per pairing: three bots, six matches, four of them the attacker's


def arena(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` run to its end as a process of its own (a fork of the test process's
    server of commands, which started Python and imported the CLI and what a run imports once:
    tests/forked_cli.py), what it printed and its status."""
    return commands().run(args, cwd=cwd, env=os.environ, timeout=RUN_TIMEOUT)


def run_tournament(tmp_path: Path, attacker: str, jobs: int) -> tuple[Any, list[dict[str, Any]]]:
    """Run a tic-tac-toe tournament of ``attacker`` and two honest bots; the finished process
    and every stored seat (match id, bot, score, fault)."""
    db = tmp_path / "arena.db"
    field = [str(INCIDENTS / f"{attacker}.py"), "random", "alphabeta:depth=2"]
    args = ["tournament", "run", "tictactoe", "--games", str(GAMES), "--seed", "7"]
    for spec in field:
        args += ["--bot", spec]
    cmd = list(args)
    cmd += ["--jobs", str(jobs), "--move-time", "5", "--sandbox", "off", "--db", f"sqlite:///{db}"]
    proc = arena(cmd, tmp_path)
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT m.id, m.status, b.name, s.score, s.fault FROM matches m"
            " JOIN seats s ON s.match_id = m.id JOIN bot_versions v ON v.id = s.bot_version_id"
            " JOIN bots b ON b.id = v.bot_id ORDER BY m.id, s.seat"
        ).fetchall()
    seats = [
        {
            "match": r[0],
            "status": r[1],
            "bot": r[2],
            "score": r[3],
            "fault": json.loads(r[4]) if r[4] else None,
        }
        for r in rows
    ]
    return proc, seats


@pytest.mark.parametrize(
    ("attacker", "jobs", "seen"),
    [
        ("referee_killer", 2, "died"),
        ("referee_stopper", 2, "was stopped (by a signal)"),
        ("server_killer", 2, "fork server died"),
        ("server_killer", 1, "fork server died"),
    ],
)
def test_a_bot_that_attacks_the_arena_is_charged_and_nobody_else(
    tmp_path: Path, attacker: str, jobs: int, seen: str
) -> None:
    proc, seats = run_tournament(tmp_path, attacker, jobs)
    assert proc.returncode == 0, proc.stderr
    matches = {s["match"] for s in seats}
    assert len(matches) == 6 and all(s["status"] == "done" for s in seats), proc.stderr
    assert f"{attacker} charged" in proc.stderr
    assert seen in proc.stderr
    for seat in seats:
        if seat["bot"] == attacker:
            fault = seat["fault"]
            assert fault is not None, seat
            assert fault["termination"] == "crash" and fault["reason"] == "arena_attack"
            assert len(fault["incidents"]) == 2 and seen in " ".join(fault["incidents"])
            assert seat["score"] == 0.0
        else:  # never blamed: neither for the attack nor for dying with a killed server
            assert seat["fault"] is None, seat
    # the honest bots' games against each other were played out, not charged
    honest = [m for m in matches if attacker not in {s["bot"] for s in seats if s["match"] == m}]
    assert len(honest) == 2


def test_a_job_that_dies_once_is_played_again_and_charges_nobody(tmp_path: Path) -> None:
    """A bot that kills its referee only in its very first game (a flag file): the match is
    played again, and everybody's results are ordinary."""
    flag = tmp_path / "killed-once"
    bot = tmp_path / "once.py"
    bot.write_text(
        (INCIDENTS / "attack_lib.py").read_text()
        + f"\n\n_attack = bot('kill')\n\ndef choose_move(game, state, budget):\n"
        f"    import os\n"
        f"    if not os.path.exists({str(flag)!r}):\n"
        f"        open({str(flag)!r}, 'w').close()\n"
        f"        return _attack(game, state, budget)\n"
        f"    return game.legal_moves(state)[0]\n"
    )
    db = tmp_path / "arena.db"
    cmd = ["tournament", "run", "tictactoe"]
    cmd += ["--bot", str(bot), "--bot", "random", "--games", "2", "--jobs", "2"]
    cmd += ["--move-time", "5", "--sandbox", "off", "--db", f"sqlite:///{db}"]
    proc = arena(cmd, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert flag.exists() and "playing it again" in proc.stderr and "charged" not in proc.stderr
    with sqlite3.connect(db) as conn:
        statuses = conn.execute("SELECT status FROM matches").fetchall()
        faults = conn.execute("SELECT fault FROM seats WHERE fault IS NOT NULL").fetchall()
    assert statuses == [("done",), ("done",)]
    assert faults == []


def test_the_attackers_fail_when_confined(tmp_path: Path) -> None:
    """The same bots, confined (default mode): no incident at all; each attack is the bot's own
    error (it cannot see or signal the arena's processes)."""
    from bot_arena.arena.transport.sandbox import confine, support

    if confine.NAMESPACES not in support.probe()[0]:
        needs.missing(
            needs.SANDBOX, "this machine lacks namespaces: the arena's processes are in sight"
        )
    db = tmp_path / "arena.db"
    cmd = ["tournament", "run", "tictactoe"]
    for name in ("referee_killer", "referee_stopper", "server_killer"):
        cmd += ["--bot", str(INCIDENTS / f"{name}.py")]
    cmd += ["--bot", "random", "--games", "1", "--jobs", "2", "--move-time", "5"]
    cmd += ["--db", f"sqlite:///{db}"]
    proc = arena(cmd, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "charged" not in proc.stderr and "playing it again" not in proc.stderr
    with sqlite3.connect(db) as conn:
        reasons = conn.execute("SELECT fault FROM seats WHERE fault IS NOT NULL").fetchall()
    assert reasons and all("arena_attack" not in r[0] for r in reasons)


def test_a_job_with_barred_seats_and_an_incident_reply_cross_the_pipe_as_data() -> None:
    from bot_arena.arena.match import faults
    from bot_arena.arena.tournament.job import Job, MessageError, decode, decode_reply, encode

    fault = faults.crash("attacked the arena", reason="arena_attack", incidents=["died"])
    job = Job(3, (2, 0), None, 11, barred=((0, fault),))
    assert Job.from_dict(decode(encode(job.to_dict()))) == job
    assert Job.from_dict({**job.to_dict(), "barred": []}).barred == ()
    for bad in ([[0]], [["0", fault.to_dict()]], [[0, {"termination": "melted"}]], {}):
        with pytest.raises(MessageError):
            Job.from_dict({**job.to_dict(), "barred": bad})
    assert decode_reply(encode(["incident", 3, "the fork server died"])) == (
        "incident",
        3,
        "the fork server died",
    )
    with pytest.raises(MessageError):
        decode_reply(encode(["incident", 3, {"not": "text"}]))
