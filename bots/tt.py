"""A bounded transposition table for alpha-beta searches.

The table is a plain list of slots; a position's slot is ``hash(key) % slots``, so memory never
grows past the configured number of entries however long the search runs. The slot count is the
largest prime not above the configured size: Python hashes an int to itself, and bitboard keys
differ mostly in their high bits, so a power-of-two modulus would crowd them into a few slots.
Each slot holds ``None`` or one entry tuple (see the ``E_*`` indices)::

    (key, depth, flag, value, move, proven, generation)

- ``key``: ``game.state_key(state)``; a probe must compare it, slots are shared.
- ``depth``: the remaining depth the value was searched to.
- ``flag``: ``EXACT`` (the minimax value at that depth), ``LOWER`` (value is a lower bound, the
  search failed high), ``UPPER`` (an upper bound, it failed low) or ``HINT`` (no value, only a
  best move to try first).
- ``proven``: no horizon evaluation was used below this node, so the value holds for *every*
  depth >= ``depth`` (the same search at a greater depth would visit the very same nodes).
- ``generation``: which search stored it; entries of older searches are replaced first.

Replacement: a store into an occupied slot replaces the entry if it is for the same position, was
stored by an older search, or was searched no deeper than the new one (depth-preferred with aging).

Search loops read ``table.slots`` and ``table.size`` directly (a method call per node costs more
than the rest of a probe); ``probe``/``store`` are the readable versions for everything else.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final

EXACT = 0
LOWER = 1
UPPER = 2
HINT = 3

E_KEY: Final = 0
E_DEPTH: Final = 1
E_FLAG: Final = 2
E_VALUE: Final = 3
E_MOVE: Final = 4
E_PROVEN: Final = 5
E_GEN: Final = 6

Entry = tuple[Hashable, int, int, float, Any, bool, int]

DEFAULT_SIZE = 1 << 18


class TranspositionTable:
    """A fixed number of slots (at most the configured ``size``); see the module docstring."""

    __slots__ = ("generation", "size", "slots")

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        if size < 1:
            raise ValueError(f"tt_size must be >= 1, not {size}")
        self.size = largest_prime_at_most(size)
        self.slots: list[Entry | None] = [None] * self.size
        self.generation = 0

    def new_search(self) -> None:
        """Mark later stores as newer than everything stored so far."""
        self.generation += 1

    def clear(self) -> None:
        self.slots = [None] * self.size
        self.generation = 0

    def probe(self, key: Hashable) -> Entry | None:
        entry = self.slots[hash(key) % self.size]
        if entry is not None and entry[0] == key:
            return entry
        return None

    def store(
        self, key: Hashable, depth: int, flag: int, value: float, move: Any, proven: bool
    ) -> bool:
        """Store an entry unless the slot holds a deeper one of this search; True if stored."""
        index = hash(key) % self.size
        old = self.slots[index]
        if old is None or old[0] == key or old[E_GEN] != self.generation or old[E_DEPTH] <= depth:
            self.slots[index] = (key, depth, flag, value, move, proven, self.generation)
            return True
        return False

    def __len__(self) -> int:
        """Entries in use (never more than ``size``)."""
        return sum(1 for entry in self.slots if entry is not None)


def largest_prime_at_most(n: int) -> int:
    """The largest prime <= ``n`` (``n`` itself for 1, 2 and 3)."""
    if n <= 3:
        return n
    candidate = n if n % 2 else n - 1
    while candidate > 3:
        if all(candidate % d for d in range(3, int(candidate**0.5) + 1, 2)):
            return candidate
        candidate -= 2
    return 3


def usable(entry: Entry, depth: int) -> bool:
    """Whether an entry's value may stand for a search of ``depth`` remaining plies.

    Exactly the same depth, or a proven entry searched no deeper than asked. (A deeper unproven
    entry would be a *better* value, but not the fixed-depth minimax value this search promises.)
    """
    stored = entry[E_DEPTH]
    return stored == depth or (entry[E_PROVEN] and 0 <= stored <= depth)
