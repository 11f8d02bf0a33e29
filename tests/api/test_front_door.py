"""``bot_arena.arena`` from Python: real bot processes, small games. A bot written in the
calling program runs in its own confined process like a file bot, with the same faults; bad
input is an ArenaError carrying exactly the line the CLI prints."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import bot_arena.arena as front
from bot_arena import games
from bot_arena.arena import ArenaError, play, rate, sprt, tournament
from bot_arena.arena.match.record import Termination
from bot_arena.bots.base import Bot
from tests import inprocess

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[1] / "arena" / "fixtures"
TIMEOUT = 180
PREFERRED = 4  # a literal the class bot below carries to its process


def first_legal(game: Any, state: Any, budget: Any) -> Any:
    return game.legal_moves(state)[0]


def spin(game: Any, state: Any, budget: Any) -> Any:
    while True:
        time.sleep(0)


def explode(game: Any, state: Any, budget: Any) -> Any:
    raise RuntimeError("boom from a function bot")


def reach_out(game: Any, state: Any, budget: Any) -> Any:
    """Plays legally only when it cannot open a socket (it is confined)."""
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
    except OSError:
        return game.legal_moves(state)[0]
    return "not a move"


def middle_first(moves: list[Any]) -> Any:
    return PREFERRED if PREFERRED in moves else moves[0]


class Centre(Bot):
    """A class bot using a helper function and a constant of this module."""

    def choose_move(self, game: Any, state: Any, budget: Any) -> Any:
        return middle_first(list(game.legal_moves(state)))


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` in ``cwd``, in this process (``tests/inprocess.py``)."""
    return inprocess.run(*args, cwd=cwd)


@pytest.mark.timeout(TIMEOUT)
def test_play_a_function_bot_against_a_builtin() -> None:
    record = play("tictactoe", [first_legal, "random"], seed=3, move_time=2)
    assert [s.bot for s in record.seats] == ["first_legal", "random"]
    assert all(s.fault is None for s in record.seats)
    assert record.termination is Termination.NORMAL
    game = games.get("tictactoe")
    start = game.initial_state()
    assert game.move_from_text(start, record.moves[0].move) == game.legal_moves(start)[0]


@pytest.mark.timeout(TIMEOUT)
def test_a_class_bot_carries_its_helpers_and_constants() -> None:
    record = play("tictactoe", [Centre, "random"], seed=1, move_time=2)
    assert record.seats[0].bot == "Centre" and record.seats[0].fault is None
    game = games.get("tictactoe")
    assert game.move_from_text(game.initial_state(), record.moves[0].move) == PREFERRED


@pytest.mark.timeout(TIMEOUT)
def test_a_looping_function_bot_times_out_like_a_file_bot() -> None:
    from_function = play("tictactoe", [spin, "random"], move_time=0.2, seed=1)
    from_file = play("tictactoe", [str(FIXTURES / "busy_loop.py"), "random"], move_time=0.2)
    for record in (from_function, from_file):
        fault = record.seats[0].fault
        assert fault is not None and fault.termination is Termination.TIMEOUT
        assert record.seats[0].rank == 2 and record.seats[1].fault is None


@pytest.mark.timeout(TIMEOUT)
def test_a_function_bot_that_raises_is_charged_a_crash() -> None:
    record = play("tictactoe", [explode, "random"], move_time=2, seed=1)
    fault = record.seats[0].fault
    assert fault is not None and fault.termination is Termination.CRASH
    assert "boom from a function bot" in str(fault.detail.get("stderr_tail"))


@pytest.mark.timeout(TIMEOUT)
def test_a_function_bot_runs_confined() -> None:
    """With the sandbox on a function bot cannot open a socket; off, it can (and then plays a
    bad move on purpose): the confinement is real, not skipped for bots from Python."""
    confined = play("tictactoe", [reach_out, "random"], move_time=2, seed=1, sandbox="on")
    assert confined.seats[0].fault is None
    loose = play("tictactoe", [reach_out, "random"], move_time=2, seed=1, sandbox="off")
    fault = loose.seats[0].fault
    assert fault is not None and fault.termination is Termination.BAD_OUTPUT


