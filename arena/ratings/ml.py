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
from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

from bot_arena.arena.ratings.design import Design, FloatArray, IntArray, aggregate_pairs
from bot_arena.arena.ratings.graph import pools, strong_components
from bot_arena.arena.ratings.prepare import prepare
from bot_arena.arena.ratings.results import GameResult, RatingInputError
from bot_arena.arena.ratings.table import BotRating, Pool, RatingTable

#: Elo points per natural-log unit of strength: 10^(d/400) = e^(theta).
ELO_PER_NAT = 400.0 / math.log(10.0)
#: Two-sided 95% normal quantile.
Z95 = 1.959963984540054
#: Weight of the virtual draw each bot of an unrateable pool plays against the pool's ghost.
DEFAULT_PRIOR = 0.5

NOTE_PRIOR = "prior"
NOTE_ALL_WINS = "all wins: prior"
NOTE_ALL_LOSSES = "all losses: prior"
# A bot of a group (bots that scored against each other, round and round) that met the rest of
# its pool: nobody outside the group scored against it (wins), or it scored against nobody outside.
NOTE_GROUP_WINS = "group unbeaten by the rest: prior"
NOTE_GROUP_LOSSES = "group scored nothing against the rest: prior"
NOTE_MODEL_ERR = "model interval"


def normal_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def elo_diff(score: float) -> float:
    """The Elo difference whose expected score is ``score``: -400 log10(1/s - 1)."""
    return -400.0 * math.log10(1.0 / score - 1.0)


def expected_score(diff: float) -> float:
    return float(1.0 / (1.0 + 10.0 ** (-diff / 400.0)))


def fit_ml(
    results: Iterable[GameResult],
    *,
    center: float = 1500.0,
    anchor: tuple[str, float] | None = None,
    prior: float = DEFAULT_PRIOR,
    aggregate: bool = True,
) -> RatingTable:
    """Maximum-likelihood Elo of every bot in ``results``.

    Each pool (bots linked by games) is centred so that its average is ``center``; with
    ``anchor=(name, elo)`` the anchor's pool is shifted so that bot has exactly that rating.
    A pool where some bots won (or lost) every game against the rest has no finite maximum:
    there each bot plays ``prior`` virtual draws against a ghost of average strength, and the
    affected rows say so. ``aggregate=False`` routes two-player games through the general
    Plackett-Luce code instead of the pair counts (same numbers; kept for cross-checks).
    """
    prep = prepare(results)
    stats, names = prep.stats, prep.names
    if anchor is not None and anchor[0] not in stats:
        raise RatingInputError(f"anchor bot {anchor[0]!r} has no rated games")
    if not names:
        return RatingTable("ml", _DESCRIPTION, (), (), ("no rated games",))
    k = len(names)
    first, second, score = prep.first, prep.second, prep.score
    multi = dict(prep.groups)
    if not aggregate:  # two-player games as two-seat Plackett-Luce matches
        pair_ranks = np.stack([np.where(score < 1.0, 2, 1), np.where(score > 0.0, 2, 1)], axis=1)
        pair_ranks[score == 0.5] = 1
        multi[2] = (np.stack([first, second], axis=1), pair_ranks, prep.two_pos)
        first, second, score = first[:0], second[:0], score[:0]
    pairs = aggregate_pairs(first, second, score, k)
    adj, groups = _graph(k, pairs, multi)
    members, pairs, notes, n_ghosts = _add_ghosts(k, adj, groups, pairs, prior)

    design = Design(k + n_ghosts)
    design.set_pairs(*pairs)
    design.set_matches(multi)
    gauge = np.zeros((design.k, design.k))
    for pool in members:
        gauge[np.ix_(pool, pool)] += 1.0 / len(pool)
    theta, info = _newton(design, gauge)
    model = np.linalg.inv(info + gauge) - gauge  # I^+ in every pool's gauge
    meat = design.meat(theta)
    robust = model @ meat @ model
    flat = np.diag(meat)[:k] <= 1e-12  # no score variance at all: fall back to the model

    index = prep.index
    rows: list[BotRating] = []
    pool_rows: list[Pool] = []
    for number, pool in enumerate(members, start=1):
        real = [x for x in pool if x < k]
        if anchor is not None and index[anchor[0]] in real:
            ref: int | None = real.index(index[anchor[0]])
            offset, relative = anchor[1], f"anchor {anchor[0]} = {anchor[1]:g}"
        else:
            ref, offset, relative = None, center, f"pool average = {center:g}"
        transform = _scale(real, design.k, ref)
        estimate = _Estimate(
            elo=offset + ELO_PER_NAT * (transform @ theta),
            robust=ELO_PER_NAT**2 * (transform @ robust @ transform.T),
            model=ELO_PER_NAT**2 * (transform @ model @ transform.T),
            flat=flat[real],
        )
        order = sorted(range(len(real)), key=lambda a: (-estimate.elo[a], names[real[a]]))
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
    return RatingTable(
        "ml",
        _DESCRIPTION,
        tuple(rows),
        tuple(pool_rows),
        _table_notes(len(members), n_ghosts, prior, bool(flat.any())),
    )


