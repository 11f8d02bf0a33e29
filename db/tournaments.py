"""Tournament rows: creating one with its field, reading it back, the runner's entry in its
settings, the matches still to play, and its status (running, done).

Every function works in the caller's transaction; the schedule itself is written by
``db.writer`` (``db.store.insert_schedule``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, delete, func, select, update
from sqlalchemy.orm import Session, selectinload

from bot_arena.db.models import Bot, BotVersion, Entry, Match, Move, Seat, Tournament
from bot_arena.db.run_trace import RUNNER as RUNNER
from bot_arena.db.run_trace import recorded_runner as recorded_runner

OPEN = ("pending", "running")  # statuses of a match still to play


def create_tournament(
    session: Session,
    *,
    name: str | None,
    game: str,
    params: dict[str, Any],
    time_control: dict[str, Any],
    fmt: str,
    settings: dict[str, Any],
    seed: int,
    entries: Sequence[tuple[str, int]],
) -> int:
    """Store a new running tournament and its field, (spec, bot version id) per position;
    returns its id."""
    tournament = Tournament(
        name=name,
        game=game,
        params=params,
        time_control=time_control,
        format=fmt,
        settings=settings,
        seed=seed,
        status="running",
    )
    session.add(tournament)
    session.flush()
    session.add_all(
        Entry(tournament_id=tournament.id, position=i, spec=spec, bot_version_id=version)
        for i, (spec, version) in enumerate(entries)
    )
    session.flush()
    return tournament.id


def get_tournament(
    session: Session, tournament_id: int, *, for_update: bool = False
) -> Tournament | None:
    """The tournament row (``for_update``: locked until the transaction ends, on PostgreSQL)."""
    return session.get(Tournament, tournament_id, with_for_update=for_update)


def load_tournament(session: Session, tournament_id: int) -> Tournament | None:
    """The tournament with its field loaded (entries, their versions and bots)."""
    return session.scalars(
        select(Tournament)
        .where(Tournament.id == tournament_id)
        .options(
            selectinload(Tournament.entries)
            .selectinload(Entry.version)
            .selectinload(BotVersion.bot)
        )
    ).one_or_none()


def record_runner(session: Session, tournament: Tournament, host: str, pid: int) -> None:
    """Note in the tournament's settings that process ``pid`` on ``host`` is playing it, with
    its first heartbeat."""
    tournament.settings = {**tournament.settings, RUNNER: {"host": host, "pid": pid}}
    tournament.heartbeat = datetime.now(UTC)


def beat(conn: Connection, tournament_id: int, now: datetime) -> None:
    """The runner's heartbeat: the tournament's stamp set to ``now`` (only its column)."""
    conn.execute(update(Tournament).where(Tournament.id == tournament_id).values(heartbeat=now))


def end_run(session: Session, tournament_id: int, *, finished: bool) -> None:
    """The runner's last write: clear its entry and, when no match is left to play, mark the
    tournament done (if it is not yet)."""
    tournament = session.get(Tournament, tournament_id)
    if tournament is None:
        return
    tournament.settings = {k: v for k, v in tournament.settings.items() if k != RUNNER}
    tournament.heartbeat = None
    if finished and tournament.status != "done":
        mark_done(session, tournament, datetime.now(UTC))


def mark_done(session: Session, tournament: Tournament, when: datetime) -> None:
    tournament.status = "done"
    tournament.finished = when
    session.flush()


def reopen(session: Session, tournament: Tournament) -> None:
    """Set a tournament running again (it has matches to play)."""
    tournament.status = "running"
    tournament.finished = None
    session.flush()


def left_to_play(session: Session, tournament_id: int) -> int:
    """Matches of the tournament still to play (pending or running)."""
    return int(
        session.scalar(
            select(func.count())
            .select_from(Match)
            .where(Match.tournament_id == tournament_id, Match.status.in_(OPEN))
        )
        or 0
    )


@dataclass(frozen=True, slots=True)
class OpenMatch:
    """A match of a tournament still to play."""

    match_id: int
    start_position: str | None
    seed: int
    running: bool  # left 'running' by an interrupted run (its partial moves must go)
    bots: tuple[str, ...]  # bot name per seat
    opening: str = ""  # the opening's moves, space-separated (from the book's start)


def open_matches(session: Session, tournament_id: int) -> list[OpenMatch]:
    """The tournament's pending and running matches in schedule order (one query over plain
    rows: loading thousands of ORM matches took longer than creating them)."""
    rows = session.execute(
        select(Match.id, Match.start_position, Match.seed, Match.status, Bot.name, Match.opening)
        .join(Seat, Seat.match_id == Match.id)
        .join(BotVersion, BotVersion.id == Seat.bot_version_id)
        .join(Bot, Bot.id == BotVersion.bot_id)
        .where(Match.tournament_id == tournament_id, Match.status.in_(OPEN))
        .order_by(Match.id, Seat.seat)
    )
    found = []
    for match_id, group in itertools.groupby(rows, key=lambda row: row[0]):
        seats = list(group)
        _, start, seed, status, _, opening = seats[0]
        bots = tuple(r[4] for r in seats)
        found.append(OpenMatch(match_id, start, seed, status == "running", bots, opening or ""))
    return found


def repoint_open_seats(
    session: Session, tournament: Tournament, version_ids: Sequence[int]
) -> None:
    """Point the seats of the matches still to play at ``version_ids`` (one per entry, in field
    order) wherever they hold another version of the same bot: after a forced resume with
    changed bots, results name the exact version that played."""
    still_open = select(Match.id).where(
        Match.tournament_id == tournament.id, Match.status.in_(OPEN)
    )
    for entry, new_id in zip(tournament.entries, version_ids, strict=True):
        if entry.bot_version_id == new_id:
            continue
        same_bot = select(BotVersion.id).where(BotVersion.bot_id == entry.version.bot_id)
        session.execute(
            update(Seat)
            .where(Seat.match_id.in_(still_open), Seat.bot_version_id.in_(same_bot))
            .values(bot_version_id=new_id)
        )


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """A match of a tournament as stored, for the formats that make their matches as they go."""

    match_id: int
    round: int
    status: str  # pending, running, done (void: only from ``matches_changed``)
    bots: tuple[str, ...]  # bot name per seat
    scores: tuple[float, ...] | None  # per seat, when done


def tournament_matches(db: Session | Connection, tournament_id: int) -> list[StoredMatch]:
    """Every match of the tournament but the void ones, in the order they were made (id)."""
    return _matches(db, tournament_id, Match.status != "void")


def matches_changed(
    db: Session | Connection, tournament_id: int, after_id: int, ids: Sequence[int]
) -> list[StoredMatch]:
    """The tournament's matches made after the match ``after_id`` and those of ``ids``, void
    ones included (a follower of the tournament's matches reads what changed since its last
    read: the new ones, and the ones it held open), in the order they were made."""
    changed = Match.id > after_id
    if ids:
        changed = changed | Match.id.in_(list(ids))
    return _matches(db, tournament_id, changed)


def done_count(db: Session | Connection, tournament_id: int, up_to: int, but: Sequence[int]) -> int:
    """How many of the tournament's matches up to id ``up_to``, those of ``but`` left out, are
    done (from the index on tournament and status). A done match leaves that count only by
    being voided (or deleted): a follower that saw them all compares it with its own."""
    query = select(func.count()).where(
        Match.tournament_id == tournament_id, Match.status == "done", Match.id <= up_to
    )
    if but:
        query = query.where(Match.id.not_in(list(but)))
    return int(db.execute(query).scalar_one())


def _matches(db: Session | Connection, tournament_id: int, where: Any) -> list[StoredMatch]:
    rows = db.execute(
        select(Match.id, Match.round, Match.status, Bot.name, Seat.score)
        .join(Seat, Seat.match_id == Match.id)
        .join(BotVersion, BotVersion.id == Seat.bot_version_id)
        .join(Bot, Bot.id == BotVersion.bot_id)
        .where(Match.tournament_id == tournament_id, where)
        .order_by(Match.id, Seat.seat)
    )
    found = []
    for match_id, group in itertools.groupby(rows, key=lambda row: row[0]):
        seats = list(group)
        _, rnd, status, _, _ = seats[0]
        done = status == "done"
        found.append(
            StoredMatch(
                match_id,
                rnd,
                status,
                tuple(r[3] for r in seats),
                tuple(float(r[4] or 0.0) for r in seats) if done else None,
            )
        )
    return found


def drop_open(db: Session | Connection, tournament_id: int) -> int:
    """Delete the tournament's matches still to play (pending or running) with their seats and
    any moves: a test that has decided (SPRT) no longer needs them. Returns how many."""
    still_open = select(Match.id).where(
        Match.tournament_id == tournament_id, Match.status.in_(OPEN)
    )
    ids = [row[0] for row in db.execute(still_open)]
    if ids:
        db.execute(delete(Move).where(Move.match_id.in_(ids)))
        db.execute(delete(Seat).where(Seat.match_id.in_(ids)))
        db.execute(delete(Match).where(Match.id.in_(ids)))
    return len(ids)


def update_settings(db: Session | Connection, tournament_id: int, changes: dict[str, Any]) -> None:
    """Merge ``changes`` into the tournament's settings (one read and one write in the caller's
    transaction, which holds the write lock on SQLite; the row is locked on PostgreSQL)."""
    current = db.execute(
        select(Tournament.settings).where(Tournament.id == tournament_id).with_for_update()
    ).scalar_one()
    db.execute(
        update(Tournament)
        .where(Tournament.id == tournament_id)
        .values(settings={**(current or {}), **changes})
    )
