"""Read-only queries over tournaments and matches (what the tournament and matches commands show).

They return plain rows; what is computed from them (standings, crosstables) lives above, in
``arena.ratings``, so each rule has one home.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Integer, Select, func, select, text
from sqlalchemy.orm import Session, aliased, selectinload

from bot_arena.db.models import Bot, BotVersion, Entry, Match, Seat, Tournament
from bot_arena.db.pair_totals import AMONG_ROWS, SEAT_ROWS, summed_of
from bot_arena.db.stored import lenient, load_each, malformed_matches


@dataclass(slots=True)
class SeatRow:
    bot: str
    rank: int
    score: float
    fault: str | None  # termination value of the seat's fault


@dataclass(slots=True)
class Result:
    match_id: int
    seats: list[SeatRow]


def status_counts(session: Session, tournament_id: int) -> dict[str, int]:
    rows = session.execute(
        select(Match.status, func.count())
        .where(Match.tournament_id == tournament_id)
        .group_by(Match.status)
    )
    counts = {"pending": 0, "running": 0, "done": 0, "void": 0}
    for status, count in rows:
        counts[status] = int(count)
    return counts


def open_starts(session: Session, tournament_id: int) -> list[tuple[str, str | None]]:
    """The distinct starts of a tournament's matches still to play: each one's opening moves
    (space-separated) and start position (None: the initial position)."""
    rows = session.execute(
        select(Match.opening, Match.start_position)
        .where(Match.tournament_id == tournament_id, Match.status.in_(("pending", "running")))
        .distinct()
    )
    return [(opening, position) for opening, position in rows]


def sandbox_counts(session: Session, tournament_id: int) -> dict[str | None, int]:
    """The done matches of a tournament by the sandbox level their bots ran under (None: stored
    before the arena recorded it); levels without a match are left out."""
    rows = session.execute(
        select(Match.sandbox, func.count())
        .where(Match.tournament_id == tournament_id, Match.status == "done")
        .group_by(Match.sandbox)
    )
    return {level: int(count) for level, count in rows}


def entry_names(session: Session, tournament_id: int) -> list[str]:
    """The field in order, by bot name."""
    return list(
        session.scalars(
            select(Bot.name)
            .join(BotVersion, BotVersion.bot_id == Bot.id)
            .join(Entry, Entry.bot_version_id == BotVersion.id)
            .where(Entry.tournament_id == tournament_id)
            .order_by(Entry.position)
        )
    )


def results(session: Session, tournament_id: int | None = None) -> list[Result]:
    """Done matches (of a tournament, or all), seats in seat order, oldest first."""
    query = (
        select(Seat.match_id, Bot.name, Seat.rank, Seat.score, lenient(Seat.fault))
        .join(Match, Match.id == Seat.match_id)
        .join(BotVersion, BotVersion.id == Seat.bot_version_id)
        .join(Bot, Bot.id == BotVersion.bot_id)
        .where(Match.status == "done")
        .order_by(Seat.match_id, Seat.seat)
    )
    if tournament_id is not None:
        query = query.where(Match.tournament_id == tournament_id)
    rows = list(session.execute(query))
    bad = malformed_matches((row[0], row[4]) for row in rows)
    out: list[Result] = []
    for match_id, name, rank, score, fault in rows:
        if match_id in bad:
            continue
        if not out or out[-1].match_id != match_id:
            out.append(Result(match_id, []))
        term = fault.get("termination") if isinstance(fault, dict) else None
        out[-1].seats.append(SeatRow(name, int(rank), float(score), term))
    return out


@dataclass(frozen=True, slots=True)
class PairRecord:
    """Done two-player matches of a tournament that ended alike, summed: the bots in seats 0
    and 1 (by name), their ranks and stored scores, how many matches, and the first of them
    (by id: where the pair first played)."""

    first: str
    second: str
    ranks: tuple[int, int]
    scores: tuple[float, float]
    games: int
    first_match: int


@dataclass(frozen=True, slots=True)
class SeatFault:
    """A faulted seat of a done match (in match and seat order)."""

    match_id: int
    bot: str
    termination: str | None


def two_player_only(session: Session, tournament_id: int) -> bool:
    """Whether every done match of the tournament has two seats (``pair_records`` then holds
    all its results)."""
    other = session.scalars(
        select(Match.id)
        .where(Match.tournament_id == tournament_id, Match.status == "done", Match.players != 2)
        .limit(1)
    ).first()
    return other is None


def _version_names(session: Session) -> dict[int, str]:
    """Each bot version's bot name (one small query instead of two joins per grouped row)."""
    rows = session.execute(select(BotVersion.id, Bot.name).join(Bot, Bot.id == BotVersion.bot_id))
    return {int(v): name for v, name in rows}