Pairs = tuple[IntArray, IntArray, FloatArray, FloatArray, FloatArray]


class _Estimate:
    """One pool's ratings on the output scale with both covariances (robust and model)."""

    def __init__(
        self, elo: FloatArray, robust: FloatArray, model: FloatArray, flat: NDArray[np.bool_]
    ) -> None:
        self.elo, self.robust, self.model, self.flat = elo, robust, model, flat

    def _cov(self, *bots: int) -> FloatArray:
        return self.model if any(self.flat[b] for b in bots) else self.robust

    def error(self, a: int) -> float:
        return Z95 * math.sqrt(max(float(self._cov(a)[a, a]), 0.0))

    def los(self, a: int, b: int) -> float:
        cov = self._cov(a, b)
        return _los(float(self.elo[a] - self.elo[b]), float(cov[a, a] + cov[b, b] - 2 * cov[a, b]))


def _scale(real: list[int], size: int, ref: int | None) -> FloatArray:
    """Rows mapping theta to one pool's output scale (every row sums to 0, so the free shift
    drops out): centred on the pool mean, or minus the anchor (local index ``ref``)."""
    m = len(real)
    local = np.eye(m) - 1.0 / m if ref is None else np.eye(m) - np.eye(m)[ref][None, :]
    out = np.zeros((m, size))
    out[:, real] = local
    return out


def _graph(
    k: int, pairs: Pairs, multi: dict[int, tuple[IntArray, IntArray, IntArray]]
) -> tuple[NDArray[np.bool_], list[list[int]]]:
    """The "scored against" adjacency (i -> j: i won, drew or tied against j) and the pools."""
    pi, pj, pn, ps, _ = pairs
    adj = np.zeros((k, k), dtype=bool)
    adj[pi[ps > 0], pj[ps > 0]] = True
    adj[pj[pn - ps > 0], pi[pn - ps > 0]] = True
    link_a, link_b = [pi], [pj]
    for players, ranks, _ in multi.values():
        n = players.shape[1]
        for a in range(n):
            for b in range(n):
                hit = (ranks[:, a] <= ranks[:, b]) & (players[:, a] != players[:, b])
                adj[players[hit, a], players[hit, b]] = True
        link_a.append(np.repeat(players[:, 0], n - 1))
        link_b.append(players[:, 1:].ravel())
    return adj, pools(k, np.concatenate(link_a), np.concatenate(link_b))


