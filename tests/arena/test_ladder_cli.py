"""``arena ladder`` through the real command line: a ladder running in the background takes a
newcomer added by another process (games within 5 s) and a retirement (no new game after),
survives kill -9 (run again: every match stored exactly once, none lost), on SQLite and on
PostgreSQL; a bot that keeps faulting is suspended while the ladder runs on; bad input is one
line, exit 2, nothing stored."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests import inprocess
from tests.db.dbtest import Db
from tests.forked_cli import Forked, Server

pytestmark = pytest.mark.slow  # each test starts ladder runs and bots: seconds a test

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LIMIT_S = 180.0  # a guard against a hung run, never a guess at how long something takes
NEWCOMER_S = 5.0  # the bound: a bot added while the ladder runs gets games within it


def arena(db: Db, *args: str) -> subprocess.CompletedProcess[str]:
    """``arena ARGS --db URL``, run in this process (tests/inprocess.py): what a command prints
    and stores is the subject; the runs that are killed or raced stay real processes
    (``background``, the racing ``retire``)."""
    return inprocess.run(*args, "--db", db.url, cwd=Path.cwd())


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def one_line_error(result: subprocess.CompletedProcess[str], words: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert words in lines[0], lines[0]
    assert "Traceback" not in result.stderr


def count(db: Db, sql: str) -> int:
    rows = db.query(sql)
    return int(rows[0][0]) if rows else 0


def games_of(db: Db, bot: str, *, above: int = 0) -> int:
    """Done matches with id above ``above`` in which the entrant named ``bot`` sat."""
    return count(
        db,
        "SELECT count(DISTINCT m.id) FROM matches m JOIN seats s ON s.match_id = m.id "
        "JOIN bot_versions v ON v.id = s.bot_version_id JOIN bots b ON b.id = v.bot_id "
        f"WHERE b.name = '{bot}' AND m.status = 'done' AND m.id > {above}",
    )


def made_with(db: Db, bot: str, *, above: int) -> int:
    """Matches (any status) with id above ``above`` that seat ``bot``."""
    return count(
        db,
        "SELECT count(DISTINCT m.id) FROM matches m JOIN seats s ON s.match_id = m.id "
        "JOIN bot_versions v ON v.id = s.bot_version_id JOIN bots b ON b.id = v.bot_id "
        f"WHERE b.name = '{bot}' AND m.id > {above}",
    )


def done(db: Db, *, above: int = 0) -> int:
    return count(db, f"SELECT count(*) FROM matches WHERE status = 'done' AND id > {above}")


def wait_for(condition: Callable[[], bool], seconds: float, proc: Forked, log: Path) -> bool:
    """Poll the database until ``condition`` holds (True) or ``seconds`` pass (False)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        assert proc.poll() is None, f"ladder run exited early:\n{log.read_text()}"
        time.sleep(0.02)
    return condition()


