"""Which games a report embeds: all of them up to a limit, past it the ones that matter.

A report is one file that a browser opens whole, so its size must not follow the history: at
a million matches every game inlined is gigabytes. Past ``limit`` games the report embeds, in
this order of claim on the budget: the most recent games with a fault (up to three quarters: a
fault is what a reader comes to look at), the most recent games (up to a quarter: what just
happened), and a seeded random sample of the rest (what is typical), and says what it left
out. Only ids are read to choose (a stream, a batch at a time); the chosen games are read whole
afterwards.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI reads DEFAULT_LIMIT for --help: no database machinery for that
    from sqlalchemy.orm import Session

#: Games a report embeds unless told otherwise (``arena report --games``).
DEFAULT_LIMIT = 500
#: The sample's seed: the same database gives the same report.
SEED = 1


@dataclass(frozen=True, slots=True)
class Picks:
    """The ids to embed, in play order, and what they stand for."""

    ids: list[int] | None  # None: every game (the history is within the limit)
    total: int  # done matches
    faulted: int  # done matches with a fault
    faulted_kept: int
    recent: int  # the most recent games kept (faulted ones among them not counted twice)
    sampled: int

    @property
    def embedded(self) -> int:
        return self.total if self.ids is None else len(self.ids)

    @property
    def limited(self) -> bool:
        return self.ids is not None


def pick(session: Session, *, tournament_id: int | None, game: str | None, limit: int) -> Picks:
    """The games a report of this tournament and/or game embeds, at most ``limit`` of them."""
    from bot_arena.db.played import count_done, faulted_ids, match_ids

    total = count_done(session, tournament_id=tournament_id, game=game)
    if total <= limit:
        return Picks(None, total, 0, 0, 0, 0)
    nfaulted, faulted = faulted_ids(
        session, tournament_id=tournament_id, game=game, limit=limit - limit // 4
    )
    kept = set(faulted)
    want_recent = min(limit // 4, limit - len(kept))
    rng = random.Random(SEED)
    # positions to sample from: a few more than needed, since some are faulted or recent
    room = limit - len(kept) - want_recent
    spare = min(total, room + len(kept) + want_recent)
    sample_at = set(rng.sample(range(total), spare)) if room > 0 else set()
    last: deque[tuple[int, int]] = deque(maxlen=len(kept) + want_recent)
    sampled: list[tuple[int, int]] = []
    order: dict[int, int] = {}  # a kept id's position in play order
    stream = match_ids(session, tournament_id=tournament_id, game=game)
    for position, mid in enumerate(stream):
        if mid in kept:
            order[mid] = position
        if position in sample_at:
            sampled.append((position, mid))
        last.append((position, mid))
    recent = [(p, m) for p, m in reversed(last) if m not in kept][:want_recent]
    kept.update(m for _, m in recent)
    rest = [(p, m) for p, m in sampled if m not in kept]
    chosen = rest if len(rest) <= room else rng.sample(rest, room)
    for p, m in (*recent, *chosen):
        order[m] = p
        kept.add(m)
    ids = sorted(kept, key=lambda m: order.get(m, total))
    return Picks(ids, total, nfaulted, len(faulted), len(recent), len(chosen))
