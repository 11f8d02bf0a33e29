"""``arena report`` on real tournaments: the file, its numbers and its pages in a real browser.

The tournaments are real (bot processes, a bot that plays illegal moves, one that never
answers), stored on SQLite and, when ``ARENA_TEST_PG_URL`` is set, on PostgreSQL; the report is
opened in headless Chromium with no network (tests/report/conftest.py).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from typer.testing import CliRunner

from bot_arena import games
from bot_arena.arena.cli.app import app
from bot_arena.arena.report.boards import board_view
from tests.db.dbtest import BACKENDS, database

# its tournaments are played by a module fixture: once, on one worker (--dist loadfile)
pytestmark = pytest.mark.slow

runner = CliRunner()
FIXTURES = Path(__file__).resolve().parents[1] / "arena" / "fixtures"


def arena(*args: str) -> Any:
    return runner.invoke(app, list(args))


def ok(*args: str) -> Any:
    result = arena(*args)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module", params=BACKENDS)
def played(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """Two tournaments on one database: tic-tac-toe with faulty bots, and Connect Four."""
    folder = tmp_path_factory.mktemp("report")
    with database(request.param, folder, ready=True) as url:
        ok(
            "tournament", "run", "tictactoe",
            "--bot", "random", "--bot", "alphabeta:depth=2", "--bot", "minimax:depth=1",
            "--bot", str(FIXTURES / "illegal.py"), "--bot", str(FIXTURES / "busy_loop.py"),
            "--games", "2", "--move-time", "0.05", "--seed", "5", "--name", "faults & <friends>",
            "--db", url,
        )  # fmt: skip
        ok(
            "tournament", "run", "connect4",
            "--bot", "random", "--bot", "alphabeta:depth=2", "--bot", "iterative:time=0.02",
            "--games", "2", "--seed", "7", "--db", url,
        )  # fmt: skip
        ok(
            "tournament", "run", "coins", "--param", "players=3", "--param", "coins=7",
            "--bot", "random", "--bot", "maxn", "--bot", "paranoid:depth=2",
            "--games", "1", "--seed", "3", "--db", url,
        )  # fmt: skip
        yield {
            "url": url,
            "folder": folder,
            "ttt": 1,
            "c4": 2,
            "coins3": 3,
            "built": {},
            "boards": {},
        }


def build(played: dict[str, Any], *args: str, name: str = "report.html") -> Path:
    """The report of ``args`` on the played database, written once a module: the database
    does not change after the fixture, so the same arguments make the same file, and the tests
    that read one report (the file's checks, the browser's, the replays) share it."""
    built: dict[tuple[str, ...], Path] = played["built"]
    if args not in built:
        out = played["folder"] / name
        result = ok("report", *args, "-o", str(out), "--db", played["url"])
        assert result.output.startswith(f"wrote {out} (")
        built[args] = out
    return built[args]


def leaderboard_json(played: dict[str, Any], *args: str) -> list[dict[str, Any]]:
    boards: dict[tuple[str, ...], str] = played["boards"]  # read once a module, as the reports
    if args not in boards:
        boards[args] = ok("leaderboard", *args, "--json", "--db", played["url"]).output
    rows: list[dict[str, Any]] = json.loads(boards[args])
    return rows


def embedded(html: str) -> dict[str, Any]:
    found = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S
    )
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def stored_matches(url: str, tid: int) -> dict[int, tuple[Any, str | None]]:
    """The done matches of tournament ``tid``: id -> (the game with its parameters, final
    position)."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT id, game, params, final_position FROM matches "
                    "WHERE tournament_id = :t AND status = 'done'"
                ),
                {"t": tid},
            )
            out = {}
            for r in rows:
                params = json.loads(r[2]) if isinstance(r[2], str) else dict(r[2] or {})
                out[r[0]] = (games.get(r[1], **params), r[3])
            return out
    finally:
        engine.dispose()


def test_the_file_is_self_contained_and_carries_the_leaderboard(played: dict[str, Any]) -> None:
    out = build(played, "--tournament", "1")
    html = out.read_text(encoding="utf-8")
    # nothing to fetch: no script, style, font or image from anywhere else
    assert not re.search(r"""(?:src|href)\s*=\s*["'](?!#|data:)""", html)
    assert "<link" not in html and "@import" not in html and "url(http" not in html
    data = embedded(html)
    assert data["leaderboard"] == leaderboard_json(played, "--tournament", "1")
    assert len(data["games"]) == len(stored_matches(played["url"], 1)) == 20
    # what was played, the sandbox included (tournament show names it only when some results
    # were not fully confined; a report always does)
    settings = dict(re.findall(r"<tr><th>(\w+)</th><td>(.*?)</td></tr>", html))
    assert settings["seed"] == "5" and settings["time"] == "move 0.05s"
    assert re.fullmatch(
        r"(all 20 rated results from fully confined bots|\d+ of 20 .*)", settings["sandbox"]
    )
    # the tournament's name is the user's text, escaped wherever it appears
    assert "faults &amp; &lt;friends&gt;" in html and "<friends>" not in html