@contextmanager
def background(cli: Server, db: Db, log: Path, *args: str) -> Iterator[Forked]:
    """``arena ladder run ...`` forked from ``cli`` (the fixture ``arena_cli``: the subject is
    what a run stores, takes from other processes and leaves when killed, not Python's
    start-up) in a session (and process group) of its own, its output in ``log``; killed and
    waited for at the end."""
    proc = cli.start(
        ["ladder", "run", *args, "--db", db.url], cwd=Path.cwd(), env=os.environ, log=log
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        end = time.monotonic() + 30.0  # its jobs leave once they see it gone (bounded)
        while time.monotonic() < end:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def snapshot(db: Db) -> dict[int, str]:
    """Each done match with a digest of everything stored about it (three queries)."""
    stored: dict[int, list[tuple[object, ...]]] = {}
    for row in db.query("SELECT * FROM matches WHERE status = 'done' ORDER BY id"):
        stored[row[0]] = [row]
    for table, order in (("seats", "seat"), ("moves", "ply")):
        for row in db.query(f"SELECT match_id, * FROM {table} ORDER BY match_id, {order}"):
            if row[0] in stored:
                stored[row[0]].append(row)
    return {mid: hashlib.sha256(repr(rows).encode()).hexdigest() for mid, rows in stored.items()}


@pytest.mark.new_schema  # keeps `ladder create` making a PostgreSQL database from nothing
def test_a_running_ladder_takes_a_newcomer_a_retirement_and_a_kill_9(
    tmp_path: Path, db: Db, arena_cli: Server
) -> None:
    ok(arena(db, "ladder", "create", "club", "--game", "tictactoe", "--seed", "3"))
    field = ["random:seed=1", "random:seed=2", "random:seed=3", "random:seed=4"]
    ok(arena(db, "ladder", "add", "club", *field, "--sandbox", "off"))
    assert count(db, "SELECT count(*) FROM ladder_entrants") == 4
    log = tmp_path / "run.log"
    with background(arena_cli, db, log, "club", "--jobs", "2", "--sandbox", "off") as run:
        assert wait_for(lambda: done(db) >= 6, LIMIT_S, run, log), log.read_text()
        # a fifth bot, added from another process while the ladder runs
        ok(arena(db, "ladder", "add", "club", "random:seed=5", "--sandbox", "off"))
        added = time.monotonic()
        got = wait_for(lambda: games_of(db, "random:seed=5") > 0, NEWCOMER_S, run, log)
        assert got, f"no game for the newcomer within {NEWCOMER_S} s:\n{log.read_text()}"
        assert time.monotonic() - added <= NEWCOMER_S + 0.5
        # one retired: no match made after the retirement seats it
        ok(arena(db, "ladder", "retire", "club", "random:seed=1"))
        last = count(db, "SELECT max(id) FROM matches")
        others = ["random:seed=2", "random:seed=3", "random:seed=4", "random:seed=5"]

        def all_played_since() -> bool:  # the others play on, each of them
            return done(db, above=last) >= 30 and all(
                games_of(db, bot, above=last) >= 2 for bot in others
            )

        assert wait_for(all_played_since, LIMIT_S, run, log), log.read_text()
        assert made_with(db, "random:seed=1", above=last) == 0
        run.send_signal(signal.SIGKILL)  # kill -9 in the middle
        run.wait()
    before = snapshot(db)
    still_open = {
        r[0] for r in db.query("SELECT id FROM matches WHERE status IN ('pending', 'running')")
    }
    made = count(db, "SELECT count(*) FROM matches")
    target = made + 6
    out = ok(
        arena(db, "ladder", "run", "club", "--jobs", "2", "--sandbox", "off",
              "--until-games", str(target), "--quiet")
    )  # fmt: skip
    del out
    after = snapshot(db)
    # every match done before the kill is untouched, every one open at the kill is done now,
    # nothing is left to play and each match has its two seats once
    assert all(after[mid] == digest for mid, digest in before.items())
    assert still_open <= set(after)
    assert count(db, "SELECT count(*) FROM matches WHERE status <> 'done'") == 0
    assert done(db) >= target
    assert count(db, "SELECT count(*) FROM seats") == 2 * done(db)
    assert made_with(db, "random:seed=1", above=last) == 0
    shown = json.loads(ok(arena(db, "ladder", "show", "club", "--json")))
    by_name = {row["name"]: row for row in shown["standings"]}
    assert by_name["random:seed=1"]["status"] == "retired"
    assert by_name["random:seed=5"]["games"] > 0
    assert sum(row["games"] for row in shown["standings"]) == 2 * done(db)
    assert shown["games"] == done(db) and shown["in_play"] == 0
    # the ladder reads as a tournament: the leaderboard rates its games
    board = json.loads(ok(arena(db, "leaderboard", "--tournament", str(shown["id"]), "--json")))
    assert len(board) == 5


def test_a_bot_that_keeps_faulting_is_suspended_and_the_ladder_runs_on(tmp_path: Path) -> None:
    db = Db(f"sqlite:///{tmp_path / 'arena.db'}")
    # passes its validation games (2 s a move: it answers at once), times out here (0.05 s and
    # 0.05 s of grace: it sleeps 0.25 s); sleeping 0.5 s in every game, its two validation
    # games slept through each of its moves
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import time\n\n\ndef choose_move(game, state, budget):\n"
        "    if budget.move_time < 1:\n        time.sleep(0.25)\n"
        "    return game.legal_moves(state)[0]\n"
    )
    ok(
        arena(db, "ladder", "create", "club", "--game", "tictactoe", "--move-time", "0.05",
              "--suspend-after", "2", "--sandbox", "off")
    )  # fmt: skip
    ok(arena(db, "ladder", "add", "club", "random:seed=1", "random:seed=2", str(slow)))
    result = arena(db, "ladder", "run", "club", "--jobs", "1", "--until-games", "20")
    assert result.returncode == 0, result.stderr
    assert "slow suspended" in result.stderr
    shown = json.loads(ok(arena(db, "ladder", "show", "club", "--json")))
    by_name = {row["name"]: row for row in shown["standings"]}
    assert by_name["slow"]["status"] == "suspended"
    assert by_name["slow"]["faults_in_row"] >= 2
    assert shown["games"] >= 20  # the others played on
    assert by_name["slow"]["games"] < shown["games"] // 2
    text = ok(arena(db, "ladder", "show", "club"))
    assert "suspended (" in text
    # the report and the export read a ladder as a tournament
    report = tmp_path / "club.html"
    ok(arena(db, "report", "--tournament", str(shown["id"]), "-o", str(report)))
    assert "slow" in report.read_text()
    exported = ok(arena(db, "export", "--tournament", str(shown["id"]), "--format", "csv"))
    assert len(exported.strip().splitlines()) == 1 + shown["games"]