#: The faulted seats first (the partial index ``ix_seats_faulted``: about 1% of seats), each
#: one's match looked up by its key; CROSS JOIN keeps that order on SQLite, whose planner would
#: read every match of the tournament instead (as ``rated_sql.FAULTED``).
_SEAT_FAULTS = text(
    "SELECT m.id, s.bot_version_id, s.fault FROM seats s CROSS JOIN matches m"
    " WHERE m.id = s.match_id AND s.fault IS NOT NULL AND m.tournament_id = :tournament"
    " AND m.status = 'done' ORDER BY s.match_id, s.seat"
).columns(id=Integer, bot_version_id=Integer, fault=lenient(Seat.fault).type)


def seat_faults(session: Session, tournament_id: int) -> tuple[list[SeatFault], set[int]]:
    """The faulted seats of the tournament's done matches, and the matches whose stored fault
    is malformed (said on stderr, as ``results`` says it; ``pair_records`` leaves them out)."""
    rows = list(session.execute(_SEAT_FAULTS, {"tournament": tournament_id}))
    bad = malformed_matches((row[0], row[2]) for row in rows)
    names = _version_names(session) if rows else {}
    faults = [
        SeatFault(int(match_id), names[version], fault.get("termination"))
        for match_id, version, fault in rows
        if match_id not in bad and isinstance(fault, dict)
    ]
    return faults, bad


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """Done two-player matches of a tournament summed by one seat's bot and outcome: the bot
    (by name), its rank and stored score, the other seat's rank, how many matches."""

    bot: str
    rank: int
    score: float
    other_rank: int
    games: int


def seat_records(
    session: Session, tournament_id: int, leave_out: set[int] | frozenset[int] = frozenset()
) -> list[SeatRecord]:
    """The tournament's done two-player matches counted by (a seat's version, its rank and
    score, the other seat's rank), both seats of each match: a standings table's counts in
    rows that follow the bots and outcomes (a few per bot), not the pairs (issue 29: 632k
    pairs at 1M matches and 1,000 bots). Read from the totals the writes keep
    (``db.pair_totals``: no match read), less the ``leave_out`` matches' own (match ids)."""
    found = session.execute(text(SEAT_ROWS), {"tournament": tournament_id})
    counts: dict[tuple[int, int, float, int], int] = {
        (int(v), int(rank), float(score), int(other)): int(games)
        for v, rank, score, other, games in found
    }
    if leave_out:
        for key, games in _seat_counts(session, tournament_id, leave_out).items():
            counts[key] = counts.get(key, 0) - games
    names = _version_names(session) if counts else {}
    return [
        SeatRecord(names[v], rank, score, other_rank, games)
        for (v, rank, score, other_rank), games in counts.items()
        if games > 0
    ]


def _seat_counts(
    session: Session, tournament_id: int, among: set[int] | frozenset[int]
) -> dict[tuple[int, int, float, int], int]:
    """``seat_records``' counts of the tournament's done two-player matches ``among`` (ids),
    summed from their rows by GROUP BY (the reference the kept totals equal)."""
    own, other = aliased(Seat), aliased(Seat)
    keys = (own.bot_version_id, own.rank, own.score, other.rank)
    query = (
        select(*keys, func.count())
        .select_from(Match)
        .join(own, own.match_id == Match.id)
        .join(other, (other.match_id == Match.id) & (other.seat == 1 - own.seat))
        .where(Match.tournament_id == tournament_id, Match.status == "done", Match.players == 2)
        .where(Match.id.in_(sorted(among)))
        .group_by(*keys)
    )
    rows: list[Any] = list(session.execute(query))  # a done match's seats are ranked (CHECK)
    return {
        (int(v), int(rank), float(score), int(other_rank)): int(games)
        for v, rank, score, other_rank, games in rows
    }


def pair_records(
    session: Session,
    tournament_id: int,
    leave_out: set[int] | frozenset[int] = frozenset(),
) -> list[PairRecord]:
    """The tournament's done two-player matches grouped by GROUP BY on (seat 0's version, seat
    1's version, their ranks, their scores): what its standings and crosstable count, in rows
    that follow the pairs and outcomes, not the matches. ``leave_out``: match ids."""
    first, second = aliased(Seat), aliased(Seat)
    keys = (
        first.bot_version_id,
        second.bot_version_id,
        first.rank,
        second.rank,
        first.score,
        second.score,
    )
    query = (
        select(*keys, func.count(), func.min(Match.id))
        .join(first, (first.match_id == Match.id) & (first.seat == 0))
        .join(second, (second.match_id == Match.id) & (second.seat == 1))
        .where(Match.tournament_id == tournament_id, Match.status == "done", Match.players == 2)
        .group_by(*keys)
    )
    if leave_out:
        query = query.where(Match.id.not_in(sorted(leave_out)))
    rows: list[Any] = list(session.execute(query))  # a done match's seats are ranked (CHECK)
    names = _version_names(session) if rows else {}
    return [
        PairRecord(
            names[a],
            names[b],
            (int(rank_a), int(rank_b)),
            (float(score_a), float(score_b)),
            int(games),
            int(earliest),
        )
        for a, b, rank_a, rank_b, score_a, score_b, games, earliest in rows
    ]


