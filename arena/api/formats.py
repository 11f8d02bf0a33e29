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
    after them, in field order. Ratings of separate pools do not compare: the pool of the best
    rated bot first."""
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

    def key(i: int) -> tuple[int, int, float, int]:
        ref = refs[i]
        row = by_key.get(f"{ref.name}@{ref.sha256[:SHORT_HASH]}") or by_key.get(ref.name)
        return (0, row.pool, -row.elo, i) if row else (1, 0, 0.0, i)

    return sorted(range(len(refs)), key=key)
