"""Issue 26 (one scan of a bot's files): a bot's folder is a stranger's, so the scan that finds
its files (for its version and for what the sandbox lets it read) takes regular files only,
follows a link only when it stays inside the folder, and is bounded; a registered bot is
loadable by construction, and one stored by an older release that is not is one line (a
tournament leaves it out and says so); paths are taken as users write them (``cmd:./engine``,
a folder bot's own data file, two students' ``bot.py``).

All through the real command line, confined by default (``--sandbox auto``). The secret of
each hostile test is a canary the test writes outside the bot's folder: it never shows in what
the arena prints, stores or reports.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests import inprocess
from tests.db.dbtest import sqlite_copy

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

# a folder bot that sends whatever its folder's ``loot`` holds out in its move's info
LOOTER = """
import pathlib

HERE = pathlib.Path(__file__).parent


def choose_move(game, state, budget):
    found = []
    for path in sorted(HERE.glob("loot/**/*")) + [HERE / "loot"]:
        try:
            found.append(path.read_text())
        except OSError as exc:
            found.append(type(exc).__name__)
    return game.legal_moves(state)[0], {"pv": found}
"""
# a file bot that imports a helper module: the helper is a link to the secret settings
IMPORTER = """
import settings


def choose_move(game, state, budget):
    return game.legal_moves(state)[0], {"pv": [settings.PASSWORD]}
"""
FIRST = """
def choose_move(game, state, budget):
    return game.legal_moves(state)[0]
"""
# a cmd: bot speaking the arena's JSON lines (docs/protocol.md)
RANDBOT = """#!/usr/bin/env python3
import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] in ("hello", "new_game"):
        print(json.dumps({"type": "ready", "name": "randbot"}), flush=True)
    elif msg["type"] == "move":
        print(json.dumps({"type": "move", "id": msg["id"], "move": msg["legal"][0]}), flush=True)
    elif msg["type"] == "quit":
        break
"""


def arena(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> Any:
    """``arena ARGS`` in ``cwd`` with ``env`` added, in this process (``tests/inprocess.py``)."""
    return inprocess.run(*args, cwd=cwd, env=env, timeout=timeout)


def one_line(proc: Any) -> str:
    """The refusal: exit 2, one line on stderr, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return str(lines[0])


def canary(tmp_path: Path) -> tuple[str, Path, Path]:
    """A secret outside any bot's folder: a folder holding a canary file, and a settings.py
    with a password."""
    secret = f"CANARY-{secrets.token_hex(8)}"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary.txt").write_text(secret)
    settings = tmp_path / "settings.py"
    settings.write_text(f"PASSWORD = {secret!r}\n")
    return secret, outside, settings


