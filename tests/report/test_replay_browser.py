"""The replay viewer in a real headless Chromium: every registered game's board, stepped through.

Each test writes a small page with replay.css and replay.js inlined and one game's data as JSON
(what ``arena report`` will do for every game), opens it from a file with the network refused,
and checks the drawn cells (``data-cells`` of ``.arena-board``) against ``boards.board_view``
while it clicks the buttons, presses keys and picks moves from the list. Screenshots go to the
test output folder (``replay-<game>.png``) to be looked at.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from bot_arena import games
from bot_arena.arena.report import boards
from bot_arena.games.base import Game, GameError, ranks_from_utilities
from tests import needs
from tests.report.plugin_game import Countdown

if find_spec("playwright") is None:
    needs.missing(needs.BROWSER, "the browser tests need Playwright: pip install playwright")
from playwright.sync_api import Locator, Page, expect

STATIC = Path(boards.__file__).resolve().parent / "static"
TREES = Path(__file__).resolve().parents[1] / "bots" / "data" / "trees"
AnyGame = Game[Any, Any]

# A chess game with both kinds of castling and an en passant capture: 1.e4 e6 2.e5 d5 3.exd6
# (en passant) Bxd6 4.Nf3 Nf6 5.Bc4 O-O 6.O-O c5 7.d3 Nc6 8.Nc3 b6 9.Bg5 Bb7
CHESS_LINE = (
    "e2e4 e7e6 e4e5 d7d5 e5d6 f8d6 g1f3 g8f6 f1c4 e8g8 e1g1 c7c5 d2d3 b8c6 b1c3 b7b6 c1g5 c8b7"
)


def _dumps(value: Any) -> str:
    """JSON as JSON.stringify writes it (no spaces, non-ASCII as is)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def script_json(value: Any) -> str:
    """JSON safe inside ``<script>``: no ``<`` at all, so neither ``</script>`` nor ``<!--``
    can end or bend the element (JSON.parse reads ``\\u003c`` back as ``<``)."""
    return _dumps(value).replace("<", "\\u003c")


def replay_data(
    game: AnyGame, moves: Sequence[Any], players: Sequence[str], seed: int = 0
) -> dict[str, Any]:
    """The ``game`` object ``ArenaReplay.mount`` takes, with made-up search info per ply."""
    rng = random.Random(seed)
    state = game.initial_state()
    texts: list[str] = []
    info: list[dict[str, Any]] = []
    for move in moves:
        legal = list(game.legal_moves(state))
        after = game.apply(state, move)
        pv = [game.format_move(move)]
        if not game.is_terminal(after):
            pv.append(game.format_move(game.legal_moves(after)[0]))
        entry: dict[str, Any] = {
            "seat": game.current_player(state),
            "ms": round(rng.uniform(0.4, 1800.0), 1),
            "value": round(rng.uniform(-1, 1), 3),
            "depth": rng.randint(1, 12),
            "nodes": rng.randint(10, 2_000_000),
            "pv": pv,
        }
        if len(legal) == 1:
            entry["forced"] = True
        info.append(entry)
        texts.append(game.format_move(move))
        state = after
    if game.is_terminal(state):
        ranks = ranks_from_utilities(game.utility(state))
        winners = [players[p] for p, r in enumerate(ranks) if r == 1]
        result = f"{winners[0]} wins" if len(winners) == 1 else "draw"
    else:
        result = "unfinished"
    return {
        "board": boards.encode_replay(game, game.initial_state(), moves),
        "moves": texts,
        "info": info,
        "players": list(players),
        "result": result,
    }


def page_html(replays: Sequence[dict[str, Any]], title: str = "replay") -> str:
    css = (STATIC / "replay.css").read_text(encoding="utf-8")
    js = (STATIC / "replay.js").read_text(encoding="utf-8")
    viewers = "\n".join(f'<div class="viewer" id="viewer-{i}"></div>' for i in range(len(replays)))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body {{ margin: 16px; font-family: sans-serif; }} .viewer {{ margin-bottom: 24px; }}</style>
