"""The ladders on ``arena serve`` (issue 31) through a real server process: the ladders and
their standings as JSON (as ``arena ladder show --json``, with owners), an upload entered in a
ladder with every refusal (400, 401, 403, 404, 413, 429) leaving nothing stored, hostile names
and paths, the pages and their form's CSRF check, and ``arena serve --jobs`` playing a ladder
beside a ``ladder run`` that must be refused."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bot_arena.db.tournaments import RUNNER
from tests import inprocess
from tests.server.conftest import (
    FLAKY_BOT,
    GOOD_BOT,
    SERVER_ENV,
    UPLOADS_PER_HOUR,
    Served,
    fill,
    start,
)

HOSTILE = "<script>alert(1)</script>"
STANDINGS_AGE = 0.1  # seconds the served standings are kept (arena serve --standings-age)
POLL_S = 0.05  # between the reads of a test that waits for a change to show (one GET each)


def make_ladders(db: Path) -> None:
    """Ladder ``club`` (tictactoe: random and first_legal, 4 games played) and ``c4``
    (connect4, empty)."""
    from bot_arena.arena.api.ladders import ladder_add, ladder_create, ladder_run

    ladder_create("club", "tictactoe", db=str(db), seed=7)
    ladder_add("club", ["random", str(GOOD_BOT)], db=str(db))
    ladder_run("club", jobs=1, until_games=4, db=str(db))
    ladder_create("c4", "connect4", db=str(db), seed=7)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("serve-ladders")
    db = folder / "arena.db"
    filled = fill(db)
    make_ladders(db)
    # standings and the ladder list kept STANDINGS_AGE s, not the default 1 s: the tests that
    # wait for a change to show wait out that age (each waited about a second)
    server = start(
        folder,
        db,
        *["--uploads-per-hour", str(UPLOADS_PER_HOUR), "--standings-age", str(STANDINGS_AGE)],
        env=SERVER_ENV,
    )
    server.tokens = filled.tokens
    try:
        yield server
    finally:
        server.stop()


def enter(
    served: Served,
    user: str | None,
    name: str,
    path: Path = GOOD_BOT,
    ladder: str = "club",
    **data: str,
) -> httpx.Response:
    with served.client(user) as client:
        return client.post(
            f"/api/ladders/{ladder}/bots",
            data={"name": name, **data},
            files={"file": ("bot.py", path.read_bytes(), "text/x-python")},
        )


def entrants(served: Served, ladder: str = "club") -> list[str]:
    """The ladder's entrants, read from the database file itself."""
    conn = sqlite3.connect(f"file:{served.db}?mode=ro", uri=True)
    try:
        return [
            n
            for (n,) in conn.execute(
                "SELECT b.name FROM tournament_entries e "
                "JOIN bot_versions v ON v.id = e.bot_version_id JOIN bots b ON b.id = v.bot_id "
                "JOIN ladders l ON l.tournament_id = e.tournament_id "
                "WHERE l.name = ? ORDER BY e.position",
                (ladder,),
            )
        ]
    finally:
        conn.close()


def standings(served: Served, ladder: str = "club") -> dict[str, object]:
    with served.client() as client:
        answer = client.get(f"/api/ladders/{ladder}/standings")
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert isinstance(found, dict)
    return found


def error_of(answer: httpx.Response, status: int) -> str:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    return str(answer.json()["error"])


