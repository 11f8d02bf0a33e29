"""``arena report`` on a ladder shows its standings over time: the ratings refitted at each
tenth of its games in play order, a bot added later appearing from when it has played, and the
last point the ladder's own standings (the same fit over every game)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from bot_arena.arena.api.ladders import ladder_add, ladder_create, ladder_run, ladder_show
from bot_arena.arena.report.data import collect
from bot_arena.db.session import make_engine, session_factory
from tests import inprocess

pytestmark = pytest.mark.slow  # two runs of a small ladder


def bot(label: str) -> str:
    """A report's label of a version, ``name (sha)``, as its bot's name."""
    return label.rsplit(" (", 1)[0]


def test_a_ladders_report_shows_its_standings_over_time(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    ladder_create("club", "tictactoe", seed=11, db=url)
    first = ["random:seed=1", "random:seed=2", "random:seed=3"]
    ladder_add("club", first, sandbox="off", db=url)
    ladder_run("club", jobs=1, until_games=30, sandbox="off", db=url)
    ladder_add("club", ["random:seed=4"], sandbox="off", db=url)
    ladder_run("club", jobs=1, until_games=60, sandbox="off", db=url)
    view = ladder_show("club", db=url)
    assert view.games >= 60

    engine = make_engine(url)
    try:
        with session_factory(engine)() as session:
            data = collect(session, tournament_id=view.id)
    finally:
        engine.dispose()
    history = data.history
    assert len(history) == 10  # each tenth of the games
    counts = [point["games"] for point in history]
    assert counts == sorted(counts) and counts[-1] == view.games
    # each point rates the bots that had played by then: the newcomer only after it joined
    rated = [{bot(label) for label in point["elo"]} for point in history]
    assert all(a <= b for a, b in itertools.pairwise(rated))
    early = [names for names, point in zip(rated, history, strict=True) if point["games"] <= 30]
    assert early and all(names <= set(first) for names in early)
    assert rated[-1] == {*first, "random:seed=4"}
    # the last point is the ladder's standings: the same order, the same gaps
    final = {bot(label): elo for label, elo in history[-1]["elo"].items()}
    shown = {row.name: row.elo for row in view.standings}
    assert sorted(final, key=final.__getitem__) == sorted(shown, key=shown.__getitem__)
    for a in shown:
        for b in shown:
            assert final[a] - final[b] == pytest.approx(shown[a] - shown[b], abs=1.0)

    page = tmp_path / "club.html"
    done = inprocess.run("report", "--tournament", str(view.id), "-o", str(page), "--db", url,
                         cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    plot = html[
        html.index('id="history-plot"') : html.index("</figure>", html.index('id="history-plot"'))
    ]
    assert "<svg" in plot and all(name in plot for name in [*first, "random:seed=4"])