def test_bad_input_is_one_line_exit_2_and_nothing_is_stored(tmp_path: Path) -> None:
    db = Db(f"sqlite:///{tmp_path / 'arena.db'}")
    ok(arena(db, "ladder", "create", "club", "--game", "tictactoe"))
    entrants = "SELECT count(*) FROM ladder_entrants"
    one_line_error(arena(db, "ladder", "create", "club", "--game", "tictactoe"), "exists")
    one_line_error(arena(db, "ladder", "create", "x y", "--game", "tictactoe"), "ladder name")
    one_line_error(arena(db, "ladder", "create", "other", "--game", "nosuch"), "nosuch")
    for command in (["add", "nope", "random"], ["retire", "nope", "random"], ["run", "nope"]):
        one_line_error(arena(db, "ladder", *command), "no ladder 'nope'")
    one_line_error(arena(db, "ladder", "show", "nope"), "no ladder 'nope'")
    one_line_error(arena(db, "ladder", "add", "club", str(tmp_path / "missing.py")), "no such file")
    # a bot that fails its validation game is refused with its fault; the one before it in
    # the same command is not stored either
    failing = arena(
        db, "ladder", "add", "club", "random", str(FIXTURES / "exit3.py"), "--sandbox", "off"
    )
    one_line_error(failing, "exit3 refused")
    assert "crash" in failing.stderr
    assert count(db, entrants) == 0
    ok(arena(db, "ladder", "add", "club", "random", "--sandbox", "off"))
    one_line_error(arena(db, "ladder", "add", "club", "random"), "in the ladder already")
    one_line_error(arena(db, "ladder", "retire", "club", "ghost"), "no bot 'ghost'")
    one_line_error(arena(db, "ladder", "run", "club", "--for", "soon"), "--for")
    one_line_error(arena(db, "ladder", "run", "club", "--until-games", "0"), "--until-games")
    assert count(db, entrants) == 1
    assert count(db, "SELECT count(*) FROM tournaments") == 1
    assert count(db, "SELECT count(*) FROM matches") == 0
    # one active bot: the ladder waits and says so, until its time is up
    waited = arena(db, "ladder", "run", "club", "--for", "1s")
    assert waited.returncode == 0, waited.stderr
    assert "waiting: 1 active bot" in waited.stderr
    ok(arena(db, "ladder", "retire", "club", "random"))
    one_line_error(arena(db, "ladder", "retire", "club", "random"), "retired already")
    one_line_error(arena(db, "tournament", "resume", "1"), "is a ladder")


