"""The sandbox options of the commands that start bots (``--sandbox auto|on|off``,
``$ARENA_SANDBOX``, ``--allow-read``), the level stored with every result, and what
``tournament show`` and ``leaderboard`` say about results from bots not fully confined.

The machine's real abilities do not matter here: ``support.level_for`` (which BotPool, the
runner and the CLI ask) is replaced by one for a machine that lacks landlock, where it matters.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, inspect, text
from typer.testing import CliRunner

from bot_arena import games
from bot_arena.arena.cli.app import app
from bot_arena.arena.cli.common import sandbox_options
from bot_arena.arena.match.botspec import resolve
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.tournament.create import create
from bot_arena.arena.tournament.job import MessageError, Plan
from bot_arena.arena.tournament.runner import Runner
from bot_arena.arena.transport.sandbox import support
from bot_arena.arena.transport.sandbox.mode import (
    PARTIAL,
    UNCONFINED,
    Mode,
    SandboxSettings,
    SandboxUnavailable,
)
from bot_arena.db import pair_totals
from bot_arena.db.session import make_engine, session_factory
from tests.db.dbtest import BACKENDS, database

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]  # tournaments through the arena command

runner = CliRunner()
FIELD = ["random", "random:seed=1", "random:seed=2"]  # tictactoe: 6 matches
WARNING = "arena: sandbox partial: missing landlock (file access)"
MARKER_BOT = """
import pathlib

pathlib.Path({marker!r}).write_text("started")


def choose_move(game, state, budget):
    return game.legal_moves(state)[0]
"""


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as url:
        yield url


@pytest.fixture(autouse=True)
def no_sandbox_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_SANDBOX", raising=False)


@pytest.fixture
def no_landlock(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine, as far as the arena can tell, offers every layer but landlock."""
    missing = ("landlock (file access)",)

    def level_for(mode: Mode) -> tuple[str, tuple[str, ...]]:
        if mode is Mode.OFF:
            return UNCONFINED, ()
        if mode is Mode.ON:
            raise SandboxUnavailable(
                "sandbox on: this machine cannot confine bots fully; missing " + ", ".join(missing)
            )
        return PARTIAL, missing

    monkeypatch.setattr(support, "level_for", level_for)


def arena(*args: str, env: dict[str, str] | None = None) -> Any:
    return runner.invoke(app, list(args), env=env)


def sql(url: str, query: str, **params: Any) -> list[tuple[Any, ...]]:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            result = conn.execute(text(query), params)
            if not result.returns_rows:  # a change by hand: the kept totals summed afresh
                for statement in pair_totals.REFILL:
                    conn.exec_driver_sql(statement)
                return []
            return [tuple(r) for r in result]
    finally:
        engine.dispose()


def levels(url: str) -> list[Any]:
    return [level for (level,) in sql(url, "SELECT sandbox FROM matches ORDER BY id")]


def stored_anything(url: str) -> bool:
    """Whether the database has a schema with any tournament, match or bot in it."""
    engine = create_engine(url)
    try:
        if "matches" not in inspect(engine).get_table_names():
            return False
    finally:
        engine.dispose()
    return any(
        sql(url, f"SELECT count(*) FROM {t}")[0][0] for t in ("tournaments", "matches", "bots")
    )


def error_line(result: Any) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return str(lines[0])


def commands(db: str, bot: str) -> list[list[str]]:
    """Every command that starts bots, ready for a sandbox option."""
    return [
        ["play", "tictactoe", "--bot", bot, "--bot", "random", "--db", db],
        ["tournament", "run", "tictactoe", "--bot", bot, "--bot", "random", "--db", db],
        ["tournament", "resume", "1", "--db", db],
        ["bots", "check", bot, "-g", "tictactoe"],
        ["bots", "add", bot, "--name", "mine", "-g", "tictactoe", "--db", db],
    ]


def marker_bot(tmp_path: Path) -> tuple[str, Path]:
    marker = tmp_path / "started"
    bot = tmp_path / "marker_bot.py"
    bot.write_text(MARKER_BOT.format(marker=str(marker)))
    return str(bot), marker


# --- the options ------------------------------------------------------------------------------


def test_a_word_that_is_not_a_mode_is_one_line_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    bot, marker = marker_bot(tmp_path)
    for command in commands(f"sqlite:///{path}", bot):
        line = error_line(arena(*command, "--sandbox", "maybe"))
        assert "sandbox mode must be auto|on|off, not 'maybe'" in line, command
        line = error_line(arena(*command, env={"ARENA_SANDBOX": "sometimes"}))
        assert line.startswith("error: $ARENA_SANDBOX: sandbox mode must be"), command
    assert not path.exists() and not marker.exists()


