"""The ladder's director without processes: its next pairs are a function of the stored matches
and the field, so one rebuilt from the stored matches at any point (a resume) makes exactly the
pairs of the one that never stopped; pairs are colour-swapped game pairs of active entrants;
a newcomer is paired first."""

from __future__ import annotations

import math
import random

from bot_arena.arena.tournament.directors import director_for
from bot_arena.arena.tournament.directors.base import Played
from bot_arena.arena.tournament.directors.ladder import LadderDirector

STRENGTHS = [0.0, 150.0, 300.0, 320.0, 500.0, 800.0]  # Elo


def ladder(size: int, active: list[int] | None = None) -> LadderDirector:
    director = director_for("ladder", [f"b{i}" for i in range(size)], {}, 7)
    assert isinstance(director, LadderDirector)
    if active is not None:
        director.active = active
    return director


def outcome(seats: tuple[int, ...], number: int) -> tuple[float, float]:
    """The same match always ends the same way; the stronger bot wins more often."""
    a, b = seats
    p = 1.0 / (1.0 + 10 ** ((STRENGTHS[b] - STRENGTHS[a]) / 400.0))
    draw = random.Random(number * 7919 + 13)
    r = draw.random()
    first = 1.0 if r < p * 0.9 else 0.5 if r < p * 0.9 + 0.1 else 0.0
    return first, 1.0 - first


def play(stops: set[int], writes: int = 40, ahead: int = 6) -> list[Played]:
    """``writes`` writes of a ladder of six, each storing the three oldest games in play, the
    director rebuilt from the stored matches (as a resume does) after each write in ``stops``;
    entrant 2 retired after write 15. The matches in the order they were made."""
    director = ladder(len(STRENGTHS))
    stored: list[Played] = []
    for write in range(1, writes + 1):
        for item in director.next(ahead):
            director.added(len(stored), item)
            stored.append(Played(len(stored), item.round, item.seats, None))
        for match in [m for m in stored if m.scores is None][:3]:
            scores = outcome(match.seats, match.match_id)
            stored[match.match_id] = Played(match.match_id, match.round, match.seats, scores)
            director.result(match.match_id, scores)
        active = [i for i in range(len(STRENGTHS)) if write < 15 or i != 2]
        director.active = active
        if write in stops:
            director = ladder(len(STRENGTHS), active)
            director.load(stored)
    return stored


def test_a_director_rebuilt_from_the_stored_matches_makes_the_same_pairs() -> None:
    straight = play(set())
    assert len(straight) > 60
    for stops in ({1}, {5, 16}, {3, 9, 14, 22, 31}, set(range(1, 41))):
        assert play(stops) == straight, stops


def test_pairs_are_colour_swapped_and_leave_retired_bots_out() -> None:
    made = play(set())
    rounds: dict[int, list[Played]] = {}
    for match in made:
        rounds.setdefault(match.round, []).append(match)
    for pair in rounds.values():
        assert [m.seats for m in pair] == [pair[0].seats, pair[0].seats[::-1]]
    # made after the retirement at write 15: none seats entrant 2
    director = ladder(len(STRENGTHS), [0, 1, 3, 4, 5])
    director.load([m for m in made])
    for item in director.next(12):
        assert 2 not in item.seats


def test_a_newcomer_plays_first_and_the_fit_counts_the_stored_results() -> None:
    made = [m for m in play(set()) if m.scores is not None]
    director = ladder(len(STRENGTHS) + 1)  # entrant 6 just added, no game yet
    director.load(made)
    first = director.next(2)
    assert first and all(6 in item.seats for item in first[:2])
    # the stored results are in the fit: the strongest entrant rated above the weakest
    model = director.fitted()
    assert model.theta[5] - model.theta[0] > 300 / 400 * math.log(10) * 0.5


def test_until_games_caps_what_is_made_and_a_halted_director_makes_nothing() -> None:
    director = ladder(4)
    director.cap = 5
    made = director.next(20)
    assert len(made) == 6  # whole pairs: 5 games asked, 3 pairs
    for number, item in enumerate(made):
        director.added(number, item)
    assert director.next(20) == []
    other = ladder(4)
    other.halted = True
    assert other.next(20) == []
    assert ladder(4, [1]).next(20) == []  # one active entrant: nothing to pair


def test_games_in_play_count_as_information() -> None:
    """The same stored results, with games of one pair in play: that pair is not asked again
    (a batch never asks what the games in play will answer)."""
    base = [
        Played(i, i + 1, seats, (0.5, 0.5))
        for i, seats in enumerate([(0, 2), (2, 0), (1, 2), (2, 1)] * 5)
    ]
    quiet = ladder(3)
    quiet.load(base)
    assert quiet.pairs(1) == [(0, 1)]  # the pair never played tells the most
    busy = ladder(3)
    busy.load(base + [Played(100 + i, 100 + i, (0, 1), None) for i in range(12)])
    assert busy.pairs(1) != [(0, 1)]


def test_stable_once_every_active_rank_is_known_within_two_places() -> None:
    director = ladder(4)
    assert not director.stable()  # no game: any rank
    games = []
    for number in range(400):  # each bot beats every bot below it, always
        a, b = (number % 4, (number // 4) % 4)
        if a != b:
            games.append(Played(number, number, (a, b), (1.0, 0.0) if a > b else (0.0, 1.0)))
    director.load(games)
    assert director.stable()
    director.active = [0, 1]
    assert director.stable()  # their order is certain
    two = ladder(2)
    two.load([Played(0, 1, (0, 1), (0.5, 0.5)), Played(1, 1, (1, 0), (0.5, 0.5))])
    assert not two.stable()  # two bots in either order is not a standing
