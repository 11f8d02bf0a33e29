"""Issue 32's last setboard and runner items, through the real CLI with fairymax (an xboard engine
that sends ``setboard=0``):

- a start that is the standard position and moves (``--position "startpos moves e2e4 e7e5"``, a
  book line written that way) is told to such an engine as moves after ``new``/``force``, as
  cutechess does, even past a pawn move (whose position text is a plain FEN);
- ``tournament resume --force`` asks the field's xboard engines again (a forced resume may play
  another version) and refuses such an engine facing a FEN start with one line, exit 2, before
  any game;
- ``ladder add`` refuses it against the ladder's FEN book the same way, before its validation
  games, and adds nothing;
- ``tournament resume`` refuses while a runner on another machine keeps its heartbeat fresh
  (``--force`` plays on)."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from bot_arena import games
from bot_arena.arena.cli.app import app
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.tournament.create import create
from bot_arena.arena.tournament.liveness import LEASE_S
from bot_arena.arena.tournament.schedule import Opening
from bot_arena.db.models import Match, Tournament
from bot_arena.db.session import make_engine, session_factory
from tests import needs

FAIRYMAX = shutil.which("fairymax", path=os.environ.get("PATH", "") + os.pathsep + "/usr/games")
needs_fairymax = needs.skip_unless(
    FAIRYMAX is not None, needs.ENGINES, "fairymax is not installed (apt-get install fairymax)"
)
RULES = ["--depth", "2", "--move-time", "5", "--max-moves", "4"]
REFUSED = "the xboard engine has no setboard (it sent setboard=0), so it cannot start from"
AFTER_E4_E5 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
FEN = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"  # no moves lead here
runner = CliRunner()


@needs_fairymax
def test_startpos_and_moves_reach_it_as_moves() -> None:
    """Past a pawn move the position's text is a plain FEN: the moves come from the words."""
    args = ["play", "chess", "--bot", f"xboard:{FAIRYMAX} name=fm", "--bot", "random"]
    start = ["--position", "startpos moves e2e4 e7e5", "--seed", "1"]
    played = runner.invoke(app, [*args, *start, *RULES, "--no-save", "--json"])
    assert played.exit_code == 0, played.output
    record = json.loads(played.stdout)
    assert [s["fault"] for s in record["seats"]] == [None, None], record["seats"]
    # played to the end: --max-moves 4, or a mate before it (random's moves may allow one:
    # without --seed, one CI run saw fairymax mate within the four)
    assert record["termination"] in ("adjudicated", "normal"), record["termination"]
    assert 0 < len(record["moves"]) <= 8, record["moves"]
    assert record["start_position"] == AFTER_E4_E5


@needs_fairymax
def test_the_python_api_tells_the_same_moves() -> None:
    from bot_arena.arena import play

    record = play(
        "chess",
        [f"xboard:{FAIRYMAX} name=fm", "random"],
        position="startpos moves e2e4 e7e5",
        move_time=5.0,
        max_moves=2,
    )
    assert [s.fault for s in record.seats] == [None, None]
    assert record.start_position == AFTER_E4_E5


@needs_fairymax
def test_a_book_line_from_the_start_reaches_it_as_moves(tmp_path: Path) -> None:
    book = tmp_path / "book.epd"
    book.write_text("startpos moves e2e4 e7e5\nstartpos moves d2d4 d7d5 c2c4\n")
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    args = ["tournament", "run", "chess", "--bot", f"xboard:{FAIRYMAX} name=fm", "--bot", "random"]
    played = runner.invoke(
        app, [*args, "--games", "4", "--jobs", "1", *RULES, "--openings", str(book), "--db", db]
    )
    assert played.exit_code == 0, played.output
    exported = runner.invoke(app, ["export", "--format", "jsonl", "--db", db])
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    assert sorted(r["start_position"].split()[0] for r in records) == sorted(
        ["rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR"] * 2
        + ["rnbqkbnr/ppp1pppp/8/3p4/2PP4/8/PP2PPPP/RNBQKBNR"] * 2
    )
    for record in records:
        assert [s["fault"] for s in record["seats"]] == [None, None], record["seats"]


def pending_tournament(url: str, specs: list[str], book: list[Opening]) -> int:
    """A tournament stored with every match pending, as a run interrupted before its first
    game leaves it (its openings ``book``), made without the CLI's checks."""
    engine = make_engine(url)
    try:
        return create(
            session_factory(engine),
            games.get("chess"),
            specs,
            [resolve(s) for s in specs],
            fmt="round-robin",
            games_per_group=2,
            time_control=TimeControl(move_time=5.0, depth=2),
            seed=1,
            opening_plies=0,
            book=book,
        )
    finally:
        engine.dispose()


