"""The bounded transposition table: slots, replacement, when an entry may stand for a search."""

from __future__ import annotations

import pytest

from bot_arena.bots.tt import EXACT, LOWER, UPPER, TranspositionTable, usable


class Key:
    """A key with a chosen hash, to force two positions into one slot."""

    def __init__(self, name: str, slot: int) -> None:
        self.name, self.slot = name, slot

    def __hash__(self) -> int:
        return self.slot

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Key) and other.name == self.name


def test_store_and_probe() -> None:
    table = TranspositionTable(8)
    a = Key("a", 3)
    assert table.probe(a) is None
    assert table.store(a, 4, EXACT, 1.5, "m", False)
    entry = table.probe(a)
    assert entry is not None and entry[1:6] == (4, EXACT, 1.5, "m", False)
    assert table.probe(Key("b", 3)) is None  # same slot, other position
    assert len(table) == 1


def test_replacement_prefers_depth_within_a_search_and_ages_out() -> None:
    table = TranspositionTable(8)
    assert table.size == 7
    deep, shallow = Key("deep", 1), Key("shallow", 8)  # 8 % 7 == 1: one slot
    table.store(deep, 6, LOWER, 0.0, None, False)
    assert not table.store(shallow, 2, UPPER, 0.0, None, False)
    assert table.probe(deep) is not None
    assert table.store(deep, 1, EXACT, 3.0, None, False)  # the same position always replaces
    table.store(deep, 6, EXACT, 3.0, None, False)
    table.new_search()
    assert table.store(shallow, 2, UPPER, 0.0, None, False)  # older searches give way
    assert table.probe(deep) is None and table.probe(shallow) is not None


def test_memory_is_bounded_by_the_slot_count() -> None:
    table = TranspositionTable(16)
    for i in range(1000):
        table.store(i, i % 7, EXACT, 0.0, None, False)
    assert len(table.slots) == 13 and len(table) <= 13  # the largest prime <= 16


@pytest.mark.parametrize(
    ("stored", "proven", "asked", "ok"),
    [
        (3, False, 3, True),
        (4, False, 3, False),
        (2, False, 3, False),
        (2, True, 3, True),
        (4, True, 3, False),
        (-1, False, 1, False),
    ],
)
def test_usable_only_at_the_same_depth_or_proven_below(
    stored: int, proven: bool, asked: int, ok: bool
) -> None:
    entry = ("k", stored, EXACT, 0.0, None, proven, 0)
    assert usable(entry, asked) is ok


def test_size_must_be_positive() -> None:
    with pytest.raises(ValueError):
        TranspositionTable(0)


def test_slot_counts_are_primes_within_the_size() -> None:
    from bot_arena.bots.tt import largest_prime_at_most

    assert [largest_prime_at_most(n) for n in (1, 2, 3, 4, 10, 100, 1 << 18)] == [
        1,
        2,
        3,
        3,
        7,
        97,
        262139,
    ]


def test_bitboard_keys_spread_over_the_table() -> None:
    from bot_arena import games

    game = games.get("connect4")
    layer = {game.state_key(game.initial_state()): game.initial_state()}
    for _ in range(4):  # every position after 4 plies
        layer = {
            game.state_key(child): child
            for state in layer.values()
            for child in (game.apply(state, m) for m in game.legal_moves(state))
        }
    assert len(layer) == 1120
    table = TranspositionTable(1 << 12)
    for key in layer:
        table.store(key, 1, EXACT, 0.0, None, False)
    # random hashing would fill about 977 slots; a 4096-slot modulus fills far fewer
    assert len(table) > 900
    assert len({hash(k) % 4096 for k in layer}) < 600
