"""Ladder rows (a tournament of format ``ladder``, issue 30): the ladder by its name, its
entrants with their status and faults in a row, the counter of changes to its field.

Every change to a ladder's field (an entrant added, retired, suspended) first bumps the ladder's
``revision`` (an UPDATE: the row's lock on PostgreSQL, the database's with SQLite's ``BEGIN
IMMEDIATE``), so changes are serialised and a running ladder that reads the revision in its own
transaction sees every change committed before, and none half-made. Every function works in the
caller's transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, delete, func, select, update
from sqlalchemy.orm import Session
from sqlalchemy.pool import PoolProxiedConnection

from bot_arena.db.models import (
    Bot,
    BotVersion,
    Entry,
    Ladder,
    LadderEntrant,
    Match,
    Move,
    Seat,
    Tournament,
)
from bot_arena.db.tournaments import OPEN

Db = Session | Connection


@dataclass(frozen=True, slots=True)
class LadderRow:
    tournament_id: int
    name: str
    suspend_after: int
    revision: int


@dataclass(frozen=True, slots=True)
class Entrant:
    """An entrant as a ladder's commands see it (``name``: its bot's, unique in the ladder)."""

    position: int
    name: str
    spec: str
    version_id: int
    sha256: str
    status: str
    faults_in_row: int


def create_ladder(session: Session, tournament_id: int, name: str, suspend_after: int) -> None:
    """What a ladder adds to its new tournament row (no entrant yet)."""
    session.add(
        Ladder(tournament_id=tournament_id, name=name, suspend_after=suspend_after, revision=0)
    )
    session.flush()


def find_ladder(db: Db, name: str) -> LadderRow | None:
    row = db.execute(
        select(Ladder.tournament_id, Ladder.name, Ladder.suspend_after, Ladder.revision).where(
            Ladder.name == name
        )
    ).first()
    return None if row is None else LadderRow(*row)


def ladder_of(db: Db, tournament_id: int) -> LadderRow | None:
    row = db.execute(
        select(Ladder.tournament_id, Ladder.name, Ladder.suspend_after, Ladder.revision).where(
            Ladder.tournament_id == tournament_id
        )
    ).first()
    return None if row is None else LadderRow(*row)


def bump(db: Db, tournament_id: int) -> int:
    """Count a change to the ladder's field (the first write of the transaction that makes
    it, which takes the ladder's lock); the new revision."""
    db.execute(
        update(Ladder)
        .where(Ladder.tournament_id == tournament_id)
        .values(revision=Ladder.revision + 1)
    )
    return revision(db, tournament_id)


def revision(db: Db, tournament_id: int, *, lock: bool = False) -> int:
    """The count of changes to the ladder's field (``lock``: its row locked until the
    transaction ends, on PostgreSQL; SQLite's transactions hold the database's lock)."""
    query = select(Ladder.revision).where(Ladder.tournament_id == tournament_id)
    if lock:
        query = query.with_for_update()
    return int(db.execute(query).scalar_one())