def test_allow_read_paths_must_exist(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    bot, marker = marker_bot(tmp_path)
    missing = tmp_path / "no-such-book.bin"
    for command in commands(f"sqlite:///{path}", bot):
        line = error_line(arena(*command, "--sandbox", "off", "--allow-read", str(missing)))
        assert line == f"error: --allow-read {missing}: no such file or folder", command
    assert not path.exists() and not marker.exists()


def test_the_options_are_read_as_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_landlock: None
) -> None:
    (tmp_path / "book.bin").write_bytes(b"")
    (tmp_path / "nets").mkdir()
    monkeypatch.chdir(tmp_path)
    chosen = sandbox_options("OFF", ["book.bin", "nets", str(tmp_path / "book.bin")])
    assert chosen.settings == SandboxSettings(
        Mode.OFF, (str(tmp_path / "book.bin"), str(tmp_path / "nets"))
    )
    assert (chosen.level, chosen.missing) == ("off", ())
    auto = sandbox_options(None, None)  # neither the option nor $ARENA_SANDBOX: auto
    assert auto.settings == SandboxSettings(Mode.AUTO, ())
    assert (auto.level, auto.missing) == ("partial", ("landlock (file access)",))
    monkeypatch.setenv("ARENA_SANDBOX", "off")
    assert sandbox_options(None, None).settings.mode is Mode.OFF
    assert sandbox_options("auto", None).settings.mode is Mode.AUTO  # the option wins


READER = """import errno

from bot_arena.bots.base import Decision, SearchInfo


def choose_move(game, state, budget):
    try:
        with open({book!r}) as fh:
            seen = fh.read()
    except OSError as exc:
        seen = errno.errorcode.get(exc.errno, str(exc))
    return Decision(game.legal_moves(state)[0], SearchInfo(extra={{"read": seen}}))
"""


def test_allow_read_for_one_bot_lets_that_bot_read_and_no_other(tmp_path: Path) -> None:
    from bot_arena.arena.transport.sandbox import confine

    if confine.LANDLOCK not in support.probe()[0]:
        pytest.skip("this machine lacks landlock: every bot reads everything")
    book = tmp_path / "data" / "net.bin"
    book.parent.mkdir()
    book.write_text("the engine's network")
    folder = tmp_path / "bots"
    folder.mkdir()
    for name in ("alice", "bob"):
        (folder / f"{name}.py").write_text(READER.format(book=str(book)))
    bots = ["-b", str(folder / "alice.py"), "-b", str(folder / "bob.py")]
    result = arena(
        "play", "tictactoe", *bots, "--allow-read", f"alice={book}", "--json", "--no-save"
    )
    assert result.exit_code == 0, result.output
    record = json.loads(result.output.strip().splitlines()[-1])
    seen = {m["seat"]: m["info"]["read"] for m in record["moves"]}
    assert seen == {0: "the engine's network", 1: "EACCES"}
    # for every bot: both read it
    result = arena("play", "tictactoe", *bots, "--allow-read", str(book), "--json", "--no-save")
    record = json.loads(result.output.strip().splitlines()[-1])
    assert {m["info"]["read"] for m in record["moves"]} == {"the engine's network"}
    # a name that is no bot of the command, a path that is not there: one line, exit 2
    for given, error in (
        (f"carol={book}", f"error: --allow-read carol={book}: no such file or folder, nor a bot"),
        ("alice=nowhere.bin", "error: --allow-read alice=nowhere.bin: no such file or folder"),
    ):
        result = arena("play", "tictactoe", *bots, "--allow-read", given, "--no-save")
        assert result.exit_code == 2 and error_line(result).startswith(error), result.output