def never_shows(secret: str, tmp_path: Path, db: Path, *outputs: Any) -> None:
    """``secret`` in no output, not in the database's bytes, not in its report."""
    for proc in outputs:
        assert secret not in proc.stdout and secret not in proc.stderr
    assert db.exists()
    assert secret.encode() not in db.read_bytes()
    report = tmp_path / "report.html"
    made = arena("report", "--game", "tictactoe", "-o", str(report), "--db", str(db), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert secret not in report.read_text() and secret not in made.stdout + made.stderr


@pytest.fixture(scope="module")
def one_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with a game in it (so a report has something to show), played once for the
    module: each test takes a copy (``fresh_db``)."""
    folder = tmp_path_factory.mktemp("one_game")
    db = folder / "arena.db"
    proc = arena("play", "tictactoe", "-b", "random", "-b", "random", "--db", str(db), cwd=folder)
    assert proc.returncode == 0, proc.stderr
    return db


def fresh_db(one_game: Path, tmp_path: Path) -> Path:
    """A copy of ``one_game``'s database in ``tmp_path``, the test's own."""
    db = tmp_path / "arena.db"
    sqlite_copy(one_game, db)
    return db


# --- rows 1 and 2: links that leave the bot's folder --------------------------------------------


@pytest.mark.timeout(900)
def test_a_link_out_of_a_bots_folder_is_refused_and_nothing_behind_it_shows(
    one_game: Path, tmp_path: Path
) -> None:
    """Row 1: a folder bot whose ``loot`` leads to a folder outside, and a file bot whose
    helper module is a link to a settings file outside, are refused by ``bots add`` and
    ``play`` (one line naming the link, exit 2); nothing is stored."""
    secret, outside, settings = canary(tmp_path)
    db = fresh_db(one_game, tmp_path)
    folder_bot = tmp_path / "pkgbot"
    folder_bot.mkdir()
    (folder_bot / "main.py").write_text(LOOTER)
    (folder_bot / "loot").symlink_to(outside)
    file_bot = tmp_path / "bots" / "bot.py"
    file_bot.parent.mkdir()
    file_bot.write_text(IMPORTER)
    (file_bot.parent / "settings.py").symlink_to(settings)
    outputs = []
    for spec, link in ((str(folder_bot), "'loot'"), (str(file_bot), "'settings.py'")):
        add = arena(
            "bots", "add", spec, "-n", "x", "-g", "tictactoe", "--db", str(db), cwd=tmp_path
        )
        assert link in one_line(add) and "leads out" in add.stderr
        play = arena("play", "tictactoe", "-b", spec, "-b", "random", "--db", str(db), cwd=tmp_path)
        assert link in one_line(play)
        outputs += [add, play]
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM matches").fetchone() == (1,)
        names = {n for (n,) in conn.execute("SELECT name FROM bots")}
    assert names == {"random"}
    never_shows(secret, tmp_path, db, *outputs)


@pytest.mark.timeout(900)
def test_a_link_out_added_after_the_bot_was_registered_leads_nowhere(
    one_game: Path, tmp_path: Path
) -> None:
    """A bot registered clean, then given ``loot -> outside``: it plays (its version is the
    stored one, run from the files stored with it) and reads nothing behind the link."""
    secret, outside, _ = canary(tmp_path)
    db = fresh_db(one_game, tmp_path)
    folder_bot = tmp_path / "pkgbot"
    folder_bot.mkdir()
    (folder_bot / "main.py").write_text(LOOTER)
    added = arena(
        "bots", "add", str(folder_bot), "-n", "p", "-g", "tictactoe", "--db", str(db), cwd=tmp_path
    )
    assert added.returncode == 0, added.stderr
    (folder_bot / "loot").symlink_to(outside)
    play = arena(
        "play", "tictactoe", "-b", "p", "-b", "random", "--json", "--db", str(db), cwd=tmp_path
    )
    assert play.returncode == 0, play.stderr
    record = json.loads(play.stdout)
    assert record["sandbox"] == "confined" and record["seats"][0]["fault"] is None
    never_shows(secret, tmp_path, db, added, play)


@pytest.mark.timeout(900)
def test_a_link_that_stays_inside_the_folder_is_followed(tmp_path: Path) -> None:
    """A link inside the bot's folder is the bot's own: its folder's ``loot`` leads to a
    folder beside ``main.py``, and the confined bot reads it."""
    folder_bot = tmp_path / "pkgbot"
    (folder_bot / "data").mkdir(parents=True)
    (folder_bot / "data" / "w.txt").write_text("weights-inside")
    (folder_bot / "main.py").write_text(LOOTER)
    (folder_bot / "loot").symlink_to(folder_bot / "data")
    proc = arena(
        "play", "tictactoe", "-b", str(folder_bot), "-b", "random", "--json", "--no-save",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["sandbox"] == "confined" and record["seats"][0]["fault"] is None
    first = next(m for m in record["moves"] if m["seat"] == 0)
    assert "weights-inside" in json.dumps(first), first


@pytest.mark.timeout(5)
def test_a_link_to_the_root_is_refused_at_once(tmp_path: Path) -> None:
    """Row 2: ``loot -> /`` is refused before anything is walked (the scan once walked the
    whole file system, held every .py file and blocked on /proc/kmsg)."""
    folder_bot = tmp_path / "pkgbot"
    folder_bot.mkdir()
    (folder_bot / "main.py").write_text(LOOTER)
    (folder_bot / "loot").symlink_to("/")
    proc = arena("play", "tictactoe", "-b", str(folder_bot), "-b", "random", cwd=tmp_path)
    assert "'loot'" in one_line(proc)


@pytest.mark.timeout(120)
def test_a_bot_beyond_the_scans_limits_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    """Too many files, too many bytes, too long a scan, a bad limit: one line each, exit 2,
    no bot stored; a FIFO in the folder is never opened (the scan would block)."""
    folder_bot = tmp_path / "pkgbot"
    (folder_bot / "data").mkdir(parents=True)
    (folder_bot / "main.py").write_text(FIRST)
    for i in range(30):
        (folder_bot / "data" / f"{i}.txt").write_text("x" * 40_000)  # 1.2 MB in all
    os.mkfifo(folder_bot / "pipe")
    db = tmp_path / "arena.db"
    add = ("bots", "add", str(folder_bot), "-n", "big", "-g", "tictactoe", "--db", str(db))
    for env, expected in (
        ({"ARENA_BOT_MAX_FILES": "20"}, "more than 20 files"),
        ({"ARENA_BOT_MAX_MB": "1"}, "more than 1 MB"),
        ({"ARENA_BOT_SCAN_SECONDS": "1e-9"}, "took more than"),
        ({"ARENA_BOT_MAX_FILES": "lots"}, "$ARENA_BOT_MAX_FILES must be a positive number"),
    ):
        assert expected in one_line(arena(*add, cwd=tmp_path, env=env))
    with sqlite3.connect(db) as conn:  # opened (and made) before the check: nothing stored
        assert conn.execute("SELECT count(*) FROM bot_versions").fetchone() == (0,)
    within = arena(*add, "--json", cwd=tmp_path, env={"ARENA_BOT_MAX_FILES": "40"})
    assert within.returncode == 0, within.stderr  # 30 files, a folder, main.py, the FIFO


# --- row 3: loadable by construction -----------------------------------------------------------


@pytest.mark.timeout(600)
def test_a_stored_version_that_cannot_be_loaded_is_one_line_and_left_out(
    one_game: Path, tmp_path: Path
) -> None:
    """A database from an older release holds a version whose file path leaves its folder
    (written here directly, as that release did), and a registered program that is gone:
    ``play`` naming either is one line naming the bot; a tournament including both runs the
    others and says in its summary that their games were not played."""
    secret, _, _ = canary(tmp_path)
    db = fresh_db(one_game, tmp_path)
    (tmp_path / "old.py").write_text(FIRST)
    (tmp_path / "first.py").write_text(FIRST)
    added = arena(
        "bots", "add", "old.py", "-n", "old", "-g", "tictactoe", "--db", str(db), cwd=tmp_path
    )
    assert added.returncode == 0, added.stderr
    leaving = [["../../../../root/settings.py", f"PASSWORD = {secret!r}"]]
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE bot_versions SET files = ? WHERE target LIKE ?",
            (json.dumps(leaving), "%old.py"),
        )
    (tmp_path / "randbot.py").write_text(RANDBOT)
    (tmp_path / "randbot.py").chmod(0o755)
    added = arena(
        "bots",
        "add",
        "cmd:./randbot.py",
        "-n",
        "gone",
        "-g",
        "tictactoe",
        "--db",
        str(db),
        cwd=tmp_path,
    )
    assert added.returncode == 0, added.stderr
    (tmp_path / "randbot.py").unlink()
    for name in ("old", "gone"):
        play = arena("play", "tictactoe", "-b", name, "-b", "random", "--db", str(db), cwd=tmp_path)
        assert f"registered bot {name!r} cannot be loaded" in one_line(play)
    run = arena(
        "tournament", "run", "tictactoe", "--bot", "old", "--bot", "random", "--bot", "gone",
        "--bot", "first.py", "--games", "2", "--jobs", "1", "--db", str(db), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    for name in ("old", "gone"):
        said = f"registered bot {name!r} cannot be loaded"
        assert said in run.stderr  # a warning when it starts, and in the summary
        assert any(
            said in line and "none of its games played" in line for line in run.stdout.splitlines()
        )
    with sqlite3.connect(db) as conn:
        seats = {
            n
            for (n,) in conn.execute(
                "SELECT DISTINCT b.name FROM seats s JOIN bot_versions v"
                " ON v.id = s.bot_version_id JOIN bots b ON b.id = v.bot_id"
            )
        }
    assert "old" not in seats and "gone" not in seats
    never_shows(secret, tmp_path, db, run)


@pytest.mark.timeout(1500)
def test_a_resume_leaves_out_a_stored_bot_that_cannot_be_loaded_and_plays_the_rest(
    tmp_path: Path,
) -> None:
    """A registered program that is gone since its tournament started: ``tournament resume``
    warns, plays the other bots' matches, leaves that bot's pending (a later resume, once it
    loads, plays them) and says so under the leaderboard (``left_out`` in --json), exit 0."""
    from bot_arena.arena.match.botspec import resolve
    from bot_arena.arena.match.timecontrol import TimeControl
    from bot_arena.arena.tournament.create import create
    from bot_arena.db.session import make_engine, session_factory
    from bot_arena.db.store import lookup_bot
    from bot_arena.games import get

    db = tmp_path / "arena.db"
    (tmp_path / "first.py").write_text(FIRST)
    (tmp_path / "randbot.py").write_text(RANDBOT)
    (tmp_path / "randbot.py").chmod(0o755)
    add = ("bots", "add", "cmd:./randbot.py", "-n", "gone", "-g", "tictactoe", "--db", str(db))
    assert arena(*add, cwd=tmp_path, timeout=500).returncode == 0
    engine = make_engine(f"sqlite:///{db}")
    factory = session_factory(engine)

    def lookup(name: str) -> Any:
        with factory() as session:
            return lookup_bot(session, name)

    specs = ["gone", "random", str(tmp_path / "first.py")]
    tid = create(
        factory, get("tictactoe"), specs, [resolve(s, lookup) for s in specs],
        fmt="round-robin", games_per_group=2, time_control=TimeControl(move_time=5.0), seed=1,
        opening_plies=0,
    )  # fmt: skip
    engine.dispose()
    (tmp_path / "randbot.py").unlink()
    resumed = arena(
        "tournament", "resume", str(tid), "-j", "1", "--json", "--db", str(db), cwd=tmp_path,
        timeout=500,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    said = "registered bot 'gone' cannot be loaded"
    assert f"warning: {said}" in resumed.stderr and "Traceback" not in resumed.stderr
    summary = json.loads(resumed.stdout)
    [line] = summary["left_out"]
    assert said in line and line.endswith("none of its remaining games played")
    with sqlite3.connect(db) as conn:
        statuses = dict(conn.execute("SELECT status, count(*) FROM matches GROUP BY status"))
        seats = {
            n
            for (n,) in conn.execute(
                "SELECT DISTINCT b.name FROM seats s JOIN bot_versions v ON v.id = s.bot_version_id"
                " JOIN bots b ON b.id = v.bot_id JOIN matches m ON m.id = s.match_id"
                " WHERE m.status = 'done'"
            )
        }
    assert statuses == {"done": 2, "pending": 4}  # random v first, both ways; gone's wait
    assert seats == {"random", "first"}
    text = arena(
        "tournament", "resume", str(tid), "-j", "1", "--db", str(db), cwd=tmp_path, timeout=500
    )
    assert text.returncode == 0, text.stderr
    last = text.stdout.splitlines()[-1]  # under the leaderboard
    assert said in last and last.endswith("none of its remaining games played")


# --- paths as users write them ------------------------------------------------------------------


@pytest.mark.timeout(900)
def test_programs_named_relative_to_the_current_folder_run_confined(tmp_path: Path) -> None:
    """``cmd:./randbot.py``, ``cmd:python3 randbot.py`` and ``uci:./sf`` (the README's own
    ``cmd:./my_engine``) run under the default sandbox, whose working folder is not the
    user's: their paths are made absolute when the spec is read."""
    (tmp_path / "randbot.py").write_text(RANDBOT)
    (tmp_path / "randbot.py").chmod(0o755)
    for spec in ("cmd:./randbot.py", "cmd:python3 randbot.py"):
        proc = arena(
            "play", "tictactoe", "-b", spec, "-b", "random", "--json", "--no-save", cwd=tmp_path
        )
        assert proc.returncode == 0, (spec, proc.stderr)
        record = json.loads(proc.stdout)
        assert record["sandbox"] == "confined", record["sandbox"]
        assert record["seats"][0]["bot"] == spec and record["seats"][0]["fault"] is None, spec
    stockfish = "/usr/games/stockfish"
    if not os.path.exists(stockfish):
        pytest.skip("stockfish is not installed")
    (tmp_path / "sf").symlink_to(stockfish)
    proc = arena(
        "play", "chess", "-b", "uci:./sf", "-b", "random", "--depth", "1", "--max-moves", "4",
        "--json", "--no-save", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["sandbox"] == "confined" and record["seats"][0]["fault"] is None, record["seats"]


# reads its own data file beside main.py, and one in a folder of its own, by absolute path and
# by a path relative to its current folder (its private working folder when confined)
READER = """
import os
import pathlib

HERE = pathlib.Path(__file__).resolve().parent


def choose_move(game, state, budget):
    texts = [(HERE / "w.txt").read_text(), open(os.path.relpath(HERE / "data" / "b.txt")).read()]
    return game.legal_moves(state)[0], {"pv": texts}
"""


@pytest.mark.timeout(900)
def test_a_folder_bot_reads_every_file_of_its_own_folder(tmp_path: Path) -> None:
    folder_bot = tmp_path / "pkgbot"
    (folder_bot / "data").mkdir(parents=True)
    (folder_bot / "main.py").write_text(READER)
    (folder_bot / "w.txt").write_text("own-weights")
    (folder_bot / "data" / "b.txt").write_text("own-book")
    proc = arena(
        "play", "tictactoe", "-b", "pkgbot", "-b", "random", "--json", "--no-save", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["sandbox"] == "confined" and record["seats"][0]["fault"] is None, record["seats"]
    first = next(m for m in record["moves"] if m["seat"] == 0)
    assert "own-weights" in json.dumps(first) and "own-book" in json.dumps(first), first


@pytest.mark.timeout(900)
def test_two_bots_of_the_same_file_name_from_two_folders_are_two_bots(tmp_path: Path) -> None:
    """``alice/bot.py`` and ``bob/bot.py`` enter as ``alice/bot`` and ``bob/bot``; a bot alone
    keeps its plain name, and the same file given twice is still refused."""
    for student, pick in (("alice", "0"), ("bob", "-1")):
        (tmp_path / student).mkdir()
        (tmp_path / student / "bot.py").write_text(
            f"def choose_move(game, state, budget):\n    return game.legal_moves(state)[{pick}]\n"
        )
    db = tmp_path / "arena.db"
    proc = arena(
        "tournament", "run", "tictactoe", "--bot", "alice/bot.py", "--bot", "bob/bot.py",
        "--games", "2", "--jobs", "1", "--db", str(db), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "alice/bot" in proc.stdout and "bob/bot" in proc.stdout
    with sqlite3.connect(db) as conn:
        names = {n for (n,) in conn.execute("SELECT name FROM bots")}
    assert names == {"alice/bot", "bob/bot"}
    play = arena(
        "play", "tictactoe", "-b", "alice/bot.py", "-b", "random", "--json", "--no-save",
        cwd=tmp_path,
    )  # fmt: skip
    assert play.returncode == 0 and json.loads(play.stdout)["seats"][0]["bot"] == "bot"
    twice = arena(
        "tournament", "run", "tictactoe", "--bot", "alice/bot.py", "--bot", "alice/bot.py",
        "--db", str(db), cwd=tmp_path,
    )  # fmt: skip
    assert "in the field twice" in one_line(twice)


def test_a_program_named_without_a_slash_is_still_found_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cmd:python3 randbot.py`` beside a file called ``python3``: the program is PATH's
    (as in a shell), the argument is the file beside it."""
    from bot_arena.arena.match.botspec import anchor_command

    (tmp_path / "python3").write_text("not a program")
    (tmp_path / "randbot.py").write_text(RANDBOT)
    monkeypatch.chdir(tmp_path)
    assert anchor_command("python3 randbot.py") == f"python3 {tmp_path / 'randbot.py'}"
    assert anchor_command("./python3 -x") == f"{tmp_path / 'python3'} -x"


@pytest.mark.timeout(900)
def test_raised_limits_reach_the_tournaments_job_processes(tmp_path: Path) -> None:
    """Jobs start with a clean environment: the limits the field was resolved with go with
    them, so a folder bot over the default 10,000 files, allowed by ``ARENA_BOT_MAX_FILES``,
    runs from its own folder in every job (and reads its data file there)."""
    folder_bot = tmp_path / "bigbot"
    many = folder_bot / "many"
    many.mkdir(parents=True)
    for i in range(10_001):  # os.open: Path.touch tries utime first, a third more syscalls
        os.close(os.open(many / str(i), os.O_CREAT | os.O_WRONLY, 0o644))
    (folder_bot / "main.py").write_text(READER)
    (folder_bot / "w.txt").write_text("own-weights")
    (folder_bot / "data").mkdir()
    (folder_bot / "data" / "b.txt").write_text("own-book")
    db = tmp_path / "arena.db"
    run = (
        "tournament", "run", "tictactoe", "--bot", "bigbot", "--bot", "random", "--games", "2",
        "--jobs", "2", "--db", str(db),
    )  # fmt: skip
    assert "more than 10000 files" in one_line(arena(*run, cwd=tmp_path))
    proc = arena(*run, cwd=tmp_path, env={"ARENA_BOT_MAX_FILES": "20000"})
    assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(db) as conn:
        faults = conn.execute("SELECT count(*) FROM seats WHERE fault IS NOT NULL").fetchone()
        done = conn.execute("SELECT count(*) FROM matches WHERE status = 'done'").fetchone()
    assert faults == (0,) and done == (2,), proc.stdout