def arena(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``arena ARGS --db DB`` run in this process (tests/inprocess.py): what the command
    prints and its exit code are the subject here, not its process."""
    return inprocess.run(*args, "--db", str(db), cwd=Path.cwd())


def test_the_ladders_are_listed(served: Served) -> None:
    with served.client() as client:
        answer = client.get("/api/ladders")
    assert answer.status_code == 200
    rows = {r["name"]: r for r in answer.json()["ladders"]}
    assert rows["club"]["game"] == "tictactoe" and rows["club"]["active"] >= 2
    assert rows["c4"] == rows["c4"] | {"game": "connect4", "active": 0, "entrants": 0}


def test_standings_are_ladder_shows_with_owners(served: Served) -> None:
    shown = arena(served.db, "ladder", "show", "club", "--json")
    assert shown.returncode == 0, shown.stderr
    cli = json.loads(shown.stdout)
    web = standings(served)
    rows = web.pop("standings")
    assert isinstance(rows, list)
    board = web.pop("leaderboard")  # the leaderboard's rows: tests/api/test_ladder_views.py
    assert isinstance(board, list) and board
    assert {k: v for k, v in cli.items() if k != "standings"} == web
    by_name = {r["name"]: r for r in rows}
    for row in cli["standings"]:
        mine = by_name[row["name"]]
        assert {k: mine[k] for k in row} == row
        assert mine["owner"] is None  # bots of the house
    assert web["games"] == 4


def test_an_upload_is_entered_in_the_ladder_and_shows_in_the_standings(served: Served) -> None:
    answer = enter(served, "alice", "alices-club-bot")
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["bot"]["owner"] == "alice"
    assert body["ladder"]["name"] == "club" and body["ladder"]["entrant"] == "alices-club-bot"
    assert body["validation"]["game"] == "tictactoe"
    assert "alices-club-bot" in entrants(served)
    rows = {r["name"]: r for r in standings(served)["standings"]}  # type: ignore[union-attr]
    assert rows["alices-club-bot"]["owner"] == "alice"
    assert rows["alices-club-bot"]["bot"] == body["bot"]["id"]
    # the same file again is in the ladder already: 400, nothing more stored
    again = enter(served, "alice", "alices-club-bot")
    assert "in the ladder already" in error_of(again, 400)
    assert entrants(served).count("alices-club-bot") == 1
    # a changed file under the same name: a new version beside the old one, still alice's
    changed = served.db.parent / "changed.py"
    changed.write_text(GOOD_BOT.read_text() + "\n# version two\n")
    second = enter(served, "alice", "alices-club-bot", changed)
    assert second.status_code == 201, second.text
    assert second.json()["ladder"]["entrant"] == "alices-club-bot@2"
    rows = {r["name"]: r for r in standings(served)["standings"]}  # type: ignore[union-attr]
    assert rows["alices-club-bot@2"]["owner"] == "alice"


def test_refusals_store_nothing(served: Served) -> None:
    before = entrants(served)
    assert "token" in error_of(enter(served, None, "nobodys"), 401)
    assert "no ladder" in error_of(enter(served, "bob", "bobs", ladder="nowhere"), 404)
    flaky = enter(served, "bob", "bobs-flaky", FLAKY_BOT)
    assert "failed validation" in error_of(flaky, 400)
    assert flaky.json()["fault"]["termination"] == "crash"
    other_game = enter(served, "bob", "bobs-c4", game="connect4")
    assert "plays tictactoe" in error_of(other_game, 400)
    assert "not allowed" in error_of(enter(served, "bob", HOSTILE), 400)
    big = served.db.parent / "big.py"
    big.write_text(GOOD_BOT.read_text() + "#" * 30_000)
    error_of(enter(served, "bob", "bobs-big", big), 413)
    assert entrants(served) == before


def test_another_users_name_is_403(served: Served) -> None:
    assert enter(served, "carol", "carols-own").status_code == 201
    assert "someone else" in error_of(enter(served, "bob", "carols-own", ladder="c4"), 403)
    assert "someone else" in error_of(enter(served, "bob", "house", ladder="c4"), 403)
    assert entrants(served, "c4") == []


def test_odd_ladder_names_and_queries_are_404_or_ignored(served: Served) -> None:
    with served.client() as client:
        odd = (HOSTILE, "..%2F..%2Fetc", "x" * 300, "%00", "club%0A", "\uff43lub", "c4;drop")
        for name in odd:
            for path in (f"/api/ladders/{name}/standings", f"/api/ladders/{name}/bots"):
                method = client.get if path.endswith("standings") else client.post
                answer = method(path)
                assert answer.status_code in (401, 404, 405), (path, answer.status_code)
                if answer.status_code == 404:
                    assert "<script>" not in answer.text
            page = client.get(f"/ladders/{name}")
            assert page.status_code == 404 and "<script>" not in page.text
        plain = client.get("/api/ladders/club/standings").json()
        queried = client.get("/api/ladders/club/standings?limit=-1&name=<b>&x=" + "y" * 3000)
        assert queried.status_code == 200 and queried.json() == plain


def test_past_the_rate_limit_is_429(served: Served) -> None:
    codes = []
    for i in range(UPLOADS_PER_HOUR + 1):
        with served.client("erin") as client:
            codes.append(client.post("/api/ladders/club/bots", data={"name": f"a{i}"}).status_code)
    assert codes == [400] * UPLOADS_PER_HOUR + [429], codes


def test_standings_are_304_while_they_hold_and_a_stored_game_gives_a_fresh_tag(
    served: Served,
) -> None:
    """The standings carry an ETag and ``Cache-Control: no-cache``; the same tag back is 304
    with no body; a game stored gives new bytes under a new tag, and from then on the old tag
    is answered in full (never 304). Every tag names one body."""
    from bot_arena.arena.api.ladders import ladder_add, ladder_create, ladder_run

    ladder_create("tags", "tictactoe", db=str(served.db), seed=11)
    ladder_add("tags", ["random", "random:seed=3"], db=str(served.db))
    ladder_run("tags", jobs=1, until_games=2, db=str(served.db))
    path = "/api/ladders/tags/standings"
    bodies: dict[str, bytes] = {}  # each tag and the body it came with

    def get(client: httpx.Client, tag: str | None = None) -> httpx.Response:
        answer = client.get(path, headers={} if tag is None else {"If-None-Match": tag})
        assert answer.headers["cache-control"] == "no-cache", answer.headers
        if answer.status_code == 200:
            got = answer.headers["etag"]
            assert bodies.setdefault(got, answer.content) == answer.content, "a tag, two bodies"
        else:
            assert answer.status_code == 304 and answer.content == b"", answer
        return answer

    with served.client() as client:
        first = get(client)
        old = first.headers["etag"]
        assert first.json()["games"] == 2 and old.startswith('"')
        again = get(client, old)
        assert again.status_code == 304 and again.headers["etag"] == old
        for other in ('"nope"', "W/" + old, f'"x", {old}', "*"):
            assert get(client, other).status_code == (200 if other == '"nope"' else 304), other
        assert get(client, "x" * 5000).status_code == 200  # too long to read: the full answer
        ladder_run("tags", jobs=1, until_games=3, db=str(served.db))  # more games stored
        deadline = time.monotonic() + 60
        while (answer := get(client, old)).status_code == 304:  # the kept answer, for a while
            assert time.monotonic() < deadline, "the standings never changed"
            time.sleep(POLL_S)
        new = answer.headers["etag"]
        assert new != old and answer.json()["games"] > 2
        assert get(client, old).status_code == 200  # the old bytes are gone: never 304 again
        assert get(client, new).status_code == 304


def test_the_ladder_list_is_304_until_it_changes(served: Served) -> None:
    """The ladder list's tag: 304 while it holds; a ladder made elsewhere (here: by the
    API's function, not the server) shows within the list's age, under a new tag."""
    from bot_arena.arena.api.ladders import ladder_create

    with served.client() as client:
        first = client.get("/api/ladders")
        tag = first.headers["etag"]
        assert first.headers["cache-control"] == "no-cache"
        assert client.get("/api/ladders", headers={"If-None-Match": tag}).status_code == 304
        ladder_create("listed", "tictactoe", db=str(served.db), seed=1)
        deadline = time.monotonic() + 30
        while (
            changed := client.get("/api/ladders", headers={"If-None-Match": tag})
        ).status_code == 304:
            assert time.monotonic() < deadline, "the new ladder never showed"
            time.sleep(POLL_S)
    assert changed.status_code == 200 and changed.headers["etag"] != tag
    assert "listed" in {r["name"] for r in changed.json()["ladders"]}


def test_other_answers_are_still_no_store(served: Served) -> None:
    with served.client() as client:
        for path in ("/api/health", "/ladders/club", "/api/ladders/nope/standings"):
            answer = client.get(path)
            assert answer.headers["cache-control"] == "no-store", path
            assert "etag" not in answer.headers, path


def test_the_pages_show_the_ladders_and_escape_what_they_show(served: Served) -> None:
    with served.client() as client:
        listing = client.get("/ladders")
        page = client.get("/ladders/club")
    assert listing.status_code == 200 and 'href="/ladders/club"' in listing.text
    assert page.status_code == 200
    assert 'data-url="/api/ladders/club/standings"' in page.text
    assert '<script src="/static/ladder.js" defer></script>' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    with served.client() as client:
        script = client.get("/static/ladder.js")
    assert script.status_code == 200 and "textContent" in script.text
    assert "innerHTML" not in script.text


def signed_in(served: Served, user: str) -> tuple[httpx.Client, str]:
    """A client with ``user``'s session cookie, and the session's CSRF token."""
    from tests.server.conftest import PASSWORD

    client = served.client(follow_redirects=False)
    page = client.get("/signin")
    csrf = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    answer = client.post("/signin", data={"csrf": csrf, "name": user, "password": PASSWORD})
    assert answer.status_code == 303, answer.text
    ladder = client.get("/ladders/club")
    token = ladder.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    return client, token


def test_the_form_enters_a_bot_and_checks_csrf(served: Served) -> None:
    client, csrf = signed_in(served, "bob")
    try:
        files = {"file": ("bot.py", GOOD_BOT.read_bytes(), "text/x-python")}
        forged = client.post("/ladders/club/upload", data={"name": "bobs-form"}, files=files)
        assert forged.status_code == 403 and "bobs-form" not in entrants(served)
        wrong = client.post(
            "/ladders/club/upload", data={"name": "bobs-form", "csrf": "x" * 40}, files=files
        )
        assert wrong.status_code == 403 and "bobs-form" not in entrants(served)
        good = client.post(
            "/ladders/club/upload", data={"name": "bobs-form", "csrf": csrf}, files=files
        )
        assert good.status_code == 303 and good.headers["location"] == "/ladders/club"
        assert "bobs-form" in entrants(served)
        page = client.get("/ladders/club")
        assert '<tr data-bot="bobs-form" class="mine">' in page.text
        refused = client.post(
            "/ladders/club/upload",
            data={"name": "bobs-form-flaky", "csrf": csrf},
            files={"file": ("bot.py", FLAKY_BOT.read_bytes(), "text/x-python")},
        )
        assert refused.status_code == 400 and "failed validation" in refused.text
        assert "third move is cursed" in refused.text
    finally:
        client.close()


def wait_for(check: object, deadline_s: float, what: str) -> None:
    """Poll ``check()`` until true, within a deadline (no sleeping on a guess)."""
    assert callable(check)
    deadline = time.monotonic() + deadline_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_serve_jobs_plays_the_ladders_and_a_second_runner_is_refused(
    tmp_path: Path,
) -> None:
    from bot_arena.arena.api.ladders import ladder_add, ladder_create

    db = tmp_path / "arena.db"
    ladder_create("live", "tictactoe", db=str(db), seed=3)
    ladder_add("live", ["random", str(GOOD_BOT)], db=str(db))
    server = start(tmp_path, db, "--jobs", "1", env=SERVER_ENV)
    try:

        def games() -> int:
            with server.client() as client:
                return int(client.get("/api/ladders/live/standings").json()["games"])

        wait_for(lambda: games() >= 4, 120, "the server's runner to store 4 games")
        second = arena(db, "ladder", "run", "live", "--until-games", "1000")
        assert second.returncode == 2, second.stderr
        assert "is being played by process" in second.stderr
        first = games()
        wait_for(lambda: games() > first, 120, "more games")
    finally:
        server.stop()
    # stopped by itself, so its runner was stopped and waited for (a kill would leave the
    # runner finishing its games while this test reads)
    assert server.process.returncode != -signal.SIGKILL, server.log.read_text()[-2000:]
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        (settings,) = conn.execute(
            "SELECT t.settings FROM tournaments t JOIN ladders l ON l.tournament_id = t.id "
            "WHERE l.name = 'live'"
        ).fetchone()
        seats = conn.execute(
            "SELECT count(*) FROM seats s JOIN matches m ON m.id = s.match_id "
            "WHERE m.status = 'done' GROUP BY m.id HAVING count(*) <> 2"
        ).fetchall()
    finally:
        conn.close()
    assert seats == []
    # the runner stopped with the server, as on Ctrl-C: it ended its run and cleared its entry
    # (a game in play at the signal stays 'running', to be played again by the next run)
    assert RUNNER not in json.loads(settings)


def nice_of(pid: int) -> int:
    """The nice value of process ``pid``'s main thread (``/proc``)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def test_serve_hands_its_sandbox_options_to_the_runners_and_yields_the_cpu_to_them(
    tmp_path: Path,
) -> None:
    """A ladder made under the default sandbox (``auto``: confined on this machine) played by
    ``arena serve --jobs 1 --sandbox off --allow-read FILE``: its runner's command line holds
    both options and every game it stores ran unconfined (level ``off``); the runner keeps the
    server's priority while the web side's (the event loop's thread) is ``--web-nice``'s
    default lower, and so does an upload's validation game (its bot's own nice value, in the
    400's evidence)."""
    from bot_arena.arena.api.ladders import ladder_add, ladder_create
    from bot_arena.arena.cli.serve_cmd import WEB_NICE

    db = tmp_path / "arena.db"
    filled = fill(db)  # users and their tokens
    book = tmp_path / "book.txt"
    book.write_text("a file the bots may read\n")
    ladder_create("free", "tictactoe", db=str(db), seed=3)
    ladder_add("free", ["random", str(GOOD_BOT)], db=str(db))
    # a bot whose first move fails, saying its process's nice value: the answer's evidence
    told = tmp_path / "told.py"
    told.write_text(
        "import os\n\n\ndef choose_move(game, state, budget):\n"
        "    raise RuntimeError(f'my nice is {os.getpriority(os.PRIO_PROCESS, 0)}')\n"
    )

    def read(sql: str) -> list[tuple[object, ...]]:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return conn.execute(sql).fetchall()
        finally:
            conn.close()

    ((ladder,),) = read("SELECT max(id) FROM tournaments")  # made after fill's tournament
    done = f"SELECT count(*) FROM matches WHERE status = 'done' AND tournament_id = {ladder}"
    server = start(
        tmp_path, db, "--jobs", "1", "--sandbox", "off", "--allow-read", str(book), env=SERVER_ENV
    )
    try:
        wait_for(lambda: read(done)[0][0] >= 4, 120, "the server's runner to store 4 games")
        ((settings,),) = read(f"SELECT settings FROM tournaments WHERE id = {ladder}")
        pid = json.loads(str(settings))[RUNNER]["pid"]
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        niceness = nice_of(server.process.pid), nice_of(pid)
        server.tokens = filled.tokens
        with server.client("bob") as bob:  # an upload's validation game, from the web side
            validated = bob.post(
                "/api/ladders/free/bots",
                data={"name": "bobs-told"},
                files={"file": ("told.py", told.read_bytes(), "text/x-python")},
            )
    finally:
        server.stop()
    ours = os.getpriority(os.PRIO_PROCESS, 0)  # the server's as started, its runner's
    assert niceness == (min(19, ours + WEB_NICE), ours), niceness
    # ... and the validation game's bot keeps it too: a bot is not timed at the web's priority
    assert validated.status_code == 400, validated.text
    assert any(f"my nice is {ours}" in line for line in validated.json()["evidence"]), (
        validated.json()["evidence"]
    )
    assert b"run" in command and b"free" in command, command
    at = command.index(b"--sandbox")
    assert command[at + 1] == b"off", command
    at = command.index(b"--allow-read")
    assert command[at + 1] == str(book).encode(), command
    levels = read(
        f"SELECT DISTINCT sandbox FROM matches WHERE status = 'done' AND tournament_id = {ladder}"
    )
    assert levels == [("off",)], levels