def test_allow_read_per_bot_is_read_against_the_bots_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole existing path is a path for every bot, even with a ``=`` in it; ``BOT=PATH``
    is read once the names are known, the longest name first (a ``cmd:`` bot's name is its
    command line: ``/``, spaces and ``=`` included)."""
    monkeypatch.chdir(tmp_path)
    for name in ("a=b.bin", "c.bin", "d.bin"):
        (tmp_path / name).write_bytes(b"")
    engine = "cmd:./engine --hash=64"
    chosen = sandbox_options(
        "off", ["a=b.bin", "alice=c.bin", "alice=c.bin", f"{engine}=d.bin", "cmd:./engine=c.bin"]
    )
    assert chosen.settings.allow_read == (str(tmp_path / "a=b.bin"),)
    names = ["alice", engine, "cmd:./engine"]
    settings = chosen.for_bots(names).settings
    assert settings.allow_read_for == (
        ("alice", str(tmp_path / "c.bin")),
        (engine, str(tmp_path / "d.bin")),
        ("cmd:./engine", str(tmp_path / "c.bin")),
    )
    assert settings.readable("alice") == (str(tmp_path / "a=b.bin"), str(tmp_path / "c.bin"))
    assert settings.readable(engine) == (str(tmp_path / "a=b.bin"), str(tmp_path / "d.bin"))
    assert settings.readable("bob") == (str(tmp_path / "a=b.bin"),)


def test_a_plan_carries_the_sandbox_settings_strictly() -> None:
    settings = SandboxSettings(Mode.ON, ("/opt/book.bin",), (("alice", "/opt/net.bin"),))
    plan = Plan("tictactoe", {}, (resolve("random"),), TimeControl(move_time=1.0), sandbox=settings)
    data = json.loads(json.dumps(plan.to_dict()))
    assert Plan.from_dict(data) == plan
    for bad in (
        None,
        {"mode": "on"},
        {"mode": "sideways", "allow_read": []},
        {"mode": "on", "allow_read": "/opt"},
        {"mode": "on", "allow_read": [], "x": 1},
        {"mode": "on", "allow_read": []},
        {"mode": "on", "allow_read": [], "allow_read_for": [["alice"]]},
        {"mode": "on", "allow_read": [], "allow_read_for": [["alice", 3]]},
    ):
        with pytest.raises(MessageError):
            Plan.from_dict({**data, "sandbox": bad})
    del data["sandbox"]
    with pytest.raises(MessageError):
        Plan.from_dict(data)


# --- on, where the machine cannot confine fully -----------------------------------------------


def test_on_is_refused_before_anything_is_stored_or_started(
    db_url: str, tmp_path: Path, no_landlock: None
) -> None:
    bot, marker = marker_bot(tmp_path)
    want = (
        "error: sandbox on: this machine cannot confine bots fully; missing landlock (file access)"
    )
    for command in commands(db_url, bot):
        assert error_line(arena(*command, "--sandbox", "on")) == want, command
        assert error_line(arena(*command, env={"ARENA_SANDBOX": "on"})) == want, command
    assert not marker.exists()  # no bot started
    if db_url.startswith("sqlite:///"):
        assert not Path(db_url.removeprefix("sqlite:///")).exists()
    assert not stored_anything(db_url)
    # the control: the same bot does start (and its match is stored) when allowed to
    played = arena(*commands(db_url, bot)[0], "--sandbox", "off", "--no-show")
    assert played.exit_code == 0, played.output
    assert marker.exists() and levels(db_url) == ["off"]


def stored_tournament(url: str, game: str, specs: list[str]) -> tuple[Any, int]:
    """A two-games-per-pairing round-robin of ``specs`` created in ``url`` (nothing played):
    its session factory and id."""
    engine = make_engine(url)
    factory = session_factory(engine)
    tid = create(
        factory,
        games.get(game),
        specs,
        [resolve(s) for s in specs],
        fmt="round-robin",
        games_per_group=2,
        time_control=TimeControl(move_time=5.0),
        seed=1,
        opening_plies=0,
    )
    engine.dispose()
    return factory, tid


def test_the_runner_refuses_on_before_it_writes(tmp_path: Path, no_landlock: None) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    refs = [resolve("random"), resolve("random:seed=1")]
    factory, tid = stored_tournament(url, "coins", ["random", "random:seed=1"])
    before = sql(url, "SELECT id, status, settings FROM tournaments")
    with pytest.raises(SandboxUnavailable):
        Runner(factory, tid, refs, sandbox=SandboxSettings(Mode.ON)).run()
    assert sql(url, "SELECT id, status, settings FROM tournaments") == before
    assert sql(url, "SELECT DISTINCT status FROM matches") == [("pending",)]


# --- the level stored with every result -------------------------------------------------------


def test_off_is_stored_as_off(db_url: str) -> None:
    play = ["play", "coins", "--bot", "random", "--bot", "random", "--db", db_url, "--json"]
    result = arena(*play, "--sandbox", "off")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["sandbox"] == "off" and result.stderr == ""
    result = arena(*play, env={"ARENA_SANDBOX": "off"})
    assert result.exit_code == 0, result.output
    assert levels(db_url) == ["off", "off"]
    for jobs in ("1", "2"):
        args = ["tournament", "run", "tictactoe", "--db", db_url, "--sandbox", "off", "-j", jobs]
        result = arena(*args, *[a for spec in FIELD for a in ("--bot", spec)])
        assert result.exit_code == 0, result.output
        assert "arena: sandbox" not in result.stderr
    assert levels(db_url) == ["off"] * 14


def test_auto_with_partial_confinement_warns_once_and_stores_partial(
    db_url: str, no_landlock: None
) -> None:
    """The runner stores its own level: with two jobs the job processes' pools ask the real
    machine (the replacement is this process's only), yet every result says partial."""
    play = ["play", "coins", "--bot", "random", "--bot", "random", "--db", db_url, "--no-show"]
    result = arena(*play)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [WARNING]
    for jobs in ("1", "2"):
        args = ["tournament", "run", "tictactoe", "--db", db_url, "-j", jobs]
        result = arena(*args, *[a for spec in FIELD for a in ("--bot", spec)])
        assert result.exit_code == 0, result.output
        assert result.stderr.splitlines().count(WARNING) == 1, result.stderr
    assert levels(db_url) == ["partial"] * 13
    bot = str(Path(__file__).parent / "fixtures" / "first_legal.py")
    for command in (
        ["bots", "check", bot, "-g", "tictactoe"],
        ["bots", "add", bot, "--name", "mine", "-g", "tictactoe", "--db", db_url],
    ):
        result = arena(*command)
        assert result.exit_code == 0, result.output
        assert result.stderr.splitlines() == [WARNING], command


def test_resume_stores_the_level_of_its_own_run(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'resume.db'}"
    _, tid = stored_tournament(url, "tictactoe", FIELD[:2])
    result = arena("tournament", "resume", str(tid), "--db", url, "--sandbox", "off", "-j", "1")
    assert result.exit_code == 0, result.output
    assert levels(url) == ["off", "off"]


# --- what show and leaderboard say ------------------------------------------------------------


def test_show_and_leaderboard_say_when_results_were_not_fully_confined(db_url: str) -> None:
    args = ["tournament", "run", "tictactoe", "--db", db_url, "--sandbox", "off", "-j", "1"]
    result = arena(*args, *[a for spec in FIELD for a in ("--bot", spec)])
    assert result.exit_code == 0, result.output
    # every result of an 'off' run is unconfined: the run's own leaderboard says so
    assert "note: 6 of 6 rated results from bots not fully confined (off 6)" in result.stdout

    sql(db_url, "UPDATE matches SET sandbox = 'confined'")
    show = arena("tournament", "show", "1", "--db", db_url)
    assert show.exit_code == 0, show.output
    assert "sandbox" not in show.stdout
    summary = json.loads(arena("tournament", "show", "1", "--db", db_url, "--json").stdout)
    assert summary["sandbox"] == {"confined": 6}
    board = arena("leaderboard", "--tournament", "1", "--db", db_url)
    assert board.exit_code == 0, board.output
    assert "confined" not in board.stdout

    ids = [mid for (mid,) in sql(db_url, "SELECT id FROM matches ORDER BY id")]
    sql(db_url, "UPDATE matches SET sandbox = NULL WHERE id IN (:a, :b)", a=ids[0], b=ids[1])
    sql(db_url, "UPDATE matches SET sandbox = 'off' WHERE id = :a", a=ids[2])
    sql(db_url, "UPDATE matches SET sandbox = 'partial' WHERE id = :a", a=ids[3])
    show = arena("tournament", "show", "1", "--db", db_url)
    lines = show.stdout.splitlines()
    sandbox = [line for line in lines if "sandbox" in line]
    assert sandbox == ["  sandbox   4 of 6 results from bots not fully confined (off 3, partial 1)"]
    assert lines.index(sandbox[0]) == next(i for i, ln in enumerate(lines) if "status" in ln) + 1
    summary = json.loads(arena("tournament", "show", "1", "--db", db_url, "--json").stdout)
    assert summary["sandbox"] == {"confined": 2, "off": 1, "partial": 1, "unrecorded": 2}

    board = arena("leaderboard", "--tournament", "1", "--db", db_url)
    assert board.stdout.rstrip().splitlines()[-1] == (
        "note: 4 of 6 rated results from bots not fully confined (off 3, partial 1)"
    )
    assert board.stdout.count("not fully confined") == 1
    markdown = arena("leaderboard", "--tournament", "1", "--db", db_url, "--format", "markdown")
    assert markdown.stdout.rstrip().splitlines()[-1] == (
        "- 4 of 6 rated results from bots not fully confined (off 3, partial 1)"
    )
    rows = json.loads(arena("leaderboard", "--tournament", "1", "--db", db_url, "--json").stdout)
    assert len(rows) == 3  # JSON stays one object per bot

    # a void match is no result: it counts nowhere
    void = arena("matches", "void", str(ids[3]), "--reason", "test", "--db", db_url)
    assert void.exit_code == 0, void.output
    show = arena("tournament", "show", "1", "--db", db_url)
    assert "  sandbox   3 of 5 results from bots not fully confined (off 3)" in show.stdout
