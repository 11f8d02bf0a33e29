"""Schedules: counts, seat balance, gauntlets, openings, reproducibility from the seed."""

from __future__ import annotations

from collections import Counter
from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena import games
from bot_arena.arena.tournament.schedule import (
    Pairing,
    ScheduleError,
    groups,
    openings,
    random_opening,
    schedule,
)


def seat_counts(pairings: list[Pairing]) -> Counter[tuple[int, int]]:
    return Counter((bot, seat) for p in pairings for seat, bot in enumerate(p.seats))


def test_two_player_round_robin_counts_and_swapped_seats() -> None:
    plan = schedule("round-robin", 4, 2, games=2, seed=1)
    assert len(plan) == comb(4, 2) * 2
    by_pair = Counter(frozenset(p.seats) for p in plan)
    assert set(by_pair.values()) == {2} and len(by_pair) == 6
    for pair in by_pair:  # the two games of a pair have the seats swapped
        seatings = {p.seats for p in plan if frozenset(p.seats) == pair}
        a, b = sorted(pair)
        assert seatings == {(a, b), (b, a)}
    counts = seat_counts(plan)
    assert all(counts[(bot, 0)] == counts[(bot, 1)] == 3 for bot in range(4))


def test_default_games_is_one_rotation() -> None:
    assert len(schedule("round-robin", 3, 2)) == 3 * 2
    assert len(schedule("round-robin", 4, 3)) == comb(4, 3) * 3


@pytest.mark.parametrize(("field", "players"), [(3, 3), (5, 3), (4, 4), (6, 4)])
def test_n_player_round_robin_every_bot_in_every_seat_equally(field: int, players: int) -> None:
    plan = schedule("round-robin", field, players, games=players, seed=3)
    assert len(plan) == comb(field, players) * players
    counts = seat_counts(plan)
    per_seat = comb(field - 1, players - 1)  # groups a bot is in, one game per seat each
    assert counts == Counter({(b, s): per_seat for b in range(field) for s in range(players)})
    # every combination of N bots meets, each exactly `players` times
    assert Counter(frozenset(p.seats) for p in plan) == Counter(
        {frozenset(g): players for g in groups("round-robin", field, players)}
    )


def test_the_whole_field_is_one_group_when_it_is_exactly_n() -> None:
    plan = schedule("round-robin", 4, 4, games=8)
    assert {frozenset(p.seats) for p in plan} == {frozenset(range(4))}
    assert len({p.seats for p in plan}) == 4  # the four rotations


@pytest.mark.parametrize(("field", "players"), [(5, 2), (5, 3), (4, 4)])
def test_gauntlet_first_bot_plays_everyone(field: int, players: int) -> None:
    plan = schedule("gauntlet", field, players, games=players * 2, seed=2)
    assert len(plan) == comb(field - 1, players - 1) * players * 2
    assert all(0 in p.seats for p in plan)
    met = {b for p in plan for b in p.seats}
    assert met == set(range(field))
    counts = seat_counts(plan)
    assert {counts[(0, s)] for s in range(players)} == {comb(field - 1, players - 1) * 2}
    if players == 2:  # nobody else meets each other
        assert all(sorted(p.seats)[0] == 0 for p in plan)


@settings(max_examples=40, deadline=None)
@given(
    field=st.integers(2, 7),
    players=st.integers(2, 4),
    rotations=st.integers(1, 3),
    fmt=st.sampled_from(["round-robin", "gauntlet"]),
)
def test_seat_balance_property(field: int, players: int, rotations: int, fmt: str) -> None:
    if field < players:
        with pytest.raises(ScheduleError):
            schedule(fmt, field, players, games=players * rotations)
        return
    plan = schedule(fmt, field, players, games=players * rotations, seed=0)
    counts = seat_counts(plan)
    for bot in {b for p in plan for b in p.seats}:
        assert len({counts[(bot, s)] for s in range(players)}) == 1
    assert [p.round for p in plan] == sorted(p.round for p in plan)


def test_same_seed_same_schedule_other_seed_other_seeds() -> None:
    a = schedule("round-robin", 5, 2, games=4, seed=42)
    assert a == schedule("round-robin", 5, 2, games=4, seed=42)
    b = schedule("round-robin", 5, 2, games=4, seed=43)
    assert [p.seats for p in a] == [p.seats for p in b]
    assert [p.seed for p in a] != [p.seed for p in b]
    assert len({p.seed for p in a}) == len(a)  # every match its own seed


def test_openings_shared_by_both_seatings_and_reproducible() -> None:
    game = games.get("tictactoe")
    plan = schedule("round-robin", 3, 2, games=4, seed=9)
    opens = openings(game, plan, 9, plies=3)
    assert opens == openings(game, plan, 9, plies=3)
    by_key: dict[tuple[int, int], set[object]] = {}
    for p, o in zip(plan, opens, strict=True):
        by_key.setdefault((p.group, p.opening), set()).add(o)
        assert len(o.moves) == 3
        state = game.initial_state()
        for move in o.moves:
            state = game.apply(state, game.move_from_text(state, move))
        assert o.position == game.format_position(state) and not game.is_terminal(state)
    assert all(len(v) == 1 for v in by_key.values())  # one opening per pair of games
    assert len({next(iter(v)) for v in by_key.values()}) > 1  # and not one for everybody


def test_openings_that_end_the_game_are_skipped() -> None:
    game = games.get("coins", coins=4, max_take=2)  # 2 or 3 random plies often take every coin
    for seed in range(30):
        o = random_opening(game, seed, 3)
        state = game.initial_state()
        for move in o.moves:
            state = game.apply(state, game.move_from_text(state, move))
        assert not game.is_terminal(state)
    with pytest.raises(ScheduleError, match="opening"):
        random_opening(game, 0, 5)  # five plies always take four coins


def test_no_plies_means_the_initial_position() -> None:
    o = random_opening(games.get("tictactoe"), 1, 0)
    assert o.moves == () and o.position is None


@pytest.mark.parametrize(
    ("fmt", "field", "players", "n"),
    [
        ("round-robin", 1, 2, 2),
        ("round-robin", 2, 3, 3),
        ("swiss", 4, 2, 2),
        ("round-robin", 4, 2, 0),
    ],
)
def test_impossible_schedules(fmt: str, field: int, players: int, n: int) -> None:
    with pytest.raises(ScheduleError):
        schedule(fmt, field, players, games=n)