def test_a_closure_is_refused_before_anything_starts() -> None:
    target = 0

    def closure(game: Any, state: Any, budget: Any) -> Any:
        return game.legal_moves(state)[target]

    with pytest.raises(ArenaError, match=r"local variables .*target"):
        play("tictactoe", [closure, "random"])


def test_a_lambda_is_refused() -> None:
    with pytest.raises(ArenaError, match="needs a name: define <lambda> with def"):
        play("tictactoe", [lambda game, state, budget: 0, "random"])


def test_a_global_that_cannot_travel_is_refused() -> None:
    with pytest.raises(ArenaError, match=r"'PLACES' .* cannot be carried"):
        play("tictactoe", [uses_a_list, "random"])


PLACES = [4, 0]


def uses_a_list(game: Any, state: Any, budget: Any) -> Any:
    return PLACES[0]


@pytest.mark.timeout(TIMEOUT)
def test_tournament_leaderboard_is_the_cli_leaderboard(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    played = tournament(
        "tictactoe", [first_legal, "random", "alphabeta"], games=2, jobs=2, seed=4, db=str(db)
    )
    assert played.finished
    assert len(played.matches) == 6  # 3 pairings x 2 games
    assert played.crosstable["alphabeta"]["first_legal"]["games"] == 2
    out = run_cli(
        "leaderboard", "--db", str(db), "--tournament", str(played.id), "--json", cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == played.leaderboard
    assert {row["bot"] for row in played.leaderboard} == {"first_legal", "random", "alphabeta"}
    assert played.leaderboard[0]["bot"] == "alphabeta"


@pytest.mark.timeout(TIMEOUT)
def test_tournament_without_db_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ``db=``: a temporary database, gone when the call returns (nothing in the folder the
    program runs in, nothing left in the temporary folder)."""
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.delenv("ARENA_DB", raising=False)
    played = tournament("tictactoe", ["random", "random:seed=1"], games=2, jobs=1, seed=2)
    assert played.finished and len(played.matches) == 2
    assert list(work.iterdir()) == []
    assert list(scratch.iterdir()) == []


@pytest.mark.timeout(TIMEOUT)
def test_a_registered_bot_that_cannot_be_loaded_is_left_out_with_a_warning(
    tmp_path: Path,
) -> None:
    """As ``tournament run`` does (the one path, ``api/new_run.py``): the others play."""
    db = tmp_path / "arena.db"
    script = tmp_path / "gone.sh"
    script.write_bytes((FIXTURES / "first_legal.sh").read_bytes())
    script.chmod(0o755)
    added = inprocess.run(
        "bots", "add", "cmd:./gone.sh", "-n", "gone", "-g", "tictactoe", "--db", str(db),
        cwd=tmp_path,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    script.unlink()
    with pytest.warns(RuntimeWarning) as said:
        played = tournament("tictactoe", ["gone", *TWO], games=2, jobs=1, seed=1, db=str(db))
    (line,) = [str(w.message) for w in said]
    assert line.startswith("warning: registered bot 'gone' cannot be loaded"), line
    assert line.endswith(": left out of the tournament, none of its games played"), line
    assert played.finished and len(played.matches) == 2
    assert {s["bot"] for m in played.matches for s in m["seats"]} == set(TWO)


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_db_is_refused(url: str) -> None:
    with pytest.raises(ArenaError, match="is an in-memory database"):
        tournament("tictactoe", TWO, db=url)


@pytest.mark.parametrize("url", ["~\x00", "a\x00.db", "sqlite:///a\x00.db"])
def test_a_db_name_holding_a_nul_is_one_error(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A NUL names no file (``os.path.expanduser`` and SQLite's open raise ValueError on one):
    one ArenaError, and nothing is made."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ArenaError, match="holds no NUL character"):
        tournament("tictactoe", TWO, db=url)
    assert not list(tmp_path.iterdir())


@pytest.mark.timeout(TIMEOUT)
def test_a_bot_file_given_as_a_path() -> None:
    record = play("tictactoe", [FIXTURES / "first_legal.py", "random"], move_time=2, seed=1)
    assert record.seats[0].bot == "first_legal" and record.seats[0].fault is None


@pytest.mark.timeout(TIMEOUT)
def test_sprt_decides() -> None:
    result = sprt(
        "tictactoe", "alphabeta", "random", elo0=0, elo1=200, max_games=200, seed=1, jobs=2
    )
    assert result.decision == "H1"
    assert result.verdict.startswith("H1 accepted")
    assert result.llr >= result.state["upper"]
    assert result.tournament.summary["format"] == "sprt"


def test_rate_a_file_as_arena_rate_does(tmp_path: Path) -> None:
    games = tmp_path / "games.csv"
    games.write_text("white,black,result\na,b,1-0\nb,a,1/2-1/2\na,b,1-0\nb,c,1-0\nc,a,0-1\n")
    out = run_cli("rate", str(games), "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert rate(games) == json.loads(out.stdout)
    assert rate(str(games)) == json.loads(out.stdout)


@pytest.mark.timeout(TIMEOUT)
def test_rate_a_tournament() -> None:
    played = tournament("tictactoe", ["alphabeta", "random"], games=4, jobs=1, seed=5)
    rows = rate(played)
    assert [r["bot"] for r in rows] == [r["bot"] for r in played.leaderboard]
    assert [r["games"] for r in rows] == [4, 4]


TWO = ["random", "random:seed=1"]
BAD = [
    # (API keyword arguments, `arena tournament run` arguments, the message)
    ({"game": "nosuchgame"}, ["nosuchgame", "-b", TWO[0], "-b", TWO[1]], "unknown game"),
    ({"jobs": 0}, ["--jobs", "0"], "--jobs must be >= 1, not 0"),
    ({"opening_plies": -1}, ["--opening-plies", "-1"], "--opening-plies must be >= 0, not -1"),
    ({"bots": ["random"]}, ["tictactoe", "-b", "random"], "needs at least two --bot entrants"),
    (
        {"bots": ["random", "nosuchbot"]},
        ["tictactoe", "-b", "random", "-b", "nosuchbot"],
        "unknown bot 'nosuchbot'",
    ),
    (
        {"bots": ["random", "random"]},
        ["tictactoe", "-b", "random", "-b", "random"],
        "bot 'random' is in the field twice",
    ),
    ({"rounds": 2}, ["--rounds", "2"], "--rounds is for --format swiss"),
    (
        {"format": "swiss", "rounds": 0},
        ["--format", "swiss", "--rounds", "0"],
        "--rounds must be >= 1, not 0",
    ),
    ({"tiebreak_pairs": -1}, ["--tiebreak-pairs", "-1"], "--tiebreak-pairs must be >= 0, not -1"),
    ({"games": 0}, ["--games", "0"], "--games must be >= 1, not 0"),
    (
        {"move_time": [1.0, 2.0, 3.0]},
        ["--move-time", "1", "--move-time", "2", "--move-time", "3"],
        "--move-time given 3 times",
    ),
    ({"memory_mb": 0}, ["--memory-mb", "0"], "memory limit must be >= 16 MB, not 0"),
    ({"sandbox": "maybe"}, ["--sandbox", "maybe"], "sandbox mode must be auto|on|off, not 'maybe'"),
    (
        {"openings_plies": 2},
        ["--openings-plies", "2"],
        "--openings-plies cuts the games of an --openings book",
    ),
    ({"params": {"size": 9}}, ["-p", "size=9"], "tictactoe"),
    ({"draw_adjudicate": "movenumber=x"}, ["--draw-adjudicate", "movenumber=x"], "movenumber"),
    ({"depth": 0}, ["--depth", "0"], "depth"),
    ({"allow_read": ["/no/such/path"]}, ["--allow-read", "/no/such/path"], "no such file"),
    (
        {"allow_read": ["nobot=/tmp"]},
        ["--allow-read", "nobot=/tmp"],
        "--allow-read nobot=/tmp: no such file or folder, nor a bot of this command",
    ),
    (
        {"allow_read": ["random=/no/such/net"]},
        ["--allow-read", "random=/no/such/net"],
        "--allow-read random=/no/such/net: no such file or folder: /no/such/net",
    ),
    (
        {"executor": "ray", "sandbox": "off"},
        ["--executor", "ray", "--sandbox", "off"],
        "--executor ray with bots not fully confined (sandbox off)",
    ),
    ({"ray_address": "auto"}, ["--ray-address", "auto"], "--ray-address is for --executor ray"),
]
BAD_IDS = [
    "game", "jobs", "opening-plies", "one-bot", "unknown-bot", "twice", "rounds", "rounds-0",
    "tiebreak", "games", "move-time-count", "memory", "sandbox", "openings-plies", "param",
    "draw-adjudicate", "depth", "allow-read", "allow-read-bot", "allow-read-path", "ray-unconfined",
    "ray-address",
]  # fmt: skip


@pytest.mark.parametrize(("kwargs", "argv", "message"), BAD, ids=BAD_IDS)
def test_bad_input_raises_the_cli_message(
    kwargs: dict[str, Any], argv: list[str], message: str, tmp_path: Path
) -> None:
    call: dict[str, Any] = {"game": "tictactoe", "bots": TWO, "db": None, **kwargs}
    with pytest.raises(ArenaError) as caught:
        tournament(call.pop("game"), call.pop("bots"), **call)
    assert isinstance(caught.value, ValueError)
    assert message in str(caught.value)
    if not argv[0].isalpha():  # options after the default field
        argv = ["tictactoe", "-b", TWO[0], "-b", TWO[1], *argv]
    cli = run_cli("tournament", "run", *argv, "--db", str(tmp_path / "x.db"), cwd=tmp_path)
    assert cli.returncode == 2
    assert cli.stderr.strip() == f"error: {caught.value}"
    assert list(tmp_path.iterdir()) == []  # neither stored anything


@pytest.mark.parametrize(
    ("kwargs", "argv", "message"),
    [
        ({"elo0": 5.0, "elo1": 0.0}, ["--elo0", "5", "--elo1", "0"], "must be less than elo1"),
        ({"max_games": 1}, ["--max-games", "1"], "--max-games must be >= 2 (one pair), not 1"),
        ({"alpha": 0.0}, ["--alpha", "0"], "SPRT alpha must be between 0 and 1, not 0"),
    ],
    ids=["elo-order", "max-games", "alpha"],
)
def test_bad_sprt_options_raise_the_cli_message(
    kwargs: dict[str, Any], argv: list[str], message: str, tmp_path: Path
) -> None:
    with pytest.raises(ArenaError) as caught:
        sprt("tictactoe", "alphabeta", "random", **kwargs)
    assert message in str(caught.value)
    cli = run_cli(
        "sprt", "tictactoe", "-b", "alphabeta", "-b", "random", *argv,
        "--db", str(tmp_path / "x.db"), cwd=tmp_path,
    )  # fmt: skip
    assert cli.returncode == 2
    assert cli.stderr.strip() == f"error: {caught.value}"


@pytest.mark.parametrize(
    ("kwargs", "argv", "message"),
    [
        ({"bots": ["random"] * 3}, ["-b", "random"] * 3, "tictactoe takes 2 bots, got 3"),
        ({"position": "not a position"}, ["--position", "not a position"], "not a position"),
    ],
    ids=["seats", "position"],
)
def test_play_refuses_bad_input_as_arena_play_does(
    kwargs: dict[str, Any], argv: list[str], message: str, tmp_path: Path
) -> None:
    call: dict[str, Any] = {"bots": ["random", "random"], **kwargs}
    with pytest.raises(ArenaError) as caught:
        play("tictactoe", call.pop("bots"), **call)
    assert message in str(caught.value)
    cli = run_cli("play", "tictactoe", *argv, "--no-save", cwd=tmp_path)
    assert (cli.returncode, cli.stderr) == (2, f"error: {caught.value}\n")


def test_resume_refuses_bad_input_as_arena_tournament_resume_does(tmp_path: Path) -> None:
    """``tournament resume``'s checks are the API's (``api/resume.py``): the same line."""
    from bot_arena.arena.api.resume import check_jobs, check_resume
    from bot_arena.db.session import make_engine, session_factory

    db = tmp_path / "r.db"
    engine = make_engine(f"sqlite:///{db}")
    with session_factory(engine)() as session, pytest.raises(ArenaError) as caught:
        check_resume(session, 99, lambda name: None)
    engine.dispose()
    cli = run_cli("tournament", "resume", "99", "--db", str(db), cwd=tmp_path)
    assert (cli.returncode, cli.stderr) == (2, f"error: {caught.value}\n")
    assert str(caught.value) == "no tournament 99"
    with pytest.raises(ArenaError) as caught:
        check_jobs(0)
    cli = run_cli("tournament", "resume", "99", "--jobs", "0", "--db", str(db), cwd=tmp_path)
    assert (cli.returncode, cli.stderr) == (2, f"error: {caught.value}\n")


def test_a_knockout_seeded_by_rating_from_python(tmp_path: Path) -> None:
    """``seeding="rating"`` as ``--seeding rating``: with no ratings yet, the --bot order."""
    played = tournament(
        "tictactoe", ["random", "random:seed=1"], format="knockout", seeding="rating",
        games=2, jobs=1, seed=3,
    )  # fmt: skip
    assert played.summary["format"] == "knockout"
    with pytest.raises(ArenaError, match="unknown seeding 'elo'"):
        tournament("tictactoe", TWO, format="knockout", seeding="elo")


def test_the_package_imports_the_api_only_when_asked() -> None:
    code = (
        "import sys\n"
        "from bot_arena.arena.cli.app import app\n"  # every command built
        "print(sorted(m for m in sys.modules if m.startswith('bot_arena.arena.api')))\n"
        "import bot_arena.arena as a\n"
        "print(a.tournament.__module__, 'bot_arena.arena.api.tournaments' in sys.modules)\n"
        "print('bot_arena.arena.api.ladders' in sys.modules, a.ladder_run.__module__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "[]",
        "bot_arena.arena.api.tournaments True",
        "False bot_arena.arena.api.ladders",
    ]
    assert set(front.__all__) <= set(dir(front))
    with pytest.raises(AttributeError):
        _ = front.no_such_name  # type: ignore[attr-defined]


def test_the_ladder_functions_are_at_the_front_door() -> None:
    """``bot_arena.arena`` hands out the ladder API itself (issue 28), documented."""
    from bot_arena.arena.api import ladders

    names = ["ladder_create", "ladder_add", "ladder_retire", "ladder_run", "ladder_show"]
    names += ["Added", "RunEnd", "Standing", "LadderView"]
    for name in names:
        assert name in front.__all__
        assert getattr(front, name) is getattr(ladders, name)
        assert getattr(front, name).__doc__


def test_an_sprt_of_one_bot_is_refused_by_the_shared_spec(tmp_path: Path) -> None:
    """``arena sprt`` checks its field with the API's SprtSpec: one line, exit 2, no file."""
    from bot_arena.arena.api.spec import SprtSpec

    with pytest.raises(ArenaError, match="an SPRT tests two bots"):
        SprtSpec().validate(3)
    cli = run_cli("sprt", "tictactoe", "-b", "alphabeta", "--db", "x.db", cwd=tmp_path)
    assert (cli.returncode, cli.stderr) == (
        2,
        "error: an SPRT tests two bots: give --bot NEW --bot BASE\n",
    )
    assert list(tmp_path.iterdir()) == []


def test_tournament_stays_the_function_after_its_subpackage_loads() -> None:
    """``bot_arena.arena.tournament`` is also a subpackage; loading it (a tournament run does)
    must not put the module where the function was, in any order (a fresh process: which
    modules are loaded is the subject)."""
    code = (
        "import bot_arena.arena.tournament.runner\n"
        "from bot_arena.arena import tournament as first\n"
        "from bot_arena.arena import play, tournament\n"
        "import bot_arena.arena.tournament.schedule\n"
        "from bot_arena.arena import tournament as again\n"
        "from bot_arena.arena.tournament.runner import Runner\n"
        "print(first is tournament is again, callable(again), type(again).__name__,\n"
        "      Runner.__name__)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True", "function", "Runner"]
