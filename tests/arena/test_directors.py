"""The directors of the formats made as they go, without processes: their next matches are a
function of the stored ones, so a director rebuilt from the stored matches at any point (a
resume) goes on exactly as the one that never stopped."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena.arena.ratings.sprt_stats import SprtSettings, llr
from bot_arena.arena.tournament.directors import director_for
from bot_arena.arena.tournament.directors.base import Director, NewMatch, Played

Outcome = Callable[[NewMatch, int], tuple[float, ...]]


def drawn(_: NewMatch, __: int) -> tuple[float, ...]:
    return (0.5, 0.5)


def seeded(seed: int) -> Outcome:
    """Results drawn from the match's number: the same match always ends the same way."""

    def outcome(match: NewMatch, number: int) -> tuple[float, ...]:
        first = random.Random(seed * 100_003 + number).choice((0.0, 0.5, 1.0))
        return (first, 1.0 - first)

    return outcome


def play(
    make: Callable[[], Director], outcome: Outcome, stops: set[int], ahead: int = 4
) -> list[Played]:
    """Play a tournament to its end, rebuilding the director from the stored matches (as a
    resume does) after each write whose number is in ``stops``; the matches in the order made."""
    director = make()
    stored: list[Played] = []
    writes = 0
    while not director.complete:
        new = director.next(ahead)
        for item in new:
            director.added(len(stored), item)
            stored.append(Played(len(stored), item.round, item.seats, None))
        todo = [m for m in stored if m.scores is None]
        assert todo, "a director that is not complete must have something to play"
        for match in todo[:3]:  # a write stores a few results
            new_match = NewMatch(match.round, match.seats)
            scores = outcome(new_match, match.match_id)
            stored[match.match_id] = Played(match.match_id, match.round, match.seats, scores)
            director.result(match.match_id, scores)
        writes += 1
        if writes in stops:
            director = make()
            director.load(stored)
        assert writes < 10_000
    return stored


def swiss(n: int, rounds: int, games: int) -> Callable[[], Director]:
    names = [f"bot{i}" for i in range(n)]
    settings = {"swiss": {"rounds": rounds, "games": games}}

    def make() -> Director:
        director = director_for("swiss", names, settings, 1)
        assert director is not None
        return director

    return make


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 9),
    rounds=st.integers(1, 6),
    games=st.integers(1, 3),
    seed=st.integers(0, 1000),
    stops=st.sets(st.integers(1, 40), max_size=5),
)
def test_a_rebuilt_swiss_director_pairs_as_the_one_that_never_stopped(
    n: int, rounds: int, games: int, seed: int, stops: set[int]
) -> None:
    make = swiss(n, rounds, games)
    straight = play(make, seeded(seed), set())
    resumed = play(make, seeded(seed), stops)
    assert straight == resumed
    by_round: dict[int, list[Played]] = {}
    for match in straight:
        by_round.setdefault(match.round, []).append(match)
    assert sorted(by_round) == list(range(1, rounds + 1))
    for matches in by_round.values():
        assert len(matches) == (n // 2) * games  # every pairing plays its games each round
        bots = [b for m in matches[::games] for b in m.seats]
        assert len(bots) == len(set(bots)) == 2 * (n // 2)


def knockout(n: int, games: int, pairs: int, seed: int = 1) -> Callable[[], Director]:
    names = [f"bot{i}" for i in range(n)]
    settings = {"knockout": {"seeding": list(range(n)), "games": games, "tiebreak_pairs": pairs}}

    def make() -> Director:
        director = director_for("knockout", names, settings, seed)
        assert director is not None
        return director

    return make


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 12),
    games=st.integers(1, 4),
    pairs=st.integers(0, 2),
    seed=st.integers(0, 1000),
    stops=st.sets(st.integers(1, 40), max_size=5),
)
def test_a_knockout_crowns_one_bot_and_resumes_the_same(
    n: int, games: int, pairs: int, seed: int, stops: set[int]
) -> None:
    make = knockout(n, games, pairs)
    straight = play(make, seeded(seed), set())
    assert play(make, seeded(seed), stops) == straight
    director = make()
    director.load(straight)
    champion = director.champion()  # type: ignore[attr-defined]
    assert champion is not None
    rounds = director.bracket()  # type: ignore[attr-defined]
    size = 1
    while size < n:
        size *= 2
    assert len(rounds) == max(1, size.bit_length() - 1)
    assert len(straight) >= games * (n - 1)  # every bot but one lost a tie of >= games games


def test_level_ties_play_their_tiebreak_pairs_then_the_coin() -> None:
    make = knockout(2, 2, 2)
    matches = play(make, drawn, set())
    assert len(matches) == 2 + 2 * 2  # the tie, then both tie-break pairs, all drawn
    assert [m.seats for m in matches] == [(0, 1), (1, 0)] * 3
    director = make()
    director.load(matches)
    (tie,) = director.bracket()[-1]  # type: ignore[attr-defined]
    assert tie.by_coin and tie.winner in (0, 1)
    coins = set()
    for seed in range(20):  # the coin is the seed's: both sides win for some seed
        other = knockout(2, 2, 2, seed)()
        other.load(matches)
        coins.add(other.champion())  # type: ignore[attr-defined]
    assert coins == {0, 1}