class RevisionReader:
    """``revision`` read through the driver on a connection of its own, each read its own
    short transaction (so it sees every change committed before it): a few microseconds on
    SQLite, one round trip on PostgreSQL, where a session's read costs hundreds of
    microseconds of CPU (bench/ladder_gate.py). The runner's gate reads it before every
    match it sends. ``close`` hands the connection back.

    A read that fails part-way (Ctrl-C while PostgreSQL answers, the server gone) raises
    what stopped it, not the driver's complaint about the half-used connection: the
    connection is dropped from the pool (never handed back to be reset), and the next read
    takes a new one."""

    def __init__(self, engine: Engine, tournament_id: int) -> None:
        mark = "?" if engine.dialect.paramstyle == "qmark" else "%s"
        table, column = Ladder.__tablename__, Ladder.revision.key
        key = Ladder.tournament_id.key
        self._sql = f"SELECT {column} FROM {table} WHERE {key} = {mark}"
        self._tournament_id = tournament_id
        self._engine = engine
        self._conn: PoolProxiedConnection | None = engine.raw_connection()

    def read(self) -> int:
        conn = self._conn if self._conn is not None else self._engine.raw_connection()
        self._conn = None  # held again only once this read has ended its transaction
        try:
            cursor = conn.cursor()
            try:
                cursor.execute(self._sql, (self._tournament_id,))
                row = cursor.fetchone()
            finally:
                cursor.close()
            conn.rollback()  # the read's transaction ends: the next one sees newer commits
        except BaseException:
            conn.invalidate()  # closed, not reset: its state is unknown
            raise
        self._conn = conn
        if row is None:
            raise LookupError(f"no ladder of tournament {self._tournament_id}")
        return int(row[0])

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def entrants(db: Db, tournament_id: int) -> list[Entrant]:
    """The ladder's entrants by field position."""
    rows = db.execute(
        select(
            Entry.position,
            Bot.name,
            Entry.spec,
            BotVersion.id,
            BotVersion.sha256,
            LadderEntrant.status,
            LadderEntrant.faults_in_row,
        )
        .join(BotVersion, BotVersion.id == Entry.bot_version_id)
        .join(Bot, Bot.id == BotVersion.bot_id)
        .join(
            LadderEntrant,
            (LadderEntrant.tournament_id == Entry.tournament_id)
            & (LadderEntrant.position == Entry.position),
        )
        .where(Entry.tournament_id == tournament_id)
        .order_by(Entry.position)
    )
    return [Entrant(*row) for row in rows]


def add_entrant(session: Session, tournament_id: int, spec: str, version_id: int) -> int:
    """A new active entrant at the next field position (after the change is counted, so two
    processes adding at once take turns); its position."""
    bump(session, tournament_id)
    last = session.execute(
        select(func.max(Entry.position)).where(Entry.tournament_id == tournament_id)
    ).scalar()
    position = 0 if last is None else int(last) + 1
    session.add(
        Entry(tournament_id=tournament_id, position=position, spec=spec, bot_version_id=version_id)
    )
    session.add(
        LadderEntrant(
            tournament_id=tournament_id, position=position, status="active", faults_in_row=0
        )
    )
    session.flush()
    return position


def set_status(
    db: Db, tournament_id: int, positions: Iterable[int], status: str, *, clear_faults: bool = False
) -> None:
    """Entrants ``positions`` take ``status`` (the change counted first); ``clear_faults``:
    their faults in a row start again from zero (an entrant reinstated)."""
    chosen = list(positions)
    if not chosen:
        return
    bump(db, tournament_id)
    values: dict[str, object] = {"status": status}
    if clear_faults:
        values["faults_in_row"] = 0
    db.execute(
        update(LadderEntrant)
        .where(LadderEntrant.tournament_id == tournament_id, LadderEntrant.position.in_(chosen))
        .values(**values)
    )


def note_faults(db: Db, tournament_id: int, outcomes: Sequence[tuple[int, bool]]) -> list[int]:
    """Results as they were stored, (position, faulted) in order: a fault adds one to the
    entrant's faults in a row, a game without one sets them back to zero. Active entrants that
    reach the ladder's ``suspend_after`` are suspended; their positions. The caller holds the
    ladder's lock (``revision(lock=True)``) first, as every change to the field takes it first:
    one order of locks, no deadlock with ``add`` or ``retire``."""
    if not outcomes:
        return []
    touched = sorted({p for p, _ in outcomes})
    current = dict(
        db.execute(
            select(LadderEntrant.position, LadderEntrant.faults_in_row).where(
                LadderEntrant.tournament_id == tournament_id,
                LadderEntrant.position.in_(touched),
            )
        ).all()
    )
    before = dict(current)
    for position, faulted in outcomes:
        if position in current:
            current[position] = current[position] + 1 if faulted else 0
    for position, count in current.items():
        if count == before[position]:
            continue
        db.execute(
            update(LadderEntrant)
            .where(LadderEntrant.tournament_id == tournament_id, LadderEntrant.position == position)
            .values(faults_in_row=count)
        )
    limit = db.execute(
        select(Ladder.suspend_after).where(Ladder.tournament_id == tournament_id)
    ).scalar_one()
    due = db.execute(
        select(LadderEntrant.position).where(
            LadderEntrant.tournament_id == tournament_id,
            LadderEntrant.status == "active",
            LadderEntrant.faults_in_row >= limit,
        )
    )
    suspended = [int(row[0]) for row in due]
    set_status(db, tournament_id, suspended, "suspended")
    return suspended


