"""Numbers a bot makes up (NaN, Infinity, 1e400) never reach the database, and what an older
database holds never breaks an export: through the real ``arena`` command.

A bot written here answers with ``{"values":[NaN,Infinity],"depth":-Infinity}`` as its info
(Python's json writes those tokens); ``arena play`` keeps its moves and stores the info as a
note, in strict JSON; ``arena export -f json`` and ``arena replay --json`` print strict JSON, also
of a database where the test wrote the tokens into ``moves.info`` itself (as an older Bot Arena
did). ``--executor ray`` refuses bots that are not fully confined unless the operator says so.
"""

from __future__ import annotations

import json
import math
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bot_arena.arena.transport import protocol, strict_json
from bot_arena.arena.transport.strict_json import NonFinite
from tests import inprocess
from tests.arena.test_ray_missing import arena_without_ray
from tests.db.dbtest import sqlite_copy

NAN_INFO = '{"values":[NaN,Infinity],"depth":-Infinity}'
TOKENS = ("NaN", "Infinity")

# a bot whose every move comes with info of numbers JSON cannot carry
NAN_BOT = """
def choose_move(game, state, budget):
    return game.legal_moves(state)[0], {
        "values": [float("nan"), float("inf")], "depth": float("-inf"), "nodes": 7,
    }
"""


def arena(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``arena ARGS``, in this process (``tests/inprocess.py``)."""
    return inprocess.run(*args, cwd=cwd or Path.cwd())


def strict_loads(text: str) -> Any:
    """``json.loads`` as a strict parser reads: NaN and the infinities are errors."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in what should be strict JSON")

    return json.loads(text, parse_constant=refuse)


def no_nonfinite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(no_nonfinite(v) for v in value.values())
    if isinstance(value, list):
        return all(no_nonfinite(v) for v in value)
    return True


# --- the protocol boundary ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "info",
    [
        NAN_INFO,
        '{"value":NaN}',
        '{"value":-Infinity}',
        '{"pv":["e4"],"score":{"cp":1e400}}',  # Python reads 1e400 as an infinity
        '{"nodes":1' + "0" * 400 + "}",  # an integer beyond a double's range
    ],
)
def test_a_move_with_such_info_counts_and_its_info_is_dropped(info: str) -> None:
    line = f'{{"type":"move","id":3,"move":"e2e4","info":{info}}}'.encode()
    answer = protocol.decode_answer(line, 3)
    assert answer == protocol.MoveAnswer("e2e4", {"dropped": protocol.NAN_DROPPED})
    assert strict_json.dumps(answer.info) == json.dumps(answer.info)


@pytest.mark.parametrize(
    "line",
    [
        '{"type":"move","id":NaN,"move":"e2e4"}',
        '{"type":"move","id":3,"move":Infinity}',
        '{"type":"ready","name":NaN}',
        '{"type":"move","id":3,"move":"e2e4","info":{"v":NaN}',  # not JSON after all
    ],
)
def test_such_a_number_where_the_arena_reads_is_a_protocol_error(line: str) -> None:
    with pytest.raises(protocol.ProtocolError):
        protocol.decode_answer(line.encode(), 3)


def test_such_a_number_elsewhere_leaves_the_answer_as_it_was() -> None:
    line = b'{"type":"move","id":3,"move":"e2e4","extra":NaN,"info":{"depth":2,"v":-0.5}}'
    assert protocol.decode_answer(line, 3) == protocol.MoveAnswer("e2e4", {"depth": 2, "v": -0.5})


def test_the_helpers_refuse_and_map_nonfinite_numbers() -> None:
    for text in ("NaN", "[Infinity]", '{"a":-Infinity}', "1e400", "-1" + "0" * 400):
        with pytest.raises(NonFinite):
            strict_json.decode(text)
    assert strict_json.decode("[1e308, 12, -0.5]") == [1e308, 12, -0.5]
    for value in (math.nan, [math.inf], {"a": {"b": (-math.inf,)}}):
        with pytest.raises(ValueError):
            strict_json.dumps(value)
    assert strict_json.finite({"a": [math.nan, 1.5, {"b": (math.inf, "x")}], "c": 2}) == {
        "a": [None, 1.5, {"b": [None, "x"]}],
        "c": 2,
    }


