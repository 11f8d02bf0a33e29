"""The one home of the score <-> Elo conversion: the logistic curve every rating here uses.

A player ``diff`` Elo stronger is expected to score ``1 / (1 + 10^(-diff / 400))``; the inverse
is ``diff = -400 log10(1/s - 1)``. In natural units ``theta = diff / ELO_PER_NAT`` the curve is
the logistic ``1 / (1 + e^(-theta))`` (what the likelihood fits work in), and normalized Elo
(nElo) counts in ``NELO_PER_T`` per unit of t = (mu - 1/2) / sigma. ``ml`` (the maximum
likelihood fit), ``online_elo`` (sequential updates) and ``sprt_stats`` (the SPRT's estimates and
its logistic hypotheses) all call this module, so the constants and the curve are written once.
"""

from __future__ import annotations

import math

#: Elo points per natural-log unit of strength: 10^(d/400) = e^(theta).
ELO_PER_NAT = 400.0 / math.log(10.0)
#: nElo per unit of t = (mu - 1/2) / sigma of one game (fishtest's ``nelo_divided_by_nt``).
NELO_PER_T = 2.0 * ELO_PER_NAT
# above this exponent of 10 the expected score is 0.0 to a double's precision (10^300 is
# finite; 10^309 would overflow)
_LARGEST_EXPONENT = 300.0


def expected_score(diff: float) -> float:
    """The score a player ``diff`` Elo stronger than its opponent is expected to make, in
    [0, 1]: ``1 / (1 + 10^(-diff / 400))``, 0.0 where the power would overflow."""
    exponent = -diff / 400.0
    if exponent > _LARGEST_EXPONENT:
        return 0.0
    return 1.0 / (1.0 + math.pow(10.0, exponent))


def elo_diff(score: float) -> float:
    """The Elo difference whose expected score is ``score`` (0 < score < 1): the inverse of
    ``expected_score``, ``-400 log10(1/s - 1)``. 0.75 is 190.85 Elo, 0.5 is 0."""
    return -400.0 * math.log10(1.0 / score - 1.0)