@dataclass(frozen=True, slots=True)
class PairOutcomes:
    """Done two-player matches of a tournament between two bots (by name, seat 0's first):
    seat 0's wins, draws and losses by rank."""

    first: str
    second: str
    wins: int
    draws: int
    losses: int


def pair_outcomes(
    session: Session,
    tournament_id: int,
    among: set[str],
    leave_out: set[int] | frozenset[int] = frozenset(),
) -> list[PairOutcomes]:
    """The tournament's done two-player matches between the bots ``among`` (by name) per
    ordered pair of versions, by outcome: read from the totals the writes keep
    (``db.pair_totals``: a few index lookups a pair, no match read), less the ``leave_out``
    matches' own (match ids). What ``pair_records`` sums of those bots, but for the first
    match of each pair, which the kept totals do not hold."""
    names = _version_names(session)
    versions = sorted(v for v, name in names.items() if name in among)
    game = session.scalar(select(Tournament.game).where(Tournament.id == tournament_id))
    if not versions or game is None:
        return []
    ids = ", ".join(str(int(v)) for v in versions)  # ids read from the database
    params = {"tournament": tournament_id, "game": game}
    counts: dict[tuple[int, int], list[int]] = {
        (int(a), int(b)): [int(w), int(d), int(lost)]
        for a, b, w, d, lost in session.execute(text(AMONG_ROWS.format(versions=ids)), params)
    }
    if leave_out:
        gone = ", ".join(str(int(i)) for i in sorted(leave_out))
        where = f" AND m.tournament_id = :tournament AND m.id IN ({gone})"
        for _, _, a, b, _, w, d, lost in session.execute(text(summed_of(where)), params):
            if (int(a), int(b)) in counts:
                held = counts[(int(a), int(b))]
                held[0], held[1], held[2] = held[0] - int(w), held[1] - int(d), held[2] - int(lost)
    return [
        PairOutcomes(names[a], names[b], w, d, lost)
        for (a, b), (w, d, lost) in counts.items()
        if w + d + lost > 0
    ]


def _matches_query(
    tournament_id: int | None = None, bot: str | None = None, status: str | None = None
) -> Select[Match]:
    query = (
        select(Match)
        .options(selectinload(Match.seats).selectinload(Seat.version).selectinload(BotVersion.bot))
        .order_by(Match.id)
    )
    if tournament_id is not None:
        query = query.where(Match.tournament_id == tournament_id)
    if status is not None:
        query = query.where(Match.status == status)
    if bot is not None:
        query = query.where(
            Match.id.in_(
                select(Seat.match_id)
                .join(BotVersion, BotVersion.id == Seat.bot_version_id)
                .join(Bot, Bot.id == BotVersion.bot_id)
                .where(Bot.name == bot)
            )
        )
    return query


def find_matches(
    session: Session,
    tournament_id: int | None = None,
    bot: str | None = None,
    status: str | None = None,
    *,
    last: int | None = None,
) -> list[Match]:
    """Matches (of a tournament, with a bot, of a status) with their seats and bots, by id
    (one with a malformed stored value left out, said on stderr). ``last``: only the last
    that many of that list, read a page at a time from the newest id down (keyset on the
    primary key: ``id < the page's first``), so a long history is not read to show its end."""
    query = _matches_query(tournament_id, bot, status)

    def load(ids: Sequence[int]) -> list[Match]:
        return load_each(
            session, ids, lambda some: list(session.scalars(query.where(Match.id.in_(some))))
        )

    if last is None:
        return load(list(session.scalars(query.with_only_columns(Match.id))))
    found: list[Match] = []
    newest_first = query.with_only_columns(Match.id).order_by(None).order_by(Match.id.desc())
    before: int | None = None
    while len(found) < last:
        page = newest_first.limit(last - len(found))
        if before is not None:
            page = page.where(Match.id < before)
        ids = list(session.scalars(page))
        if not ids:
            break
        found = load(ids[::-1]) + found  # a malformed match left out: the next page fills in
        before = ids[-1]
    return found


def match_ids(
    session: Session, tournament_id: int | None = None, status: str | None = None
) -> list[int]:
    """The ids of the matches (of a tournament, of a status), in order."""
    query = select(Match.id).order_by(Match.id)
    if tournament_id is not None:
        query = query.where(Match.tournament_id == tournament_id)
    if status is not None:
        query = query.where(Match.status == status)
    return list(session.scalars(query))


def move_counts(session: Session, match_ids: Sequence[int]) -> dict[int, int]:
    from bot_arena.db.models import Move

    if not match_ids:
        return {}
    rows = session.execute(
        select(Move.match_id, func.count())
        .where(Move.match_id.in_(match_ids))
        .group_by(Move.match_id)
    )
    return {int(m): int(c) for m, c in rows}
