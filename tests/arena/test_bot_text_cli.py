"""Text a bot controls is shown as text, through the real command line (issue 26).

A confined bot written here raises an exception whose message holds a terminal's escape
sequences (OSC ``ESC ] 0 ; TITLE BEL``: set the window title; CSI ``ESC [ 2 J``: clear the
screen), writes them to its stderr and puts them in its moves' info; a ``cmd:`` bot carries
them in its name (its command line). Every command that shows them writes the escapes
(``\\x1b``, ``\\x07``), never the bytes. A bot file named as a spreadsheet formula is an inert
cell in ``arena export -f csv``, and reads back through ``arena rate``. A name that breaks the
rule is refused by ``bots add`` with one line, exit 2, nothing stored.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot_arena.arena.transport.sandbox import support
from tests import inprocess, needs

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

FIXTURES = Path(__file__).parent / "fixtures"
HOSTILE = "\x1b]0;TITLE\x07\x1b[2J"
SHOWN = b"\\x1b]0;TITLE\\x07\\x1b[2J"  # how the commands write it
RAW = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")  # a control byte besides tab and newline
FORGED = "\nforged: a line of the bot"  # the end of the cmd: bot's name
FORMULA = '=HYPERLINK("http:__evil","click")'

BOT = f"""
import sys
from bot_arena.bots.base import Decision, SearchInfo

HOSTILE = {HOSTILE!r}
moves = 0


def choose_move(game, state, budget):
    global moves
    moves += 1
    print("thinking " + HOSTILE, file=sys.stderr, flush=True)
    if moves >= 2:
        raise RuntimeError("cursed " + HOSTILE)
    return Decision(game.legal_moves(state)[0], SearchInfo(extra={{"note": HOSTILE}}))
