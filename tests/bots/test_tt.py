"""The bounded transposition table: slots, replacement, when an entry may stand for a search.

The rules are tested through ``lookup``/``store``/``hint``, the very methods the iterative search
calls at every node (the last tests check that it does).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from bot_arena import games
from bot_arena.bots.alphabeta import alphabeta
from bot_arena.bots.iterative import DeepeningSearch
from bot_arena.bots.tt import EXACT, HINT, LOWER, UPPER, Entry, Lookup, TranspositionTable


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
    assert entry == Entry(a, 4, EXACT, 1.5, "m", False, 0)
    assert (entry.depth, entry.flag, entry.value, entry.move) == (4, EXACT, 1.5, "m")
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
        (0, True, 3, True),
    ],
)
def test_values_stand_only_at_the_same_depth_or_proven_below(
    stored: int, proven: bool, asked: int, ok: bool
) -> None:
    table = TranspositionTable(8)
    table.store("k", stored, EXACT, 0.5, "m", proven)
    index = hash("k") % table.size
    expected = (True, 0.5, proven, "m", index) if ok else (False, 0.0, False, "m", index)
    assert table.lookup("k", asked, -math.inf, math.inf) == expected


@pytest.mark.parametrize(
    ("flag", "alpha", "beta", "cutoff"),
    [
        (EXACT, 0.0, 1.0, True),  # an exact value decides whatever the window
        (EXACT, 2.0, 3.0, True),
        (LOWER, -1.0, 0.5, True),  # value 0.5 >= beta: fails high by itself
        (LOWER, -1.0, 0.6, False),  # a lower bound inside the window decides nothing
        (UPPER, 0.5, 1.0, True),  # value 0.5 <= alpha: fails low by itself
        (UPPER, 0.4, 1.0, False),
        (LOWER, 0.6, 1.0, False),  # a bound on the wrong side decides nothing either
        (UPPER, -1.0, 0.4, False),
    ],
)
def test_a_bound_cuts_only_when_it_decides_the_node(
    flag: int, alpha: float, beta: float, cutoff: bool
) -> None:
    table = TranspositionTable(8)
    table.store("k", 2, flag, 0.5, "m", False)
    result = table.lookup("k", 2, alpha, beta)
    index = hash("k") % table.size
    assert result == ((True, 0.5, False, "m", index) if cutoff else (False, 0.0, False, "m", index))


def test_lookup_without_an_entry_offers_nothing_but_the_slot() -> None:
    table = TranspositionTable(8)
    assert table.lookup(Key("a", 3), 1, -math.inf, math.inf) == (False, 0.0, False, None, 3)
    table.store(Key("b", 3), 1, EXACT, 1.0, "m", True)  # the same slot, another position
    assert table.lookup(Key("a", 3), 1, -math.inf, math.inf) == (False, 0.0, False, None, 3)


def test_store_at_the_slot_lookup_found_is_the_same_store() -> None:
    with_index, without = TranspositionTable(8), TranspositionTable(8)
    deep, shallow = Key("deep", 1), Key("shallow", 8)  # one slot of 7
    for table in (with_index, without):
        table.store(deep, 6, LOWER, 0.0, None, False)
    index = with_index.lookup(shallow, 2, -math.inf, math.inf)[4]
    assert index == 1
    assert not with_index.store(shallow, 2, UPPER, 0.0, None, False, index)
    assert not without.store(shallow, 2, UPPER, 0.0, None, False)
    assert with_index.store(shallow, 7, UPPER, 0.0, "m", True, index)
    assert without.store(shallow, 7, UPPER, 0.0, "m", True)
    assert with_index.slots == without.slots


def test_hints_offer_a_move_and_never_a_value() -> None:
    table = TranspositionTable(8)
    table.hint("k", "m")
    entry = table.probe("k")
    assert entry is not None and (entry.flag, entry.depth, entry.move) == (HINT, -1, "m")
    index = hash("k") % table.size
    for depth in (0, 1, 5):
        assert table.lookup("k", depth, -math.inf, math.inf) == (False, 0.0, False, "m", index)
    table.store("k", 3, EXACT, 1.0, "m", False)
    table.hint("k", "m")  # the entry already offers the move: its value stays
    assert table.lookup("k", 3, -math.inf, math.inf) == (True, 1.0, False, "m", index)
    table.hint("k", "other")  # any other move replaces it
    assert table.lookup("k", 3, -math.inf, math.inf) == (False, 0.0, False, "other", index)


class SpyTable(TranspositionTable):
    """Counts the calls of the table's rules and lets a test override one lookup's answer."""

    __slots__ = ("lookups", "planted", "stores")

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.lookups = self.stores = 0
        self.planted: dict[Any, Lookup] = {}

    def lookup(self, key: Any, depth: int, alpha: float, beta: float) -> Lookup:
        self.lookups += 1
        if key in self.planted:
            return self.planted[key]
        return super().lookup(key, depth, alpha, beta)

    def store(
        self,
        key: Any,
        depth: int,
        flag: int,
        value: float,
        move: Any,
        proven: bool,
        index: int | None = None,
    ) -> bool:
        self.stores += 1
        assert index is None or index == hash(key) % self.size
        return super().store(key, depth, flag, value, move, proven, index)


def test_the_search_runs_the_tables_rules_at_every_inner_node() -> None:
    game = games.get("connect4")
    state = game.initial_state()
    table = SpyTable(1 << 16)
    result = DeepeningSearch(game, table, 0).run(state, 5)
    assert result.last.value == alphabeta(game, state, 5).value
    # every inner node asks the table; each one it does not decide is searched and stored
    # (no position within 5 plies of the start is over)
    assert result.tt_hits > 0 and table.lookups > 100
    assert table.stores == table.lookups - result.tt_hits
    # what lookup answers is what the search does: a planted cutoff at a child of the root
    # becomes that child's value
    child = game.apply(state, 3)
    table = SpyTable(1 << 16)
    key = game.state_key(child)
    table.planted[key] = (True, 99.0, True, None, hash(key) % table.size)
    result = DeepeningSearch(game, table, 0).run(state, 3)
    assert (result.last.move, result.last.value) == (3, 99.0)


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
