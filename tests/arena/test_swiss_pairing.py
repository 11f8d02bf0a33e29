"""Swiss pairing: whole tournaments played through ``pair_round`` with random results, checked
against brute force (every pairing of small fields), hand-made score-group cases, colours, byes,
standings, and a large field."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena.arena.tournament.schedule import ScheduleError
from bot_arena.arena.tournament.swiss_pairing import (
    SwissPlayer,
    SwissRound,
    _pair,
    buchholz,
    pair_round,
    standings_order,
)

# -- a tournament kept by the test -------------------------------------------------------------


@dataclass
class Entry:
    score: float = 0.0
    opponents: list[int] = field(default_factory=list)
    colours: list[int] = field(default_factory=list)
    byes: int = 0


class Tournament:
    """The players' states, updated from each round the way a runner would."""

    def __init__(self, size: int, seed: int, outcomes: Sequence[float] = (1.0, 0.5, 0.0)) -> None:
        self.entries = [Entry() for _ in range(size)]
        self.rng = random.Random(seed)
        self.outcomes = outcomes

    def players(self) -> list[SwissPlayer]:
        return [
            SwissPlayer(i, e.score, tuple(e.opponents), tuple(e.colours), e.byes)
            for i, e in enumerate(self.entries)
        ]

    def play(self, paired: SwissRound) -> None:
        for first, second in paired.pairs:
            result = self.rng.choice(self.outcomes)  # the first seat's points
            self.entries[first].score += result
            self.entries[second].score += 1 - result
            self.entries[first].opponents.append(second)
            self.entries[second].opponents.append(first)
            self.entries[first].colours.append(0)
            self.entries[second].colours.append(1)
        if paired.bye is not None:
            self.entries[paired.bye].score += 1
            self.entries[paired.bye].byes += 1


def rounds_for(size: int) -> int:
    """A full Swiss: everyone can meet everyone once (n - 1 rounds; n for odd fields)."""
    return size if size % 2 else size - 1


# -- brute force, written from the rules --------------------------------------------------------


def pairing_order(players: Sequence[SwissPlayer]) -> list[SwissPlayer]:
    return sorted(players, key=lambda p: (-p.score, p.initial_rank, p.index))


def all_pairings(items: Sequence[int]) -> Iterator[list[tuple[int, int]]]:
    if not items:
        yield []
        return
    head, rest = items[0], list(items[1:])
    for i, other in enumerate(rest):
        for tail in all_pairings(rest[:i] + rest[i + 1 :]):
            yield [(head, other), *tail]