def test_a_lowered_scrypt_cost_is_said_when_the_server_starts(served: Served) -> None:
    """The suite runs every server with ``$ARENA_SCRYPT_N=1024`` (tests/conftest.py): a server
    started so says it, in one line, so an operator who left it set sees it."""
    assert os.environ["ARENA_SCRYPT_N"] == "1024"
    line = (
        "arena: warning: $ARENA_SCRYPT_N=1024 hashes new passwords and tokens 16 times cheaper"
        " than the default: a test suite's setting"
    )
    assert line in served.log.read_text().splitlines(), served.log.read_text()


@pytest.mark.parametrize("value", ["3", "65536", "1e3", "-4"])
def test_a_bad_scrypt_cost_stops_the_server_before_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("ARENA_SCRYPT_N", value)
    found = arena(tmp_path / "arena.db", "serve")
    line = f"error: $ARENA_SCRYPT_N: {value!r} is not a power of two from 2 to 16384"
    assert found.returncode == 2 and found.stderr.strip() == line, found.stderr
    assert not (tmp_path / "arena.db").exists()


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--jobs", "0"], "error: --jobs 0: give 1 to 1024"),
        (["--jobs", "99999"], "error: --jobs 99999: give 1 to 1024"),
        (["--executor", "<b>x</b>"], "error: --executor '<b>x</b>': use local or ray"),
        (["--max-streams", "0"], "error: --max-streams 0: give 1 to 100000"),
        (["--web-nice", "20"], "error: --web-nice 20: give 0 to 19"),
        (["--standings-age", "61"], "error: --standings-age 61: give 0 to 60 seconds"),
        (["--standings-age", "nan"], "error: --standings-age nan: give 0 to 60 seconds"),
        (["--ray-address", "127.0.0.1:1"], "error: --ray-address is for --executor ray"),
        (
            ["--jobs", "1", "--ray-address", "127.0.0.1:1"],
            "error: --ray-address is for --executor ray",
        ),
    ],
)
def test_bad_serve_options_are_one_line(tmp_path: Path, args: list[str], line: str) -> None:
    found = arena(tmp_path / "arena.db", "serve", *args)
    assert found.returncode == 2 and found.stderr.strip() == line, found.stderr
    assert not (tmp_path / "arena.db").exists()