# --- through the command line ------------------------------------------------------------------


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with one tic-tac-toe match of the NaN bot (seat 0) against random, made once
    a module and left as ``arena play`` wrote it (its write-ahead log too): a test that
    changes it takes :func:`played_copy`."""
    folder = tmp_path_factory.mktemp("nan-played")
    bot = folder / "nanbot.py"
    bot.write_text(NAN_BOT)
    db = folder / "arena.db"
    done = arena("play", "tictactoe", "--bot", str(bot), "--bot", "random", "--seed", "3",
                 "--no-show", "--db", str(db), cwd=folder)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return db


@pytest.fixture
def played_copy(played: Path, tmp_path: Path) -> Path:
    """A copy of :func:`played`'s database of the test's own."""
    db = tmp_path / "arena.db"
    sqlite_copy(played, db)
    return db


@pytest.mark.timeout(300)
def test_play_stores_strict_json_and_the_bots_moves_count(played: Path) -> None:
    with sqlite3.connect(played) as conn:
        faults = conn.execute("SELECT seat, fault FROM seats ORDER BY seat").fetchall()
        infos = conn.execute(
            "SELECT moves.info FROM moves JOIN seats ON seats.match_id = moves.match_id"
            " AND seats.seat = moves.seat WHERE moves.seat = 0"
        ).fetchall()
    assert faults == [(0, None), (1, None)]  # the move counted: no fault for seat 0
    assert infos and all(json.loads(i) == {"dropped": protocol.NAN_DROPPED} for (i,) in infos)
    # the bot's stored source says float("nan"); the tokens it answered with are nowhere
    raw = b"".join(p.read_bytes() for p in played.parent.glob("arena.db*"))  # the WAL too
    for token in TOKENS:
        assert token.encode() not in raw


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_exports_are_strict_json_even_of_an_older_database(played_copy: Path) -> None:
    """The tokens written into moves.info by hand (an older Bot Arena stored them) come out
    of ``export -f json`` and ``replay --json`` as null."""
    with sqlite3.connect(played_copy) as conn:
        conn.execute("UPDATE moves SET info = ?", (NAN_INFO,))
    assert b"Infinity" in b"".join(p.read_bytes() for p in played_copy.parent.glob("arena.db*"))
    done = arena("export", "-f", "json", "--db", str(played_copy))
    assert done.returncode == 0, done.stderr
    exported = strict_loads(done.stdout)
    moves = exported[0]["moves"]
    assert moves and all(m["info"] == {"values": [None, None], "depth": None} for m in moves)
    replayed = arena("replay", str(exported[0]["match"]), "--json", "--db", str(played_copy))
    assert replayed.returncode == 0, replayed.stderr
    record = strict_loads(replayed.stdout)
    assert record["moves"][0]["info"] == {"values": [None, None], "depth": None}


# --- Ray and bots that are not confined --------------------------------------------------------

# the CLI with ``import ray`` failing, as on a machine without the extra (arena_without_ray): a
# run that gets past the check says Ray is missing, one that does not never reached Ray
NEEDS_RAY = "error: --executor ray needs Ray: pip install 'bot-arena[ray]'"
UNCONFINED = (
    "error: --executor ray with bots not fully confined (sandbox off): they could join the "
    "cluster and run code on its nodes; give --ray-allow-unconfined to accept that"
)


@pytest.mark.parametrize(
    "command",
    [
        ["tournament", "run", "tictactoe", "--bot", "random", "--bot", "random:seed=1"],
        ["sprt", "tictactoe", "--bot", "random", "--bot", "random:seed=1"],
    ],
)
@pytest.mark.slow
def test_ray_refuses_unconfined_bots_unless_told(command: list[str], tmp_path: Path) -> None:
    db = tmp_path / "arena.db"

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return arena_without_ray(
            *command, "--executor", "ray", "--db", str(db), *extra, cwd=tmp_path
        )

    refused = run("--sandbox", "off")
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [UNCONFINED]
    assert not db.exists()  # checked before anything is stored
    allowed = run("--sandbox", "off", "--ray-allow-unconfined")
    assert allowed.returncode == 2 and allowed.stderr.strip().splitlines() == [NEEDS_RAY]
    confined = run("--sandbox", "on")  # fully confined: no flag needed
    assert confined.returncode == 2 and confined.stderr.strip().splitlines() == [NEEDS_RAY]


def test_resume_on_ray_refuses_unconfined_bots_too(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    done = arena_without_ray(
        "tournament", "resume", "1", "--executor", "ray", "--sandbox", "off", "--db", str(db),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [UNCONFINED]


# --- chess engines' search info ----------------------------------------------------------------

HUGE = "1" + "0" * 400  # an integer beyond a double's range (and 5000 digits: beyond int())


def test_an_engines_numbers_beyond_a_double_are_not_kept() -> None:
    from bot_arena.arena.match import uci, xboard

    assert uci.parse_info(f"info depth 3 nodes {HUGE} pv e2e4") == {"depth": 3}
    assert uci.parse_info(f"info depth 3 score cp {HUGE}") == {"depth": 3}
    assert uci.parse_info("info depth 3 nodes " + "9" * 5000) == {"depth": 3}
    assert xboard.parse_thinking(f"5 20 100 {HUGE} e2e4".encode()) is None
    assert xboard.parse_thinking(("5 20 100 " + "9" * 5000).encode()) is None
    assert xboard.parse_thinking(b"5 -20 100 4000 e2e4") == {
        "depth": 5, "score": {"cp": -20}, "time_ms": 1000, "nodes": 4000, "pv": ["e2e4"],
    }  # fmt: skip


# --- a confined bot's files: a folder named like an import is not a package --------------------


def test_a_folder_named_like_an_import_opens_only_if_python_would_import_it(
    tmp_path: Path,
) -> None:
    """A bot in /tmp that says ``import ray`` must not be given /tmp/ray (Ray's session folder,
    its address and sockets): only a folder with ``__init__.py``, or a namespace package with a
    module or package in it, is opened as an imported package."""
    from bot_arena.arena.transport.sandbox import paths

    (tmp_path / "bot.py").write_text("import ray\nimport nsmod\nimport nspkg\nimport data\n")
    session = tmp_path / "ray" / "session_latest"
    session.mkdir(parents=True)
    (session / "gcs_server_port_x").write_text("6379")
    (tmp_path / "ray" / "ray_current_cluster").write_text("127.0.0.1:6379")
    (tmp_path / "nsmod").mkdir()  # a namespace package with a module
    (tmp_path / "nsmod" / "mod.py").write_text("")
    (tmp_path / "nspkg" / "sub").mkdir(parents=True)  # ... with a package
    (tmp_path / "nspkg" / "sub" / "__init__.py").write_text("")
    (tmp_path / "data" / "weights").mkdir(parents=True)  # no code at all
    found = {Path(p).name for p in paths.python_closure(str(tmp_path / "bot.py"))}
    assert found == {"bot.py", "nsmod", "nspkg"}


@pytest.mark.parametrize("level", ["partial", "off"])
def test_an_actor_whose_node_cannot_confine_stops_the_run_unless_told(level: str) -> None:
    """This machine's level passed the CLI's check; a node that offers fewer layers is found
    when its actor starts (driver side, no cluster: a stand-in executor)."""
    from types import SimpleNamespace

    from bot_arena.arena.tournament.job import encode
    from bot_arena.arena.tournament.ray_executor import ClusterError, RayWorker

    def start(sandbox: str, allowed: bool) -> RayWorker:
        worker = RayWorker(SimpleNamespace(allow_unconfined=allowed), None)  # type: ignore[arg-type]
        worker._take_start(encode({"node": "abc", "host": "node n2", "sandbox": sandbox}))
        return worker

    with pytest.raises(ClusterError, match=f"^node n2 runs bots {level}, not fully confined"):
        start(level, allowed=False)
    assert start(level, allowed=True).sandbox_level == level
    assert start("confined", allowed=False).ready


def test_a_float_game_parameter_must_be_finite() -> None:
    """A game's float parameter is stored as JSON with the match: nan and inf are refused as
    any value that is not a float is (GameError: one line at the command line)."""
    from bot_arena.games import params
    from bot_arena.games.base import GameError

    def rules(komi: float = 0.5) -> None: ...

    assert params.bind("go", rules, {"komi": "6.5"}) == {"komi": 6.5}
    for bad in ("nan", "inf", "-Infinity", "1e400"):
        with pytest.raises(GameError, match=f"komi={bad!r} is not a valid float"):
            params.bind("go", rules, {"komi": bad})


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--move-time=inf", "move time must be a finite number of seconds, not inf"),
        ("--margin=nan", "margin must be a finite number of seconds, not nan"),
        ("--margin=inf", "margin must be a finite number of seconds, not inf"),
        ("--startup-time=nan", "startup limit must be a finite number of seconds > 0, not nan"),
        ("--startup-time=inf", "startup limit must be a finite number of seconds > 0, not inf"),
    ],
)
def test_times_that_no_clock_can_count_are_one_line_errors(
    option: str, message: str, tmp_path: Path
) -> None:
    db = tmp_path / "arena.db"
    done = arena("play", "tictactoe", "--bot", "random", "--bot", "random", option,
                 "--db", str(db), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"error: {message}"]
    assert not db.exists()
