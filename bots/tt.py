"""A bounded transposition table for alpha-beta searches, and its rules.

The table is a plain list of slots; a position's slot is ``hash(key) % slots``, so memory never
grows past the configured number of entries however long the search runs. The slot count is the
largest prime not above the configured size: Python hashes an int to itself, and bitboard keys
differ mostly in their high bits, so a power-of-two modulus would crowd them into a few slots.
Each slot holds ``None`` or one entry, a plain tuple laid out as :class:`Entry`::

    (key, depth, flag, value, move, proven, generation)

- ``key``: ``game.state_key(state)``; a probe must compare it, slots are shared.
- ``depth``: the remaining depth the value was searched to.
- ``flag``: ``EXACT`` (the minimax value at that depth), ``LOWER`` (value is a lower bound, the
  search failed high), ``UPPER`` (an upper bound, it failed low) or ``HINT`` (no value, only a
  best move to try first).
- ``proven``: no horizon evaluation was used below this node, so the value holds for *every*
  depth >= ``depth`` (the same search at a greater depth would visit the very same nodes).
- ``generation``: which search stored it; entries of older searches are replaced first.

Every rule about entries lives in one method, and the searches call these very methods:

- **Use** (:meth:`TranspositionTable.lookup`): an entry's value stands for a search of ``depth``
  remaining plies only when it was searched to exactly that depth, or is proven and was searched
  no deeper (a deeper unproven entry would be a *better* value, but not the fixed-depth minimax
  value the search promises); and then only when it decides the node by itself: an exact value,
  a lower bound at or above ``beta``, an upper bound at or below ``alpha``.
- **Replacement** (:meth:`TranspositionTable.store`): a store into an occupied slot replaces the
  entry if it is for the same position, was stored by an older search, or was searched no deeper
  than the new one (depth-preferred with aging).
- **Hints** (:meth:`TranspositionTable.hint`): a principal-variation move always gets its slot.

Slots hold plain tuples, not :class:`Entry` objects: a named tuple costs several times as much to
make, and the search stores one entry per inner node. The methods unpack them into named locals
instead; :meth:`TranspositionTable.probe` hands out the named view.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final, NamedTuple

EXACT: Final = 0
LOWER: Final = 1
UPPER: Final = 2
HINT: Final = 3

DEFAULT_SIZE = 1 << 18


class Entry(NamedTuple):
    """One slot's contents, named (see the module docstring for each field)."""

    key: Hashable
    depth: int
    flag: int
    value: float
    move: Any
    proven: bool
    generation: int


#: What a slot holds: an :class:`Entry` as a plain tuple.
Slot = tuple[Hashable, int, int, float, Any, bool, int]

#: What :meth:`TranspositionTable.lookup` returns: ``(cutoff, value, proven, move, index)``.
Lookup = tuple[bool, float, bool, Any, int]


class TranspositionTable:
    """A fixed number of slots (at most the configured ``size``); see the module docstring."""

    __slots__ = ("generation", "size", "slots")

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        if size < 1:
            raise ValueError(f"tt_size must be >= 1, not {size}")
        self.size = largest_prime_at_most(size)
        self.slots: list[Slot | None] = [None] * self.size
        self.generation = 0

    def new_search(self) -> None:
        """Mark later stores as newer than everything stored so far."""
        self.generation += 1

    def clear(self) -> None:
        self.slots = [None] * self.size
        self.generation = 0

    def probe(self, key: Hashable) -> Entry | None:
        """The entry for ``key``, if its slot holds one."""
        slot = self.slots[hash(key) % self.size]
        if slot is not None and slot[0] == key:
            return Entry._make(slot)
        return None

    def lookup(self, key: Hashable, depth: int, alpha: float, beta: float) -> Lookup:
        """What a node searching ``depth`` remaining plies in the window ``(alpha, beta)`` learns
        from the table, as ``(cutoff, value, proven, move, index)``.

        ``cutoff`` is true when the entry decides the node (see the module docstring): the node
        returns ``value``, which is ``proven`` or else rests on horizon evaluations. Otherwise
        ``value`` means nothing and ``move`` is the entry's best move to try first (``None``
        without an entry). ``index`` is ``key``'s slot, for the node's :meth:`store`. The search
        calls this at every inner node.
        """
        index = hash(key) % self.size
        slot = self.slots[index]
        if slot is None or slot[0] != key:
            return False, 0.0, False, None, index
        # indexing beats unpacking all seven fields here: this runs at every inner node
        stored_depth = slot[1]
        proven = slot[5]
        if stored_depth == depth or (proven and 0 <= stored_depth <= depth):
            flag = slot[2]
            value = slot[3]
            if (
                flag == EXACT
                or (flag == LOWER and value >= beta)
                or (flag == UPPER and value <= alpha)
            ):
                return True, value, proven, slot[4], index
        return False, 0.0, False, slot[4], index

    def store(
        self,
        key: Hashable,
        depth: int,
        flag: int,
        value: float,
        move: Any,
        proven: bool,
        index: int | None = None,
    ) -> bool:
        """Store an entry unless the slot holds a deeper one of this search; True if stored.

        ``index`` is ``key``'s slot as :meth:`lookup` returned it (computed when not given)."""
        if index is None:
            index = hash(key) % self.size
        slots = self.slots
        old = slots[index]
        generation = self.generation
        if old is None or old[0] == key or old[6] != generation or old[1] <= depth:
            slots[index] = (key, depth, flag, value, move, proven, generation)
            return True
        return False

    def hint(self, key: Hashable, move: Any) -> None:
        """Make ``key``'s slot offer ``move`` first: kept if its entry already does, else
        replaced by a ``HINT`` entry whatever it held (a hint decides no node by itself)."""
        index = hash(key) % self.size
        old = self.slots[index]
        if old is not None:
            old_key, _, _, _, old_move, _, _ = old
            if old_key == key and old_move == move:
                return
        self.slots[index] = (key, -1, HINT, 0.0, move, False, self.generation)

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