def test_the_report_of_a_game_rates_every_match_of_it(played: dict[str, Any]) -> None:
    out = build(played, "--game", "connect4", name="c4.html")
    data = embedded(out.read_text(encoding="utf-8"))
    assert data["game"] == "connect4"
    assert data["leaderboard"] == leaderboard_json(played, "--game", "connect4")
    assert len(data["games"]) == len(stored_matches(played["url"], played["c4"])) == 6


def test_a_game_of_three_shows_average_ranks(played: dict[str, Any]) -> None:
    """N players: the leaderboard's average rank and first places instead of W-D-L, each game's
    ranks as its result."""
    out = build(played, "--tournament", str(played["coins3"]), name="coins3.html")
    html = out.read_text(encoding="utf-8")
    data = embedded(html)
    board = leaderboard_json(played, "--tournament", str(played["coins3"]))
    assert data["leaderboard"] == board
    assert "<th>avg rank</th>" in html and "W-D-L" not in html
    shown = re.findall(r'<td class="avg-rank">([\d.]+)</td><td class="firsts">(\d+)</td>', html)
    assert shown == [(f"{row['avg_rank']:.2f}", str(row["firsts"])) for row in board]
    assert all(g["result"].startswith("ranks ") for g in data["games"])


def test_bad_requests_are_one_line_errors(played: dict[str, Any], tmp_path: Path) -> None:
    url = played["url"]
    cases = [
        (["--tournament", "99", "--db", url], "no tournament with id 99"),
        (["--game", "nim", "--db", url], "no matches of game 'nim'"),
        (["--tournament", "1", "-o", str(tmp_path / "no" / "r.html"), "--db", url], "cannot write"),
        (["--db", f"sqlite:///{tmp_path / 'missing.db'}"], "no database"),
    ]  # fmt: skip
    not_svg = tmp_path / "picture.svg"
    not_svg.write_text("hello", encoding="utf-8")
    cases.append((["--tournament", "1", "--figure", str(not_svg), "--db", url], "not an SVG"))
    cases.append(
        (["--tournament", "1", "--figure", str(tmp_path / "gone.svg"), "--db", url], "cannot read")
    )
    for args, words in cases:
        result = arena("report", *args)
        assert result.exit_code == 2, (args, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], lines
    assert not (tmp_path / "no").exists()


def test_without_the_extra_it_says_how_to_install_it(
    played: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = arena("report", "--tournament", "1", "--db", played["url"])
    assert result.exit_code == 2
    assert result.output.strip() == (
        "error: arena report needs Jinja2 and matplotlib: pip install 'bot-arena[report]'"
    )


def test_a_figure_is_embedded_as_a_picture(played: dict[str, Any], tmp_path: Path) -> None:
    svg = tmp_path / "tree.svg"
    svg.write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
        '<script>alert(1)</script><rect width="10" height="10"/></svg>',
        encoding="utf-8",
    )
    out = build(played, "--tournament", "1", "--figure", str(svg), name="fig.html")
    html = out.read_text(encoding="utf-8")
    # an <img> of a data URI: the picture shows, a script inside it never runs
    assert re.search(r'<img alt="tree.svg" src="data:image/svg\+xml;base64,[A-Za-z0-9+/=]+">', html)
    assert "alert(1)" not in html


# --- in a real browser -------------------------------------------------------------------------

#: the screenshots this process has left in the output folder: each is a picture to look at,
#: not a check, and its name does not say the backend, so the PostgreSQL run of a test would
#: only overwrite the SQLite run's with the same page (a full page: about a second of the
#: browser's work on a loaded machine)
_SHOT: set[Path] = set()


def screenshot(page: Any, path: Path) -> None:
    """A full-page screenshot of ``page`` at ``path``, once a process."""
    if path not in _SHOT:
        page.screenshot(path=str(path), full_page=True)
        _SHOT.add(path)


def open_report(page: Any, path: Path) -> None:
    page.goto(path.as_uri())
    page.wait_for_function("window.ArenaReport !== undefined")


