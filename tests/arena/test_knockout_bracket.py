"""Knockout brackets: the seeded draw, whole knockouts with random ties, deciding a tie, and the
printed draw sheet."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena.arena.tournament.knockout_bracket import (
    TieScore,
    TieState,
    TieView,
    bracket_size,
    bracket_text,
    first_round,
    game_seats,
    next_round,
    rounds_needed,
    seed_order,
    tie_decision,
)
from bot_arena.arena.tournament.schedule import ScheduleError

NAMES = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]

# -- the draw ----------------------------------------------------------------------------------


def test_standard_seed_order() -> None:
    assert seed_order(2) == [1, 2]
    assert seed_order(4) == [1, 4, 2, 3]
    assert seed_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    assert seed_order(16) == [1, 16, 8, 9, 4, 13, 5, 12, 2, 15, 7, 10, 3, 14, 6, 11]
    assert first_round(range(8)) == [(0, 7), (3, 4), (1, 6), (2, 5)]
    with pytest.raises(ScheduleError):
        seed_order(6)


@pytest.mark.parametrize("count", range(2, 34))
def test_first_round_places_every_entrant_once_and_byes_to_the_top_seeds(count: int) -> None:
    entrants = [100 + i for i in range(count)]  # field indices in seeding order
    ties = first_round(entrants)
    size = bracket_size(count)
    assert size >= count > size // 2
    assert len(ties) == size // 2
    placed = [e for tie in ties for e in tie if e is not None]
    assert sorted(placed) == entrants
    assert all(first is not None for first, _ in ties)  # a bye is always the second slot
    byes = [first for first, second in ties if second is None and first is not None]
    assert sorted(byes) == entrants[: size - count]  # the top seeds get the byes
    seed = {e: k + 1 for k, e in enumerate(entrants)}
    for first, second in ties:  # the better seed first; the seeds of a tie add up to size + 1
        assert first is not None
        if second is not None:
            assert seed[first] < seed[second] and seed[first] + seed[second] == size + 1
    slots = [e for tie in ties for e in tie]
    half = len(slots) // 2
    assert entrants[0] in slots[:half] and entrants[1] in slots[half:]  # 1 and 2: the final
    if size >= 4:  # 1-4 in different quarters: they can only meet in the semi-finals
        quarter = {e: k * 4 // size for k, e in enumerate(slots) if e is not None}
        top = entrants[:4]
        assert len({quarter[e] for e in top}) == len(top)


def test_better_seeds_winning_reach_the_expected_rounds() -> None:
    entrants = list(range(16))
    ties: list[tuple[int | None, int | None]] = list(first_round(entrants))
    rounds = 0
    while True:
        winners = [min(e for e in tie if e is not None) for tie in ties]
        rounds += 1
        if len(winners) == 1:
            break
        assert sorted(winners) == list(range(len(winners)))  # the best seeds left
        ties = list(next_round(winners))
    assert rounds == rounds_needed(16) == 4
    assert winners == [0]


def test_next_round_pairs_adjacent_winners() -> None:
    assert next_round([5, 2, 7, 1]) == [(5, 2), (7, 1)]
    assert next_round([3]) == []
    with pytest.raises(ScheduleError):
        next_round([1, 2, 3])
    with pytest.raises(ScheduleError):
        next_round([])
    with pytest.raises(ScheduleError):
        first_round([0])
    with pytest.raises(ScheduleError):
        first_round([0, 1, 0])


# -- deciding ties -----------------------------------------------------------------------------


def play_tie(first: int, second: int, rng: random.Random, games: int, pairs: int) -> TieState:
    """Play a tie game by game with random results until it is decided."""
    played, points = 0, [0.0, 0.0]
    while True:
        score = TieScore(first, second, played, points[0], points[1])
        state = tie_decision(score, games=games, tiebreak_pairs=pairs, coin_seed=first * 7 + second)
        if state.winner is not None:
            assert state.more_games == 0
            return state
        assert state.more_games > 0
        for _ in range(state.more_games):
            seats = game_seats(first, second, played)
            assert seats == ((first, second) if played % 2 == 0 else (second, first))
            result = rng.choice([1.0, 0.5, 0.0])  # the first seat's points
            points[0 if seats[0] == first else 1] += result
            points[1 if seats[0] == first else 0] += 1 - result
            played += 1
        assert played <= games + 2 * pairs


@settings(max_examples=60, deadline=None)
@given(
    count=st.integers(2, 33),
    seed=st.integers(0, 2**32),
    games=st.integers(1, 4),
    pairs=st.integers(0, 2),
)
def test_a_whole_knockout_ends_with_one_champion(
    count: int, seed: int, games: int, pairs: int
) -> None:
    rng = random.Random(seed)
    entrants = rng.sample(range(100), count)
    ties: list[tuple[int | None, int | None]] = list(first_round(entrants))
    out: list[int] = []
    rounds = 0
    while ties:
        rounds += 1
        winners: list[int] = []
        for first, second in ties:
            if first is None or second is None:  # a bye: only in the first round
                assert rounds == 1 and first is not None and second is None
                winners.append(first)
                continue
            winner = play_tie(first, second, rng, games, pairs).winner
            assert winner is not None and winner in (first, second)
            out.append(second if winner == first else first)
            winners.append(winner)
        ties = list(next_round(winners))
    assert rounds == rounds_needed(count)
    assert len(winners) == 1
    assert sorted(out + winners) == sorted(entrants)  # everyone out once, but the champion


def test_a_tie_won_in_its_games() -> None:
    rules = {"games": 2, "tiebreak_pairs": 2, "coin_seed": 9}
    assert tie_decision(TieScore(3, 5, 0, 0, 0), **rules) == TieState(None, 2)
    assert tie_decision(TieScore(3, 5, 1, 1, 0), **rules) == TieState(None, 1)
    assert tie_decision(TieScore(3, 5, 2, 1.5, 0.5), **rules) == TieState(3, 0)
    assert tie_decision(TieScore(3, 5, 2, 0, 2), **rules) == TieState(5, 0)


def test_a_level_tie_plays_pairs_until_one_differs() -> None:
    rules = {"games": 2, "tiebreak_pairs": 2, "coin_seed": 9}
    assert tie_decision(TieScore(3, 5, 2, 1, 1), **rules) == TieState(None, 2)
    assert tie_decision(TieScore(3, 5, 3, 2, 1), **rules) == TieState(None, 1)  # mid-pair
    assert tie_decision(TieScore(3, 5, 4, 2, 2), **rules) == TieState(None, 2)
    assert tie_decision(TieScore(3, 5, 4, 1.5, 2.5), **rules) == TieState(5, 0)
    assert tie_decision(TieScore(3, 5, 6, 3.5, 2.5), **rules) == TieState(3, 0)
    odd = {"games": 1, "tiebreak_pairs": 1, "coin_seed": 9}  # one game, then a pair
    assert tie_decision(TieScore(3, 5, 1, 0.5, 0.5), **odd) == TieState(None, 2)
    assert tie_decision(TieScore(3, 5, 3, 2, 1), **odd) == TieState(3, 0)


def test_still_level_after_every_pair_the_coin_decides() -> None:
    def coin(seed: int, pairs: int = 2) -> TieState:
        score = TieScore(3, 5, 2 + 2 * pairs, 1 + pairs, 1 + pairs)
        return tie_decision(score, games=2, tiebreak_pairs=pairs, coin_seed=seed)

    assert coin(1) == coin(1)  # the same seed, the same coin
    outcomes = {coin(seed).winner for seed in range(40)}
    assert outcomes == {3, 5}  # both sides of the coin come up
    assert all(coin(seed).by_coin and coin(seed).more_games == 0 for seed in range(5))
    assert coin(4, pairs=0).by_coin  # no tie-break games at all: straight to the coin
    assert {coin(seed, pairs=0).winner for seed in range(40)} == {3, 5}


def test_bad_tie_rules_are_refused() -> None:
    with pytest.raises(ScheduleError):
        tie_decision(TieScore(3, 5, 0, 0, 0), games=0, tiebreak_pairs=1, coin_seed=0)
    with pytest.raises(ScheduleError):
        tie_decision(TieScore(3, 5, 0, 0, 0), games=2, tiebreak_pairs=-1, coin_seed=0)
    with pytest.raises(ScheduleError):
        tie_decision(TieScore(3, 3, 0, 0, 0), games=2, tiebreak_pairs=1, coin_seed=0)


# -- the draw sheet ----------------------------------------------------------------------------


def eight_partly_played() -> list[list[TieView]]:
    """8 entrants: round 1 done (delta v echo level, echo through on the coin), one semi-final
    under way (alpha leads echo 1 - 0), the other not started."""
    round_one = [
        TieView(0, 7, 2, 0, 0, games=2),
        TieView(3, 4, 1, 1, 4, by_coin=True, games=6),
        TieView(1, 6, 0.5, 1.5, 6, games=2),
        TieView(2, 5, 1.5, 0.5, 2, games=2),
    ]
    winners = [tie.winner for tie in round_one]
    assert all(w is not None for w in winners)
    semis = [TieView(0, 4, 1, 0, games=1), TieView(6, 2)]
    return [round_one, semis]


def column_of(line: str, name: str) -> int:
    return line.index(name)


def test_the_sheet_of_eight_partly_played() -> None:
    lines = bracket_text(eight_partly_played(), NAMES, 80)
    assert all(len(line) <= 80 for line in lines)
    header = lines[0]
    for title in ("Round 1", "Round 2", "Final", "Champion"):
        assert title in header
    grid = lines[1:16]  # 2 * 8 - 1 rows, then the legend
    assert len(lines) == 17 and "coin" in lines[16]
    first_column = [line.split()[0] for line in grid[::2]]
    assert first_column == [
        "alpha",
        "hotel",
        "delta",
        "echo",
        "bravo",
        "golf",
        "charlie",
        "foxtrot",
    ]
    assert grid[0].startswith("alpha") and " 2 *" in grid[0]  # a winner's points and mark
    assert " 0 " in grid[2] and "*" not in grid[2]
    assert " 1 *c" in grid[6]  # echo: through on the coin
    # each winner sits halfway between its tie's two rows, one column on
    assert "alpha" in grid[1] and column_of(grid[1], "alpha") > 0
    assert "echo" in grid[5] and "golf" in grid[9] and "charlie" in grid[13]
    assert " 1 " in grid[1] and " 0 " in grid[5]  # the semi-final under way
    assert grid[9].split("-- ")[1].split()[0] == "golf" and "golf -" in grid[9]  # not started
    assert "+-- ? -" in grid[3] and "+-- ? -" in grid[11]  # the final: not known yet
    assert grid[7].rstrip().endswith("?")  # no champion yet
    join = grid[0].index("+")  # the two rows of a tie and its winner's row meet there
    assert grid[0].rstrip().endswith("+") and grid[2].index("+") == join == grid[1].index("+")
    assert grid[1][join:].startswith("+-- alpha")


def test_the_sheet_of_five_with_byes_and_a_champion() -> None:
    ties = first_round(range(5))  # seeds 1-3 get byes
    assert [second for _, second in ties] == [None, 4, None, None]
    round_one = [TieView(a, b) for a, b in ties]
    round_one[1] = TieView(3, 4, 0.5, 1.5, 4, games=2)
    round_two = [TieView(0, 4, 2, 0, 0, games=2), TieView(1, 2, 0, 2, 2, games=2)]
    final = [TieView(0, 2, 1.5, 0.5, 0, games=2)]
    lines = bracket_text([round_one, round_two, final], NAMES, None)
    assert sum(line.count("(bye)") for line in lines) == 3
    assert lines[0].split() == ["Round", "1", "Round", "2", "Final", "Champion"]
    assert lines[8].rstrip().endswith("+-- alpha")  # the champion, at the right
    assert "alpha 1.5 *" in " ".join(lines[4].split())  # won the final
    assert not any("coin" in line for line in lines)
    partly = bracket_text([round_one], NAMES, None)  # only round 1: later slots filled in
    assert "+-- alpha -" in partly[2]  # through on the bye
    assert "+-- echo" in partly[6]
    assert partly[8].rstrip().endswith("?")


def test_a_narrow_terminal_gets_the_list() -> None:
    rounds = eight_partly_played()
    wide = bracket_text(rounds, NAMES, None)
    width = max(len(line) for line in wide)
    assert bracket_text(rounds, NAMES, width) == wide
    lines = bracket_text(rounds, NAMES, width - 1)
    assert lines == [
        "round 1: alpha 2 - 0 hotel -> alpha",
        "round 1: delta 1 - 1 echo -> echo (by the coin)",
        "round 1: bravo 0.5 - 1.5 golf -> golf",
        "round 1: charlie 1.5 - 0.5 foxtrot -> charlie",
        "round 2: alpha 1 - 0 echo",
        "round 2: golf - charlie",
        "final: ? - ?",
        "champion: ?",
    ]
    byes = bracket_text([[TieView(a, b) for a, b in first_round(range(3))]], NAMES, 10)
    assert byes[:2] == ["round 1: alpha - (bye) -> alpha", "round 1: bravo - charlie"]


def test_malformed_rounds_are_refused() -> None:
    with pytest.raises(ScheduleError):
        bracket_text([], NAMES, None)
    with pytest.raises(ScheduleError):
        bracket_text([[TieView(0, 1)] * 3], NAMES, None)
    with pytest.raises(ScheduleError):
        bracket_text([[TieView(0, 1), TieView(2, 3)], [TieView(0, 2)] * 2], NAMES, None)
    with pytest.raises(ScheduleError):
        bracket_text([[TieView(0, 1, winner=5)]], NAMES, None)
    with pytest.raises(ScheduleError):
        bracket_text([[TieView(0, 99)]], NAMES, None)