"""


@pytest.fixture(scope="module")
def sandbox() -> str:
    """``on`` where this machine confines bots fully (the test's bots are strangers' code)."""
    _, missing = support.probe()
    if not missing:
        return "on"
    if needs.required(needs.SANDBOX):
        needs.missing(needs.SANDBOX, "this machine lacks " + ", ".join(missing))
    return "auto"


def arena(*args: str, cwd: Path, code: int | None = 0, columns: int = 80) -> bytes:
    """Run ``arena ARGS`` in ``cwd`` (tables fitted to ``columns``; in this process,
    ``tests/inprocess.py``); its stdout and stderr bytes, checked for raw controls."""
    proc = inprocess.run(*args, cwd=cwd, env={"COLUMNS": str(columns)}, text=False)
    out = proc.stdout + proc.stderr
    if code is not None:
        assert proc.returncode == code, out.decode(errors="replace")
    assert b"Traceback" not in proc.stderr, out.decode(errors="replace")  # (JSON may quote one)
    found = RAW.search(out)
    assert found is None, f"raw control byte {found.group()!r} in {out!r}"
    hidden = {c for c in out.decode() if not (c.isprintable() or c in "\n\t")}
    assert not hidden, f"{hidden} in {out!r}"  # C1 controls, bidi overrides, ...
    forged = [line for line in out.splitlines() if line.startswith(FORGED.encode()[1:])]
    assert not forged, out  # a newline of a bot's name printed raw
    return out


def texts(value: Any) -> Iterator[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from texts(item)


def hostile_cmd() -> str:
    """A ``cmd:`` bot (first legal move, in bash) whose name holds the escape sequences and a
    newline (a line of its own, were it printed raw): its command line ends with arguments the
    script ignores."""
    return f"cmd:bash {FIXTURES / 'first_legal.sh'} {HOSTILE}{FORGED}"


class Played:
    """A database where the hostile bots played: ``arena ARGS --db`` on it."""

    def __init__(self, folder: Path, sandbox: str) -> None:
        self.folder = folder
        self.db = str(folder / "arena.db")
        self.box = ["--sandbox", sandbox]
        self.outputs: dict[str, bytes] = {}  # what the commands that played wrote

    def __call__(self, *args: str, code: int | None = 0, columns: int = 80) -> bytes:
        return arena(*args, "--db", self.db, cwd=self.folder, code=code, columns=columns)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory, sandbox: str) -> Played:
    """Match 1: ``arena play`` of the hostile bot against the hostile-named one; tournament 1
    (named by the user with the escapes too): both and random, each with a time of its own; a
    registered ``cmd:`` bot whose target holds them; match 2 voided with them in the reason."""
    folder = tmp_path_factory.mktemp("played")
    (folder / "hostile.py").write_text(BOT)
    db = Played(folder, sandbox)
    out = db("play", *ttt(db), "--bot", "hostile.py", "--bot", hostile_cmd())
    assert out.count(SHOWN) >= 3  # its name, its exception, its stderr (the traceback)
    db.outputs["play"] = out
    odds = ["--move-time", "5", "--move-time", "4", "--move-time", "3"]
    run = db("tournament", "run", "tictactoe", *odds, *db.box, "--name", f"cup{HOSTILE}",
             "--bot", "hostile.py", "--bot", hostile_cmd(), "--bot", "random")  # fmt: skip
    db.outputs["run"] = run
    db("bots", "add", hostile_cmd(), "-n", "plain", "-g", "tictactoe", "--move-time", "5", *db.box)
    return db


def ttt(db: Played) -> list[str]:
    return ["tictactoe", "--move-time", "5", *db.box]


@pytest.mark.timeout(600)
def test_play_shows_the_bots_text_as_text(played: Played) -> None:
    out = played.outputs["play"]
    assert b"result: seat 1 (cmd:bash " in out and b"fault: seat 0 (hostile)" in out
    as_json = played("play", *ttt(played), "--bot", "hostile.py", "--bot", "random", "--json")
    record = json.loads(as_json)  # JSON escapes the controls itself, and keeps the true text
    assert record["seats"][0]["fault"]["message"].endswith(f"cursed {HOSTILE}")
    assert record["moves"][0]["info"]["note"] == HOSTILE
    moves = played("play", *ttt(played), "--bot", hostile_cmd(), "--bot", "random", "--no-show")
    assert moves.startswith(b"tictactoe 2 players, zero-sum: cmd:bash ") and SHOWN in moves


@pytest.mark.timeout(600)
def test_a_tournament_shows_the_bots_text_as_text(played: Played) -> None:
    run = played.outputs["run"]
    faults = [line for line in run.splitlines() if line.startswith(b"fault: ")]
    assert faults and all(line.endswith(b"cursed " + SHOWN) for line in faults), run
    rest = b"\n".join(line for line in run.splitlines() if not line.startswith(b"fault: "))
    assert SHOWN in rest  # the standings name the cmd: bot
    # fitted to the terminal, long names are cut in the middle: their end is there
    show = played("tournament", "show", "1")
    assert show.startswith(b"tournament 1 (cup" + SHOWN + b")\n")
    assert b"  time      hostile.py: move 5s\n" in show  # time odds: each bot's own
    roomy = played("tournament", "show", "1", columns=400)  # fitted, and nothing cut
    assert b"cmd:bash " + bytes(FIXTURES / "first_legal.sh") + b" " + SHOWN in roomy
    wide = played("tournament", "show", "1", "--wide")
    assert SHOWN + b"\\nforged: a line of the bot: move 4s\n" in wide
    assert b"cup" + SHOWN in played("tournament", "list")
    sprt = played("sprt", *ttt(played), "--bot", hostile_cmd(), "--bot", "random",
                  "--max-games", "4")  # fmt: skip
    assert b"SPRT cmd:bash" in sprt and sprt.count(SHOWN) >= 2  # progress, the test's state


@pytest.mark.timeout(600)
def test_stored_matches_show_the_bots_text_as_text(played: Played) -> None:
    assert played("matches").count(SHOWN) >= 4
    replay = played("replay", "1")  # the match of `arena play`
    assert b"note=" + SHOWN in replay  # the move's info
    assert b"cursed " + SHOWN in replay  # the fault
    voided = played("matches", "void", "2", "--reason", f"bad{HOSTILE}")
    assert b"reason: bad" + SHOWN in voided
    assert b"bad" + SHOWN in played("matches", "--status", "void")
    assert b"VOID: bad" + SHOWN in played("replay", "2")
    pgn = played("export", "-f", "pgn")  # tags and the fault's comment
    assert b'[White "hostile"]' in pgn and b"cursed \\x1b]0;TITLE" in pgn
    for args in (["matches"], ["replay", "1"], ["tournament", "show", "1"], ["bots", "list"]):
        out = played(*args, "--json")
        assert any(HOSTILE in text for text in texts(json.loads(out)))  # whole, only escaped


@pytest.mark.timeout(600)
def test_ratings_show_the_bots_names_as_text(played: Played) -> None:
    for command in ("leaderboard", "crosstable"):
        assert SHOWN in played(command, "--wide")
        assert SHOWN in played(command, "--format", "markdown")
        assert b"cmd:bash" in played(command)  # the name cut to fit (raw bytes checked)
    # results played elsewhere: the names in a file
    (played.folder / "games.csv").write_text(f"white,black,result\nx{HOSTILE},y\u202e,1-0\n")
    for fmt in ("table", "markdown"):
        rated = arena("rate", "games.csv", "--wide", "--format", fmt, cwd=played.folder)
        assert b"x" + SHOWN in rated and b"y\\u202e" in rated


@pytest.mark.timeout(600)
def test_bots_commands_show_the_bots_text_as_text(played: Played) -> None:
    checked = arena("bots", "check", "hostile.py", "-g", "tictactoe", "--move-time", "5",
                    *played.box, cwd=played.folder, code=1)  # fmt: skip
    assert checked.startswith(b"error: hostile failed validation") and SHOWN in checked
    ok = arena("bots", "check", hostile_cmd(), "-g", "tictactoe", "--move-time", "5",
               *played.box, cwd=played.folder)  # fmt: skip
    assert ok.startswith(b"ok: cmd:bash ") and SHOWN in ok
    junk = f"cmd:bash {FIXTURES / 'junk.sh'} {HOSTILE}{FORGED}"  # answers e2e4 please
    failed = arena("bots", "check", junk, "-g", "tictactoe", "--move-time", "5", *played.box,
                   cwd=played.folder, code=1)  # fmt: skip
    assert failed.startswith(b"error: cmd:bash ") and SHOWN in failed
    # the registered command bot's command line (its target)
    assert SHOWN in played("bots", "list")
    assert SHOWN in played("bots", "show", "plain")
    # a name registered before names were checked (or written by another program)
    with sqlite3.connect(played.db) as conn:
        conn.execute("UPDATE bots SET name = ? WHERE name = 'plain'", (f"old{HOSTILE}",))
    assert b"old" + SHOWN in played("bots", "list")


@pytest.mark.timeout(120)
def test_a_file_name_with_control_characters_is_refused(tmp_path: Path) -> None:
    name = f"bot{HOSTILE}.py"
    (tmp_path / name).write_text("def choose_move(game, state, budget):\n    return 0\n")
    out = arena("play", "tictactoe", "--bot", name, "--bot", "random", "--no-save",
                cwd=tmp_path, code=2)  # fmt: skip
    assert out.count(b"\n") == 1 and b"rename the file" in out


@pytest.mark.timeout(120)
def test_an_error_that_quotes_a_bot_shows_it_as_text(tmp_path: Path) -> None:
    """``fail``'s one line: a UCI engine (named by its command line) refused for tic-tac-toe."""
    out = arena("play", "tictactoe", "--bot", f"uci:/bin/true {HOSTILE}", "--bot", "random",
                "--no-save", cwd=tmp_path, code=2)  # fmt: skip
    assert out == b"error: uci:/bin/true " + SHOWN + b": a UCI engine plays chess, not tictactoe\n"


