"""Read-only queries over tournaments and matches (what the tournament and matches commands show).

Aggregates are computed here in Python from compact rows, not in SQL, so the same code serves
SQLite and PostgreSQL and the N-player arithmetic (pairwise points from ranks) stays readable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session, selectinload

from bot_arena.db.models import Bot, BotVersion, Entry, Match, Seat, Tournament
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


@dataclass(slots=True)
class Standing:
    bot: str
    games: int = 0
    points: float = 0.0
    wins: int = 0  # first place alone
    draws: int = 0  # first place shared (two players: a draw)
    losses: int = 0
    rank_sum: int = 0
    faults: dict[str, int] = field(default_factory=dict)

    @property
    def score_pct(self) -> float:
        return 100.0 * self.points / self.games if self.games else 0.0

    @property
    def average_rank(self) -> float:
        return self.rank_sum / self.games if self.games else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "games": self.games,
            "points": self.points,
            "score_pct": round(self.score_pct, 2),
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "average_rank": round(self.average_rank, 3),
            "faults": dict(self.faults),
        }


def standings(rows: Sequence[Result], names: Sequence[str] = ()) -> list[Standing]:
    """The table by score (points / games), best first; ``names`` are listed even without games."""
    table: dict[str, Standing] = {n: Standing(n) for n in names}
    for result in rows:
        firsts = sum(1 for s in result.seats if s.rank == 1)
        for seat in result.seats:
            st = table.setdefault(seat.bot, Standing(seat.bot))
            st.games += 1
            st.points += seat.score
            st.rank_sum += seat.rank
            if seat.rank == 1 and firsts == 1:
                st.wins += 1
            elif seat.rank == 1:
                st.draws += 1
            else:
                st.losses += 1
            if seat.fault and seat.fault != "resign":  # a person's resignation: a loss only
                st.faults[seat.fault] = st.faults.get(seat.fault, 0) + 1
    return sorted(table.values(), key=lambda s: (-s.score_pct, -s.points, s.bot))


def crosstable(rows: Sequence[Result]) -> dict[str, dict[str, tuple[float, int]]]:
    """``table[a][b]`` = (points of a against b, games of a with b): 1 for finishing ahead of
    b, 1/2 for a tie, per match both played in."""
    table: dict[str, dict[str, tuple[float, int]]] = {}
    for result in rows:
        for a in result.seats:
            row = table.setdefault(a.bot, {})
            for b in result.seats:
                if a is b:
                    continue
                pts = 1.0 if a.rank < b.rank else 0.5 if a.rank == b.rank else 0.0
                old = row.get(b.bot, (0.0, 0))
                row[b.bot] = (old[0] + pts, old[1] + 1)
    return table


def tournaments(session: Session) -> list[dict[str, Any]]:
    """Every tournament with its progress, newest first."""
    counts: dict[int, dict[str, int]] = {}
    for tid, status, count in session.execute(
        select(Match.tournament_id, Match.status, func.count())
        .where(Match.tournament_id.is_not(None))
        .group_by(Match.tournament_id, Match.status)
    ):
        counts.setdefault(int(tid or 0), {})[status] = int(count)
    sizes: dict[int, int] = {}
    for tid, count in session.execute(
        select(Entry.tournament_id, func.count()).group_by(Entry.tournament_id)
    ):
        sizes[int(tid)] = int(count)
    out = []
    for t in session.scalars(select(Tournament).order_by(Tournament.id.desc())):
        c = counts.get(t.id, {})
        out.append(
            {
                "id": t.id,
                "name": t.name,
                "game": t.game,
                "params": t.params,
                "format": t.format,
                "bots": int(sizes.get(t.id, 0)),
                "done": c.get("done", 0),
                "total": sum(v for k, v in c.items() if k != "void"),  # void: annulled
                "void": c.get("void", 0),
                "status": t.status,
                "seed": t.seed,
                "created": t.created.isoformat(timespec="seconds"),
                "finished": t.finished.isoformat(timespec="seconds") if t.finished else None,
            }
        )
    return out


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