def cost(players: Sequence[SwissPlayer], pairs: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    """(rematches, meetings beyond the second, sum of squared score differences in half points)"""
    by = {p.index: p for p in players}
    rematches = extra = squares = 0
    for a, b in pairs:
        times = by[a].opponents.count(b)
        rematches += times > 0
        extra += max(0, times - 1)
        squares += round(2 * (by[a].score - by[b].score)) ** 2
    return rematches, extra, squares


def eligible_byes(players: Sequence[SwissPlayer]) -> list[int]:
    """Eligible bye receivers, lowest in the pairing order first."""
    fewest = min(p.byes for p in players)
    return [p.index for p in reversed(pairing_order(players)) if p.byes == fewest]


def fewest_rematches(players: Sequence[SwissPlayer], bye_from: Sequence[int] = ()) -> int:
    """The fewest rematches of any pairing of the players, one of ``bye_from`` sitting out if
    given: a search for a pairing with at most k rematches, k = 0, 1, ... (subsets that fail
    remembered)."""
    order = [p.index for p in players]
    where = {index: k for k, index in enumerate(order)}
    size = len(order)
    met = [[False] * size for _ in range(size)]
    for p in players:
        for o in p.opponents:
            met[where[p.index]][where[o]] = True
    sits_out = {where[i] for i in bye_from}
    everyone = (1 << size) - 1 | ((1 << size) if bye_from else 0)  # bit ``size``: the bye

    def fits(free: int, allowance: int, failed: set[tuple[int, int]]) -> bool:
        if free == 0:
            return True
        if (free, allowance) in failed:
            return False
        head = (free & -free).bit_length() - 1
        rest = free & ~(1 << head)
        other_bits = rest
        while other_bits:
            low = other_bits & -other_bits
            other = low.bit_length() - 1
            other_bits ^= low
            if other == size:
                if head not in sits_out:
                    continue
                cost = 0
            else:
                cost = int(met[head][other])
            if cost <= allowance and fits(rest & ~low, allowance - cost, failed):
                return True
        failed.add((free, allowance))
        return False

    allowance = 0
    while not fits(everyone, allowance, set()):
        allowance += 1
    return allowance


def brute_best(players: Sequence[SwissPlayer]) -> tuple[int | None, tuple[int, ...]]:
    """The bye the rules give and the least cost of the round."""
    order = [p.index for p in pairing_order(players)]
    if len(players) % 2 == 0:
        return None, min(cost(players, m) for m in all_pairings(order))
    least = {
        c: min(cost(players, m) for m in all_pairings([i for i in order if i != c]))
        for c in eligible_byes(players)
    }
    fewest = min(c[0] for c in least.values())
    bye = next(c for c in eligible_byes(players) if least[c][0] == fewest)
    return bye, least[bye]


def dutch_first(players: Sequence[SwissPlayer], bye: int | None) -> set[frozenset[int]]:
    """The rule-5 tie-break by brute force: pairings enumerated top-down in Dutch order (the
    top unpaired player tries its partners by weight, then S2 from its top, then S1 from its
    bottom, then lower groups top first); the first one of least cost."""
    order = [p for p in pairing_order(players) if p.index != bye]
    found: list[tuple[tuple[int, ...], list[tuple[int, int]]]] = []

    def weight(a: SwissPlayer, b: SwissPlayer) -> tuple[int, ...]:
        return cost(players, [(a.index, b.index)])

    def walk(free: list[SwissPlayer], pairs: list[tuple[int, int]], spent: tuple[int, ...]) -> None:
        if not free:
            if not found or spent < found[0][0]:
                found[:] = [(spent, list(pairs))]
            return
        top, rest = free[0], free[1:]
        own = [p for p in free if p.score == top.score]
        half = len(own) // 2
        rank = {
            p.index: j - half if j >= half else len(own) + (half - 1 - j) for j, p in enumerate(own)
        }
        for other in sorted(
            rest, key=lambda p: (weight(top, p), rank.get(p.index, len(free) + order.index(p)))
        ):
            step = weight(top, other)
            walk(
                [p for p in rest if p is not other],
                [*pairs, (top.index, other.index)],
                tuple(x + y for x, y in zip(spent, step, strict=True)),
            )

    walk(order, [], (0, 0, 0))
    return {frozenset(pair) for pair in found[0][1]}


# -- checks of one round ------------------------------------------------------------------------


def expected_seats(players: Sequence[SwissPlayer], a: int, b: int, board: int) -> tuple[int, int]:
    """The colour rules of the module docstring, for a pair on ``board`` (1-based)."""
    by = {p.index: p for p in players}
    position = {p.index: k for k, p in enumerate(pairing_order(players))}
    high, low = sorted((a, b), key=position.__getitem__)

    def difference(i: int) -> int:
        return by[i].colours.count(0) - by[i].colours.count(1)

    if difference(high) != difference(low):
        return (high, low) if difference(high) < difference(low) else (low, high)
    for mine, theirs in zip(reversed(by[high].colours), reversed(by[low].colours), strict=False):
        if mine != theirs:
            return (high, low) if mine == 1 else (low, high)
    return (high, low) if board % 2 else (low, high)


def check_round(players: Sequence[SwissPlayer], paired: SwissRound) -> None:
    indices = sorted(p.index for p in players)
    seated = [i for pair in paired.pairs for i in pair]
    byes = [] if paired.bye is None else [paired.bye]
    assert sorted(seated + byes) == indices  # everyone exactly once
    assert (paired.bye is not None) == (len(players) % 2 == 1)
    by = {p.index: p for p in players}
    if paired.bye is not None:  # never a second bye while someone has had fewer
        assert by[paired.bye].byes == min(p.byes for p in players)
    assert paired.repeats == sum(1 for a, b in paired.pairs if b in by[a].opponents)
    for board, (a, b) in enumerate(paired.pairs, start=1):
        assert expected_seats(players, a, b, board) == (a, b)
    tops = [max(by[a].score, by[b].score) for a, b in paired.pairs]
    assert tops == sorted(tops, reverse=True)  # top board first


def check_optimal(players: Sequence[SwissPlayer], paired: SwissRound) -> None:
    bye, least = brute_best(players)
    assert paired.bye == bye
    assert cost(players, paired.pairs) == least
    assert paired.repeats == least[0]


# -- whole tournaments -------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(size=st.integers(2, 9), extra=st.integers(0, 2), seed=st.integers(0, 2**32))
def test_small_tournaments_are_optimal_by_brute_force(size: int, extra: int, seed: int) -> None:
    """Fields up to 9, a full Swiss and up to 2 rounds more (rematches forced): every round has
    the bye, the fewest rematches and the least score differences brute force finds, and the
    Dutch tie-break picks the first of those in Dutch order."""
    tournament = Tournament(size, seed)
    for _ in range(rounds_for(size) + extra):
        players = tournament.players()
        paired = pair_round(players)
        check_round(players, paired)
        check_optimal(players, paired)
        if size <= 8:
            assert {frozenset(p) for p in paired.pairs} == dutch_first(players, paired.bye)
        tournament.play(paired)


@settings(max_examples=30, deadline=None)
@given(size=st.integers(10, 14), seed=st.integers(0, 2**32), decisive=st.booleans())
def test_medium_tournaments_have_the_fewest_rematches(size: int, seed: int, decisive: bool) -> None:
    """A full Swiss of 10-14: no rematch whenever some pairing (with an eligible bye) has none,
    else exactly the fewest; every player once, byes and colours by the rules."""
    outcomes = (1.0, 0.0) if decisive else (1.0, 0.5, 0.0)
    tournament = Tournament(size, seed, outcomes)
    for _ in range(rounds_for(size)):
        players = tournament.players()
        paired = pair_round(players)
        check_round(players, paired)
        byes = eligible_byes(players) if size % 2 else []
        assert paired.repeats == fewest_rematches(players, byes)
        if paired.bye is not None:  # the lowest eligible one that keeps that minimum
            keeps = next(b for b in byes if fewest_rematches(players, [b]) == paired.repeats)
            assert paired.bye == keeps
        tournament.play(paired)


@pytest.mark.parametrize("size", [16, 19, 20])
def test_fields_up_to_twenty_are_proven_optimal(size: int) -> None:
    """The search finishes within its budget (so the round is the optimum, not just the best
    found) through whole tournaments of up to 20."""
    for seed in range(2):
        tournament = Tournament(size, seed * 100 + size, (1.0, 0.0))
        for _ in range(rounds_for(size)):
            players = tournament.players()
            paired, proven = _pair(players, 5000)  # pair_round's budget up to 20 players
            assert proven
            check_round(players, paired)
            tournament.play(paired)


def test_late_rounds_of_small_fields() -> None:
    """4 players, 4 rounds: round 4 can only be rematches (each a second meeting); 6 players
    play 5 rounds without one whenever the history allows it."""
    tournament = Tournament(4, 7)
    for round_number in range(1, 5):
        players = tournament.players()
        paired = pair_round(players)
        assert paired.repeats == (2 if round_number == 4 else 0)
        tournament.play(paired)
    players = tournament.players()
    assert all(len(set(p.opponents)) == 3 for p in players)
    for seed in range(30):
        tournament = Tournament(6, seed)
        for _ in range(5):
            players = tournament.players()
            paired = pair_round(players)
            assert paired.repeats == fewest_rematches(players)
            tournament.play(paired)


def test_large_field_finishes() -> None:
    """128 players, 10 rounds: a sanity run (invariants only; no timing)."""
    tournament = Tournament(128, 5)
    for _ in range(10):
        players = tournament.players()
        paired = pair_round(players)
        check_round(players, paired)
        assert paired.repeats == 0
        tournament.play(paired)


def test_same_input_same_round() -> None:
    tournament = Tournament(11, 3)
    for _ in range(6):
        players = tournament.players()
        paired = pair_round(players)
        assert pair_round(list(reversed(players))) == paired
        tournament.play(paired)


# -- hand-made cases -------------------------------------------------------------------------


def player(
    index: int,
    score: float = 0.0,
    opponents: tuple[int, ...] = (),
    colours: tuple[int, ...] = (),
    byes: int = 0,
    rank: int | None = None,
) -> SwissPlayer:
    return SwissPlayer(index, score, opponents, colours, byes, rank)


def test_first_round_of_eight_is_top_half_against_bottom_half() -> None:
    paired = pair_round([player(i) for i in range(8)])
    # 1 v 5, 2 v 6, 3 v 7, 4 v 8; the higher seed has the first seat on odd boards
    assert paired.pairs == ((0, 4), (5, 1), (2, 6), (7, 3))
    assert paired.bye is None and paired.repeats == 0


def test_first_round_of_five_gives_the_bye_to_the_last_seed() -> None:
    paired = pair_round([player(i) for i in range(5)])
    assert paired.bye == 4
    assert paired.pairs == ((0, 2), (3, 1))


def test_rank_overrides_index() -> None:
    players = [player(i, rank=3 - i) for i in range(4)]  # index 3 is the top seed
    assert pair_round(players).pairs == ((3, 1), (0, 2))


def test_second_round_winners_meet_and_the_odd_one_floats_down() -> None:
    # round 1 (as pair_round drew it): 0 v 3, 4 v 1, 2 v 5; the higher seeds won
    players = [
        player(0, 1, (3,), (0,)),
        player(1, 1, (4,), (1,)),
        player(2, 1, (5,), (0,)),
        player(3, 0, (0,), (1,)),
        player(4, 0, (1,), (0,)),
        player(5, 0, (2,), (1,)),
    ]
    paired = pair_round(players)
    # {0, 1, 2}: 0 v 1 and 2 floats down to meet the top of {3, 4, 5}, then 4 v 5;
    # the one who had the second seat takes the first
    assert paired.pairs == ((1, 0), (3, 2), (5, 4))
    assert paired.repeats == 0


def test_a_floater_meets_the_top_of_the_next_group() -> None:
    scores = [2, 1, 1, 1, 1, 0]
    paired = pair_round([player(i, s) for i, s in enumerate(scores)])
    assert {frozenset(p) for p in paired.pairs} == {
        frozenset({0, 1}),  # the lone leader floats down to the top of the 1-point group
        frozenset({2, 3}),  # the rest of that group pairs its halves: 2 v 3
        frozenset({4, 5}),  # and its lowest floats down
    }


def test_a_rematch_is_avoided_by_a_transposition() -> None:
    players = [player(0, 1, (2,)), player(1, 1, (3,)), player(2, 1, (0,)), player(3, 1, (1,))]
    paired = pair_round(players)
    assert {frozenset(p) for p in paired.pairs} == {frozenset({0, 3}), frozenset({1, 2})}
    assert paired.repeats == 0


def test_a_float_beats_a_rematch() -> None:
    # 0 and 1 lead and have met: each floats down rather than meet again
    players = [
        player(0, 2, (1,)),
        player(1, 2, (0,)),
        player(2, 1),
        player(3, 1),
    ]
    paired = pair_round(players)
    assert paired.repeats == 0
    assert {frozenset(p) for p in paired.pairs} == {frozenset({0, 2}), frozenset({1, 3})}


def test_a_transposition_beats_the_ideal_pairing_that_forces_floats() -> None:
    """The 1-point group {1, 2, 3, 6}: its ideal 1 v 3 leaves 2 and 6, who have met, to float
    (score differences 5); 1 v 6 and 2 v 3 float nobody. Of the pairings that cheap, the top
    player's next choice in Dutch order (S2: 6 before S1: 2) is the one taken."""
    opponents = [(4, 6), (5, 4), (6, 7), (7, 5), (0, 1), (1, 3), (2, 0), (3, 2)]
    scores = [0.5, 1, 1, 1, 2, 0, 1, 1.5]
    players = [player(i, s, o) for i, (s, o) in enumerate(zip(scores, opponents, strict=True))]
    paired = pair_round(players)
    check_round(players, paired)
    assert {frozenset(p) for p in paired.pairs} == {
        frozenset({4, 7}),
        frozenset({1, 6}),
        frozenset({2, 3}),
        frozenset({0, 5}),
    }
    assert cost(players, paired.pairs) == (0, 0, 2)


def test_the_bye_skips_a_player_whose_bye_would_force_a_rematch() -> None:
    # 3 and 4 have had no bye, 4 is the lowest; but 3 has met everyone else but 4
    players = [
        player(0, 2, (3,), byes=1),
        player(1, 2, (3,), byes=1),
        player(2, 2, (3,), byes=1),
        player(3, 1, (0, 1, 2)),
        player(4, 0),
    ]
    paired = pair_round(players)
    assert paired.bye == 3
    assert paired.repeats == 0


def test_the_bye_goes_to_whoever_has_had_fewest() -> None:
    players = [player(0, 0, byes=1), player(1, 0.5, byes=1), player(2, 3)]
    assert pair_round(players).bye == 2  # the leader, as the others had one


def test_colours_follow_the_difference_then_alternate() -> None:
    players = [
        player(0, 1, (9,), (0, 0, 1)),  # difference +1
        player(1, 1, (8,), (1,)),  # difference -1: takes the first seat
        player(8, 0, (1,), (1, 0)),  # equal differences, last seats differ
        player(9, 0, (0,), (0, 1)),  # had the second seat last: takes the first
    ]
    paired = pair_round(players)
    assert paired.pairs == ((1, 0), (9, 8))


def test_bad_fields_are_refused() -> None:
    with pytest.raises(ScheduleError):
        pair_round([])
    with pytest.raises(ScheduleError):
        pair_round([player(0)])
    with pytest.raises(ScheduleError):
        pair_round([player(0), player(0)])
    with pytest.raises(ScheduleError):
        pair_round([player(0, colours=(2,)), player(1)])


# -- standings ---------------------------------------------------------------------------------


def test_standings_break_ties_by_buchholz_then_rank() -> None:
    players = [
        player(0, 2, (1, 2)),
        player(1, 1, (0, 3)),
        player(2, 2, (3, 0)),
        player(3, 1, (2, 1)),
    ]
    assert buchholz(players) == {0: 3.0, 1: 3.0, 2: 3.0, 3: 3.0}
    assert standings_order(players) == [0, 2, 1, 3]  # all level on Buchholz: initial rank
    players.append(player(4, 2, (3, 3)))  # met a 1-point player twice
    players[3] = player(3, 1, (2, 1, 4, 4))
    assert buchholz(players)[4] == 2.0 and buchholz(players)[3] == 7.0
    assert standings_order(players) == [0, 2, 4, 3, 1]
    with pytest.raises(ScheduleError):
        buchholz([player(0, 1, (7,))])