def statuses(url: str) -> list[str]:
    engine = make_engine(url)
    try:
        with session_factory(engine)() as session:
            return list(session.scalars(select(Match.status).order_by(Match.id)))
    finally:
        engine.dispose()


@needs_fairymax
def test_a_forced_resume_asks_the_engine_again(tmp_path: Path) -> None:
    """A tournament whose pending games start from a FEN (stored as a field with setboard would
    have had it): ``resume --force`` starts fairymax, reads setboard=0 and refuses, one line,
    exit 2, every match still pending."""
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    tid = pending_tournament(url, [f"xboard:{FAIRYMAX} name=fm", "random"], [Opening((), FEN)])
    resumed = runner.invoke(app, ["tournament", "resume", str(tid), "--force", "--db", url])
    assert resumed.exit_code == 2, resumed.output
    assert resumed.stderr.startswith(f"error: fm: {REFUSED} '{FEN}'")
    assert resumed.stderr.count("\n") == 1 and "Traceback" not in resumed.output
    assert statuses(url) == ["pending", "pending"]


@needs_fairymax
def test_a_ladder_with_a_fen_book_refuses_it(tmp_path: Path) -> None:
    book = tmp_path / "book.epd"
    book.write_text(f"{' '.join(FEN.split()[:4])} bm Bb5;\n")
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    created = runner.invoke(
        app, ["ladder", "create", "club", "--game", "chess", "--openings", str(book), "--db", db]
    )
    assert created.exit_code == 0, created.output
    added = runner.invoke(app, ["ladder", "add", "club", f"xboard:{FAIRYMAX} name=fm", "--db", db])
    assert added.exit_code == 2, added.output
    epd = " ".join(FEN.split()[:4])  # the book's line, with EPD's counters 0 1
    assert added.stderr.startswith(f"error: fm: {REFUSED} '{epd} 0 1'")
    assert added.stderr.count("\n") == 1 and "Traceback" not in added.output
    shown = runner.invoke(app, ["ladder", "show", "club", "--db", db, "--json"])
    assert shown.exit_code == 0, shown.output
    assert "fm" not in shown.stdout  # nothing added


@pytest.mark.parametrize(("age", "refused"), [(0.0, True), (LEASE_S + 5.0, False)])
def test_resume_refuses_a_runner_elsewhere_while_it_beats(
    tmp_path: Path, age: float, refused: bool
) -> None:
    """A runner on another machine with a fresh heartbeat: resume says where and how fresh, one
    line, exit 2, nothing played; ``--force`` plays on. A stale heartbeat: resume plays."""
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    engine = make_engine(url)
    try:
        tid = create(
            session_factory(engine),
            games.get("tictactoe"),
            ["random", "random:seed=1"],
            [resolve("random"), resolve("random:seed=1")],
            fmt="round-robin",
            games_per_group=2,
            time_control=TimeControl(move_time=5.0),
            seed=1,
            opening_plies=0,
        )
        with session_factory(engine).begin() as session:  # as a run on another host leaves it
            tournament = session.get_one(Tournament, tid)
            tournament.status = "running"
            tournament.settings = {
                **tournament.settings,
                "runner": {"host": "lab-7\x1b[2J", "pid": 1},
            }
            tournament.heartbeat = datetime.now(UTC) - timedelta(seconds=age)
    finally:
        engine.dispose()
    resumed = runner.invoke(app, ["tournament", "resume", str(tid), "--jobs", "1", "--db", url])
    if not refused:
        assert resumed.exit_code == 0, resumed.output
        assert statuses(url) == ["done", "done"]
        return
    assert resumed.exit_code == 2, resumed.output
    assert resumed.stderr.startswith(
        f"error: tournament {tid} is being played on host 'lab-7\\x1b[2J' (its heartbeat is "
    )
    assert " s old); stop it there first (--force if that runner is gone)" in resumed.stderr
    assert resumed.stderr.count("\n") == 1 and "\x1b" not in resumed.stderr
    assert statuses(url) == ["pending", "pending"]
    forced = runner.invoke(
        app, ["tournament", "resume", str(tid), "--force", "--jobs", "1", "--db", url]
    )
    assert forced.exit_code == 0, forced.output
    assert statuses(url) == ["done", "done"]