def sprt(max_games: int, elo0: float = 0.0, elo1: float = 5.0) -> Callable[[], Director]:
    test = SprtSettings(elo0, elo1)
    settings = {"sprt": {**test.to_dict(), "max_games": max_games, "interval": 5}}

    def make() -> Director:
        director = director_for("sprt", ["NEW", "BASE"], settings, 1)
        assert director is not None
        return director

    return make


def test_an_sprt_plays_pairs_up_to_its_limit_when_undecided() -> None:
    make = sprt(40, -400, 400)  # bounds no evidence from 20 drawn pairs can cross
    matches = play(make, drawn, {3, 7})
    assert len(matches) == 40
    for pair in range(1, 21):
        assert [m.seats for m in matches if m.round == pair] == [(0, 1), (1, 0)]
    director = make()
    director.load(matches)
    assert director.complete and not director.decided
    assert director.summary()["pentanomial"] == [0, 0, 20, 0, 0]  # type: ignore[attr-defined]


def test_an_sprt_stops_making_pairs_once_decided() -> None:
    make = sprt(100_000, 0, 5)

    def new_wins(match: NewMatch, _: int) -> tuple[float, ...]:
        return (1.0, 0.0) if match.seats[0] == 0 else (0.0, 1.0)

    matches = play(make, new_wins, {2})
    director = make()
    director.load(matches)
    assert director.decided and director.summary()["decision"] == "H1"
    assert director.next(8) == []
    # all-wins data are the one-sided kind the regularisation keeps finite: the LLR grows
    # about 0.02 a pair, so the bound is crossed after the first of these counts
    upper = SprtSettings(0, 5).bounds[1]
    needed = next(n for n in range(1, 1000) if llr((0, 0, 0, 0, n), 0, 5) >= upper)
    pairs = director.summary()["pairs"]
    assert needed <= pairs <= needed + 1  # a write of 3 results ends at most one pair more
    # and no more pairs were made than the runner's wish ahead (4) beyond the deciding ones
    assert max(m.round for m in matches) <= pairs + 4


@pytest.mark.slow  # 25 examples, each a whole SPRT run
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 1000), stops=st.sets(st.integers(1, 60), max_size=4))
def test_an_sprt_director_counts_as_its_stored_matches_give(seed: int, stops: set[int]) -> None:
    """The counts the director keeps result by result (and rebuilds on a resume) are those of
    the stored matches counted afresh, at every write."""
    from bot_arena.arena.tournament.directors.sprt import SprtDirector, state_of

    make = sprt(120, -1, 1)  # too narrow for 60 pairs of even results to decide, mostly
    outcome = seeded(seed)
    director = make()
    stored: list[Played] = []
    writes = 0
    while not director.complete:
        for item in director.next(4):
            director.added(len(stored), item)
            stored.append(Played(len(stored), item.round, item.seats, None))
        for match in [m for m in stored if m.scores is None][:3]:
            scores = outcome(NewMatch(match.round, match.seats), match.match_id)
            stored[match.match_id] = Played(match.match_id, match.round, match.seats, scores)
            director.result(match.match_id, scores)
            director.result(match.match_id, scores)  # told twice: counted once
        writes += 1
        if writes in stops:
            director = make()
            director.load(stored)
        assert isinstance(director, SprtDirector)
        assert director.state == state_of(director.test, stored)
        assert director.open == sum(m.scores is None for m in stored)
    assert director.decided or director.state.games == 120


def test_an_eager_sprt_director_takes_back_a_result_that_was_not_stored() -> None:
    """The runner tells an SPRT each result as its group is handed to the writer thread; a
    result its group could not store (the match voided meanwhile) is taken back, and the
    director's state is again the one of the results stored, the match open again."""
    from bot_arena.arena.tournament.directors.sprt import SprtDirector, state_of

    director = sprt(200, -1, 1)()
    assert isinstance(director, SprtDirector) and director.eager
    outcome = seeded(7)
    made: list[Played] = []
    for item in director.next(40):
        director.added(len(made), item)
        made.append(Played(len(made), item.round, item.seats, None))
    done = {}
    for match in made:
        scores = outcome(NewMatch(match.round, match.seats), match.match_id)
        done[match.match_id] = Played(match.match_id, match.round, match.seats, scores)
        director.result(match.match_id, scores)
    # both games of pair 1, the first of pair 2 and the second of pair 3 were not stored
    for match_id in (0, 1, 2, 5):
        director.retract(match_id)
        director.retract(match_id)  # taken back twice: once
        done[match_id] = made[match_id]
    stored = [done[m.match_id] for m in made]
    assert director.state == state_of(director.test, stored)
    assert director.state.pairs == len(made) // 2 - 3
    assert director.open == 4
