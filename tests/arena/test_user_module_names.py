"""A user's bot may keep helper modules named like the arena's own packages.

The arena installs under ``bot_arena`` (``bot_arena.games``, ``bot_arena.db``, ...), so a bot whose
folder holds ``games.py``, ``db.py``, ``bots.py`` and ``arena.py`` imports *those* files, in every
way a bot is run: a ``.py`` file, a ``pkg.module:attr`` named from the folder it is run in, and
inside a parallel tournament. Were the arena installed as top-level ``games``/``bots``/``arena``
packages, the worker (which has already imported them) would hand the bot the arena's modules
and ``from games import first`` would fail at load time: a stall, not a game.

Everything runs as a user would: the ``arena`` command in a child process, from the bot's folder.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot_arena import games

# each test plays tournaments or whole games through separate processes: seconds a test
pytestmark = pytest.mark.slow

# The ``arena`` console script without the current folder on sys.path (as the installed script).
ARENA = [sys.executable, "-P", "-m", "bot_arena.arena.cli.app"]
COMMAND_TIMEOUT = 120.0  # seconds: a bound for a hung run, far above a normal one (~1-3 s)
HELPERS = ["user games.py", "user db.py", "user bots.py", "user arena.py"]

# Every helper defines something the bot needs, so a helper shadowed by the arena's package of
# that name makes the import fail. The user's db.py keeps what it is given in memory (a confined
# bot may write only in its own working folder) and the bot reports it in its move info.
HELPER_SOURCES = {
    "games.py": (
        'ORIGIN = "user games.py"\n\n\n'
        "def first(moves):\n"
        '    """The first legal move (what this bot always plays)."""\n'
        "    return moves[0]\n"
    ),
    "db.py": (
        'ORIGIN = "user db.py"\n'
        "SEEN = []\n\n\n"
        "def remember(text):\n"
        '    """Keep ``text``; (how many texts this process kept so far, ``text``)."""\n'
        "    SEEN.append(text)\n"
        "    return len(SEEN), text\n"
    ),
    "bots.py": 'ORIGIN = "user bots.py"\n',
    "arena.py": 'ORIGIN = "user arena.py"\n',
}

BOT_SOURCE = (
    "import arena\n"
    "import bots\n"
    "import db\n"
    "from games import ORIGIN, first\n\n\n"
    "def choose_move(game, state, budget):\n"
    "    move = first(list(game.legal_moves(state)))\n"
    "    kept = db.remember(game.format_move(move))\n"
    "    return move, {'helpers': [ORIGIN, db.ORIGIN, bots.ORIGIN, arena.ORIGIN], 'db': kept}\n"
)

MODULE_BOT = "mypkg.player:choose_move"


def write_user_folder(folder: Path) -> Path:
    """The user's folder: the four helpers, ``mybot.py`` and ``mypkg/player.py`` (same bot)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, source in HELPER_SOURCES.items():
        (folder / name).write_text(source)
    (folder / "mybot.py").write_text(BOT_SOURCE)
    (folder / "mypkg").mkdir(exist_ok=True)
    (folder / "mypkg" / "__init__.py").write_text("")
    (folder / "mypkg" / "player.py").write_text(BOT_SOURCE)
    return folder


def arena(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [*ARENA, *args], cwd=cwd, capture_output=True, text=True, timeout=COMMAND_TIMEOUT
    )
    assert result.returncode == 0, f"arena {' '.join(args)}:\n{result.stdout}\n{result.stderr}"
    return result


def user_moves(record: dict[str, Any], users: set[str]) -> list[str]:
    """Check a match record: it ended normally without faults, and every move of a seat played
    by one of ``users`` (the user's bot) is the first legal move, reported with the user's
    helpers, and kept by the user's db.py once (its count goes up by one with each of the
    seat's moves). Returns those moves, in order."""
    assert record["termination"] == "normal", record["seats"]
    assert all(s["fault"] is None for s in record["seats"]), record["seats"]
    seats = {i for i, s in enumerate(record["seats"]) if s["bot"] in users}
    game = games.get(record["game"], **record["params"])
    state = game.parse_position(record["start_position"])
    mine = []
    kept: dict[int, list[int]] = {seat: [] for seat in seats}
    for move in record["moves"]:
        if move["seat"] in seats:
            first = game.format_move(game.legal_moves(state)[0])
            assert move["move"] == first, f"seat {move['seat']} did not play the first legal move"
            assert move["info"]["helpers"] == HELPERS
            count, text = move["info"]["db"]
            assert text == move["move"], "the user's db.py did not keep the move played"
            kept[move["seat"]].append(count)
            mine.append(move["move"])
        state = game.apply(state, game.move_from_text(state, move["move"]))
    for counts in kept.values():  # one worker per seat: db.py ran once per move
        assert counts == list(range(counts[0], counts[0] + len(counts))), counts
    assert game.is_terminal(state) and game.format_position(state) == record["final_position"]
    assert seats and mine, f"none of {users} played in this match"
    return mine


def play(cwd: Path, bots: list[str], seed: int) -> dict[str, Any]:
    """``arena play tictactoe`` run in ``cwd``; the match record."""
    args = ["play", "tictactoe", "--move-time", "5", "--seed", str(seed), "--json", "--no-save"]
    for bot in bots:
        args += ["--bot", bot]
    record: dict[str, Any] = json.loads(arena(cwd, *args).stdout)
    return record


def test_a_file_bot_uses_its_own_games_db_bots_and_arena_modules(tmp_path: Path) -> None:
    folder = write_user_folder(tmp_path / "user")
    elsewhere = tmp_path / "elsewhere"  # the file is named by its path from another folder
    elsewhere.mkdir()
    record = play(elsewhere, [str(folder / "mybot.py"), "random"], seed=1)
    user_moves(record, {"mybot"})


def test_a_module_bot_run_from_its_folder_uses_its_own_helpers(tmp_path: Path) -> None:
    folder = write_user_folder(tmp_path / "user")
    record = play(folder, ["random", MODULE_BOT], seed=2)
    user_moves(record, {MODULE_BOT})


def test_a_parallel_tournament_plays_both_forms_normally(tmp_path: Path) -> None:
    folder = write_user_folder(tmp_path / "user")
    db = ["--db", f"sqlite:///{tmp_path / 'tournament.db'}"]
    field = ["--bot", "mybot.py", "--bot", MODULE_BOT, "--bot", "random"]
    run = arena(
        folder,
        *["tournament", "run", "tictactoe", *field, "--games", "2", "--move-time", "5"],
        *["--jobs", "2", "--seed", "5", "--json", *db],
    )
    summary = json.loads(run.stdout)
    assert summary["status"] == "done" and summary["progress"]["done"] == 6, summary
    assert {s["bot"] for s in summary["standings"]} == {"mybot", MODULE_BOT, "random"}
    records = json.loads(
        arena(folder, "export", "--tournament", "1", "--format", "json", *db).stdout
    )
    assert len(records) == 6
    for record in records:  # the two forms of the bot meet too: both seats are checked then
        user_moves(record, {"mybot", MODULE_BOT})