@pytest.mark.timeout(600)
def test_a_formula_named_bot_is_an_inert_csv_cell(tmp_path: Path, sandbox: str) -> None:
    bot = tmp_path / f"{FORMULA}.py"  # a legal Linux file name: no '/'
    bot.write_text("def choose_move(game, state, budget):\n    return game.legal_moves(state)[0]\n")
    db = str(tmp_path / "arena.db")
    arena("tournament", "run", "tictactoe", "--move-time", "5", "--sandbox", sandbox,
          "--bot", bot.name, "--bot", "random", "--db", db, cwd=tmp_path)  # fmt: skip

    exported = arena("export", "-f", "csv", "--db", db, cwd=tmp_path).decode()
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert len(rows) == 2
    for row in rows:
        assert f"'{FORMULA}" in (row["white"], row["black"])
        assert row["bots"] in (f"'{FORMULA};random", f"random;{FORMULA}")  # only a start counts
        for cell in row.values():
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), row
    assert f',"\'{FORMULA.replace(chr(34), chr(34) * 2)}",' in exported  # prefixed and quoted
    assert ',"random",' in exported and ',"tictactoe",' in exported  # every text cell quoted

    # what the arena writes reads back: arena rate rates the export under the bot's own name
    (tmp_path / "export.csv").write_text(exported)
    rated = json.loads(arena("rate", "export.csv", "--json", cwd=tmp_path))
    assert sorted(r["bot"] for r in rated) == sorted([FORMULA, "random"])
    # its own CSV: the name inert again; numbers stay numbers (a negative rating is neither
    # quoted nor prefixed): here the formula bot loses every game, rated around 0
    games = "white,black,result\n" + f'random,"{FORMULA.replace(chr(34), chr(34) * 2)}",1-0\n' * 3
    (tmp_path / "lost.csv").write_text(games)
    table = arena("rate", "lost.csv", "--format", "csv", "--center", "0", cwd=tmp_path).decode()
    ratings = list(csv.DictReader(io.StringIO(table)))
    assert [r["bot"] for r in ratings] == ["random", f"'{FORMULA}"]
    assert float(ratings[1]["elo"]) < 0
    assert f',"\'{FORMULA.replace(chr(34), chr(34) * 2)}",{ratings[1]["elo"]},' in table
    for out in (
        arena("leaderboard", "--format", "csv", "--db", db, cwd=tmp_path),
        arena("crosstable", "--format", "csv", "--db", db, cwd=tmp_path),
    ):
        assert f"\"'{FORMULA.replace(chr(34), chr(34) * 2)}" in out.decode()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["=cmd", "+cmd", "-cmd", "@cmd", f"x{HOSTILE}", "a b", "  "])
def test_bots_add_refuses_a_bad_name_and_stores_nothing(tmp_path: Path, name: str) -> None:
    db = tmp_path / "arena.db"
    sqlite3.connect(db).close()  # an empty database file: nothing may be written into it
    out = arena("bots", "add", str(FIXTURES / "first_legal.py"), "-n", name, "-g", "tictactoe",
                "--db", str(db), cwd=tmp_path, code=2)  # fmt: skip
    assert out.count(b"\n") == 1 and out.startswith(b"error: ") and b"bot name" in out, out
    tables = sqlite3.connect(db).execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == []
