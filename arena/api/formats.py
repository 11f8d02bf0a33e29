"""What a format made as it goes stores when it is created (a Swiss's rounds, a knockout's
seeding), for ``arena tournament run`` and ``tournament()`` alike."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from bot_arena.arena.match.botref import BotRef

SEEDINGS = ("order", "rating")


def format_settings(
    fmt: str,
    games: int | None,
    rounds: int | None,
    seeding: str,
    tiebreak_pairs: int,
    factory: sessionmaker[Session],
    game: str,
    refs: list[BotRef],
) -> dict[str, Any] | None:
    """The settings of a Swiss or a knockout of ``refs`` (None for the formats stored whole);
    a knockout seeded by ``rating`` reads the bots' ratings in ``game`` from the database."""
    per = games if games is not None else 2
    if fmt == "swiss":
        from bot_arena.arena.tournament.directors.swiss import default_rounds

        return {"rounds": rounds or default_rounds(len(refs)), "games": per}
    if fmt == "knockout":
        order = list(range(len(refs)))
        if seeding == "rating":
            order = rating_order(factory, game, refs)
        return {
            "seeding": order,
            "seeded_by": seeding,
            "games": per,
            "tiebreak_pairs": tiebreak_pairs,
        }
    return None


def rating_order(factory: sessionmaker[Session], game: str, refs: list[BotRef]) -> list[int]:
    """Field positions best first by the bots' current ratings in ``game`` (maximum
    likelihood over every stored result, the version that plays here); bots without a rating
    after them, in field order, so the byes (the top seeds') go to rated bots first.

    Ratings of separate pools (bots never linked by games) do not compare, and the pools come
    in no order of strength: each pool's best bot of the field goes before any pool's second,
    and so on (``interleaved``), so the weakest bot of one pool is never seeded above the best
    of another."""
    from bot_arena.arena.ratings.outcomes import RatingInputError
    from bot_arena.arena.ratings.query import (
        SHORT_HASH,
        LeaderboardError,
        rate,
        select_results,
    )

    with factory() as session:
        try:
            selection = select_results(session, game=game)
            table = rate(selection.results)
        except (LeaderboardError, RatingInputError):
            return list(range(len(refs)))
    by_key = {r.bot: r for r in table.rows}
    rated: dict[int, tuple[int, float]] = {}  # field position -> (pool, Elo)
    for i, ref in enumerate(refs):
        row = by_key.get(f"{ref.name}@{ref.sha256[:SHORT_HASH]}") or by_key.get(ref.name)
        if row is not None:
            rated[i] = (row.pool, row.elo)
    order = interleaved(rated)
    return [*order, *(i for i in range(len(refs)) if i not in rated)]


def interleaved(rated: dict[int, tuple[int, float]]) -> list[int]:
    """Field positions of rated bots (``rated``: position -> (pool, Elo)) in seeding order:
    by rank within their pool (each pool's best first), then by Elo, then by position."""
    rank: dict[int, int] = {}
    for pool in {pool for pool, _ in rated.values()}:
        members = sorted((i for i in rated if rated[i][0] == pool), key=lambda i: -rated[i][1])
        rank.update((i, r) for r, i in enumerate(members))
    return sorted(rated, key=lambda i: (rank[i], -rated[i][1], i))
