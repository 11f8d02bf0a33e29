"""A report of a big field stays readable: the rating-over-time plot colours and names the
best eight (the others are grey, unnamed), the heatmap shows the best 30 players."""

from __future__ import annotations

from bot_arena.arena.ratings.outcomes import GameResult
from bot_arena.arena.report.data import HEATMAP_PLAYERS, _crosstable
from bot_arena.arena.report.plots import GREY, history_plot


def test_the_history_plot_names_only_the_top_eight() -> None:
    order = [f"bot{i:02d}" for i in range(12)]
    history = [{"games": n, "elo": {b: float(i * n) for i, b in enumerate(order)}} for n in (1, 2)]
    svg = history_plot(history, order)
    assert all(f">{b}<" in svg for b in order[:8])  # the legend's texts
    assert not any(f">{b}<" in svg for b in order[8:])
    # the 4 grey lines are one path of 4 strokes (at 1,000 bots a path each was most of the
    # plot's time and bytes): every bot is still drawn
    assert svg.count(f"stroke: {GREY}") == 1
    grey = svg[: svg.index(f"stroke: {GREY}")].rsplit("<path", 1)[1]
    assert grey.count("M ") == 4
    assert ">top 8 of 12<" in svg
    few = history_plot(history, order[:8])
    assert GREY not in few and "top 8" not in few


def test_the_heatmap_holds_the_best_players_only() -> None:
    bots = [f"b{i:02d}" for i in range(HEATMAP_PLAYERS + 5)]
    results = [
        GameResult((a, b), (1, 2)) for i, a in enumerate(bots) for b in bots[i + 1 :]
    ]  # b00 beats everyone, b01 everyone but b00, ...
    cross = _crosstable(results, {})
    assert cross["total"] == len(bots)
    assert cross["players"] == bots[:HEATMAP_PLAYERS]
    assert len(cross["cells"]) == HEATMAP_PLAYERS
    assert all(len(row) == HEATMAP_PLAYERS for row in cross["cells"])


def test_a_big_rating_plot_draws_every_bot() -> None:
    """Past BATCHED bots the points are drawn a colour at a time: each bot still has its
    label, its number and its marker."""
    from bot_arena.arena.report.plots import BATCHED, NAMED, rating_plot

    n = BATCHED + 10
    assert n <= NAMED
    rows = [{"elo": 1000.0 - 7 * i, "error": 20.0, "pool": 1 + i % 3} for i in range(n)]
    svg = rating_plot(rows, [f"bot{i:02d}" for i in range(n)])
    assert all(f">bot{i:02d}<" in svg for i in range(n))
    assert all(f">{1000 - 7 * i} ± 20<" in svg for i in range(n))
    assert svg.count('xlink:href="#') >= 3 * n  # a marker and two caps per bot


def test_a_rating_plot_past_the_named_bots_draws_the_rest_grey_in_a_few_paths() -> None:
    """Past ``NAMED`` bots the best ones keep their label, number and marker; the rest are
    drawn (each an interval and a point) in two grey paths, unnamed, and a line says so."""
    from bot_arena.arena.report.plots import NAMED, rating_plot

    n = NAMED + 250
    rows = [{"elo": 3000.0 - 3 * i, "error": 20.0, "pool": 1} for i in range(n)]
    svg = rating_plot(rows, [f"bot{i:03d}" for i in range(n)])
    assert all(f">bot{i:03d}<" in svg for i in range(NAMED))
    assert not any(f">bot{i:03d}<" in svg for i in range(NAMED, n))
    assert all(f">{3000 - 3 * i} ± 20<" in svg for i in range(NAMED))
    assert f">{3000 - 3 * NAMED} ± 20<" not in svg
    assert f">ranks {NAMED + 1}-{n}: grey, unnamed (the table names every bot)<" in svg
    bars = svg[: svg.index(f"stroke: {GREY}")].rsplit("<path", 1)[1]
    assert bars.count("M ") == n - NAMED  # an interval each, in one path
    assert svg.count(f"stroke: {GREY}") == 1
    assert svg.count("<path") < NAMED * 3 + 100  # not a few elements per grey bot
