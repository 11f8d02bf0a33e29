"""What both maximum-likelihood fits share (``ml.py`` with numpy, ``ml_small.py`` without):
the description, the notes, the 95% quantile and the likelihood of superiority. Kept free of
numpy so that a small leaderboard rates without loading it."""

from __future__ import annotations

import math

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
NOTE_APPROXIMATE = (
    "approximate intervals: in a pool of more than {limit:,} bots each interval is the bot's "
    "own, its opponents' ratings taken as known (their uncertainty is left out)"
)


#: Ratings that agree to this many decimals (of an Elo point) are tied: listed by name.
TIE_DECIMALS = 6


def rank_key(elo: float, name: str) -> tuple[float, str]:
    """The order of a pool's rows: best first, ties by name. Ratings equal in exact arithmetic
    (bots with the same record against the same field) come out of a fit a rounding error
    apart, in an order that depends on the arithmetic (numpy's LAPACK or ``ml_small``'s own
    elimination); rounded, they are listed by name whichever fit ran."""
    return -round(elo, TIE_DECIMALS), name


def normal_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def los(diff: float, var: float) -> float:
    if var <= 1e-18:
        return 1.0 if diff > 1e-9 else (0.0 if diff < -1e-9 else 0.5)
    return normal_cdf(diff / math.sqrt(var))


def table_notes(pools_count: int, ghosts: int, prior: float, flat: bool) -> tuple[str, ...]:
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


DESCRIPTION = (
    "maximum-likelihood Elo (Bradley-Terry on scores; Plackett-Luce on ranks for N players), "
    "±95% from a robust sandwich estimate, LOS = likelihood of superiority over the next bot"
)