@pytest.mark.parametrize("age", [0.0, 60.0])
def test_the_standings_age_is_how_long_the_server_keeps_its_answers(
    tmp_path: Path, age: float
) -> None:
    """``--standings-age`` reaches the caches ``create_app`` makes: the ladder list and each
    ladder's standings, once read, are handed out for that long (60 s: still, at once after;
    0: every read goes to the database)."""
    from bot_arena.arena.api import ladder_views
    from bot_arena.arena.api.ladders import ladder_create
    from bot_arena.arena.api.sandbox import confinement
    from bot_arena.arena.server.app import create_app
    from bot_arena.arena.server.ready import Ready
    from bot_arena.arena.server.settings import ServerSettings
    from bot_arena.arena.server.state import ServerState
    from bot_arena.db.session import make_engine, session_factory

    db = str(tmp_path / "arena.db")
    ladder_create("club", "tictactoe", db=db, seed=1)
    engine, writer = make_engine(db, read_only=True), make_engine(db)
    try:
        settings = ServerSettings(db=db, confinement=confinement("off", None), standings_age=age)
        state = create_app(settings, session_factory(engine), session_factory(writer)).state.arena
        assert isinstance(state, ServerState)
        state.ladder_list.read(lambda: Ready.of("[]"))
        assert (state.ladder_list.get() is not None) == (age > 0)
        with state.reads() as session:
            row = ladder_views.find(session, "club")
            assert state.standings.get(session, row, lambda _s, _r: "fitted") == "fitted"
        assert (state.standings.recent("club") is not None) == (age > 0)
    finally:
        engine.dispose()
        writer.dispose()
