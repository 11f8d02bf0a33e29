"""The Plackett-Luce stages of one tie group, vectorised over the matches that share it.

A tie group G (``m`` players, strengths ``g = exp(theta)``) placed above players whose strengths
sum to ``B`` contributes ``sum_G theta - sum_s w_s log Z_s`` to the log-likelihood, over its
stages ``s``; ``Z_s = sum_x f_sx g_x + B`` (``f_sx`` is 1 for a member, 0 for one already
placed, a fraction in the approximation below). Shared ties (docs/ratings.md) average the
Plackett-Luce log-likelihood over the orders of G:

* ``m <= EXACT_TIE_LIMIT``: exactly, a stage per subset T of G placed first (``|T| < m``,
  weight ``1 / C(m, |T|)``, the rest of G remaining): at most 2^10 stages, a constant.
* larger groups: an O(m) approximation. The first stage (all of G remain) and the last (one
  member remains: the mean of ``log(g_x + B)``) are exact; in between, ``k`` members placed at
  random leave on average the fraction ``(m - k) / m`` of G's strength, and that stage is
  ``log((m - k)/m * sum_G g + B)``. It is exact when the tied players are equally strong (their
  fitted ratings when they only ever tie each other), symmetric in G, and concave in theta.

The caller needs, per match, with q_s = w_s / Z_s: the stages' ``sum w log Z`` (``lse``), each
member's ``sum_s q_s f_sx`` (``a1``) and the tail's ``sum_s q_s`` (``b1``), and the same with
``w_s / Z_s^2`` (``a2``, ``b2``, and ``pair[x, y] = sum_s w_s f_sx f_sy / Z_s^2`` between two
members) for the information matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from math import comb

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

#: Tie groups up to this size are shared exactly (at most 2^m - 1 stages); larger ones in O(m).
EXACT_TIE_LIMIT = 10


@dataclass(frozen=True, slots=True)
class TieTerms:
    """One tie group's stages over M matches (see the module docstring for each field)."""

    lse: FloatArray  # (M,)
    a1: FloatArray  # (M, m)
    b1: FloatArray  # (M,)
    a2: FloatArray  # (M, m)
    b2: FloatArray  # (M,)
    pair: FloatArray  # (M, m, m)


@lru_cache(maxsize=16)
def _subsets(m: int) -> tuple[FloatArray, FloatArray]:
    """Remaining members (stages x m, 0/1) and weights of the exact shared tie of ``m``."""
    rows: list[list[float]] = []
    weights: list[float] = []
    for k in range(m):
        for taken in combinations(range(m), k):
            rows.append([0.0 if x in taken else 1.0 for x in range(m)])
            weights.append(1.0 / comb(m, k))
    return np.asarray(rows), np.asarray(weights)


def tie_terms(gamma: FloatArray, below: FloatArray) -> TieTerms:
    """The stages of a tie group: ``gamma`` (M, m) its members' strengths, ``below`` (M,) the
    summed strength of the players ranked below it in each match."""
    m = gamma.shape[1]
    if m == 1:  # one stage: the member and everyone below
        z = gamma[:, 0] + below
        q1, q2 = 1.0 / z, 1.0 / (z * z)
        return TieTerms(np.log(z), q1[:, None], q1, q2[:, None], q2, q2[:, None, None])
    if m <= EXACT_TIE_LIMIT:
        remain, w = _subsets(m)
        z = gamma @ remain.T + below[:, None]  # (M, stages)
        q1, q2 = w / z, w / (z * z)
        pair = np.einsum("ps,sx,sy->pxy", q2, remain, remain)
        return TieTerms(
            np.log(z) @ w, q1 @ remain, q1.sum(axis=1), q2 @ remain, q2.sum(axis=1), pair
        )
    total = gamma.sum(axis=1)
    frac = (m - np.arange(m - 1)) / m  # stages k = 0 .. m-2: (m - k) / m of G remains
    z = frac[None, :] * total[:, None] + below[:, None]  # (M, m-1)
    single = gamma + below[:, None]  # the last stage: one member x remains
    r1, r2 = 1.0 / z, 1.0 / (z * z)
    s1, s2 = 1.0 / (m * single), 1.0 / (m * single * single)
    common = (r2 * frac * frac).sum(axis=1)
    pair = np.broadcast_to(common[:, None, None], (len(total), m, m)).copy()
    pair[:, np.arange(m), np.arange(m)] += s2
    return TieTerms(
        np.log(z).sum(axis=1) + np.log(single).sum(axis=1) / m,
        (r1 * frac).sum(axis=1)[:, None] + s1,
        r1.sum(axis=1) + s1.sum(axis=1),
        (r2 * frac).sum(axis=1)[:, None] + s2,
        r2.sum(axis=1) + s2.sum(axis=1),
        pair,
    )