<style>{css}</style></head>
<body>
{viewers}
<script type="application/json" id="replays">{script_json(list(replays))}</script>
<script>{js}</script>
<script>
const replays = JSON.parse(document.getElementById("replays").textContent);
replays.forEach((game, i) => ArenaReplay.mount(document.getElementById("viewer-" + i), game));
</script>
</body></html>
"""


def random_moves(game: AnyGame, seed: int, cap: int = 400) -> list[Any]:
    rng = random.Random(seed)
    state = game.initial_state()
    moves: list[Any] = []
    while not game.is_terminal(state) and len(moves) < cap:
        move = rng.choice(list(game.legal_moves(state)))
        moves.append(move)
        state = game.apply(state, move)
    return moves


def _chess() -> tuple[AnyGame, list[Any]]:
    game = games.get("chess")
    return game, [game.parse_move(m) for m in CHESS_LINE.split()]


def _random(name: str, seed: int, **params: Any) -> Callable[[], tuple[AnyGame, list[Any]]]:
    def make() -> tuple[AnyGame, list[Any]]:
        game = games.get(name, **params)
        return game, random_moves(game, seed)

    return make


GAMES: dict[str, Callable[[], tuple[AnyGame, list[Any]]]] = {
    "coins": _random("coins", 3, coins=9, max_take=3, players=3),
    "tictactoe": _random("tictactoe", 5),
    "connect4": _random("connect4", 11),
    "tree": _random("tree", 2, tree=str(TREES / "lecture-minimax-three-ply.json")),
    "nim": _random("nim", 4),
    "rolit": _random("rolit", 7),
    "chess": _chess,
}
SEATS = ["alpha-beta d6", "mcts 1000", "random", "greedy"]
#: when the fake clock of the animation test starts (any fixed time: only steps matter)
CLOCK_START = datetime(2026, 1, 1, tzinfo=UTC)


def _registered() -> list[str]:
    return games.names()


def _open(page: Page, tmp_path: Path, replays: Sequence[dict[str, Any]], name: str) -> None:
    file = tmp_path / f"{name}.html"
    file.write_text(page_html(replays, name), encoding="utf-8")
    page.goto(file.as_uri())


def _expect_frame(
    viewer: Locator, ply: int, cells: list[Any], next_disabled: bool | None = None
) -> None:
    """The viewer at ``ply``, its board drawing ``cells`` (and, when ``next_disabled`` is
    given, its next button marked aria-disabled or not): all waited for in one look at the
    page (the viewer is the scope of its own locator), one round trip to the browser a frame
    where the two expectations one after the other made two (a stepped game's frames took
    about a fifth less wall and a tenth less CPU, alternated runs at load 15). When it does
    not come, each is expected on its own, so the failure says which one is wrong."""
    board = _dumps(cells)
    scope = f':scope[data-ply="{ply}"]'
    disabled = "true" if next_disabled else "false"
    if next_disabled is not None:
        scope += f':has(.replay-next[aria-disabled="{disabled}"])'
    try:
        expect(viewer.locator(f"{scope} .arena-board")).to_have_attribute("data-cells", board)
    except AssertionError:
        expect(viewer).to_have_attribute("data-ply", str(ply))
        expect(viewer.locator(".arena-board")).to_have_attribute("data-cells", board)
        if next_disabled is not None:
            expect(viewer.locator(".replay-next")).to_have_attribute("aria-disabled", disabled)
        raise


def _check_viewer(
    page: Page, viewer: Locator, game: AnyGame, moves: Sequence[Any], data: dict[str, Any]
) -> None:
    """Step through the whole game with the buttons, then back, then with keys and the list."""
    frames = boards.decode_frames(data["board"])
    states = [game.initial_state()]
    for move in moves:
        states.append(game.apply(states[-1], move))
    last = len(moves)
    _expect_frame(viewer, 0, boards.board_view(game, states[0])["cells"])
    expect(viewer.locator(".replay-prev")).to_have_attribute("aria-disabled", "true")
    # each step a real click at the button, without Playwright's checks before it (visible,
    # still for two frames, enabled, not covered: a round trip and frames drawn a click, about
    # a quarter of a stepped game's wall and CPU); what they would catch fails here all the
    # same: a button covered or gone gets no step, and the frame's own look checks that the
    # button is enabled (aria-disabled, which Playwright will not click) until the end
    next_button = viewer.locator(".replay-next")
    for ply in range(1, last + 1):
        next_button.click(force=True)
        _expect_frame(viewer, ply, frames[ply], next_disabled=ply == last)
    _expect_frame(viewer, last, boards.board_view(game, states[-1])["cells"])
    expect(viewer.locator(".replay-next")).to_have_attribute("aria-disabled", "true")
    # at the end: nothing happens, nothing breaks (force: Playwright will not click a button
    # marked aria-disabled, a person can)
    viewer.locator(".replay-next").click(force=True)
    _expect_frame(viewer, last, frames[last])
    expect(viewer.locator(".replay-status")).to_contain_text(data["result"])
    info = viewer.locator(".replay-info")
    expect(info).to_contain_text(data["moves"][-1])
    expect(info).to_contain_text(data["players"][data["info"][-1]["seat"]])
    expect(info).to_contain_text("nodes")
    viewer.locator(".replay-prev").click()
    _expect_frame(viewer, last - 1, boards.board_view(game, states[-2])["cells"])
    viewer.locator(".replay-first").click()
    _expect_frame(viewer, 0, boards.board_view(game, states[0])["cells"])
    viewer.locator(".replay-last").click()
    _expect_frame(viewer, last, frames[last])
    # the keyboard: the clicked button keeps the focus, and the viewer hears its keys
    page.keyboard.press("ArrowLeft")
    _expect_frame(viewer, last - 1, frames[last - 1])
    viewer.focus()
    page.keyboard.press("Home")
    _expect_frame(viewer, 0, frames[0])
    page.keyboard.press("ArrowRight")
    _expect_frame(viewer, 1, frames[1])
    page.keyboard.press("End")
    _expect_frame(viewer, last, frames[last])
    page.keyboard.press("ArrowLeft")
    _expect_frame(viewer, last - 1, frames[last - 1])
    # the move list: the current move is marked, and a click goes to its position
    middle = (last + 1) // 2
    viewer.locator(f'.replay-move[data-ply="{middle}"]').click()
    _expect_frame(viewer, middle, frames[middle])
    expect(viewer.locator(".replay-move.replay-current")).to_have_attribute("data-ply", str(middle))


@pytest.mark.parametrize("name", _registered())
def test_every_game_replays_in_the_browser(
    name: str, page: tuple[Page, Any], tmp_path: Path, test_output: Path
) -> None:
    browser_page, log = page
    make = GAMES.get(name)
    if make is None:  # a third-party game: its defaults and a random game
        try:
            game = games.get(name)
        except GameError as exc:
            pytest.skip(f"{name} cannot be made with default parameters: {exc}")
        moves = random_moves(game, 1, cap=60)
    else:
        game, moves = make()
    assert moves, f"{name}: the replay needs at least one move"
    data = replay_data(game, moves, SEATS[: game.num_players])
    _open(browser_page, tmp_path, [data], name)
    viewer = browser_page.locator("#viewer-0")
    _check_viewer(browser_page, viewer, game, moves, data)
    browser_page.mouse.move(0, 0)  # no hover and (below) no focus ring in the pictures
    viewer.blur()
    viewer.screenshot(path=str(test_output / f"replay-{name}-middle.png"))
    viewer.locator(".replay-last").click()
    viewer.locator(".replay-last").blur()
    _expect_frame(viewer, len(moves), boards.decode_frames(data["board"])[-1])
    viewer.screenshot(path=str(test_output / f"replay-{name}.png"))
    assert log.errors == []
    assert log.requests == []


def test_a_plugin_game_is_shown_as_its_text(
    page: tuple[Page, Any], tmp_path: Path, test_output: Path
) -> None:
    """The fallback: the game's own ``render``, whose line count changes, shown as text; what
    looks like markup in it stays text."""
    browser_page, log = page
    game = Countdown()
    moves = [3, 0, 1, 0]
    data = replay_data(game, moves, SEATS[:2])
    assert data["board"]["view"]["kind"] == "text"
    _open(browser_page, tmp_path, [data], "countdown")
    viewer = browser_page.locator("#viewer-0")
    _check_viewer(browser_page, viewer, game, moves, data)
    expect(viewer.locator(".rp-text")).to_contain_text("</script>")
    expect(viewer.locator(".rp-text")).to_contain_text("<3> ###")
    viewer.locator(".replay-last").click()
    viewer.locator(".replay-last").blur()
    viewer.screenshot(path=str(test_output / "replay-text-fallback.png"))
    assert log.errors == []
    assert log.requests == []


def test_many_viewers_mount_at_once_and_draw_when_seen(
    page: tuple[Page, Any], tmp_path: Path
) -> None:
    """Mounting is cheap: a page of 150 games draws only the viewers near the screen; the others
    draw when scrolled to, and each steps on its own."""
    browser_page, log = page
    game = games.get("connect4")
    replays = [replay_data(game, random_moves(game, seed), SEATS[:2], seed) for seed in range(150)]
    _open(browser_page, tmp_path, replays, "many")
    first = browser_page.locator("#viewer-0")
    far = browser_page.locator("#viewer-149")
    expect(first.locator(".arena-board")).to_have_attribute(
        "data-cells", _dumps(replays[0]["board"]["start"])
    )
    drawn = browser_page.locator(".arena-board[data-cells]")
    assert drawn.count() < 10
    assert far.locator(".arena-board").get_attribute("data-cells") is None
    far.scroll_into_view_if_needed()
    expect(far.locator(".arena-board")).to_have_attribute(
        "data-cells", _dumps(replays[149]["board"]["start"])
    )
    far.locator(".replay-next").click()
    frames = boards.decode_frames(replays[149]["board"])
    _expect_frame(far, 1, frames[1])
    expect(first).to_have_attribute("data-ply", "0")
    # a viewer not drawn yet is drawn at once when used (here: focused and keyed)
    hidden = browser_page.locator("#viewer-100")
    assert hidden.locator(".arena-board").get_attribute("data-cells") is None
    hidden.evaluate("element => element.focus({preventScroll: true})")
    browser_page.keyboard.press("End")
    last = len(replays[100]["moves"])
    _expect_frame(hidden, last, boards.decode_frames(replays[100]["board"])[last])
    assert log.errors == []
    assert log.requests == []


def test_the_browser_decodes_like_python(page: tuple[Page, Any], tmp_path: Path) -> None:
    """``ArenaReplay.decodeFrames`` against ``boards.decode_frames`` on whole games at once
    (chess with its castling and en passant, a resizing text view, Rolit with its marks)."""
    browser_page, log = page
    cases = [_chess(), (Countdown(), [2, 2, 0, 0]), GAMES["rolit"]()]
    encoded = [boards.encode_replay(g, g.initial_state(), m) for g, m in cases]
    _open(browser_page, tmp_path, [], "decode")
    for board in encoded:
        frames = browser_page.evaluate("board => ArenaReplay.decodeFrames(board)", board)
        assert frames == boards.decode_frames(board)
        marks = browser_page.evaluate("board => ArenaReplay.frameMarks(board)", board)
        assert [m[0] for m in marks] == boards.frame_marks(board)
    assert log.errors == []


def test_the_game_plays_itself_as_an_animation(
    fresh_page: tuple[Page, Any], tmp_path: Path
) -> None:
    """Play/pause (button and space bar) and the speed, on the page's own clock: Playwright's
    fake timers move time on exactly as far as the test says, so no step depends on speed.

    The clock is paused before the page loads: an installed clock that is not paused still runs
    on with real time, so on a busy machine a 200 ms step could fire between a click and the
    check that the board has not moved yet (2 runs in 4 failed so)."""
    browser_page, log = fresh_page
    game, moves = GAMES["connect4"]()
    data = replay_data(game, moves, SEATS[:2])
    frames = boards.decode_frames(data["board"])
    last = len(moves)
    assert last > 6
    browser_page.clock.install(time=CLOCK_START)
    browser_page.clock.pause_at(CLOCK_START + timedelta(seconds=1))
    _open(browser_page, tmp_path, [data], "play")
    viewer = browser_page.locator("#viewer-0")
    play = viewer.locator(".replay-play")
    viewer.locator(".replay-speed").select_option("4")  # 800 ms / 4: a move every 200 ms
    expect(viewer).to_have_attribute("data-playing", "false")
    play.click()
    expect(viewer).to_have_attribute("data-playing", "true")
    expect(play).to_have_attribute("aria-label", "Pause (space)")
    _expect_frame(viewer, 0, frames[0])
    browser_page.clock.run_for(200)
    _expect_frame(viewer, 1, frames[1])
    browser_page.clock.run_for(400)
    _expect_frame(viewer, 3, frames[3])
    play.click()  # pause: time goes on, the board does not
    expect(viewer).to_have_attribute("data-playing", "false")
    browser_page.clock.run_for(5000)
    _expect_frame(viewer, 3, frames[3])
    play.click()  # on from where it stood, to the end, where it stops by itself
    browser_page.clock.run_for(200 * (last - 3))
    _expect_frame(viewer, last, frames[last])
    expect(viewer).to_have_attribute("data-playing", "false")
    play.click()  # at the end, play starts again from the start
    _expect_frame(viewer, 0, frames[0])
    expect(viewer).to_have_attribute("data-playing", "true")
    viewer.locator(".replay-next").click()  # any other control stops it
    expect(viewer).to_have_attribute("data-playing", "false")
    _expect_frame(viewer, 1, frames[1])
    viewer.focus()
    browser_page.keyboard.press(" ")  # the space bar plays, at the speed chosen
    expect(viewer).to_have_attribute("data-playing", "true")
    viewer.locator(".replay-speed").select_option("16")  # 50 ms a move, from now on
    browser_page.clock.run_for(100)
    _expect_frame(viewer, 3, frames[3])
    viewer.focus()
    browser_page.keyboard.press(" ")
    expect(viewer).to_have_attribute("data-playing", "false")
    assert log.errors == []
    assert log.requests == []