def test_the_page_in_a_browser(
    played: dict[str, Any], page: tuple[Any, Any], test_output: Path
) -> None:
    browser_page, log = page
    out = build(played, "--tournament", "1", name="browser.html")
    open_report(browser_page, out)
    board = leaderboard_json(played, "--tournament", "1")

    # the leaderboard as shown equals `arena leaderboard --json`
    shown = browser_page.eval_on_selector_all(
        "#leaderboard-table tbody tr",
        """rows => rows.map(r => ({
            bot: r.querySelector('.bot').textContent,
            version: r.querySelector('.version').textContent,
            rank: Number(r.querySelector('.rank').textContent),
            elo: Number(r.querySelector('.elo').textContent),
            error: r.querySelector('.error').textContent,
            games: Number(r.querySelector('.played').textContent),
            wdl: r.querySelector('.wdl').textContent}))""",
    )
    assert shown == [
        {
            "bot": row["bot"],
            "version": row["version"],
            "rank": row["rank"],
            "elo": round(row["elo"]),
            "error": f"{row['error']:.0f}",
            "games": row["games"],
            "wdl": f"{row['wins']}-{row['draws']}-{row['losses']}",
        }
        for row in board
    ]
    # the plots are there: a marker per bot in the rating plot, a line per bot over time
    assert browser_page.locator("#rating-plot svg").count() == 1
    assert browser_page.locator("#history-plot svg").count() == 1
    for row in board:
        assert browser_page.locator("#rating-plot svg text", has_text=row["bot"]).count() >= 1
        assert browser_page.locator("#history-plot svg text", has_text=row["bot"]).count() >= 1
    # the heatmap: a coloured cell for every pair that met (a round-robin: all of them)
    n = len(board)
    assert browser_page.locator("table.heat td.cell").count() == n * (n - 1)

    # faults: every faulty seat, with its evidence, linked to its game
    faults = browser_page.locator("tr.fault")
    kinds = sorted(faults.evaluate_all("rows => rows.map(r => r.dataset.kind)"))
    assert "illegal_move" in kinds and "timeout" in kinds
    timeout = browser_page.locator('tr.fault[data-kind="timeout"]').first
    assert "overrun_ms" in timeout.inner_text()
    link = timeout.locator("a.game-link")
    target = int(link.inner_text())
    link.click()
    browser_page.wait_for_function(f"document.getElementById('viewer').dataset.game === '{target}'")

    # the searchable list: a search narrows it
    total = browser_page.locator("#game-table tbody tr").count()
    assert total == 20
    browser_page.fill("#game-search", "busy_loop")
    narrowed = browser_page.locator("#game-table tbody tr").count()
    assert 0 < narrowed < total
    browser_page.fill("#game-search", "")

    screenshot(browser_page, test_output / "report-tictactoe.png")
    assert log.errors == [] and log.requests == []


@pytest.mark.parametrize("which", ["ttt", "c4", "coins3"])
def test_every_game_replays_to_its_stored_final_position(
    played: dict[str, Any], page: tuple[Any, Any], test_output: Path, which: str
) -> None:
    from playwright.sync_api import expect  # the page fixture has skipped without it

    browser_page, log = page
    tid = played[which]
    out = build(played, "--tournament", str(tid), name=f"replay-{which}.html")
    open_report(browser_page, out)
    stored = stored_matches(played["url"], tid)
    moves_of = {g["id"]: g["moves"] for g in embedded(out.read_text(encoding="utf-8"))["games"]}
    for match_id, (game, final) in stored.items():
        expected = board_view(game, game.parse_position(final))["cells"]
        browser_page.evaluate(f"window.ArenaReport.open({match_id}, true)")
        viewer = browser_page.locator("#viewer")
        last_button = viewer.locator(".replay-last")
        expect(viewer.locator(".arena-board")).to_have_attribute("data-cells", re.compile("."))
        # a game that ended before its first move is at its end already (the button is
        # aria-disabled, which Playwright will not click)
        if last_button.get_attribute("aria-disabled") != "true":
            # a real click without Playwright's checks before it (still for two frames...):
            # the button was just read enabled, and one covered or gone makes no step below
            last_button.click(force=True)
        expect(viewer.locator("[data-ply]").first).to_have_attribute(
            "data-ply", str(len(moves_of[match_id]))
        )
        cells = json.loads(viewer.locator(".arena-board").get_attribute("data-cells"))
        assert cells == expected, match_id
    # the last game, stepped back from its end to its start one move at a time
    data = embedded(out.read_text(encoding="utf-8"))
    last = next(g for g in data["games"] if g["id"] == match_id)
    viewer = browser_page.locator("#viewer")
    mounted = viewer.locator("[data-ply]").first
    prev = viewer.locator(".replay-prev")
    # the ply shown and the previous button's aria-disabled (which Playwright will not click),
    # read in one look: each step is a real click without Playwright's checks before it (a
    # round trip and frames drawn a click), its button read enabled before it
    shown = "e => [e.dataset.ply, e.querySelector('.replay-prev').getAttribute('aria-disabled')]"
    plies = len(last["moves"])
    assert mounted.evaluate(shown) == [str(plies), "true" if plies == 0 else "false"]
    for ply in range(plies - 1, -1, -1):
        prev.click(force=True)
        assert mounted.evaluate(shown) == [str(ply), "true" if ply == 0 else "false"]
    assert (
        json.loads(viewer.locator(".arena-board").get_attribute("data-cells"))
        == (
            board_view(game, game.initial_state())["cells"]  # no openings: every game starts here
        )
    )
    screenshot(browser_page, test_output / f"report-replay-{which}.png")
    assert log.errors == [] and log.requests == []


