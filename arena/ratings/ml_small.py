"""The maximum-likelihood fit of ``ml.py`` for a small field of two-player pair totals, in pure
Python: what ``arena leaderboard`` rates most of the time, without loading numpy (about as much
CPU as the rest of the command).

The same model, the same Newton iteration (dense solve with each pool's gauge, step halving,
the same stopping rule), the same robust sandwich intervals and the same table: the numbers
agree with ``fit_ml`` to rounding (tests/arena/test_ratings_small.py checks 1e-9). It covers
only what it can do exactly that way: results given as ``PairTotal`` rows (no multi-seat
matches), at most ``SMALL_LIMIT`` bots, and every pool strongly connected (a pool that needs the
ghost's prior goes to ``fit_ml``). ``fit_small`` answers None for anything else.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from bot_arena.arena.ratings.elo import ELO_PER_NAT
from bot_arena.arena.ratings.ml_common import (
    DESCRIPTION,
    NOTE_MODEL_ERR,
    Z95,
    los,
    rank_key,
    table_notes,
)
from bot_arena.arena.ratings.outcomes import BotStats, RatingInputError
from bot_arena.arena.ratings.table import BotRating, Pool, RatingTable
from bot_arena.arena.ratings.totals import PairTotal

#: Up to this many bots a leaderboard of pair totals is fitted here (a dense k x k solve per
#: Newton step costs k^3 / 3 Python multiplications: 64 bots, about 90,000).
SMALL_LIMIT = 64

Matrix = list[list[float]]


class _Pair:
    """One unordered pair (i < j): games n, i's points s, the sum of i's squared scores q."""

    __slots__ = ("i", "j", "n", "q", "s")

    def __init__(self, i: int, j: int) -> None:
        self.i, self.j = i, j
        self.n = self.s = self.q = 0.0


def fit_small(
    totals: Sequence[PairTotal],
    *,
    center: float = 1500.0,
    anchor: tuple[str, float] | None = None,
) -> RatingTable | None:
    """``fit_ml((), totals=totals, center=center, anchor=anchor)`` without numpy, or None when
    the field is not one this module fits (see the module docstring)."""
    played = [t for t in totals if t.first != t.second and t.games]  # self-play says nothing
    names = sorted({t.first for t in played} | {t.second for t in played})
    if len(names) > SMALL_LIMIT:
        return None
    stats = {name: BotStats() for name in names}
    if anchor is not None and anchor[0] not in stats:
        raise RatingInputError(f"anchor bot {anchor[0]!r} has no rated games")
    if not names:
        return RatingTable("ml", DESCRIPTION, (), (), ("no rated games",))
    k = len(names)
    index = {name: i for i, name in enumerate(names)}
    pairs = _pairs(played, index, stats)
    members = _pools(k, pairs)
    if not all(_strongly_connected(pool, pairs) for pool in members):
        return None  # a pool without a finite maximum: the prior is fit_ml's
    theta, info = _newton(k, pairs, members)
    meat = _meat(k, pairs, theta)
    flat = [meat[a][a] <= 1e-12 for a in range(k)]
    rows: list[BotRating] = []
    pool_rows: list[Pool] = []
    for number, pool in enumerate(members, start=1):
        if anchor is not None and index[anchor[0]] in pool:
            ref: int | None = pool.index(index[anchor[0]])
            offset, relative = anchor[1], f"anchor {anchor[0]} = {anchor[1]:g}"
        else:
            ref, offset, relative = None, center, f"pool average = {center:g}"
        model, robust = _covariances(pool, info, meat)
        local = [theta[x] for x in pool]
        shift = sum(local) / len(local) if ref is None else local[ref]
        elo = [offset + ELO_PER_NAT * (t - shift) for t in local]
        model, robust = _relative(model, ref), _relative(robust, ref)
        m = len(pool)
        order = sorted(range(m), key=lambda a: rank_key(elo[a], names[pool[a]]))
        for pos, a in enumerate(order):
            name = names[pool[a]]
            # a bot whose games matched the model exactly shows the model's interval
            variance = ELO_PER_NAT**2 * (model if flat[pool[a]] else robust)[a][a]
            below = order[pos + 1] if pos + 1 < m else None
            los_next = None
            if below is not None:
                c = model if flat[pool[a]] or flat[pool[below]] else robust
                pair_var = ELO_PER_NAT**2 * (c[a][a] + c[below][below] - 2 * c[a][below])
                los_next = los(elo[a] - elo[below], pair_var)
            note = NOTE_MODEL_ERR if flat[pool[a]] and m > 1 else ""
            error = Z95 * math.sqrt(max(variance, 0.0))
            rows.append(BotRating(name, elo[a], error, stats[name], number, los_next, note))
        pool_rows.append(Pool(number, tuple(names[pool[a]] for a in order), relative))
    notes = table_notes(len(members), 0, 0.0, any(flat))
    return RatingTable("ml", DESCRIPTION, tuple(rows), tuple(pool_rows), notes)


def _pairs(
    played: Sequence[PairTotal], index: dict[str, int], stats: dict[str, BotStats]
) -> list[_Pair]:
    """The totals summed per unordered pair, in the order of (i, j); ``stats`` counted."""
    by_key: dict[tuple[int, int], _Pair] = {}
    for t in played:
        a, b = index[t.first], index[t.second]
        first, second = stats[t.first], stats[t.second]
        first.games += t.games
        second.games += t.games
        first.wins += t.wins
        first.draws += t.draws
        first.losses += t.losses
        second.wins += t.losses
        second.draws += t.draws
        second.losses += t.wins
        first.points += t.wins + 0.5 * t.draws
        second.points += t.losses + 0.5 * t.draws
        lo, hi = min(a, b), max(a, b)
        pair = by_key.get((lo, hi))
        if pair is None:
            pair = by_key[(lo, hi)] = _Pair(lo, hi)
        for points, count in ((1.0, t.wins), (0.5, t.draws), (0.0, t.losses)):
            s = points if a < b else 1.0 - points
            pair.n += count
            pair.s += s * count
            pair.q += s * s * count
    return [by_key[key] for key in sorted(by_key)]


def _pools(k: int, pairs: Sequence[_Pair]) -> list[list[int]]:
    """Bots linked by games (``graph.pools``' order: each sorted, by their smallest bot)."""
    neighbours: list[list[int]] = [[] for _ in range(k)]
    for p in pairs:
        neighbours[p.i].append(p.j)
        neighbours[p.j].append(p.i)
    seen: set[int] = set()
    out: list[list[int]] = []
    for root in range(k):
        if root not in seen:
            out.append(sorted(_reach(root, neighbours, seen)))
    return out


def _strongly_connected(pool: list[int], pairs: Sequence[_Pair]) -> bool:
    """Does every bot of ``pool`` reach every other along "scored against" (a win, a draw)?"""
    forward: dict[int, list[int]] = {x: [] for x in pool}
    backward: dict[int, list[int]] = {x: [] for x in pool}
    for p in pairs:
        if p.i in forward:
            edges = [(p.i, p.j)] if p.s > 0 else []
            edges += [(p.j, p.i)] if p.n - p.s > 0 else []
            for a, b in edges:
                forward[a].append(b)
                backward[b].append(a)
    return all(len(_reach(pool[0], graph, set())) == len(pool) for graph in (forward, backward))


def _reach(
    root: int, graph: Mapping[int, list[int]] | Sequence[list[int]], seen: set[int]
) -> list[int]:
    """The nodes reachable from ``root`` not in ``seen`` (added to it), ``root`` first."""
    seen.add(root)
    found, todo = [root], [root]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                found.append(nxt)
                todo.append(nxt)
    return found


def _evaluate(k: int, pairs: Sequence[_Pair], theta: list[float]) -> tuple[float, list[float]]:
    """The log-likelihood and its gradient at ``theta``."""
    ll = 0.0
    grad = [0.0] * k
    for p in pairs:
        ti, tj = theta[p.i], theta[p.j]
        top = max(ti, tj)
        lse = top + math.log(math.exp(ti - top) + math.exp(tj - top))
        ll += p.s * ti + (p.n - p.s) * tj - p.n * lse
        resid = p.s - p.n * math.exp(ti - lse)
        grad[p.i] += resid
        grad[p.j] -= resid
    return ll, grad


def _information(k: int, pairs: Sequence[_Pair], theta: list[float]) -> Matrix:
    """Minus the Hessian of the log-likelihood at ``theta``."""
    info = [[0.0] * k for _ in range(k)]
    for p in pairs:
        ti, tj = theta[p.i], theta[p.j]
        top = max(ti, tj)
        lse = top + math.log(math.exp(ti - top) + math.exp(tj - top))
        prob = math.exp(ti - lse)
        _add_pair(info, p, p.n * prob * (1.0 - prob))
    return info


def _meat(k: int, pairs: Sequence[_Pair], theta: list[float]) -> Matrix:
    """The sandwich's middle: each game's squared gradient, summed per pair."""
    meat = [[0.0] * k for _ in range(k)]
    for p in pairs:
        prob = 1.0 / (1.0 + math.exp(theta[p.j] - theta[p.i]))
        _add_pair(meat, p, max(p.q - 2.0 * prob * p.s + p.n * prob * prob, 0.0))
    return meat


def _add_pair(matrix: Matrix, p: _Pair, v: float) -> None:
    matrix[p.i][p.i] += v
    matrix[p.j][p.j] += v
    matrix[p.i][p.j] -= v
    matrix[p.j][p.i] -= v


def _newton(k: int, pairs: Sequence[_Pair], members: list[list[int]]) -> tuple[list[float], Matrix]:
    """``ml._newton``'s dense branch: Newton steps on (information + each pool's J/m), halved
    until the likelihood does not fall, until a step moves nothing by 1e-11."""
    label = [0] * k
    for number, pool in enumerate(members):
        for x in pool:
            label[x] = number
    size = [len(members[label[x]]) for x in range(k)]
    theta = [0.0] * k
    ll, grad = _evaluate(k, pairs, theta)
    info = _information(k, pairs, theta)
    for _ in range(100):
        system = [
            [info[a][b] + (1.0 / size[a] if label[a] == label[b] else 0.0) for b in range(k)]
            for a in range(k)
        ]
        step = _solve(system, grad)
        t = 1.0
        while True:
            trial = [x + t * d for x, d in zip(theta, step, strict=True)]
            trial_ll = _evaluate(k, pairs, trial)[0]
            if trial_ll >= ll - 1e-12 * max(1.0, abs(ll)) or t < 1e-8:
                break
            t *= 0.5
        theta = trial
        ll, grad = _evaluate(k, pairs, theta)
        info = _information(k, pairs, theta)
        if max(abs(t * d) for d in step) < 1e-11:
            break
    return theta, info


def _solve(matrix: Matrix, rhs: list[float]) -> list[float]:
    """x with matrix x = rhs: Gaussian elimination with partial pivoting (the matrix is
    positive definite here: the information plus the gauge)."""
    n = len(rhs)
    a = [[*row, rhs[r]] for r, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        head = a[col]
        for r in range(col + 1, n):
            factor = a[r][col] / head[col]
            if factor:
                row = a[r]
                for c in range(col, n + 1):
                    row[c] -= factor * head[c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        row = a[r]
        x[r] = (row[n] - sum(row[c] * x[c] for c in range(r + 1, n))) / row[r]
    return x


def _inverse(matrix: Matrix) -> Matrix:
    n = len(matrix)
    columns = [_solve(matrix, [1.0 if r == c else 0.0 for r in range(n)]) for c in range(n)]
    return [[columns[c][r] for c in range(n)] for r in range(n)]


def _product(a: Matrix, b: Matrix) -> Matrix:
    columns = list(zip(*b, strict=True))
    return [[sum(x * y for x, y in zip(row, col, strict=True)) for col in columns] for row in a]


def _covariances(pool: list[int], info: Matrix, meat: Matrix) -> tuple[Matrix, Matrix]:
    """The pool's model covariance (I + J/m)^-1 - J/m and its sandwich, as ``ml`` forms them."""
    m = len(pool)
    dense = [[info[a][b] + 1.0 / m for b in pool] for a in pool]
    model = [[v - 1.0 / m for v in row] for row in _inverse(dense)]
    bmat = [[meat[a][b] for b in pool] for a in pool]
    return model, _product(_product(model, bmat), model)


def _relative(cov: Matrix, ref: int | None) -> Matrix:
    """``ml._relative``: the covariance of the ratings centred on the pool's mean, or minus
    the anchor's (local index ``ref``)."""
    m = len(cov)
    if ref is None:
        rows = [sum(row) / m for row in cov]
        cols = [sum(cov[r][c] for r in range(m)) / m for c in range(m)]
        whole = sum(rows) / m
        return [[cov[r][c] - rows[r] - cols[c] + whole for c in range(m)] for r in range(m)]
    return [
        [cov[r][c] - cov[r][ref] - cov[ref][c] + cov[ref][ref] for c in range(m)] for r in range(m)
    ]