def _add_ghosts(
    k: int, adj: NDArray[np.bool_], groups: list[list[int]], pairs: Pairs, prior: float
) -> tuple[list[list[int]], Pairs, dict[int, str], int]:
    """A ghost (one extra parameter) for every pool without a finite maximum: each bot of the
    pool has drawn ``prior`` games with it. Returns pools with their ghosts, the pairs with the
    virtual games, notes per bot and the number of ghosts."""
    notes: dict[int, str] = {}
    members = [list(g) for g in groups]
    ghost_i: list[int] = []
    ghost_j: list[int] = []
    ghosts = 0
    for pool in members:
        real = list(pool)
        sccs = strong_components(adj[np.ix_(real, real)]) if len(real) > 1 else [real]
        if len(sccs) <= 1:
            continue
        ghost = k + ghosts
        ghosts += 1
        ghost_i += real
        ghost_j += [ghost] * len(real)
        pool.append(ghost)
        _note_extremes(adj, real, sccs, notes)
    if not ghosts:
        return members, pairs, notes, 0
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


def _table_notes(pools_count: int, ghosts: int, prior: float, flat: bool) -> tuple[str, ...]:
    notes: list[str] = []
    if pools_count > 1:
        notes.append(
            f"{pools_count} separate pools: bots in different pools never met (even through "
            "others), so their ratings are on different scales and must not be compared"
        )
    if ghosts:
        notes.append(
            f"prior: in a pool where some bots won (or lost) every game against the rest, each "
            f"bot gets {prior:g} virtual draw against a ghost of average strength"
        )
    if flat:
        notes.append(
            "model interval: bots whose games all matched the model exactly (e.g. all draws "
            "at equal ratings) show the model-based interval, the sandwich being 0"
        )
    return tuple(notes)


_DESCRIPTION = (
    "maximum-likelihood Elo (Bradley-Terry on scores; Plackett-Luce on ranks for N players), "
    "±95% from a robust sandwich estimate, LOS = likelihood of superiority over the next bot"
)


def _note_extremes(
    adj: NDArray[np.bool_], real: list[int], sccs: list[list[int]], notes: dict[int, str]
) -> None:
    """Mark bots of source components (nobody outside scored against them) and sink
    components (they scored against nobody outside); every other bot of the pool gets the plain
    prior note.

    A group's label goes only on the members that played someone outside the group: of a member
    that only met its own group (a gauntlet's entrant, say) "scored nothing against the rest"
    reads as its own record, next to a score that may be 50%."""
    sub = adj[np.ix_(real, real)]
    met = sub | sub.T  # every game gives at least one "scored against" edge
    for comp in sccs:
        inside = np.zeros(len(real), dtype=bool)
        inside[comp] = True
        scored_on = bool(sub[np.ix_(~inside, inside)].any())
        scored = bool(sub[np.ix_(inside, ~inside)].any())
        label = NOTE_PRIOR
        single = len(comp) == 1
        if not scored_on:
            label = NOTE_ALL_WINS if single else NOTE_GROUP_WINS
        elif not scored:
            label = NOTE_ALL_LOSSES if single else NOTE_GROUP_LOSSES
        for local in comp:
            notes[real[local]] = label if met[local, ~inside].any() else NOTE_PRIOR


def _los(diff: float, var: float) -> float:
    if var <= 1e-18:
        return 1.0 if diff > 1e-9 else (0.0 if diff < -1e-9 else 0.5)
    return normal_cdf(diff / math.sqrt(var))


def _newton(design: Design, gauge: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Maximise the concave log-likelihood; ``gauge`` (sum of J/m per pool) fixes each pool's
    free shift so the Newton system is regular and the steps keep every pool's mean at 0."""
    theta = np.zeros(design.k)
    ll, grad, info = design.evaluate(theta)
    for _ in range(100):
        step = np.linalg.solve(info + gauge, grad)
        t = 1.0
        while True:
            trial = theta + t * step
            trial_ll = design.loglik(trial)
            if trial_ll >= ll - 1e-12 * max(1.0, abs(ll)) or t < 1e-8:
                break
            t *= 0.5
        theta = trial
        ll, grad, info = design.evaluate(theta)
        if float(np.max(np.abs(t * step))) < 1e-11:
            break
    return theta, info
