"""Swiss pairing for two-player games, in the manner of the FIDE Dutch system (C.04.3).

Pure functions of the players' states (score, opponents met, seats taken, byes received): the
same field always gives the same round. The rules, in order of priority:

1. **Everyone plays.** All players are paired, except one bye when the field is odd.
2. **The bye** goes to a player who has had the fewest byes so far (never a second bye while
   someone has had fewer), and among those to the lowest one in the pairing order (lowest score,
   then worst initial rank), unless giving it to them forces more rematches on the rest than
   another eligible player would: then the lowest one who keeps rematches at their minimum.
3. **No rematches while avoidable.** The round has the fewest rematches (pairs that have met
   before) any pairing with that bye has: 0 whenever a pairing without rematches exists, however
   late the round. Among pairings with as many rematches, fewer meetings beyond a second one.
4. **Score groups.** Players are ordered by score (desc), then initial rank. Opponents' scores
   should differ as little as possible: the pairing minimises the sum over pairs of the squared
   score difference. Squared, so that one player floating across two score groups costs more
   than two players floating across one each, as the Dutch system floats one group at a time.
5. **Dutch order.** Among the pairings that rules 1-4 rank equal, the one nearest the Dutch
   order is taken, from the top down: the highest player still unpaired, the first of the
   unpaired members R of its score group (m = len(R), h = m // 2), prefers R[h] (the top of the
   lower half, "S1 vs S2": 1st vs (m/2+1)th ...), then R[h+1] ... R[m-1] (transpositions of
   S2), then R[h-1] ... R[1] (exchanges with S1, nearest the halves' boundary first), then
   players of lower groups, top first. An odd member floats down as the lowest of its group;
   a player who floated down meets the top of the next group. Rematches and larger score
   differences come after all of these, whatever their order. The pairing chosen is the first,
   in this order of preference for the top player, then the next unpaired, and so on, among
   those with the least cost of rules 3 and 4.

The cost is exact: rules 3 and 4 are one integer, ``rematches * M1 + extra meetings * M2 +
squared differences`` (each weight larger than the most the terms below it can add up to), and
the search below finds its minimum, breaking ties by rule 5.

**Colours** (who takes the first seat of the round's first game) never change who plays whom:

- the player with the lower colour difference (first seats minus second seats) takes the first
  seat;
- equal differences: colours alternate from the latest round in which the two had different
  seats (the one who had the second seat then takes the first now); usually the last round;
- equal histories (both new): the higher of the two in the pairing order takes the first seat
  on odd boards (1, 3, ...) and the second seat on even boards, as in the first Dutch round.

A colour difference beyond +-2 is not prevented (the Dutch system's absolute colour preferences
are left out, and colours have no say in the pairing): the rule only ever gives the first seat
to the one of a pair who has had it less, so a difference grows only when two players with the
same difference meet. In random 2-20 player tournaments, +-3 came up in about 0.3% of the
players' rounds, never more.

Boards are ordered by the higher score of the pair, then the pair's total, then the rank of
its higher player.

**The search** (``_Search``) is branch and bound over pairings, in three phases sharing a
budget of steps and a table of the least cost proven for each set of unpaired players:

1. greedy: the top unpaired player takes its first candidate in the order of rule 5 that keeps
   the rematches at their minimum. The minimum is exact: a maximum matching of the "not met
   yet" graph (Edmonds' blossom algorithm, repaired as pairs are made, usually by one edge)
   says how many rematches the unpaired players cannot avoid, so this never backtracks. When
   its cost equals the lower bound below, as it usually does, the round is this pairing;
2. a search for a cheaper pairing, branching first on the most constrained player (the one with
   the fewest players it has not met left in its own score group), so that a player stuck at
   the bottom raises the bound at once rather than after every arrangement of the groups above;
3. if one was found, the pairing is rebuilt from the top in the order of rule 5: each player
   takes its first candidate after which a completion at that least cost exists (a swap of
   partners in the completion known so far usually shows it; else a phase-2 search does).

The lower bound of a set of unpaired players: the fewest rematches times M1 (from the
matching); plus the least sum of squared score differences ignoring rematches, exact for
points on a line (neighbours in score order pair up: every gap between score groups with an
odd number of players above it is crossed by some pair); plus a share for each player left
with nobody it has not met in its group, a feasible dual of the pairing's linear relaxation on
what remains of the weights (see ``_lower_bound``).

Measured (random results, 2 CPUs): fields of up to 20 are proven optimal in at most about
1300 steps over 400 whole tournaments (the budget is 5000), in under 0.1 s per round. Larger
fields get fewer steps (about 2,000,000 / n**2): a round of 128 players takes 10-40 ms and is
proven optimal in most rounds; otherwise, as in late rounds of 30-40 players whose rematches
force many floats, the round is the best found (the Dutch greedy or better), with the rematches
still at their minimum. A proper weighted matching (blossom with duals) would be exact at any
size, but at O(n**3) in pure Python it takes far more than a round's time budget at 128 players,
and rule 5 is not a sum over pairs, so it would need this rebuilding pass anyway.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

from bot_arena.arena.tournament.schedule import ScheduleError

# Search steps per round: this / max(n, 20) ** 2. 5000 up to 20 players (a whole random Swiss of
# 20 was seen to need about 1300 at most); fewer as the field grows, as each step costs more, so
# a round of 128 players (122 steps) stays within about 50 ms.
_WORK_BUDGET = 2_000_000

FIRST_SEAT = 0
SECOND_SEAT = 1


@dataclass(frozen=True, slots=True)
class SwissPlayer:
    """One player's state before a round."""

    index: int  # position in the field (0-based); the initial ranking too unless ``rank`` says
    score: float  # points so far (win 1, draw 0.5; a bye scores 1: the caller adds it)
    opponents: tuple[int, ...]  # indices met so far (repeated if met twice), byes not included
    colours: tuple[int, ...]  # per round: 0 = first seat in its first game, 1 = second; no byes
    byes: int = 0  # byes received so far
    rank: int | None = None  # initial ranking (lower = stronger); default: index

    @property
    def initial_rank(self) -> int:
        return self.index if self.rank is None else self.rank


