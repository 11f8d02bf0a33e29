"""The one points rule: a seat gets 1 for each seat it finished above, 1/2 for each it tied
with; its score is that over N-1 (``games.base``), and the crosstables and ratings count a pair
of seats by the same rule."""

from __future__ import annotations

import pytest

from bot_arena.arena.ratings.crosstable import crosstable
from bot_arena.arena.ratings.outcomes import GameResult
from bot_arena.arena.ratings.outcomes import pair_points as rating_pair_points
from bot_arena.games.base import pair_points, scores_from_ranks


@pytest.mark.parametrize(
    ("ranks", "a", "b", "points"),
    [
        ((1, 2), 0, 1, 1.0),
        ((1, 2), 1, 0, 0.0),
        ((1, 1), 0, 1, 0.5),
        ((2, 1, 2), 0, 2, 0.5),
        ((2, 1, 2), 0, 1, 0.0),
        ((3, 1, 1, 4), 1, 0, 1.0),
        ((3, 1, 1, 4), 2, 1, 0.5),
    ],
)
def test_a_pair_of_seats(ranks: tuple[int, ...], a: int, b: int, points: float) -> None:
    assert pair_points(ranks, a, b) == points
    assert pair_points(ranks, a, b) + pair_points(ranks, b, a) == 1.0


@pytest.mark.parametrize(
    ("ranks", "scores"),
    [
        ((1, 2), (1.0, 0.0)),
        ((2, 1), (0.0, 1.0)),
        ((1, 1), (0.5, 0.5)),
        ((1, 2, 3), (1.0, 0.5, 0.0)),
        ((1, 1, 3), (0.75, 0.75, 0.0)),
        ((2, 1, 2), (0.25, 1.0, 0.25)),
        ((1, 1, 1, 1), (0.5, 0.5, 0.5, 0.5)),
        ((1, 2, 2, 4), (1.0, 0.5, 0.5, 0.0)),
        ((1,), (1.0,)),
    ],
)
def test_a_seats_score_is_its_pair_points_over_n_minus_1(
    ranks: tuple[int, ...], scores: tuple[float, ...]
) -> None:
    assert scores_from_ranks(ranks) == scores


def test_the_ratings_and_the_crosstable_count_by_the_same_rule() -> None:
    assert rating_pair_points is pair_points
    table = crosstable([GameResult(("a", "b", "c"), (2, 1, 2)), GameResult(("a", "b"), (1, 1))])
    assert table.points[("a", "c")] == 0.5 and table.points[("b", "a")] == 1.5
    assert table.games[("a", "b")] == 2 and table.points[("a", "b")] == 0.5