def test_a_retired_bot_starts_no_game_after_its_retirement_is_stored(
    tmp_path: Path, arena_cli: Server
) -> None:
    """Games that take a while (a bot's move takes 0.05 s), two jobs, and matches made ahead
    for several games of each: once ``retire`` has stored the retirement, the retired bot's
    matches made ahead are dropped, not played (before, they were played after it); the
    others play on. The bots take their 0.05 s in the ladder's games only (2 s a move), not in
    their validation games (``ladder add --move-time 1``), where it was seconds of sleeping
    before the ladder started. The sleep only has to make a game outlast the ladder's steps
    between games, so that matches are made ahead and in play when ``retire`` lands; at 0.2 s
    a move the test slept about 4 s more for the same four games after the retirement."""
    db = Db(f"sqlite:///{tmp_path / 'arena.db'}")
    bots = []
    for name in ("slow_a", "slow_b", "slow_c"):
        path = tmp_path / f"{name}.py"
        path.write_text(
            "import time\n\n\ndef choose_move(game, state, budget):\n"
            "    if budget.move_time >= 2:\n        time.sleep(0.05)\n"
            "    return game.legal_moves(state)[0]\n"
        )
        bots.append(str(path))
    ok(
        arena(db, "ladder", "create", "club", "--game", "tictactoe", "--seed", "5",
              "--move-time", "2")
    )  # fmt: skip
    ok(arena(db, "ladder", "add", "club", *bots, "--move-time", "1", "--sandbox", "off"))
    log = tmp_path / "run.log"
    with background(arena_cli, db, log, "club", "--jobs", "2", "--sandbox", "off") as run:
        assert wait_for(lambda: games_of(db, "slow_a") >= 1, LIMIT_S, run, log), log.read_text()
        # the retirement from another process than the runner's (this one, tests/inprocess.py);
        # the moment it is stored is when this test first reads it (polling), after the
        # command returned: a little after it, never before
        retire = arena(db, "ladder", "retire", "club", "slow_a")
        assert retire.returncode == 0, retire.stderr
        status = "SELECT status FROM ladder_entrants WHERE position = 0"  # slow_a, added first

        def stored() -> bool:
            rows = db.query(status)
            return bool(rows) and rows[0][0] == "retired"

        assert wait_for(stored, LIMIT_S, run, log)
        retired = datetime.now(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")

        def others_played_on() -> bool:
            return (
                count(
                    db,
                    f"SELECT count(*) FROM matches WHERE status = 'done' AND started > '{retired}'",
                )
                >= 4
            )

        assert wait_for(others_played_on, LIMIT_S, run, log), log.read_text()
        # the ladder's games took their while: every stored move slept its 0.05 s
        assert count(db, "SELECT count(*) FROM moves WHERE time_ms < 50") == 0
        assert count(db, "SELECT count(*) FROM moves") > 0
        seated = (
            "FROM matches m JOIN seats s ON s.match_id = m.id JOIN bot_versions v "
            "ON v.id = s.bot_version_id JOIN bots b ON b.id = v.bot_id WHERE b.name = 'slow_a'"
        )
        # no game of the retired bot began after its retirement was stored ...
        assert count(db, f"SELECT count(*) {seated} AND m.started > '{retired}'") == 0
        # ... and none is left to play: the matches made for it ahead were dropped
        assert count(db, f"SELECT count(*) {seated} AND m.status <> 'done'") == 0
        assert games_of(db, "slow_a") >= 1  # its results stay


def test_show_prints_the_leaderboards_elo(tmp_path: Path) -> None:
    """``ladder show`` gives each entrant the Elo and 95% interval that ``arena leaderboard
    --tournament ID`` gives it (centred on 1500, with the leaderboard's prior), not the
    matchmaking model's; an entrant with no rated game yet has none."""
    db = Db(f"sqlite:///{tmp_path / 'arena.db'}")
    ok(arena(db, "ladder", "create", "club", "--game", "tictactoe", "--seed", "4"))
    field = ["random:seed=1", "random:seed=2", "alphabeta:depth=2"]
    ok(arena(db, "ladder", "add", "club", *field, "--sandbox", "off"))
    ok(arena(db, "ladder", "run", "club", "--jobs", "1", "--until-games", "12", "--quiet",
             "--sandbox", "off"))  # fmt: skip
    ok(arena(db, "ladder", "add", "club", "random:seed=9", "--sandbox", "off"))  # no game yet
    shown = json.loads(ok(arena(db, "ladder", "show", "club", "--json")))
    board = json.loads(ok(arena(db, "leaderboard", "--tournament", str(shown["id"]), "--json")))
    rated = {row["bot"]: row for row in board}
    assert set(rated) == set(field)
    by_name = {row["name"]: row for row in shown["standings"]}
    for name in field:
        row = by_name[name]
        assert row["elo"] == rated[name]["elo"]
        assert row["low"] == pytest.approx(rated[name]["elo"] - rated[name]["error"])
        assert row["high"] == pytest.approx(rated[name]["elo"] + rated[name]["error"])
    assert sum(by_name[name]["elo"] for name in field) == pytest.approx(1500.0 * len(field))
    newcomer = by_name["random:seed=9"]
    assert (newcomer["elo"], newcomer["low"], newcomer["high"]) == (None, None, None)
    text = ok(arena(db, "ladder", "show", "club"))
    line = next(x for x in text.splitlines() if "alphabeta:depth=2" in x)
    assert f"{rated['alphabeta:depth=2']['elo']:.0f}" in line.split()
    line = next(x for x in text.splitlines() if "random:seed=9" in x)
    assert line.split()[3:5] == ["-", "-"]
