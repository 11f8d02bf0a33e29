"""What the ratings read: the seats of done matches with their bot versions, as plain rows
(``arena.ratings`` turns them into its own game results).

A leaderboard reads through ``reads_of`` (``rated_sql.py``'s SQL text, which a read command
also runs on the standard library's ``sqlite3``); the ORM queries below are the reference it is
tested against. Two ways to read a selection: every ranked seat (``rated_seats``: per-match
results, for fits that follow the play order), or two-player matches summed per ordered pair
of versions in SQL (``pair_totals``, with ``faulted_seats`` for the fault counts and
``rated_seats(multi=True)`` for the matches of more seats): O(pairs) rows whatever the number
of matches.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Select, case, func, select, text
from sqlalchemy.orm import Session, aliased

from bot_arena.db.models import Bot, BotVersion, Match, Seat
from bot_arena.db.rated_sql import PairTotalRow as PairTotalRow
from bot_arena.db.rated_sql import RatedReads
from bot_arena.db.rated_sql import RatedSeat as RatedSeat
from bot_arena.db.stored import lenient, malformed_matches

SelectT = TypeVar("SelectT", bound="Select[*tuple[Any, ...]]")


def latest_game(session: Session) -> str | None:
    """The game of the most recently finished match (None on an empty database)."""
    return session.scalars(
        select(Match.game)
        .where(Match.status == "done")
        .order_by(Match.finished.desc(), Match.id.desc())
        .limit(1)
    ).first()


def game_played(session: Session, game: str) -> bool:
    """Whether any match of ``game`` is stored (whatever its status)."""
    return session.scalars(select(Match.id).where(Match.game == game).limit(1)).first() is not None


def done_in(query: SelectT, tournament_id: int | None, game: str | None) -> SelectT:
    """``query`` (over ``Match``) kept to the done matches of the selection (of a tournament,
    of a game, or all): what every reader of results selects."""
    query = query.where(Match.status == "done")
    if tournament_id is not None:
        query = query.where(Match.tournament_id == tournament_id)
    if game is not None:
        query = query.where(Match.game == game)
    return query


def rated_seats(
    session: Session,
    *,
    tournament_id: int | None = None,
    game: str | None = None,
    multi: bool = False,
) -> list[RatedSeat]:
    """The ranked seats of the done matches (of a tournament, of a game, or all), in play
    order: by finish time, then match, then seat. ``multi``: only matches of more than two
    seats (the rest is ``pair_totals``')."""
    query = (
        select(Match.id, Seat.rank, lenient(Seat.fault), Bot.name, BotVersion.sha256, Match.sandbox)
        .join(Seat, Seat.match_id == Match.id)
        .join(BotVersion, BotVersion.id == Seat.bot_version_id)
        .join(Bot, Bot.id == BotVersion.bot_id)
        .where(Seat.rank.is_not(None))
        .order_by(Match.finished, Match.id, Seat.seat)
    )
    query = done_in(query, tournament_id, game)
    if multi:
        query = query.where(Match.players > 2)
    rows = list(session.execute(query))
    bad = malformed_matches((match_id, fault) for match_id, _, fault, *_ in rows)
    return [
        RatedSeat(
            match_id,
            int(rank),
            str(fault.get("termination")) if fault else None,
            name,
            sha,
            sandbox,
        )
        for match_id, rank, fault, name, sha, sandbox in rows
        if match_id not in bad
    ]


def faulted_seats(
    session: Session, *, tournament_id: int | None = None, game: str | None = None
) -> tuple[list[tuple[str, str, str]], set[int]]:
    """The faults of the ranked seats of the selection's two-player matches, as (bot name,
    version SHA-256, termination), and the matches whose stored fault is malformed (said on
    stderr; ``pair_totals`` leaves them out as ``rated_seats`` does)."""
    query = (
        select(Match.id, lenient(Seat.fault), Bot.name, BotVersion.sha256)
        .join(Seat, Seat.match_id == Match.id)
        .join(BotVersion, BotVersion.id == Seat.bot_version_id)
        .join(Bot, Bot.id == BotVersion.bot_id)
        .where(Match.players == 2, Seat.rank.is_not(None), Seat.fault.is_not(None))
        .order_by(Match.id, Seat.seat)
    )
    rows = list(session.execute(done_in(query, tournament_id, game)))
    bad = malformed_matches((match_id, fault) for match_id, fault, *_ in rows)
    faults = [
        (name, sha, str(fault.get("termination")))
        for match_id, fault, name, sha in rows
        if fault and match_id not in bad
    ]
    return faults, bad


def pair_totals(
    session: Session,
    *,
    tournament_id: int | None = None,
    game: str | None = None,
    leave_out: set[int] | frozenset[int] = frozenset(),
) -> list[PairTotalRow]:
    """The selection's two-player matches (both seats ranked) summed per ordered pair of
    versions and sandbox level by GROUP BY: one row per pair that met, whatever the number
    of matches. ``leave_out``: match ids (malformed ones, see ``faulted_seats``)."""
    first, second = aliased(Seat), aliased(Seat)

    def count(condition: ColumnElement[bool]) -> ColumnElement[int]:
        return func.sum(case((condition, 1), else_=0))

    summed = (
        select(
            first.bot_version_id.label("first"),
            second.bot_version_id.label("second"),
            Match.sandbox.label("sandbox"),
            count(first.rank < second.rank).label("wins"),
            count(first.rank == second.rank).label("draws"),
            count(first.rank > second.rank).label("losses"),
        )
        .join(first, (first.match_id == Match.id) & (first.seat == 0))
        .join(second, (second.match_id == Match.id) & (second.seat == 1))
        .where(Match.players == 2, first.rank.is_not(None), second.rank.is_not(None))
        .group_by(first.bot_version_id, second.bot_version_id, Match.sandbox)
    )
    summed = done_in(summed, tournament_id, game)
    if leave_out:
        summed = summed.where(Match.id.not_in(sorted(leave_out)))
    totals = summed.subquery()
    version_a, version_b = aliased(BotVersion), aliased(BotVersion)
    bot_a, bot_b = aliased(Bot), aliased(Bot)
    query = (
        select(
            bot_a.name,
            version_a.sha256,
            bot_b.name,
            version_b.sha256,
            totals.c.sandbox,
            totals.c.wins,
            totals.c.draws,
            totals.c.losses,
        )
        .select_from(totals)
        .join(version_a, version_a.id == totals.c.first)
        .join(bot_a, bot_a.id == version_a.bot_id)
        .join(version_b, version_b.id == totals.c.second)
        .join(bot_b, bot_b.id == version_b.bot_id)
    )
    return [
        PairTotalRow((a, sha_a), (b, sha_b), sandbox, int(w), int(d), int(lost))
        for a, sha_a, b, sha_b, sandbox, w, d, lost in session.execute(query)
    ]


def reads_of(session: Session) -> RatedReads:
    """``rated_sql``'s reads run on ``session``'s connection (in its transaction)."""
    dialect = session.get_bind().dialect.name
    json_text = dialect == "sqlite"

    def rows(sql: str, params: Mapping[str, Any]) -> Iterable[Sequence[Any]]:
        return session.execute(text(sql), dict(params)).all()

    return RatedReads(rows, json_text=json_text, dialect=dialect)
