"""``--pgn-out FILE`` (issue 32, item 2): each game appended as it is stored, in the words of
``arena export --format pgn`` for that game; a resumed run appends the games the file lacks (a
run killed between a commit and its append) and never one twice, cutting a torn last game;
refused with one line before anything runs for a game without PGN and for a file that cannot
take games."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.db.session import make_engine
from tests import needs
from tests.forked_cli import Server

runner = CliRunner()
STOCKFISH = shutil.which("stockfish", path=os.environ.get("PATH", "") + os.pathsep + "/usr/games")
needs_stockfish = needs.skip_unless(
    STOCKFISH is not None, needs.ENGINES, "stockfish is not installed (apt-get install stockfish)"
)
TICTACTOE = ["tictactoe", "--bot", "random", "--bot", "random:seed=1"]


def games_of(text_: str) -> dict[int, str]:
    """Each game of a PGN text by its Match tag; a game found twice fails."""
    assert text_.startswith("[Event "), text_[:80]
    found: dict[int, str] = {}
    for game in re.split(r"\n\n(?=\[Event )", text_):
        match = re.search(r'^\[Match "(\d+)"\]$', game, re.M)
        assert match is not None, game
        number = int(match.group(1))
        assert number not in found, f"game {number} written twice"
        found[number] = game.rstrip("\n") + "\n"
    return found


def export(db: str, *more: str) -> dict[int, str]:
    out = runner.invoke(app, ["export", "--format", "pgn", "--db", db, *more])
    assert out.exit_code == 0, out.output
    return games_of(out.stdout)


@pytest.mark.slow
@needs_stockfish
def test_a_runs_games_are_the_exports_each_once(tmp_path: Path) -> None:
    """Two engines, two jobs: every stored game is in the file once, as the export says it
    (games end in their own order: compared by match)."""
    db, pgn = f"sqlite:///{tmp_path / 'arena.db'}", tmp_path / "games.pgn"
    bots = ["--bot", f"uci:{STOCKFISH} name=a", "--bot", f"uci:{STOCKFISH} name=b"]
    rules = ["--nodes", "500", "--move-time", "5", "--max-moves", "16", "--games", "4"]
    args = ["tournament", "run", "chess", *bots, *rules, "--jobs", "2", "--db", db]
    played = runner.invoke(app, [*args, "--pgn-out", str(pgn)])
    assert played.exit_code == 0, played.output
    written = pgn.read_text()
    assert written.endswith("\n") and not written.endswith("\n\n")
    assert games_of(written) == export(db) and len(export(db)) == 4


def test_a_resumed_run_appends_what_the_file_lacks_once(tmp_path: Path) -> None:
    """As kill -9 leaves them: matches 5 and 6 in play (not stored), match 4 stored but never
    appended, half of it written (a torn write). The resume cuts the torn half, appends match
    4 first, then 5 and 6 as they are stored: each of the six once, as the export says it."""
    db, pgn = f"sqlite:///{tmp_path / 'arena.db'}", tmp_path / "games.pgn"
    args = ["tournament", "run", *TICTACTOE, "--games", "6", "--jobs", "1", "--db", db]
    assert runner.invoke(app, [*args, "--pgn-out", str(pgn)]).exit_code == 0
    first = games_of(pgn.read_text())
    assert sorted(first) == [1, 2, 3, 4, 5, 6]
    engine = make_engine(db)
    with engine.begin() as conn:
        conn.execute(text("UPDATE matches SET status = 'running' WHERE id IN (5, 6)"))
        conn.execute(text("UPDATE tournaments SET status = 'running', finished = NULL"))
    engine.dispose()
    kept = "\n".join(first[i] for i in (1, 2, 3))
    pgn.write_text(kept + "\n" + first[4][: len(first[4]) // 2])
    resumed = runner.invoke(
        app, ["tournament", "resume", "1", "--jobs", "1", "--db", db, "--pgn-out", str(pgn)]
    )
    assert resumed.exit_code == 0, resumed.output
    after = pgn.read_text()
    assert games_of(after) == export(db) and sorted(games_of(after)) == [1, 2, 3, 4, 5, 6]
    assert after.startswith(kept + "\n" + first[4])  # 4 caught up before the games played


def test_config_key_and_a_ladder(tmp_path: Path) -> None:
    """``pgn-out`` in ``--config run.toml`` (an SPRT here), and ``ladder run --pgn-out``: a
    second run appends only its own games."""
    db, pgn = f"sqlite:///{tmp_path / 'arena.db'}", tmp_path / "games.pgn"
    config = tmp_path / "run.toml"
    config.write_text(f'pgn-out = "{pgn}"\nmax-games = 4\njobs = 1\n')
    args = ["sprt", *TICTACTOE, "--config", str(config), "--db", db]
    assert runner.invoke(app, args).exit_code == 0
    assert games_of(pgn.read_text()) == export(db, "--tournament", "1")
    ladder = tmp_path / "ladder.pgn"
    made = runner.invoke(app, ["ladder", "create", "l", "--game", "tictactoe", "--db", db])
    assert made.exit_code == 0, made.output
    for bot in ("random", "random:seed=1"):
        added = runner.invoke(app, ["ladder", "add", "l", bot, "--db", db])
        assert added.exit_code == 0, added.output
    for games in ("2", "4"):
        run = ["ladder", "run", "l", "--until-games", games, "--jobs", "1", "--db", db]
        ran = runner.invoke(app, [*run, "--pgn-out", str(ladder)])
        assert ran.exit_code == 0, ran.output
    assert games_of(ladder.read_text()) == export(db, "--tournament", "2")


@pytest.mark.parametrize(
    ("setup", "game", "said"),
    [
        (None, ["nim", "--bot", "random", "--bot", "random", "--bot", "random"], "3 players"),
        ("folder", TICTACTOE, "Is a directory"),
        ("fifo", TICTACTOE, "not a regular file"),
        ("notes", TICTACTOE, "holds something else than PGN games"),
    ],
)
def test_refused_before_anything_runs(
    tmp_path: Path, setup: str | None, game: list[str], said: str
) -> None:
    """One line, exit 2, no database made, the file as it was (a stranger's notes kept)."""
    db, pgn = tmp_path / "arena.db", tmp_path / "out.pgn"
    if setup == "folder":
        pgn.mkdir()
    elif setup == "fifo":  # opened without blocking, then refused
        os.mkfifo(pgn)
    elif setup == "notes":
        pgn.write_text("my notes\n")
    args = ["tournament", "run", *game, "--db", f"sqlite:///{db}", "--pgn-out", str(pgn)]
    out = runner.invoke(app, args)
    assert out.exit_code == 2, out.output
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: --pgn-out")
    assert said in out.stderr and "Traceback" not in out.output
    assert not db.exists()
    if setup is None:
        assert not pgn.exists()
    elif setup == "notes":
        assert pgn.read_text() == "my notes\n"


def test_the_python_api_takes_it(tmp_path: Path) -> None:
    """``tournament(..., pgn_out=FILE)``: the same file; a game without PGN: ArenaError."""
    from bot_arena.arena.api.errors import ArenaError
    from bot_arena.arena.api.tournaments import tournament  # not the package: shadowed

    pgn, db = tmp_path / "games.pgn", tmp_path / "arena.db"
    bots = ["random", "random:seed=1"]
    tournament("tictactoe", bots, games=4, jobs=1, pgn_out=str(pgn), db=str(db))
    assert games_of(pgn.read_text()) == export(f"sqlite:///{db}")
    with pytest.raises(ArenaError, match="nim is a game of 3 players"):
        tournament("nim", [*bots, "random:seed=2"], pgn_out=str(tmp_path / "nim.pgn"))
    assert not (tmp_path / "nim.pgn").exists()


@pytest.mark.slow
@needs_stockfish
def test_killed_with_sigkill_and_resumed(tmp_path: Path, arena_cli: Server) -> None:
    """A real kill -9 of the whole run (runner and jobs) once its first game is in the file,
    wherever it lands (between a commit and its append, in a write, between two games): after
    the resume the file holds every stored game once, as the export says it. The run is a
    fork of ``arena_cli`` (its own process and session, killed as a fresh one would be)."""
    import signal
    import time

    db, pgn = f"sqlite:///{tmp_path / 'arena.db'}", tmp_path / "games.pgn"
    bots = ["--bot", f"uci:{STOCKFISH} name=a", "--bot", f"uci:{STOCKFISH} name=b"]
    # games of 20 moves at most (40 plies, not 60): the kill lands as anywhere in them, and the
    # resume's seven games cost a third less; 1000 nodes a move (the strength is not what is
    # tested; 3000 cost the engines about three times the CPU)
    rules = ["--nodes", "1000", "--move-time", "5", "--max-moves", "20", "--games", "8"]
    run = ["tournament", "run", "chess", *bots, *rules, "--jobs", "2", "--db", db]
    log = tmp_path / "run.log"
    proc = arena_cli.start([*run, "--pgn-out", str(pgn)], cwd=Path.cwd(), env=os.environ, log=log)
    try:
        end = time.monotonic() + 120.0
        while not (pgn.exists() and '[Match "' in pgn.read_text()):
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < end, "no game written"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    # the resume in this process: the killed run is the one that had to be a process
    resume = ["tournament", "resume", "1", "--jobs", "2", "--db", db, "--pgn-out", str(pgn)]
    done = runner.invoke(app, resume)
    assert done.exit_code == 0, done.output
    assert games_of(pgn.read_text()) == export(db) and len(export(db)) == 8
