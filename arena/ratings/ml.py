"""Maximum-likelihood Elo with robust 95% intervals (see docs/ratings.md for the formulas).

Two players: Bradley-Terry on scores (win 1, draw 1/2, loss 0), expected score
1 / (1 + 10^(-diff/400)). N players: Plackett-Luce on the final ranks with shared ties, which is
the same model for two players. Fitted by Newton's method (with step halving) on aggregated
pair counts plus per-match Plackett-Luce stages; each pool of bots that are linked by games is
rated on its own scale. Intervals: the sandwich (robust) covariance H^+ B H^+ with B built from
each match's own gradient, so draws (low score variance) narrow the interval as they should.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
from numpy.typing import NDArray

from bot_arena.arena.ratings.blas import one_blas_thread
from bot_arena.arena.ratings.design import Design, FloatArray, IntArray, Sparse, aggregate_pairs
from bot_arena.arena.ratings.elo import ELO_PER_NAT
from bot_arena.arena.ratings.graph import pools, strong_components
from bot_arena.arena.ratings.ml_common import (
    DEFAULT_PRIOR,
    DESCRIPTION,
    NOTE_ALL_LOSSES,
    NOTE_ALL_WINS,
    NOTE_APPROXIMATE,
    NOTE_GROUP_LOSSES,
    NOTE_GROUP_WINS,
    NOTE_MODEL_ERR,
    NOTE_PRIOR,
    Z95,
    los,
    rank_key,
    table_notes,
)
from bot_arena.arena.ratings.outcomes import BotStats, GameResult, RatingInputError
from bot_arena.arena.ratings.prepare import prepare
from bot_arena.arena.ratings.table import BotRating, Pool, RatingTable
from bot_arena.arena.ratings.totals import PairTotal, PairTotalColumns

#: Fields (players plus ghosts) up to this size get Newton's dense solve and exact intervals.
DENSE_LIMIT = 2000
#: Conjugate-gradient iterations per Newton step in larger fields.
CG_MAX_ITER = 2000


@one_blas_thread
def fit_ml(
    results: Iterable[GameResult],
    *,
    totals: Iterable[PairTotal] | PairTotalColumns = (),
    center: float = 1500.0,
    anchor: tuple[str, float] | None = None,
    prior: float = DEFAULT_PRIOR,
    aggregate: bool = True,
    start: Mapping[str, float] | None = None,
    intervals: bool = True,
) -> RatingTable:
    """Maximum-likelihood Elo of every bot in ``results`` and in the two-player ``totals``
    (results counted per ordered pair: the same fit as those results one by one, which is what
    lets a leaderboard read pair totals instead of every match).

    Each pool (bots linked by games) is centred so that its average is ``center``; with
    ``anchor=(name, elo)`` the anchor's pool is shifted so that bot has exactly that rating.
    A pool where some bots won (or lost) every game against the rest has no finite maximum:
    there each bot plays ``prior`` virtual draws against a ghost of average strength, and the
    affected rows say so. ``aggregate=False`` routes two-player games through the general
    Plackett-Luce code instead of the pair counts (same numbers; kept for cross-checks).

    ``start`` (Elo by bot, say the ratings of a fit on fewer of the same games) is where
    Newton's method begins instead of all-equal: the maximum is the same (the stopping rule is
    unchanged), reached in fewer steps. ``intervals=False`` leaves out the intervals and the
    LOS (``error`` and ``los_next`` None), which cost two dense products of the field's size.
    """
    prep = prepare(results, totals)
    stats, names = prep.stats, prep.names
    if anchor is not None and anchor[0] not in stats:
        raise RatingInputError(f"anchor bot {anchor[0]!r} has no rated games")
    if not names:
        return RatingTable("ml", DESCRIPTION, (), (), ("no rated games",))
    k = len(names)
    first, second, score, weight = prep.first, prep.second, prep.score, prep.weight
    multi = dict(prep.groups)
    if not aggregate:  # two-player games as two-seat Plackett-Luce matches
        repeat = weight.astype(np.intp)  # a total's games one by one
        first, second = np.repeat(first, repeat), np.repeat(second, repeat)
        score = np.repeat(score, repeat)
        pair_ranks = np.stack([np.where(score < 1.0, 2, 1), np.where(score > 0.0, 2, 1)], axis=1)
        pair_ranks[score == 0.5] = 1
        multi[2] = (np.stack([first, second], axis=1), pair_ranks, np.repeat(prep.two_pos, repeat))
        first, second, score, weight = first[:0], second[:0], score[:0], weight[:0]
    pairs = aggregate_pairs(first, second, score, k, weight)
    # the games one by one are in the pairs now: not held through the fit (issue 29)
    index = prep.index
    del prep, first, second, score, weight
    scored, groups, met = _graph(k, pairs, multi)
    members, pairs, notes, n_ghosts = _add_ghosts(k, scored, met, groups, pairs, prior)

    design = Design(k + n_ghosts)
    design.set_pairs(*pairs)
    design.set_matches(multi)
    theta, info = _newton(design, members, _start(design, names, start, center))
    if not intervals:
        return _points_only(names, stats, members, theta, notes, anchor, center, n_ghosts, prior)
    meat = design.meat(theta)
    flat = meat.diagonal()[:k] <= 1e-12  # no score variance at all: fall back to the model

    rows: list[BotRating] = []
    pool_rows: list[Pool] = []
    approximate = False
    for number, (pool, (model, robust)) in enumerate(
        zip(members, _covariances(members, info, meat), strict=True), start=1
    ):
        real = [x for x in pool if x < k]
        ref, offset, relative = _reference(real, index, anchor, center)
        approximate |= model.ndim == 1
        estimate = _Estimate.of(theta[real], model, robust, ref, offset, flat[real])
        order = sorted(
            range(len(real)), key=lambda a: rank_key(float(estimate.elo[a]), names[real[a]])
        )
        for pos, a in enumerate(order):
            below = order[pos + 1] if pos + 1 < len(order) else None
            note = notes.get(real[a], "")
            if estimate.flat[a] and len(real) > 1:
                note = f"{note}; {NOTE_MODEL_ERR}" if note else NOTE_MODEL_ERR
            name = names[real[a]]
            rows.append(
                BotRating(
                    name,
                    float(estimate.elo[a]),
                    estimate.error(a),
                    stats[name],
                    number,
                    None if below is None else estimate.los(a, below),
                    note,
                )
            )
        pool_rows.append(Pool(number, tuple(names[real[a]] for a in order), relative))
    notes_out = table_notes(len(members), n_ghosts, prior, bool(flat.any()))
    if approximate:
        notes_out += (NOTE_APPROXIMATE.format(limit=DENSE_LIMIT),)
    return RatingTable("ml", DESCRIPTION, tuple(rows), tuple(pool_rows), notes_out)


def _start(
    design: Design, names: list[str], start: Mapping[str, float] | None, center: float
) -> FloatArray:
    """Where Newton's method begins: ``start``'s ratings (others and ghosts at the average),
    or all equal when there is no start or it is less likely than all equal (a start far from
    the maximum, where the likelihood's terms overflow, would lead nowhere)."""
    even = np.zeros(design.k)
    if start is None:
        return even
    theta = even.copy()
    for i, name in enumerate(names):
        if name in start:
            theta[i] = (start[name] - center) / ELO_PER_NAT
    with np.errstate(all="ignore"):
        better = bool(design.loglik(theta) >= design.loglik(even))
    return theta if better else even


def _points_only(
    names: list[str],
    stats: Mapping[str, BotStats],
    members: list[list[int]],
    theta: FloatArray,
    notes: dict[int, str],
    anchor: tuple[str, float] | None,
    center: float,
    n_ghosts: int,
    prior: float,
) -> RatingTable:
    """``fit_ml``'s table without intervals: each pool's ratings as ``_Estimate.of`` places
    them, rows best first (no interval, no LOS, no note on a flat score variance)."""
    index, k = {n: i for i, n in enumerate(names)}, len(names)
    rows: list[BotRating] = []
    pool_rows: list[Pool] = []
    for number, pool in enumerate(members, start=1):
        real = [x for x in pool if x < k]
        ref, offset, relative = _reference(real, index, anchor, center)
        elo = _placed(theta[real], ref, offset)
        order = sorted(range(len(real)), key=lambda a: rank_key(float(elo[a]), names[real[a]]))
        for a in order:
            name = names[real[a]]
            rows.append(
                BotRating(
                    name,
                    float(elo[a]),
                    None,
                    stats[name],
                    number,
                    None,
                    notes.get(real[a], ""),
                )
            )
        pool_rows.append(Pool(number, tuple(names[real[a]] for a in order), relative))
    notes_out = table_notes(len(members), n_ghosts, prior, False)
    return RatingTable("ml", DESCRIPTION, tuple(rows), tuple(pool_rows), notes_out)


Pairs = tuple[IntArray, IntArray, FloatArray, FloatArray, FloatArray]


class _Estimate:
    """One pool's ratings on the output scale with both covariances (robust and model): full
    matrices, or for a pool above ``DENSE_LIMIT`` only their diagonals (``cov`` is None)."""

    def __init__(
        self,
        elo: FloatArray,
        robust: FloatArray,
        model: FloatArray,
        flat: NDArray[np.bool_],
    ) -> None:
        self.elo, self.robust, self.model, self.flat = elo, robust, model, flat

    @classmethod
    def of(
        cls,
        theta: FloatArray,
        model: FloatArray,
        robust: FloatArray,
        ref: int | None,
        offset: float,
        flat: NDArray[np.bool_],
    ) -> _Estimate:
        """Ratings centred on the pool mean (or minus the anchor, local index ``ref``) plus
        ``offset``; every row of the transform sums to 0, so the free shift drops out."""
        m = len(theta)
        elo = _placed(theta, ref, offset)
        if model.ndim == 2:
            model, robust = model[:m, :m], robust[:m, :m]  # the ghost, if any, is last
            return cls(
                elo,
                ELO_PER_NAT**2 * _relative(robust, ref),
                ELO_PER_NAT**2 * _relative(model, ref),
                flat,
            )
        # large pool: each bot's own variance (the others held at their estimates), plus the
        # anchor's; the centring's share (1/m of the others) is left out
        model, robust = model[:m], robust[:m]
        if ref is not None:
            model = np.where(np.arange(m) == ref, 0.0, model + model[ref])
            robust = np.where(np.arange(m) == ref, 0.0, robust + robust[ref])
        return cls(elo, ELO_PER_NAT**2 * robust, ELO_PER_NAT**2 * model, flat)

    def _var(self, a: int) -> float:
        cov = self.model if self.flat[a] else self.robust
        return float(cov[a, a] if cov.ndim == 2 else cov[a])

    def error(self, a: int) -> float:
        return Z95 * math.sqrt(max(self._var(a), 0.0))

    def los(self, a: int, b: int) -> float:
        diff = float(self.elo[a] - self.elo[b])
        cov = self.model if self.flat[a] or self.flat[b] else self.robust
        if cov.ndim == 1:  # large pool: the two estimates taken as independent
            return los(diff, float(cov[a] + cov[b]))
        return los(diff, float(cov[a, a] + cov[b, b] - 2 * cov[a, b]))


def _placed(theta: FloatArray, ref: int | None, offset: float) -> FloatArray:
    """A pool's ratings on the output scale: centred on the pool mean (or minus the anchor,
    local index ``ref``) plus ``offset``."""
    out: FloatArray = offset + ELO_PER_NAT * (theta - (theta.mean() if ref is None else theta[ref]))
    return out


def _relative(cov: FloatArray, ref: int | None) -> FloatArray:
    """L cov L^T for L = 1 - J/m (centred on the mean) or L = 1 - 1 e_ref^T (minus the
    anchor), in O(m^2): the same numbers as the products, without two m^3 multiplications."""
    if ref is None:
        rows = cov.mean(axis=1)
        out: FloatArray = cov - rows[:, None] - cov.mean(axis=0)[None, :] + rows.mean()
    else:
        out = cov - cov[:, ref][:, None] - cov[ref, :][None, :] + cov[ref, ref]
    return out


def _graph(
    k: int, pairs: Pairs, multi: dict[int, tuple[IntArray, IntArray, IntArray]]
) -> tuple[tuple[IntArray, IntArray], list[list[int]], list[IntArray]]:
    """The "scored against" edges (i -> j: i won, drew or tied against j), the pools and the
    players of every multi-seat match (who met whom).

    A multi-seat match adds, in place of every pair of its seats, a chain with the same
    reachability: each tie group in a cycle, each group's first seat to the next group's. So
    a match of n seats adds n edges, not n^2, and the strong components are the same."""
    pi, pj, pn, ps, _ = pairs
    src, dst = [pi[ps > 0], pj[pn - ps > 0]], [pj[ps > 0], pi[pn - ps > 0]]
    link_a, link_b = [pi], [pj]
    seated: list[IntArray] = []
    for players, ranks, _ in multi.values():
        n = players.shape[1]
        order = np.argsort(ranks, axis=1, kind="stable")
        ranked = np.take_along_axis(ranks, order, axis=1)
        seats = np.take_along_axis(players, order, axis=1)
        seated.append(seats)
        new_group = np.ones_like(ranked, dtype=bool)
        new_group[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
        head = np.maximum.accumulate(np.where(new_group, np.arange(n), 0), axis=1)
        # next seat of the same group, or back to its group's first seat
        same_next = np.zeros_like(new_group)
        same_next[:, :-1] = ~new_group[:, 1:]
        nxt = np.where(same_next, np.arange(n) + 1, head)
        src.append(seats.ravel())
        dst.append(np.take_along_axis(seats, nxt, axis=1).ravel())
        firsts = np.flatnonzero(new_group.ravel())  # group heads, best first, match by match
        row = firsts // n
        follows = row[1:] == row[:-1]
        src.append(seats.ravel()[firsts[:-1][follows]])
        dst.append(seats.ravel()[firsts[1:][follows]])
        link_a.append(np.repeat(players[:, 0], n - 1))
        link_b.append(players[:, 1:].ravel())
    edges = (np.concatenate(src), np.concatenate(dst))
    return edges, pools(k, np.concatenate(link_a), np.concatenate(link_b)), seated


def _add_ghosts(
    k: int,
    scored: tuple[IntArray, IntArray],
    seated: list[IntArray],
    groups: list[list[int]],
    pairs: Pairs,
    prior: float,
) -> tuple[list[list[int]], Pairs, dict[int, str], int]:
    """A ghost (one extra parameter) for every pool without a finite maximum: each bot of the
    pool has drawn ``prior`` games with it. Returns pools with their ghosts, the pairs with the
    virtual games, notes per bot and the number of ghosts."""
    notes: dict[int, str] = {}
    members = [list(g) for g in groups]
    comp = np.zeros(k, dtype=np.intp)
    sccs = strong_components(k, *scored)
    for number, scc in enumerate(sccs):
        comp[scc] = number
    ghost_i: list[int] = []
    ghost_j: list[int] = []
    ghosts = 0
    needy: list[list[int]] = []
    for pool in members:
        real = list(pool)
        if len(np.unique(comp[real])) <= 1:
            continue
        ghost = k + ghosts
        ghosts += 1
        ghost_i += real
        ghost_j += [ghost] * len(real)
        pool.append(ghost)
        needy.append(real)
    if not ghosts:
        return members, pairs, notes, 0
    _note_extremes(scored, comp, [len(c) for c in sccs], pairs, seated, needy, notes)
    pi, pj, pn, ps, pq = pairs
    w = np.full(len(ghost_i), prior)
    joined = (
        np.concatenate([pi, np.asarray(ghost_i, dtype=np.intp)]),
        np.concatenate([pj, np.asarray(ghost_j, dtype=np.intp)]),
        np.concatenate([pn, w]),
        np.concatenate([ps, w / 2]),  # a draw: half a point each
        np.concatenate([pq, w / 4]),
    )
    return members, joined, notes, ghosts


def _note_extremes(
    scored: tuple[IntArray, IntArray],
    comp: IntArray,
    comp_sizes: list[int],
    pairs: Pairs,
    seated: list[IntArray],
    needy: list[list[int]],
    notes: dict[int, str],
) -> None:
    """Mark the bots of the pools that got a prior (``needy``): bots of source components
    (nobody outside scored against them) and sink components (they scored against nobody
    outside); every other bot of such a pool gets the plain prior note.

    A group's label goes only on the members that played someone outside the group: of a member
    that only met its own group (a gauntlet's entrant, say) "scored nothing against the rest"
    reads as its own record, next to a score that may be 50%."""
    src, dst = scored
    cross = comp[src] != comp[dst]
    scored_on = np.zeros(len(comp_sizes), dtype=bool)
    scored_any = np.zeros(len(comp_sizes), dtype=bool)
    scored_on[comp[dst[cross]]] = True
    scored_any[comp[src[cross]]] = True
    met = np.zeros(len(comp), dtype=bool)  # played someone of another component
    pi, pj = pairs[0], pairs[1]
    differ = comp[pi] != comp[pj]
    met[pi[differ]] = True
    met[pj[differ]] = True
    for seats in seated:
        c = comp[seats]
        other = (c != c.min(axis=1)[:, None]) | (c != c.max(axis=1)[:, None])
        met[seats[other]] = True
    for real in needy:
        for x in real:
            own = int(comp[x])
            label = NOTE_PRIOR
            single = comp_sizes[own] == 1
            if not scored_on[own]:
                label = NOTE_ALL_WINS if single else NOTE_GROUP_WINS
            elif not scored_any[own]:
                label = NOTE_ALL_LOSSES if single else NOTE_GROUP_LOSSES
            notes[x] = label if met[x] else NOTE_PRIOR


def _newton(
    design: Design, members: list[list[int]], theta: FloatArray
) -> tuple[FloatArray, Sparse]:
    """Maximise the concave log-likelihood by Newton's method with step halving, from
    ``theta``.

    The gauge (sum of J/m per pool) fixes each pool's free shift so the Newton system is
    regular and the steps keep every pool's mean where it started. Up to ``DENSE_LIMIT``
    parameters the system is solved densely; above, by conjugate gradients on the sparse
    information matrix (one product costs the pairs that met), so nothing is parameters
    squared."""
    k = design.k
    label = np.zeros(k, dtype=np.intp)
    for number, pool in enumerate(members):
        label[pool] = number
    size = np.bincount(label, minlength=len(members)).astype(np.float64)
    ll, grad, info = design.evaluate(theta)
    if k <= DENSE_LIMIT:  # the same at every step
        gauge = (label[:, None] == label[None, :]) / size[label][:, None]
    for _ in range(100):
        if k <= DENSE_LIMIT:
            step = np.linalg.solve(info.dense() + gauge, grad)
        else:
            step = _conjugate_gradient(info.compact(), label, size, grad)
        t = 1.0
        while True:
            # the whole evaluation at each trial (its log-likelihood is ``loglik``'s, to the
            # bit): the step taken needs it next, and one is usually taken at once
            trial = theta + t * step
            trial_ll, trial_grad, trial_info = design.evaluate(trial)
            if trial_ll >= ll - 1e-12 * max(1.0, abs(ll)) or t < 1e-8:
                break
            t *= 0.5
        theta, ll, grad, info = trial, trial_ll, trial_grad, trial_info
        if float(np.max(np.abs(t * step))) < 1e-11:
            break
    return theta, info


def _conjugate_gradient(
    info: Sparse, label: IntArray, size: FloatArray, rhs: FloatArray
) -> FloatArray:
    """Solve (I + sum_pools J/m) x = rhs by preconditioned conjugate gradients (Jacobi)."""

    def apply(v: FloatArray) -> FloatArray:
        means = np.bincount(label, weights=v, minlength=len(size)) / size
        return info.matvec(v) + means[label]

    inv_diag = 1.0 / (info.diagonal() + 1.0 / size[label])
    x = np.zeros_like(rhs)
    r = rhs.copy()
    z = inv_diag * r
    d = z.copy()
    rz = _dot(r, z)
    goal = 1e-26 * _dot(rhs, rhs)
    for _ in range(CG_MAX_ITER):
        if _dot(r, r) <= goal:
            break
        ad = apply(d)
        alpha = rz / _dot(d, ad)
        x += alpha * d
        r -= alpha * ad
        z = inv_diag * r
        rz_new = _dot(r, z)
        d = z + (rz_new / rz) * d
        rz = rz_new
    return x


def _dot(a: FloatArray, b: FloatArray) -> float:
    """a . b without BLAS: a BLAS dot of this size can wait milliseconds on its threads on a
    busy machine, and conjugate gradients take thousands of them."""
    return float(np.einsum("i,i->", a, b))


def _covariances(
    members: list[list[int]], info: Sparse, meat: Sparse
) -> list[tuple[FloatArray, FloatArray]]:
    """Per pool (in ``members`` order, the ghost last): the model covariance I^+ (in the pool's
    gauge, (I + J/m)^-1 - J/m) and the sandwich I^+ B I^+, as dense matrices; for a pool of
    more than ``DENSE_LIMIT`` players only their diagonals, approximated by each player's own
    terms (1 / I_ii and B_ii / I_ii^2: the others held at their estimates), which needs no
    inverse. The information and the meat only join players of one pool, so the pools'
    blocks are all there is."""
    if len(members) == 1:  # the usual field: one pool, the matrices' cells are its own
        return [_one_pool(members[0], info, meat)]
    k = info.k
    label = np.zeros(k, dtype=np.intp)
    local = np.zeros(k, dtype=np.intp)
    for number, pool in enumerate(members):
        label[pool] = number
        local[pool] = np.arange(len(pool))
    parts = [_by_pool(matrix, label, len(members)) for matrix in (info, meat)]
    out: list[tuple[FloatArray, FloatArray]] = []
    for number, pool in enumerate(members):
        m = len(pool)
        (ir, ic, iv), (mr, mc, mv) = parts[0][number], parts[1][number]
        if m > DENSE_LIMIT:
            on, mon = ir == ic, mr == mc
            diag = np.bincount(local[ir[on]], weights=iv[on], minlength=m)
            bdiag = np.bincount(local[mr[mon]], weights=mv[mon], minlength=m)
            out.append((1.0 / diag, bdiag / (diag * diag)))
            continue
        dense = np.bincount(local[ir] * m + local[ic], weights=iv, minlength=m * m)
        bmat = np.bincount(local[mr] * m + local[mc], weights=mv, minlength=m * m)
        model = np.linalg.inv(dense.reshape(m, m) + 1.0 / m) - 1.0 / m
        out.append((model, model @ bmat.reshape(m, m) @ model))
    return out


def _one_pool(pool: list[int], info: Sparse, meat: Sparse) -> tuple[FloatArray, FloatArray]:
    """``_covariances`` of a field that is one pool: its cells read from the whole matrices
    (``Sparse.dense`` sums each cell's entries in the order the pools' split would), with no
    copy of the entries; the pool's order is the one ``members`` gives."""
    m = len(pool)
    if m > DENSE_LIMIT:
        diag, bdiag = info.diagonal()[pool], meat.diagonal()[pool]
        return 1.0 / diag, bdiag / (diag * diag)
    cells = np.ix_(pool, pool)
    every = m == info.k and pool == list(range(m))  # the matrices' own order: no copy

    def pooled(matrix: Sparse) -> FloatArray:
        whole = matrix.dense()
        return whole if every else whole[cells]

    inverse = np.linalg.inv(pooled(info) + 1.0 / m).astype(np.float64, copy=False)
    model: FloatArray = inverse - 1.0 / m
    robust: FloatArray = model @ pooled(meat) @ model
    return model, robust


def _by_pool(
    matrix: Sparse, label: IntArray, count: int
) -> list[tuple[IntArray, IntArray, FloatArray]]:
    """The entries of ``matrix`` split by the pool of their row (in one sort)."""
    rows, cols, vals = matrix.entries()
    order = np.argsort(label[rows], kind="stable")
    bounds = np.searchsorted(label[rows][order], np.arange(count + 1))
    rows, cols, vals = rows[order], cols[order], vals[order]
    return [
        (
            rows[bounds[p] : bounds[p + 1]],
            cols[bounds[p] : bounds[p + 1]],
            vals[bounds[p] : bounds[p + 1]],
        )
        for p in range(count)
    ]


def _reference(
    real: list[int], index: dict[str, int], anchor: tuple[str, float] | None, center: float
) -> tuple[int | None, float, str]:
    """Where a pool's ratings are placed: at its anchor's rating when the anchor plays in it
    (the anchor's place among ``real``), else with the pool's average at ``center``; and the
    words saying which."""
    if anchor is not None and index[anchor[0]] in real:
        return real.index(index[anchor[0]]), anchor[1], f"anchor {anchor[0]} = {anchor[1]:g}"
    return None, center, f"pool average = {center:g}"
