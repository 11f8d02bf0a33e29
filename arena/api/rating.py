"""``rate``: ratings of results played here (a Tournament) or elsewhere (a PGN or CSV file),
the rows ``arena rate FILE --json`` prints."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bot_arena.arena.api.errors import ArenaError

if TYPE_CHECKING:
    from bot_arena.arena.api.tournaments import Tournament
    from bot_arena.arena.ratings.outcomes import GameResult


def rate(
    results: str | os.PathLike[str] | Tournament | Sequence[GameResult],
    *,
    method: str = "ml",
    center: float = 1500.0,
    anchor: tuple[str, float] | None = None,
    k: float = 16.0,
) -> list[dict[str, Any]]:
    """Rate ``results``: a PGN (White/Black/Result tags) or CSV file's path, a Tournament
    this API played, or GameResults. ``method``: ``ml`` (maximum likelihood) or ``elo``
    (sequential, ``k``); ``anchor``: a bot held at a fixed Elo. Unreadable or unratable
    results raise ArenaError with the CLI's message."""
    from bot_arena.arena.api.tournaments import Tournament
    from bot_arena.arena.formats.results_file import read_results
    from bot_arena.arena.ratings import RatingInputError
    from bot_arena.arena.ratings.outcomes import GameResult
    from bot_arena.arena.ratings.query import LeaderboardError
    from bot_arena.arena.ratings.query import rate as fit
    from bot_arena.arena.ratings.render import json_rows

    try:
        if isinstance(results, str | os.PathLike):
            games = read_results(str(os.fspath(results)))
        elif isinstance(results, Tournament):
            games = [
                GameResult(
                    tuple(s["bot"] for s in m["seats"]), tuple(s["rank"] for s in m["seats"])
                )
                for m in results.matches
            ]
        else:
            games = list(results)
        return json_rows(fit(games, method=method, center=center, anchor=anchor, k=k))
    except (RatingInputError, LeaderboardError) as exc:
        raise ArenaError(str(exc)) from None
