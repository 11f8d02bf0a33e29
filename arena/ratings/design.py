"""The likelihood of a set of results, in a form Newton's method evaluates quickly.

Every model here (Bradley-Terry on scores, Plackett-Luce on ranks with shared ties) has a
log-likelihood of one shape, in natural strength units theta (Elo = theta * 400 / ln 10):

    L(theta) = sum_i c_i theta_i - sum_s w_s log sum_{x in S_s} exp(theta_x)

a linear part ``c`` plus weighted log-sum-exp terms over player *sets*. It is concave; its
gradient is ``c - sum_s w_s p_s`` and its information matrix ``sum_s w_s (diag p_s - p_s p_s^T)``
with ``p_s`` the softmax of theta over ``S_s``.

Two-player games are aggregated first: a pair (i, j) with n games and i's total score S gives
one set {i, j} of weight n and c_i += S, c_j += n - S. That is what makes a million games cheap.
Matches with three or more seats each contribute their Plackett-Luce stages (see ``_terms``).

For the sandwich variance each match is one independent unit: the pairs keep the sum of squared
scores Q (so sum over games of (s - p)^2 = Q - 2pS + np^2), and multi-seat matches keep their
seats ("slots") so that each match's own gradient can be formed.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from math import comb

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]

#: Tie groups up to this size are shared exactly (2^m subsets); larger ones over m rotations.
EXACT_TIE_LIMIT = 10


@lru_cache(maxsize=4096)
def _terms(
    sizes: tuple[int, ...],
) -> tuple[tuple[tuple[int, float], ...], tuple[tuple[tuple[int, ...], float], ...]]:
    """Plackett-Luce terms of one ranking shape, in positions of the sorted order.

    ``sizes`` are the tie-group sizes from best to worst (1,1,1 = no ties; 2 = a two-way draw).
    A strict ranking o_1 > ... > o_n has likelihood prod_k g(o_k) / sum_{m>=k} g(o_m). A tie
    group G is *shared*: its log-likelihood is the average over all orderings of G (each equally
    likely), which is the sum over k < |G| of the mean, over k-subsets T of G, of
    -log(sum of G minus T plus everyone below). Two tied players so score half a win each, which
    is exactly the Bradley-Terry draw. Returns (linear, sets): linear terms (position, coef) and
    log-sum-exp sets (positions, weight).
    """
    linear: dict[int, float] = {}
    sets: list[tuple[tuple[int, ...], float]] = []
    start = 0
    n = sum(sizes)
    for m in sizes:
        group = tuple(range(start, start + m))
        below = tuple(range(start + m, n))
        for g in group:
            linear[g] = linear.get(g, 0.0) + 1.0
        if m <= EXACT_TIE_LIMIT:
            for k in range(m):
                weight = 1.0 / comb(m, k)
                for taken in combinations(group, k):
                    members = tuple(g for g in group if g not in taken) + below
                    if len(members) == 1:  # log g(x) = theta_x: fold into the linear part
                        linear[members[0]] = linear.get(members[0], 0.0) - weight
                    else:
                        sets.append((members, weight))
        else:  # too many orderings: share over the m rotations (each takes each place once)
            for r in range(m):
                ordering = group[r:] + group[:r]
                for t in range(m):
                    members = ordering[t:] + below
                    if len(members) == 1:
                        linear[members[0]] = linear.get(members[0], 0.0) - 1.0 / m
                    else:
                        sets.append((members, 1.0 / m))
        start += m
    return tuple(sorted(linear.items())), tuple(sets)


class SetGroup:
    """Log-sum-exp sets of one size: parameter indices (rows), weights, optional slots."""

    __slots__ = ("idx", "slots", "w")

    def __init__(self, idx: IntArray, w: FloatArray, slots: IntArray | None) -> None:
        self.idx = idx
        self.w = w
        self.slots = slots


class Design:
    """All results of one fit, ready for ``evaluate`` and ``meat``."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.linear = np.zeros(k)
        self.groups: list[SetGroup] = []
        # aggregated two-player pairs (i < j, or j a ghost): games, i's points, sum of squares
        self.pi = np.zeros(0, dtype=np.intp)
        self.pj = np.zeros(0, dtype=np.intp)
        self.pn = np.zeros(0)
        self.ps = np.zeros(0)
        self.pq = np.zeros(0)
        # multi-seat matches: seat ("slot") -> parameter, slot linear terms, matches by size
        self.slot_player = np.zeros(0, dtype=np.intp)
        self.slot_linear = np.zeros(0)
        self.matches: dict[int, IntArray] = {}  # seats per match -> (matches, seats) slot ids

    # -- building ----------------------------------------------------------------------------

    def set_pairs(
        self, pi: IntArray, pj: IntArray, pn: FloatArray, ps: FloatArray, pq: FloatArray
    ) -> None:
        self.pi, self.pj, self.pn, self.ps, self.pq = pi, pj, pn, ps, pq
        np.add.at(self.linear, pi, ps)
        np.add.at(self.linear, pj, pn - ps)
        if len(pi):
            self.groups.append(SetGroup(np.stack([pi, pj], axis=1), pn, None))

    def set_matches(self, groups: dict[int, tuple[IntArray, IntArray, IntArray]]) -> None:
        """Multi-seat matches by seat count: players (M, n) and ranks (M, n) per group.

        Seats are sorted by rank within each match; matches with the same tie pattern share
        one set of Plackett-Luce terms (``_terms``), laid over their slots with numpy.
        """
        slot_player: list[IntArray] = []
        slot_linear: list[FloatArray] = []
        by_size: dict[int, tuple[list[IntArray], list[FloatArray]]] = {}
        base = 0
        for n, (players, ranks, _) in sorted(groups.items()):
            m = len(players)
            order = np.argsort(ranks, axis=1, kind="stable")
            sorted_ranks = np.take_along_axis(ranks, order, axis=1)
            slot_player.append(np.take_along_axis(players, order, axis=1).ravel())
            coefs = np.zeros((m, n))
            slots = base + np.arange(m)[:, None] * n + np.arange(n)  # (M, n), sorted order
            self.matches[n] = slots
            ties = sorted_ranks[:, 1:] == sorted_ranks[:, :-1]
            codes = ties.astype(np.int64) @ (1 << np.arange(n - 1, dtype=np.int64))
            for code in np.unique(codes).tolist():
                rows = np.flatnonzero(codes == code)
                sizes = [1]
                for bit in range(n - 1):
                    if code >> bit & 1:
                        sizes[-1] += 1
                    else:
                        sizes.append(1)
                linear, sets = _terms(tuple(sizes))
                for pos, coef in linear:
                    coefs[rows, pos] = coef
                for members, weight in sets:
                    rows_slots, weights = by_size.setdefault(len(members), ([], []))
                    rows_slots.append(slots[rows][:, list(members)])
                    weights.append(np.full(len(rows), weight))
            slot_linear.append(coefs.ravel())
            base += m * n
        self.slot_player = (
            np.concatenate(slot_player) if slot_player else np.zeros(0, dtype=np.intp)
        )
        self.slot_linear = np.concatenate(slot_linear) if slot_linear else np.zeros(0)
        np.add.at(self.linear, self.slot_player, self.slot_linear)
        for size_slots, size_weights in by_size.values():
            all_slots = np.concatenate(size_slots)
            self.groups.append(
                SetGroup(self.slot_player[all_slots], np.concatenate(size_weights), all_slots)
            )

    # -- evaluation --------------------------------------------------------------------------

    @staticmethod
    def _softmax(theta: FloatArray, idx: IntArray) -> tuple[FloatArray, FloatArray]:
        vals = theta[idx]
        top = vals.max(axis=1)
        ex = np.exp(vals - top[:, None])
        tot = ex.sum(axis=1)
        return ex / tot[:, None], top + np.log(tot)

    def loglik(self, theta: FloatArray) -> float:
        total = float(self.linear @ theta)
        for g in self.groups:
            _, lse = self._softmax(theta, g.idx)
            total -= float(g.w @ lse)
        return total

    def evaluate(self, theta: FloatArray) -> tuple[float, FloatArray, FloatArray]:
        """Log-likelihood, gradient and information matrix (minus the Hessian) at theta."""
        k = self.k
        total = float(self.linear @ theta)
        grad = self.linear.copy()
        info = np.zeros(k * k)
        diag = np.zeros(k)
        for g in self.groups:
            p, lse = self._softmax(theta, g.idx)
            total -= float(g.w @ lse)
            wp = g.w[:, None] * p
            mass = np.bincount(g.idx.ravel(), weights=wp.ravel(), minlength=k)
            grad -= mass
            diag += mass
            size = g.idx.shape[1]
            for a in range(size):
                for b in range(size):
                    keys = g.idx[:, a] * k + g.idx[:, b]
                    info -= np.bincount(keys, weights=wp[:, a] * p[:, b], minlength=k * k)
        out = info.reshape(k, k)
        out[np.diag_indices(k)] += diag
        return total, grad, out

    def meat(self, theta: FloatArray) -> FloatArray:
        """Sum over matches of the outer product of each match's own gradient (at the fit)."""
        k = self.k
        meat = np.zeros(k * k)
        if len(self.pi):
            p = 1.0 / (1.0 + np.exp(self.theta_diff(theta)))
            v = self.pq - 2.0 * p * self.ps + self.pn * p * p
            v = np.maximum(v, 0.0)
            for rows, cols, sign in (
                (self.pi, self.pi, 1.0),
                (self.pj, self.pj, 1.0),
                (self.pi, self.pj, -1.0),
                (self.pj, self.pi, -1.0),
            ):
                meat += sign * np.bincount(rows * k + cols, weights=v, minlength=k * k)
        if len(self.slot_player):
            gslot = self.slot_linear.copy()
            for g in self.groups:
                if g.slots is None:
                    continue
                p, _ = self._softmax(theta, g.idx)
                wp = g.w[:, None] * p
                gslot -= np.bincount(g.slots.ravel(), weights=wp.ravel(), minlength=len(gslot))
            for slots in self.matches.values():
                gm = gslot[slots]
                pm = self.slot_player[slots]
                for a in range(slots.shape[1]):
                    for b in range(slots.shape[1]):
                        keys = pm[:, a] * k + pm[:, b]
                        meat += np.bincount(keys, weights=gm[:, a] * gm[:, b], minlength=k * k)
        return meat.reshape(k, k)

    def theta_diff(self, theta: FloatArray) -> FloatArray:
        """theta_j - theta_i per aggregated pair (so that sigmoid(-diff) is i's expectation)."""
        return theta[self.pj] - theta[self.pi]


def aggregate_pairs(
    first: IntArray, second: IntArray, score: FloatArray, k: int
) -> tuple[IntArray, IntArray, FloatArray, FloatArray, FloatArray]:
    """Games -> unordered pairs (i < j): games n, i's points S, sum of i's squared scores Q."""
    swap = first > second
    lo = np.where(swap, second, first)
    hi = np.where(swap, first, second)
    s = np.where(swap, 1.0 - score, score)
    keys = lo * k + hi
    n = np.bincount(keys, minlength=k * k)
    pts = np.bincount(keys, weights=s, minlength=k * k)
    sq = np.bincount(keys, weights=s * s, minlength=k * k)
    nz = np.flatnonzero(n)
    return (
        (nz // k).astype(np.intp),
        (nz % k).astype(np.intp),
        n[nz].astype(np.float64),
        pts[nz].astype(np.float64),
        sq[nz].astype(np.float64),
    )
