"""``fit_ml(start=..., intervals=False)`` (the report's ratings over time: each fit starts from
the last one's ratings, without intervals) gives the ratings of a fit from scratch, to 1e-6,
whatever the start: pools, ghosts (a bot that won every game), anchors and multi-seat matches
included."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena.arena.ratings.ml import fit_ml
from bot_arena.arena.ratings.ml_common import NOTE_MODEL_ERR
from bot_arena.arena.ratings.outcomes import GameResult
from bot_arena.arena.ratings.table import RatingTable

BOTS = ["a", "b", "c", "d", "e", "f"]

results_st = st.lists(
    st.lists(st.sampled_from(BOTS), min_size=2, max_size=3, unique=True).flatmap(
        lambda players: st.builds(
            GameResult,
            st.just(tuple(players)),
            st.tuples(*[st.integers(1, len(players)) for _ in players]),
        )
    ),
    min_size=1,
    max_size=30,
)
start_st = st.dictionaries(
    st.sampled_from([*BOTS, "nobody"]), st.floats(-3000.0, 5000.0), max_size=len(BOTS) + 1
)


def elos(table: RatingTable) -> dict[str, float]:
    return {r.bot: r.elo for r in table.rows}


def assert_same_points(scratch: RatingTable, warm: RatingTable) -> None:
    assert elos(warm).keys() == elos(scratch).keys()
    for bot, elo in elos(scratch).items():
        assert abs(elos(warm)[bot] - elo) <= 1e-6, (bot, elo, elos(warm)[bot])
    assert [r.bot for r in warm.rows] == [r.bot for r in scratch.rows]
    assert warm.pools == scratch.pools
    assert all(r.error is None and r.los_next is None for r in warm.rows)
    for s, w in zip(scratch.rows, warm.rows, strict=True):  # no interval: no model-error note
        assert w.note == "; ".join(p for p in s.note.split("; ") if p != NOTE_MODEL_ERR)
        assert w.stats == s.stats and w.pool == s.pool
    assert warm.notes == tuple(n for n in scratch.notes if not n.startswith("model interval"))


@settings(max_examples=150, deadline=None)
@given(results_st, start_st, st.booleans())
def test_a_warm_start_without_intervals_gives_the_fit_from_scratch(
    results: list[GameResult], start: dict[str, float], anchored: bool
) -> None:
    anchor = (results[0].players[0], 2000.0) if anchored else None
    scratch = fit_ml(results, anchor=anchor)
    assert_same_points(scratch, fit_ml(results, anchor=anchor, start=start, intervals=False))
    assert_same_points(
        scratch, fit_ml(results, anchor=anchor, start=elos(scratch), intervals=False)
    )


def test_a_start_far_from_the_maximum_still_reaches_it() -> None:
    results = [GameResult(("a", "b"), (1, 2))] * 30 + [GameResult(("b", "a"), (1, 2))] * 10
    results += [GameResult(("b", "c"), (1, 1))] * 5 + [GameResult(("c", "a"), (1, 2))] * 3
    scratch = fit_ml(results)
    warm = fit_ml(results, start={"a": -9000.0, "b": 9000.0, "c": 0.0}, intervals=False)
    assert_same_points(scratch, warm)
