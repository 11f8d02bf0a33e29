"""A report's ratings over time: the rated two-player matches in play order, as three numbers a
match (first version, second version, outcome), streamed.

The report refits its ratings after each tenth of the games. Read as results (``rated_seats``:
a row a seat, each turned into an object) a million matches held a gigabyte; here a match is a
row of three integers, read in batches, which the report sums per ordered pair as it goes
(``pair_totals``' sums, cut at each tenth).
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy import case, select
from sqlalchemy.orm import Session, aliased

from bot_arena.db.models import Bot, BotVersion, Match, Seat
from bot_arena.db.results import done_in
from bot_arena.db.stored import Malformed, lenient

#: Rows fetched at a time from the stream.
BATCH = 20_000
WIN, DRAW, LOSS = 0, 1, 2  # the first seat's outcome


def _malformed(session: Session, tournament_id: int | None, game: str | None) -> set[int]:
    """The matches ``pair_totals`` leaves out (a malformed stored fault), found silently: the
    leaderboard's read of the same selection says them."""
    query = (
        select(Match.id, lenient(Seat.fault))
        .join(Seat, Seat.match_id == Match.id)
        .where(Match.players == 2, Seat.rank.is_not(None), Seat.fault.is_not(None))
    )
    rows = session.execute(done_in(query, tournament_id, game))
    return {match_id for match_id, fault in rows if isinstance(fault, Malformed)}


def two_player_outcomes(
    session: Session, *, tournament_id: int | None = None, game: str | None = None
) -> Iterator[list[tuple[int, int, int]]]:
    """(first seat's version id, second's, WIN/DRAW/LOSS of the first) of each rated
    two-player done match of the selection, in play order (finish time, then id): the matches
    ``pair_totals`` sums. Yielded in lists of at most ``BATCH``, read as plain rows (no ORM
    row a match)."""
    first, second = aliased(Seat), aliased(Seat)
    outcome = case((first.rank < second.rank, WIN), (first.rank == second.rank, DRAW), else_=LOSS)
    query = (
        select(Match.id, first.bot_version_id, second.bot_version_id, outcome)
        .join(first, (first.match_id == Match.id) & (first.seat == 0))
        .join(second, (second.match_id == Match.id) & (second.seat == 1))
        .where(Match.players == 2, first.rank.is_not(None), second.rank.is_not(None))
        .order_by(Match.finished, Match.id)
    )
    bad = _malformed(session, tournament_id, game)
    connection = session.connection().execution_options(yield_per=BATCH)
    for part in connection.execute(done_in(query, tournament_id, game)).partitions():
        yield [(a, b, how) for match_id, a, b, how in part if match_id not in bad]


def version_names(session: Session, ids: set[int]) -> dict[int, tuple[str, str]]:
    """Each version id's (bot name, SHA-256)."""
    query = select(BotVersion.id, Bot.name, BotVersion.sha256).join(
        Bot, Bot.id == BotVersion.bot_id
    )
    wanted = sorted(ids)
    out: dict[int, tuple[str, str]] = {}
    for start in range(0, len(wanted), 500):
        some = wanted[start : start + 500]
        for vid, name, sha in session.execute(query.where(BotVersion.id.in_(some))):
            out[vid] = (name, sha)
    return out