@dataclass(frozen=True, slots=True)
class SwissRound:
    """One round's pairing."""

    pairs: tuple[tuple[int, int], ...]  # (first seat, second seat) field indices, top board first
    bye: int | None  # the index that gets the bye, if the field is odd
    repeats: int  # pairs that are rematches (0 unless unavoidable)


def pair_round(players: Sequence[SwissPlayer]) -> SwissRound:
    """The next round of a Swiss tournament for this field (rules in the module docstring)."""
    return _pair(players, _WORK_BUDGET // max(len(players), 20) ** 2)[0]


def buchholz(players: Sequence[SwissPlayer]) -> dict[int, float]:
    """Each player's Buchholz score: the sum of its opponents' current scores, an opponent met
    twice counted twice. A bye adds nothing (no opponent), so a player is not lifted or pulled
    by the bye it was given."""
    scores = {p.index: p.score for p in players}
    if len(scores) != len(players):
        raise ScheduleError("two Swiss players share an index")
    out: dict[int, float] = {}
    for p in players:
        total = 0.0
        for o in p.opponents:
            if o not in scores:
                raise ScheduleError(f"player {p.index} met {o}, who is not in the field")
            total += scores[o]
        out[p.index] = total
    return out


def standings_order(players: Sequence[SwissPlayer]) -> list[int]:
    """Indices from first to last: by score, then Buchholz (a player who met stronger opponents
    ranks higher), then initial rank, then index (so the order is total)."""
    tie_break = buchholz(players)
    ordered = sorted(
        players, key=lambda p: (-p.score, -tie_break[p.index], p.initial_rank, p.index)
    )
    return [p.index for p in ordered]


# -- the field ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Field:
    """The players in pairing order ("positions": 0 = top), with what the search needs."""

    players: list[SwissPlayer]
    points: list[int]  # scores as integers (scaled by their common denominator)
    met: list[list[int]]  # times each pair of positions met
    group: list[int]  # score group of each position (0 = the highest score)
    bounds: list[tuple[int, int]]  # each group's positions: range(start, end)


def _field(players: Sequence[SwissPlayer]) -> _Field:
    if len(players) < 2:
        raise ScheduleError(f"a Swiss round needs at least 2 players, got {len(players)}")
    indices = [p.index for p in players]
    if len(set(indices)) != len(indices):
        raise ScheduleError("two Swiss players share an index")
    for p in players:
        if not math.isfinite(p.score):
            raise ScheduleError(f"player {p.index} has score {p.score}")
        if any(c not in (FIRST_SEAT, SECOND_SEAT) for c in p.colours):
            raise ScheduleError(f"player {p.index}: colours are 0 (first seat) or 1 (second)")
        if p.byes < 0:
            raise ScheduleError(f"player {p.index} has {p.byes} byes")
    ordered = sorted(players, key=lambda p: (-p.score, p.initial_rank, p.index))
    exact = [Fraction(p.score) for p in ordered]  # floats are exact dyadic fractions
    scale = math.lcm(*(f.denominator for f in exact))
    points = [int(f * scale) for f in exact]
    where = {p.index: pos for pos, p in enumerate(ordered)}
    n = len(ordered)
    met = [[0] * n for _ in range(n)]
    for pos, p in enumerate(ordered):
        counts: dict[int, int] = {}
        for o in p.opponents:
            if o in where:  # an opponent who left the field cannot be met again
                counts[o] = counts.get(o, 0) + 1
        for o, times in counts.items():
            other = where[o]
            if other != pos:  # records disagreeing: trust the larger count
                met[pos][other] = max(met[pos][other], times)
                met[other][pos] = max(met[other][pos], times)
    group: list[int] = []
    bounds: list[tuple[int, int]] = []
    for pos in range(n):
        if pos == 0 or points[pos] != points[pos - 1]:
            bounds.append((pos, pos))
        start, _ = bounds[-1]
        bounds[-1] = (start, pos + 1)
        group.append(len(bounds) - 1)
    return _Field(ordered, points, met, group, bounds)


def _pair(players: Sequence[SwissPlayer], budget: int) -> tuple[SwissRound, bool]:
    """The round, and whether the search proved it optimal (False: stopped by the budget)."""
    field = _field(players)
    n = len(field.players)
    allowed = _not_met(field)
    bye, alive, mate, fewest = _choose_bye(field, allowed)
    search = _Search(field, allowed, alive, fewest, budget)
    positions = sorted(search.run(mate), key=lambda ab: _board_key(field, ab))
    pairs: list[tuple[int, int]] = []
    for board, (a, b) in enumerate(positions, start=1):
        first, second = _seats(field.players[a], field.players[b], board)
        pairs.append((first.index, second.index))
    repeats = sum(1 for a, b in positions if field.met[a][b])
    bye_index = None if bye is None else field.players[bye].index
    assert 2 * len(pairs) + (bye is not None) == n
    return SwissRound(tuple(pairs), bye_index, repeats), not search.exhausted


def _board_key(field: _Field, pair: tuple[int, int]) -> tuple[int, int, int]:
    a, b = pair  # a < b: a is the higher in the pairing order
    return (-field.points[a], -(field.points[a] + field.points[b]), a)


def _seats(high: SwissPlayer, low: SwissPlayer, board: int) -> tuple[SwissPlayer, SwissPlayer]:
    """(first seat, second seat) for a pair; ``high`` is the higher in the pairing order."""
    diff_high = _colour_difference(high)
    diff_low = _colour_difference(low)
    if diff_high != diff_low:
        return (high, low) if diff_high < diff_low else (low, high)
    for c_high, c_low in zip(reversed(high.colours), reversed(low.colours), strict=False):
        if c_high != c_low:  # the latest round they differed: alternate from it
            return (high, low) if c_high == SECOND_SEAT else (low, high)
    return (high, low) if board % 2 == 1 else (low, high)


def _colour_difference(p: SwissPlayer) -> int:
    return p.colours.count(FIRST_SEAT) - p.colours.count(SECOND_SEAT)


# -- the bye -----------------------------------------------------------------------------------


def _choose_bye(
    field: _Field, allowed: list[list[bool]]
) -> tuple[int | None, list[int], list[int], int]:
    """The bye's position (None for an even field), the positions to pair, a maximum matching
    of them in the not-met graph (``mate``, -1 = unmatched) and the fewest rematches they need."""
    n = len(field.players)
    if n % 2 == 0:
        alive = list(range(n))
        mate = [-1] * (n + 1)
        size = _maximum_matching(alive, allowed, mate)
        return None, alive, mate, n // 2 - size
    # A bye vertex (n) joined to every eligible player: a maximum matching that covers it (one
    # exists when it has a neighbour) gives the fewest rematches over every eligible bye.
    fewest_byes = min(p.byes for p in field.players)
    eligible = [pos for pos in range(n) if field.players[pos].byes == fewest_byes]
    for pos in eligible:
        allowed[n][pos] = allowed[pos][n] = True
    everyone = [*range(n), n]
    with_bye = [-1] * (n + 1)
    least = (n + 1) // 2 - _maximum_matching(everyone, allowed, with_bye)
    for candidate in reversed(eligible):  # the lowest in the pairing order first
        alive = [pos for pos in range(n) if pos != candidate]
        mate = list(with_bye)
        for v in (candidate, n):
            if mate[v] != -1:
                mate[mate[v]] = -1
                mate[v] = -1
        size = _maximum_matching(alive, allowed, mate)
        if (n - 1) // 2 - size == least:
            for pos in eligible:  # the bye vertex is done with
                allowed[n][pos] = allowed[pos][n] = False
            return candidate, alive, mate, least
    raise AssertionError("some eligible bye leaves the fewest rematches")  # pragma: no cover


def _not_met(field: _Field) -> list[list[bool]]:
    """Which positions may meet without a rematch; one more row and column (n) for a bye."""
    n = len(field.players)
    rows = [[a != b and field.met[a][b] == 0 for b in range(n)] + [False] for a in range(n)]
    return [*rows, [False] * (n + 1)]


# -- maximum matching in the not-met graph (Edmonds) --------------------------------------------


def _maximum_matching(alive: Sequence[int], allowed: list[list[bool]], mate: list[int]) -> int:
    """Grow ``mate`` (a matching among ``alive``) into a maximum one; return its size.

    One pass over the unmatched vertices is enough: a vertex with no augmenting path never gets
    one from later augmentations."""
    for i, v in enumerate(alive):  # greedy start: neighbours in pairing order
        if mate[v] == -1:
            row = allowed[v]
            for w in alive[i + 1 :]:
                if mate[w] == -1 and row[w]:
                    mate[v], mate[w] = w, v
                    break
    for v in alive:
        if mate[v] == -1:
            _augment(v, alive, allowed, mate)
    return sum(1 for v in alive if mate[v] != -1) // 2


def _augment(root: int, alive: Sequence[int], allowed: list[list[bool]], mate: list[int]) -> bool:
    """Search for an augmenting path from the unmatched ``root`` (breadth first, contracting odd
    cycles into their base); flip it into ``mate`` and return True if there is one."""
    size = len(mate)
    parent = [-1] * size  # the outer vertex an inner vertex was reached from
    base = list(range(size))  # the base of the contracted blossom holding each vertex
    outer = [False] * size
    outer[root] = True
    queue = [root]
    head = 0
    while head < len(queue):
        v = queue[head]
        head += 1
        row = allowed[v]
        for w in alive:
            if not row[w] or base[v] == base[w] or mate[v] == w:
                continue
            if w == root or (mate[w] != -1 and parent[mate[w]] != -1):
                # v and w are both outer: an odd cycle; contract it onto its base
                top = _cycle_base(v, w, base, parent, mate)
                in_cycle = [False] * size
                _mark_cycle(v, top, w, base, parent, mate, in_cycle)
                _mark_cycle(w, top, v, base, parent, mate, in_cycle)
                for u in alive:
                    if in_cycle[base[u]]:
                        base[u] = top
                        if not outer[u]:
                            outer[u] = True
                            queue.append(u)
            elif parent[w] == -1:
                parent[w] = v
                if mate[w] == -1:  # an unmatched vertex: flip the path back to the root
                    while w != -1:
                        back = parent[w]
                        after = mate[back]
                        mate[w], mate[back] = back, w
                        w = after
                    return True
                outer[mate[w]] = True
                queue.append(mate[w])
    return False


def _cycle_base(a: int, b: int, base: list[int], parent: list[int], mate: list[int]) -> int:
    """The nearest common base of outer vertices a and b in the search tree."""
    seen = [False] * len(mate)
    while True:
        a = base[a]
        seen[a] = True
        if mate[a] == -1:  # the root
            break
        a = parent[mate[a]]
    while True:
        b = base[b]
        if seen[b]:
            return b
        b = parent[mate[b]]


def _mark_cycle(
    v: int,
    top: int,
    child: int,
    base: list[int],
    parent: list[int],
    mate: list[int],
    in_cycle: list[bool],
) -> None:
    """Walk from v up to the cycle's base, marking blossoms and pointing inner vertices back."""
    while base[v] != top:
        in_cycle[base[v]] = True
        in_cycle[base[mate[v]]] = True
        parent[v] = child
        child = mate[v]
        v = parent[mate[v]]


# -- the search --------------------------------------------------------------------------------


class _Search:
    """The pairing of ``alive`` that rules 3-5 of the module docstring ask for.

    Three phases share a budget of search steps and a table of proven bounds:

    1. greedy: the top unpaired player takes its first candidate in Dutch order that keeps the
       round's rematches at their minimum (checked exactly, so this never backtracks);
    2. branch and bound for a cheaper pairing, branching on the most constrained player first
       (fewest partners it has not met left in its score group), so a player stuck at the bottom
       raises the bounds at once instead of after every arrangement of the groups above;
    3. only if phase 2 found a cheaper pairing: rebuild it top-down in Dutch order, each
       player taking its first candidate after which a completion at the optimal cost exists
       (a phase-2 search with that cost as its limit answers).
    """

    def __init__(
        self,
        field: _Field,
        allowed: list[list[bool]],
        alive: list[int],
        fewest: int,
        budget: int,
    ) -> None:
        n = len(field.players)
        self.field = field
        self.alive = alive
        self.fewest = fewest  # rematches the round cannot avoid
        self.allowed = allowed  # pairs not met yet
        spread = max(field.points) - min(field.points)
        most_met = max(max(row) for row in field.met)
        pairs = len(alive) // 2
        self.extra_weight = pairs * spread * spread + 1
        self.rematch_weight = self.extra_weight * (pairs * most_met + 1)
        self.weight = self._weights()
        self.budget = budget
        self.nodes = 0
        self.exhausted = False
        self.proven: dict[int, int] = {}  # unpaired set -> a lower bound on its completion cost
        self.counts = [0] * len(field.bounds)  # unpaired players per score group
        in_play = [False] * n
        for pos in alive:
            in_play[pos] = True
            self.counts[field.group[pos]] += 1
        # the players of its own group a player has not met, and how many are unpaired
        self.group_mates: list[list[int]] = []
        for pos in range(n):
            start, end = field.bounds[field.group[pos]]
            row = allowed[pos]
            self.group_mates.append([x for x in range(start, end) if row[x] and in_play[x]])
        self.options = [len(mates) for mates in self.group_mates]
        # the branch and bound's state: solutions must cost less than ``limit``
        self.limit = 0
        self.found: list[tuple[int, int]] | None = None
        self.first_only = False
        self.stop = False

    def _weights(self) -> list[list[int]]:
        """Each pair's weight: rematch, extra meetings, squared score difference."""
        points = self.field.points
        by_score: dict[int, list[int]] = {}
        out = []
        for a, met in enumerate(self.field.met):
            mine = points[a]
            if mine not in by_score:
                by_score[mine] = [(mine - p) * (mine - p) for p in points]
            row = list(by_score[mine])
            for b, times in enumerate(met):
                if times:
                    row[b] += self.rematch_weight + (times - 1) * self.extra_weight
            out.append(row)
        return out

    def cost(self, pairs: Sequence[tuple[int, int]]) -> int:
        return sum(self.weight[a][b] for a, b in pairs)

    def run(self, mate: list[int]) -> list[tuple[int, int]]:
        """The pairs (positions, higher first) of the round."""
        unpaired = 0
        for pos in self.alive:
            unpaired |= 1 << pos
        size = sum(1 for v in self.alive if mate[v] != -1) // 2
        greedy = self._greedy(unpaired, mate, size)
        best = self.cost(greedy)
        if best == self._lower_bound(unpaired, self.fewest):
            return greedy  # the bound proves it: the usual case
        self.limit = best
        self.found = None
        self._bound(unpaired, 0, self.fewest, mate, size, [])
        if self.found is None or self.exhausted:
            return greedy if self.found is None else self.found
        cheaper = self.found
        dutch = self._dutch(unpaired, mate, size, cheaper)
        return cheaper if dutch is None else dutch

    # -- phases 1 and 3: top-down in Dutch order

    def _greedy(self, unpaired: int, mate: list[int], size: int) -> list[tuple[int, int]]:
        pairs: list[tuple[int, int]] = []
        made = 0
        while unpaired:
            top = (unpaired & -unpaired).bit_length() - 1
            for other in self._preference(unpaired, top):
                rest = unpaired & ~(1 << top) & ~(1 << other)
                rest_mate, rest_size = self._without(rest, mate, size, top, other)
                rematch = not self.allowed[top][other]
                if made + rematch + rest.bit_count() // 2 - rest_size <= self.fewest:
                    break
            else:  # pragma: no cover - the matching proves some candidate keeps the minimum
                raise AssertionError("no candidate keeps the fewest rematches")
            made += rematch
            pairs.append((top, other))
            unpaired, mate, size = rest, rest_mate, rest_size
        return pairs

    def _dutch(
        self, unpaired: int, mate: list[int], size: int, cheapest: list[tuple[int, int]]
    ) -> list[tuple[int, int]] | None:
        """The first pairing in Dutch order that costs as little as ``cheapest`` (the least
        cost), or None if the budget runs out first."""
        target = self.cost(cheapest)
        pairs: list[tuple[int, int]] = []
        spent = 0
        witness: dict[int, int] = {}  # partners in a completion known to reach the target
        for a, b in cheapest:
            witness[a], witness[b] = b, a
        weight = self.weight
        while unpaired:
            top = (unpaired & -unpaired).bit_length() - 1
            for other in self._preference(unpaired, top):
                after = spent + weight[top][other]
                if after > target:
                    continue
                rest = unpaired & ~(1 << top) & ~(1 << other)
                rest_mate, rest_size = self._without(rest, mate, size, top, other)
                if witness[top] == other or self._repair(witness, top, other, rest):
                    break
                self._take(top, other)
                self.limit = target - after + 1
                self.found = None
                self.first_only = True
                need = rest.bit_count() // 2 - rest_size
                self._bound(rest, 0, need, rest_mate, rest_size, [])
                self.first_only = self.stop = False
                self._give_back(top, other)
                if self.exhausted:
                    self._give_back_all(pairs)
                    return None
                if self.found is not None:
                    witness = {top: other, other: top}
                    for a, b in self.found:
                        witness[a], witness[b] = b, a
                    break
            else:  # pragma: no cover - the target was reached from here
                raise AssertionError("no candidate reaches the least cost")
            self._take(top, other)
            pairs.append((top, other))
            spent = after
            unpaired, mate, size = rest, rest_mate, rest_size
        self._give_back_all(pairs)
        return pairs

    def _repair(self, witness: dict[int, int], top: int, other: int, rest: int) -> bool:
        """Rearrange the witness (a completion at the least cost) so that ``top`` meets
        ``other`` at no extra cost, if swapping partners among two or three of its pairs does
        it; True if so. Cheaper than a search, and it usually does."""
        weight = self.weight
        was, left = witness[top], witness[other]
        before = weight[top][was] + weight[other][left]
        now = weight[top][other]
        if now + weight[was][left] <= before:
            witness[top], witness[other], witness[was], witness[left] = other, top, left, was
            return True
        for c in self.alive:
            d = witness.get(c, -1)
            if not (rest >> c & 1) or c > d or c in (was, left):
                continue
            room = before + weight[c][d] - now
            for x, y in ((c, d), (d, c)):
                if weight[was][x] + weight[left][y] <= room:
                    witness[top], witness[other] = other, top
                    witness[was], witness[x] = x, was
                    witness[left], witness[y] = y, left
                    return True
        return False

    def _preference(self, unpaired: int, top: int) -> Iterator[int]:
        """The candidates for ``top`` (the highest unpaired player), by weight (rematches, extra
        meetings, score difference), then in the order of rule 5. Lazily: the members of its
        own group it has not met (weight 0) come first, and usually one of them is taken."""
        start, end = self.field.bounds[self.field.group[top]]
        own = [x for x in range(start, end) if unpaired >> x & 1]
        half = len(own) // 2
        # S2 from its top, then S1 from its bottom (own[0] is top itself)
        dutch = own[half:] + own[half - 1 : 0 : -1] if half else own[1:]
        row = self.weight[top]
        free = [x for x in dutch if row[x] == 0]
        yield from free
        rank = {x: k for k, x in enumerate(dutch)}
        late = len(dutch)
        others = [x for x in self.alive if x != top and unpaired >> x & 1 and row[x]]
        yield from sorted(others, key=lambda x: (row[x], rank.get(x, late + x)))

    # -- phase 2: branch and bound

    def _bound(
        self,
        unpaired: int,
        cost: int,
        need: int,
        mate: list[int],
        size: int,
        pairs: list[tuple[int, int]],
    ) -> None:
        """Search completions of ``unpaired`` (``need``: the rematches it cannot avoid) that cost
        less than ``limit``; each one found lowers the limit (or stops, if ``first_only``)."""
        if unpaired == 0:
            self.limit = cost
            self.found = list(pairs)
            self.stop = self.first_only
            return
        self.nodes += 1
        if self.nodes > self.budget:
            self.exhausted = self.stop = True
            return
        floor = self._lower_bound(unpaired, need)
        if floor > self.proven.get(unpaired, 0):
            self.proven[unpaired] = floor
        if cost + floor >= self.limit:
            return
        v = self._most_constrained(unpaired)
        row = self.weight[v]
        group = self.field.group
        candidates = [x for x in self.alive if x != v and unpaired >> x & 1]
        candidates.sort(key=lambda x: (row[x], abs(x - v)))
        bound_for: dict[int, int] = {}  # the line bound after pairing v with a member of g
        for other in candidates:
            if self.stop:
                return
            after = cost + row[other]
            if after >= self.limit:
                break  # candidates come in order of weight
            rest = unpaired & ~(1 << v) & ~(1 << other)
            g = group[other]
            if g not in bound_for:
                self.counts[group[v]] -= 1
                self.counts[g] -= 1
                bound_for[g] = self._line_bound()
                self.counts[group[v]] += 1
                self.counts[g] += 1
            rematch = not self.allowed[v][other]
            cheap = after + max(0, need - rematch) * self.rematch_weight + bound_for[g]
            if max(cheap, after + self.proven.get(rest, 0)) >= self.limit:
                continue
            rest_mate, rest_size = self._without(rest, mate, size, v, other)
            rest_need = rest.bit_count() // 2 - rest_size
            if after + rest_need * self.rematch_weight + bound_for[g] >= self.limit:
                continue
            self._take(v, other)
            pairs.append((min(v, other), max(v, other)))
            self._bound(rest, after, rest_need, rest_mate, rest_size, pairs)
            pairs.pop()
            self._give_back(v, other)
            if not self.stop:  # the whole subtree was searched: nothing below the limit
                self.proven[rest] = max(self.proven.get(rest, 0), self.limit - after)

    def _most_constrained(self, unpaired: int) -> int:
        """The unpaired player with the fewest unpaired, not yet met members of its own score
        group left (the highest of them on ties)."""
        best = -1
        fewest = 0
        rest = unpaired
        while rest:
            low = rest & -rest
            pos = low.bit_length() - 1
            rest ^= low
            if best == -1 or self.options[pos] < fewest:
                best, fewest = pos, self.options[pos]
                if fewest == 0:
                    break
        return best

    def _lower_bound(self, unpaired: int, need: int) -> int:
        """A lower bound on the cost of pairing ``unpaired``, stronger than the line bound: the
        line bound plus a dual solution of the pairing's linear relaxation on what is left of
        the weights once the line bound's share is taken off each pair.

        The line bound charges d * d for every gap between neighbouring score groups with an
        odd number of players above it (some pair must cross it); a pair crossing gaps of
        widths d1, d2, ... weighs at least d1 * d1 + d2 * d2 + ..., so its reduced weight is
        never negative. On the reduced weights any y with y[u] + y[v] <= weight(u, v) for all
        u, v bounds the rest (each pair pays at least its ends' y): y is built greedily, most
        constrained player first (each takes the most its cheapest pair and the players
        already given a share allow). This sees a player stuck far from any partner it has not
        met, which the line bound cannot. With rematches unavoidable (``need`` > 0) their
        weight is taken off too and counted as ``need`` rematches instead."""
        field = self.field
        points = field.points
        group = field.group
        bounds = field.bounds
        shared = [0] * len(self.counts)  # line charges of the odd gaps above each group
        line = 0
        above = 0
        last = -1
        for g, count in enumerate(self.counts):
            if count == 0:
                shared[g] = line
                continue
            if above % 2 and last >= 0:
                line += (points[bounds[last][0]] - points[bounds[g][0]]) ** 2
            shared[g] = line
            above += count
            last = g
        base = need * self.rematch_weight + line
        # A player with a partner it has not met left in its own group has a pair of reduced
        # weight 0, so no share: only the stuck ones are looked at.
        stuck = [x for x in self.alive if unpaired >> x & 1 and self.options[x] == 0]
        if not stuck:
            return base
        weight = self.weight
        off = self.rematch_weight if need else 0

        def reduced(v: int, u: int) -> int:
            w = weight[v][u] - abs(shared[group[v]] - shared[group[u]])
            return w if self.allowed[v][u] else w - off

        ranked: list[tuple[int, int]] = []
        present = [g for g, count in enumerate(self.counts) if count]
        others = [] if not need else [u for u in self.alive if unpaired >> u & 1]
        for v in stuck:
            if need:  # rematches, their weight taken off, may be the cheapest: look at all
                cheapest = min(reduced(v, u) for u in others if u != v)
            else:
                cheapest = self._cheapest(v, unpaired, present, shared)
            ranked.append((-cheapest, v))
        ranked.sort()
        given: list[tuple[int, int]] = []  # (player, share) of those given a share
        total = 0
        for negative, v in ranked:
            share = -negative
            for other, other_share in given:
                room = reduced(v, other) - other_share
                if room < share:
                    share = room
            if share > 0:
                given.append((v, share))
                total += share
        return base + total

    def _cheapest(self, v: int, unpaired: int, present: list[int], shared: list[int]) -> int:
        """The least reduced weight of a pair of v (stuck: no unpaired player of its group it
        has not met) with a player it has not met, when rematches are avoidable: such pairs
        weigh the same across a score group, so groups are tried from the cheapest."""
        field = self.field
        own = field.group[v]
        points = field.points[v]
        above = shared[own]
        row = self.allowed[v]
        costs = sorted(
            ((field.points[field.bounds[g][0]] - points) ** 2 - abs(shared[g] - above), g)
            for g in present
            if g != own
        )
        for value, g in costs:
            start, end = field.bounds[g]
            if any(row[u] and unpaired >> u & 1 for u in range(start, end)):
                return value
        raise AssertionError("an unpaired player has nobody it has not met")  # pragma: no cover

    def _line_bound(self) -> int:
        """The least sum of squared score differences of the unpaired players, rematches
        ignored: neighbours in score order pair up, one player of an odd group floats down."""
        total = 0
        carry: int | None = None
        points = self.field.points
        for g, count in enumerate(self.counts):
            if count == 0:
                continue
            here = points[self.field.bounds[g][0]]
            if carry is not None:
                total += (carry - here) ** 2
                count -= 1
            carry = here if count % 2 else None
        return total

    # -- the state shared by the phases

    def _take(self, a: int, b: int) -> None:
        self._mark_paired(a, b, -1)

    def _give_back(self, a: int, b: int) -> None:
        self._mark_paired(a, b, 1)

    def _give_back_all(self, pairs: Sequence[tuple[int, int]]) -> None:
        for a, b in reversed(pairs):
            self._give_back(a, b)

    def _mark_paired(self, a: int, b: int, step: int) -> None:
        """Pair (step -1) or unpair (+1) a and b: the group counts and the options of the
        players of their groups who have not met them."""
        group = self.field.group
        options = self.options
        for v in (a, b):
            self.counts[group[v]] += step
            for x in self.group_mates[v]:
                options[x] += step

    def _without(
        self, rest: int, mate: list[int], size: int, a: int, b: int
    ) -> tuple[list[int], int]:
        """A maximum not-met matching of ``rest`` = the unpaired players less a and b, repaired
        from ``mate`` (maximum for the players before): only paths from the partners a and b
        leave behind can augment it, so usually one edge or one short search repairs it."""
        out = list(mate)
        if out[a] == b:
            out[a] = out[b] = -1
            return out, size - 1
        loose: list[int] = []
        for v in (a, b):
            w = out[v]
            if w != -1:
                out[w] = out[v] = -1
                size -= 1
                loose.append(w)
        most = size + len(loose) - self.allowed[a][b]  # nobody gains from losing a and b
        if size >= most:
            return out, size
        if len(loose) == 2 and self.allowed[loose[0]][loose[1]]:
            out[loose[0]], out[loose[1]] = loose[1], loose[0]
            return out, size + 1
        alive = [x for x in self.alive if rest >> x & 1]
        for v in [*loose, *alive]:  # partners first; then the rest of the one pass
            if size >= most:
                break
            if out[v] == -1 and _augment(v, alive, self.allowed, out):
                size += 1
        return out, size