def test_a_bots_markup_stays_text_in_the_page(
    page: tuple[Any, Any], tmp_path: Path, test_output: Path
) -> None:
    """A hostile bot writes markup to its stderr and answers with it: the report shows it as
    text in the fault's evidence, and nothing of it runs or reaches the network."""
    browser_page, log = page
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    bot = Path(__file__).resolve().parent / "fixtures" / "markup.py"
    ok(
        "tournament", "run", "tictactoe", "--bot", str(bot), "--bot", "random",
        "--games", "2", "--seed", "1", "--db", url,
    )  # fmt: skip
    out = tmp_path / "markup.html"
    ok("report", "--tournament", "1", "-o", str(out), "--db", url)
    html = out.read_text(encoding="utf-8")
    assert "<script>window.pwned" not in html and "<img src=" not in html
    open_report(browser_page, out)
    assert browser_page.evaluate("window.pwned") is None
    assert browser_page.title() != "pwned"
    evidence = browser_page.locator('tr.fault[data-kind="bad_output"]')
    assert evidence.count() == 2
    assert "window.pwned = 1" in evidence.first.inner_text()  # shown, as text
    assert browser_page.locator("img[src^='http']").count() == 0
    assert log.errors == [] and log.requests == []


def faulted_ids(url: str, tid: int) -> set[int]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT DISTINCT m.id FROM matches m JOIN seats s ON s.match_id = m.id "
                    "WHERE m.tournament_id = :t AND m.status = 'done' AND s.fault IS NOT NULL"
                ),
                {"t": tid},
            )
            return {r[0] for r in rows}
    finally:
        engine.dispose()


def test_past_its_limit_a_report_embeds_every_faulted_game_and_names_the_rest(
    played: dict[str, Any],
) -> None:
    """20 tic-tac-toe games, 14 with a fault (the faulty bots' games), and room for 19:
    every faulted game is in, the rest are the most recent and a sample, and the page says
    how many were left out and how to get them."""
    tid = played["ttt"]
    total, faulted = len(stored_matches(played["url"], tid)), faulted_ids(played["url"], tid)
    limit = total - 1
    assert 0 < len(faulted) <= limit - limit // 4
    out = played["folder"] / "limited.html"
    result = ok("report", "--tournament", str(tid), "--games", str(limit), "-o", str(out),
                "--db", played["url"])  # fmt: skip
    assert f", {limit} of {total} games, " in result.output
    html = out.read_text()
    ids = [g["id"] for g in embedded(html)["games"]]
    assert len(ids) == len(set(ids)) == limit
    assert faulted <= set(ids)
    note = re.search(r'<p class="note" id="games-left-out">(.*?)</p>', html, re.S)
    assert note is not None
    assert f"embeds {limit} of the {total} games played (1 left out)" in note.group(1)
    assert f"{len(faulted)} of the {len(faulted)} games with a fault" in note.group(1)
    assert f"arena export --tournament {tid} --format pgn" in note.group(1)
    assert "faults-left-out" not in html
    # --games 0: every game, and no note
    whole = build(played, "--tournament", str(tid), "--games", "0", name="whole.html")
    every = [g["id"] for g in embedded(whole.read_text())["games"]]
    assert len(every) == total
    assert ids == [i for i in every if i in set(ids)]  # in play order, as the whole report
    assert "games-left-out" not in whole.read_text()