def drop_open_of(db: Db, tournament_id: int, version_ids: Sequence[int]) -> int:
    """Delete the ladder's matches still to play that seat one of ``version_ids`` (entrants
    that no longer play), with their seats; how many. Only while no run is playing them."""
    if not version_ids:
        return 0
    ids = [
        row[0]
        for row in db.execute(
            select(Match.id)
            .join(Seat, Seat.match_id == Match.id)
            .where(
                Match.tournament_id == tournament_id,
                Match.status.in_(OPEN),
                Seat.bot_version_id.in_(list(version_ids)),
            )
            .distinct()
        )
    ]
    _delete(db, ids)
    return len(ids)


def drop_unplayed(db: Db, tournament_id: int, match_ids: Sequence[int]) -> list[int]:
    """Delete those of ``match_ids`` that are the ladder's and still to play, with their
    seats; their ids. Only matches the caller holds in its line, sent to nobody (a match put
    back in line after its worker failed may be marked running)."""
    if not match_ids:
        return []
    ids = [
        int(row[0])
        for row in db.execute(
            select(Match.id).where(
                Match.tournament_id == tournament_id,
                Match.status.in_(OPEN),
                Match.id.in_(list(match_ids)),
            )
        )
    ]
    _delete(db, ids)
    return ids


def _delete(db: Db, ids: Sequence[int]) -> None:
    if ids:
        db.execute(delete(Move).where(Move.match_id.in_(ids)))
        db.execute(delete(Seat).where(Seat.match_id.in_(ids)))
        db.execute(delete(Match).where(Match.id.in_(ids)))


def match_counts(db: Db, tournament_id: int) -> dict[str, int]:
    """The ladder's matches by status (void left out)."""
    rows = db.execute(
        select(Match.status, func.count())
        .where(Match.tournament_id == tournament_id, Match.status != "void")
        .group_by(Match.status)
    )
    counts = {"pending": 0, "running": 0, "done": 0}
    counts.update({str(status): int(n) for status, n in rows})
    return counts


@dataclass(frozen=True, slots=True)
class Listed:
    """A ladder as the site lists it: its name, its game, its entrants by status."""

    tournament_id: int
    name: str
    game: str
    active: int
    entrants: int


def all_ladders(db: Db, limit: int) -> list[Listed]:
    """Up to ``limit`` ladders by name, with their game and how many entrants are active."""
    active = func.count(LadderEntrant.position).filter(LadderEntrant.status == "active")
    rows = db.execute(
        select(
            Ladder.tournament_id,
            Ladder.name,
            Tournament.game,
            active,
            func.count(LadderEntrant.position),
        )
        .join(Tournament, Tournament.id == Ladder.tournament_id)
        .outerjoin(LadderEntrant, LadderEntrant.tournament_id == Ladder.tournament_id)
        .group_by(Ladder.tournament_id, Ladder.name, Tournament.game)
        .order_by(Ladder.name)
        .limit(limit)
    )
    return [Listed(int(t), str(n), str(g), int(a), int(c)) for t, n, g, a, c in rows]


def standings_key(db: Db, tournament_id: int) -> tuple[object, ...]:
    """What a ladder's standings depend on, in two indexed reads: the revision of its field
    (entrants added, retired, suspended) and its matches by status with the newest done id
    (a game stored, started, added or voided). Equal keys, equal standings."""
    rows = db.execute(
        select(Match.status, func.count(), func.max(Match.id))
        .where(Match.tournament_id == tournament_id)
        .group_by(Match.status)
        .order_by(Match.status)
    ).all()
    return (revision(db, tournament_id), *((str(s), int(n), int(m or 0)) for s, n, m in rows))
