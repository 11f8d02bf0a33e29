"""The likelihood of a set of results, in a form Newton's method evaluates quickly.

Every model here (Bradley-Terry on scores, Plackett-Luce on ranks with shared ties) has a
log-likelihood of one shape, in natural strength units theta (Elo = theta * 400 / ln 10):

    L(theta) = sum_i c_i theta_i - sum_s w_s log sum_{x in S_s} f_sx exp(theta_x)

a linear part plus weighted log-sum-exp terms over player *sets* (``f_sx`` = 1 but in the
approximation of large ties, see ``ties.py``). It is concave; its gradient is
``c - sum_s w_s p_s`` and its information matrix ``sum_s w_s (diag p_s - p_s p_s^T)`` with ``p_s``
the (weighted) softmax of theta over ``S_s``.

Nothing here is players x players: the information matrix and the sandwich's "meat" come out
as lists of (row, column, value) entries, one per pair of players that met (``Sparse``), which
the caller sums into a dense matrix for small fields or multiplies by vectors for large ones.

Two-player games are aggregated first: a pair (i, j) with n games and i's total score S gives
one set {i, j} of weight n and c_i += S, c_j += n - S. That is what makes a million games cheap.

A match with three or more seats is sorted by rank; its tie pattern (the sizes of its tie
groups, best first) is shared by many matches, which are evaluated together. The Plackett-Luce
sets of a match are nested: a tie group's stages hold (part of) the group plus everyone ranked
below it. So with suffix sums of exp(theta) a match costs O(n) for the likelihood and gradient
(each tie group's own stages: ``ties.tie_terms``) and O(n^2) for its block of the information
matrix, the pairs of seats it holds, whatever its ties.

For the sandwich variance each match is one independent unit: the pairs keep the sum of squared
scores Q (so sum over games of (s - p)^2 = Q - 2pS + np^2), and each multi-seat match's own
gradient is formed from its seats.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from bot_arena.arena.ratings.ties import TieTerms, tie_terms

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]


_NO_INDEX = np.zeros(0, dtype=np.intp)
_NO_VALUE = np.zeros(0)


@dataclass(frozen=True, slots=True)
class Sparse:
    """A symmetric k x k matrix as (row, column, value) entries (repeated entries add up) plus
    *pair terms*: each (i, j, v) of ``pair_i``, ``pair_j``, ``pair_v`` adds v at (i, i) and
    (j, j) and -v at (i, j) and (j, i), a two-player pair's block held once. The pairs' i and
    j are the design's own arrays (not copied), so a pair costs the matrix one value, not four
    entries of three numbers (issue 29: 1,000 bots, 500k pairs, 48 MB a matrix -> 4 MB).

    ``entries`` spells the pairs out as the four entries they stand for (pairs first, i's
    diagonal, j's, then (i, j) and (j, i)): every result below is the same, to the last bit,
    as that sum of entries taken in that order."""

    k: int
    rows: IntArray
    cols: IntArray
    vals: FloatArray
    pair_i: IntArray = field(default_factory=lambda: _NO_INDEX)
    pair_j: IntArray = field(default_factory=lambda: _NO_INDEX)
    pair_v: FloatArray = field(default_factory=lambda: _NO_VALUE)

    def entries(self) -> tuple[IntArray, IntArray, FloatArray]:
        """Every entry, the pairs' four each first (for what needs them one by one)."""
        i, j, v = self.pair_i, self.pair_j, self.pair_v
        return (
            np.concatenate([i, j, i, j, self.rows]),
            np.concatenate([i, j, j, i, self.cols]),
            np.concatenate([v, v, -v, -v, self.vals]),
        )

    def dense(self) -> FloatArray:
        k, i, j, v = self.k, self.pair_i, self.pair_j, self.pair_v
        flat = _sum_at(np.concatenate([i, j]) * (k + 1), np.concatenate([v, v]), k * k)
        # (i, j) and (j, i) hold no diagonal cell: each adds to zeros, exactly
        flat += _sum_at(i * k + j, -v, k * k)
        flat += _sum_at(j * k + i, -v, k * k)
        np.add.at(flat, self.rows * k + self.cols, self.vals)  # in order, after the pairs
        return flat.reshape(k, k)

    def diagonal(self) -> FloatArray:
        on = self.rows == self.cols
        keys = np.concatenate([self.pair_i, self.pair_j, self.rows[on]])
        return _sum_at(keys, np.concatenate([self.pair_v, self.pair_v, self.vals[on]]), self.k)

    def compact(self) -> Sparse:
        """The same matrix with one entry per (row, column): cheaper to multiply often."""
        rows, cols, vals = self.entries()
        keys, inverse = np.unique(rows * self.k + cols, return_inverse=True)
        summed = _sum_at(inverse.ravel(), vals, len(keys))
        return Sparse(self.k, keys // self.k, keys % self.k, summed)

    def matvec(self, v: FloatArray) -> FloatArray:
        out = _sum_at(self.rows, self.vals * v[self.cols], self.k)
        if len(self.pair_i):
            # v at (i, i) and -v at (i, j): row i gets v (x_i - x_j), row j its negative
            moved = self.pair_v * (v[self.pair_i] - v[self.pair_j])
            out += _sum_at(self.pair_i, moved, self.k) - _sum_at(self.pair_j, moved, self.k)
        return out


class MatchBlock:
    """Matches of n seats with one tie pattern: players (M, n) sorted best first."""

    __slots__ = ("players", "sizes")

    def __init__(self, players: IntArray, sizes: tuple[int, ...]) -> None:
        self.players = players
        self.sizes = sizes


@dataclass(frozen=True, slots=True)
class _BlockEval:
    ll: FloatArray  # (M,) each match's log-likelihood
    gamma: FloatArray  # (M, n) exp(theta - the match's max), sorted seats
    grad: FloatArray  # (M, n) each seat's gradient (its match's own gradient, per seat)
    coef: FloatArray  # (M, n) sum over the sets holding the seat of w / Z (so grad = 1 - g*coef)


class Design:
    """All results of one fit, ready for ``evaluate`` and ``meat``."""

    def __init__(self, k: int) -> None:
        self.k = k
        # aggregated two-player pairs (i < j, or j a ghost): games, i's points, sum of squares
        self.pi = np.zeros(0, dtype=np.intp)
        self.pj = np.zeros(0, dtype=np.intp)
        self.pn = np.zeros(0)
        self.ps = np.zeros(0)
        self.pq = np.zeros(0)
        self.blocks: list[MatchBlock] = []

    # -- building ----------------------------------------------------------------------------

    def set_pairs(
        self, pi: IntArray, pj: IntArray, pn: FloatArray, ps: FloatArray, pq: FloatArray
    ) -> None:
        self.pi, self.pj, self.pn, self.ps, self.pq = pi, pj, pn, ps, pq

    def set_matches(self, groups: dict[int, tuple[IntArray, IntArray, IntArray]]) -> None:
        """Multi-seat matches by seat count: players (M, n) and ranks (M, n) per group.

        Seats are sorted by rank within each match, and matches are grouped by tie pattern
        (which neighbouring seats share a rank, compared as rows: no bit tricks, any n).
        """
        for n, (players, ranks, _) in sorted(groups.items()):
            order = np.argsort(ranks, axis=1, kind="stable")
            sorted_ranks = np.take_along_axis(ranks, order, axis=1)
            seated = np.take_along_axis(players, order, axis=1)
            ties = sorted_ranks[:, 1:] == sorted_ranks[:, :-1]
            patterns, which = np.unique(ties, axis=0, return_inverse=True)
            which = which.ravel()
            for code, pattern in enumerate(patterns.tolist()):
                sizes = [1]
                for tied in pattern:
                    if tied:
                        sizes[-1] += 1
                    else:
                        sizes.append(1)
                assert sum(sizes) == n
                self.blocks.append(MatchBlock(seated[which == code], tuple(sizes)))

    # -- evaluation --------------------------------------------------------------------------

    def _pair_terms(self, theta: FloatArray) -> tuple[float, FloatArray, FloatArray]:
        """Pairs: log-likelihood, i's expected score p and its log-sum-exp per pair."""
        ti, tj = theta[self.pi], theta[self.pj]
        top = np.maximum(ti, tj)
        lse = top + np.log(np.exp(ti - top) + np.exp(tj - top))
        ll = float(np.dot(self.ps, ti) + np.dot(self.pn - self.ps, tj) - np.dot(self.pn, lse))
        return ll, np.exp(ti - lse), lse

    def _block(self, block: MatchBlock, theta: FloatArray) -> tuple[_BlockEval, list[TieTerms]]:
        th = theta[block.players]
        top = th.max(axis=1)
        gamma = np.exp(th - top[:, None])
        m_count, n = gamma.shape
        suffix = np.zeros((m_count, n + 1))
        suffix[:, :n] = np.cumsum(gamma[:, ::-1], axis=1)[:, ::-1]
        ll = (th - top[:, None]).sum(axis=1)
        coef = np.zeros((m_count, n))
        tail = np.zeros(m_count)  # sum of w / Z over the stages of the groups above
        terms: list[TieTerms] = []
        start = 0
        for m in block.sizes:
            t = tie_terms(gamma[:, start : start + m], suffix[:, start + m])
            terms.append(t)
            ll -= t.lse
            coef[:, start : start + m] = tail[:, None] + t.a1
            tail = tail + t.b1
            start += m
        grad = 1.0 - gamma * coef
        return _BlockEval(ll, gamma, grad, coef), terms

    def loglik(self, theta: FloatArray) -> float:
        total = self._pair_terms(theta)[0] if len(self.pi) else 0.0
        for block in self.blocks:
            total += float(self._block(block, theta)[0].ll.sum())
        return total

    def evaluate(self, theta: FloatArray) -> tuple[float, FloatArray, Sparse]:
        """Log-likelihood, gradient and information matrix (minus the Hessian) at theta."""
        k = self.k
        total = 0.0
        grad = np.zeros(k)
        rows: list[IntArray] = []
        cols: list[IntArray] = []
        vals: list[FloatArray] = []
        v = _NO_VALUE
        if len(self.pi):
            total, p, _ = self._pair_terms(theta)
            resid = self.ps - self.pn * p
            grad += np.bincount(self.pi, weights=resid, minlength=k)
            grad -= np.bincount(self.pj, weights=resid, minlength=k)
            v = self.pn * p * (1.0 - p)
        for block in self.blocks:
            ev, terms = self._block(block, theta)
            total += float(ev.ll.sum())
            grad += np.bincount(block.players.ravel(), weights=ev.grad.ravel(), minlength=k)
            info = self._block_info(ev, terms, block.sizes)
            players = block.players
            rows.append(np.broadcast_to(players[:, :, None], info.shape).ravel())
            cols.append(np.broadcast_to(players[:, None, :], info.shape).ravel())
            vals.append(info.ravel())
        return total, grad, self._with_pairs(_join(k, rows, cols, vals), v)

    @staticmethod
    def _block_info(ev: _BlockEval, terms: list[TieTerms], sizes: tuple[int, ...]) -> FloatArray:
        """Each match's n x n information block: diag(g * coef) - g g^T * K, where K[x, y]
        sums w / Z^2 over the sets holding both seats (the tails of the groups above the
        earlier one, plus the earlier one's own stages)."""
        m_count, n = ev.gamma.shape
        group = np.repeat(np.arange(len(sizes)), sizes)
        above = np.zeros((m_count, len(sizes)))  # sum of w / Z^2 over the groups above
        own = np.zeros((m_count, n))  # the seat's own group's stages
        start = 0
        for index, (m, t) in enumerate(zip(sizes, terms, strict=True)):
            if index + 1 < len(sizes):
                above[:, index + 1] = above[:, index] + t.b2
            own[:, start : start + m] = t.a2
            start += m
        earlier = above[:, group] + own  # K[x, y] for x in an earlier group than y
        first = group[:, None] <= group[None, :]
        shared = np.where(first[None, :, :], earlier[:, :, None], earlier[:, None, :])
        start = 0
        for index, (m, t) in enumerate(zip(sizes, terms, strict=True)):
            if m > 1:
                span = slice(start, start + m)
                shared[:, span, span] = above[:, index, None, None] + t.pair
            start += m
        info = -ev.gamma[:, :, None] * ev.gamma[:, None, :] * shared
        diag = np.arange(n)
        info[:, diag, diag] += ev.gamma * ev.coef
        return info

    def meat(self, theta: FloatArray) -> Sparse:
        """Sum over matches of the outer product of each match's own gradient (at the fit)."""
        k = self.k
        rows: list[IntArray] = []
        cols: list[IntArray] = []
        vals: list[FloatArray] = []
        v = _NO_VALUE
        if len(self.pi):
            p = 1.0 / (1.0 + np.exp(self.theta_diff(theta)))
            v = np.maximum(self.pq - 2.0 * p * self.ps + self.pn * p * p, 0.0)
        for block in self.blocks:
            g = self._block(block, theta)[0].grad
            outer = g[:, :, None] * g[:, None, :]
            players = block.players
            rows.append(np.broadcast_to(players[:, :, None], outer.shape).ravel())
            cols.append(np.broadcast_to(players[:, None, :], outer.shape).ravel())
            vals.append(outer.ravel())
        return self._with_pairs(_join(k, rows, cols, vals), v)

    def _with_pairs(self, entries: Sparse, v: FloatArray) -> Sparse:
        """``entries`` (the multi-seat matches') plus the pairs' terms of value ``v``."""
        if not len(self.pi):
            return entries
        return Sparse(self.k, entries.rows, entries.cols, entries.vals, self.pi, self.pj, v)

    def theta_diff(self, theta: FloatArray) -> FloatArray:
        """theta_j - theta_i per aggregated pair (so that sigmoid(-diff) is i's expectation)."""
        return theta[self.pj] - theta[self.pi]


def _sum_at(keys: IntArray, weights: FloatArray, length: int) -> FloatArray:
    """``out[i]`` = the sum of the weights whose key is i (a weighted bincount, typed)."""
    return np.bincount(keys, weights=weights, minlength=length).astype(np.float64, copy=False)


def _join(k: int, rows: list[IntArray], cols: list[IntArray], vals: list[FloatArray]) -> Sparse:
    if not rows:
        return Sparse(k, _NO_INDEX, _NO_INDEX, _NO_VALUE)
    return Sparse(k, np.concatenate(rows), np.concatenate(cols), np.concatenate(vals))


def aggregate_pairs(
    first: IntArray, second: IntArray, score: FloatArray, k: int, weight: FloatArray | None = None
) -> tuple[IntArray, IntArray, FloatArray, FloatArray, FloatArray]:
    """Games -> unordered pairs (i < j): games n, i's points S, sum of i's squared scores Q.
    ``weight``: the games each entry stands for (default 1 each).

    The pairs are found by sorting the games' keys, so the cost follows the games, not k^2."""
    w = np.ones(len(score)) if weight is None else weight
    s = np.where(first > second, 1.0 - score, score)
    met = np.minimum(first, second).astype(np.int64) * k  # the pair's key: lo * k + hi
    met += np.maximum(first, second)
    keys, inverse = np.unique(met, return_inverse=True)
    del met
    inverse = inverse.ravel()
    n = np.bincount(inverse, weights=w, minlength=len(keys))
    pts = np.bincount(inverse, weights=s * w, minlength=len(keys))
    sq = np.bincount(inverse, weights=s * s * w, minlength=len(keys))
    return (
        (keys // k).astype(np.intp),
        (keys % k).astype(np.intp),
        n.astype(np.float64),
        pts.astype(np.float64),
        sq.astype(np.float64),
    )
