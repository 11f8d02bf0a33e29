"""Writing and reading match records and bot versions.

Every function works inside the caller's transaction (``with Session.begin() as session:``), so
a unit of work (a match with its seats and moves, a tournament with its whole schedule) is
committed entirely or not at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import Connection, Table, bindparam, insert, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.record import Fault, MatchRecord, MoveRecord, SeatResult, Termination
from bot_arena.db import sqlite_fast
from bot_arena.db.models import Bot, BotVersion, Match, Move, Seat


def epoch_to_datetime(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def _insert_if_absent(session: Session, table: Table, values: dict[str, Any]) -> bool:
    """Insert a row unless one with the same unique key exists; True if this call inserted it.

    Two processes may register the same bot at once (two tournaments starting together): on
    PostgreSQL both would see no row and the second insert would fail, so the insert itself
    skips a conflict (and waits for the other transaction to decide) instead of a read first.
    """
    dialect = session.get_bind().dialect.name
    if dialect in ("postgresql", "sqlite"):
        module = pg_insert if dialect == "postgresql" else sqlite_insert
        stmt = module(table).values(**values).on_conflict_do_nothing().returning(table.c.id)
        return session.execute(stmt).first() is not None
    try:
        with session.begin_nested():
            session.execute(table.insert().values(**values))
    except IntegrityError:
        return False
    return True


def _bot(session: Session, name: str) -> Bot:
    bot = session.scalars(select(Bot).where(Bot.name == name)).one_or_none()
    if bot is None:
        _insert_if_absent(
            session,
            cast(Table, Bot.__table__),
            {"name": name, "registered": False, "created": datetime.now(UTC)},
        )
        bot = session.scalars(select(Bot).where(Bot.name == name)).one()
    return bot


def _version(session: Session, bot: Bot, ref: BotRef) -> tuple[BotVersion, bool]:
    query = select(BotVersion).where(BotVersion.bot_id == bot.id, BotVersion.sha256 == ref.sha256)
    found = session.scalars(query).one_or_none()
    if found is not None:
        return found, False
    created = _insert_if_absent(
        session,
        cast(Table, BotVersion.__table__),
        {
            "bot_id": bot.id,
            "kind": ref.kind,
            "target": ref.target,
            "source": ref.source,
            "sha256": ref.sha256,
            "created": datetime.now(UTC),
        },
    )
    return session.scalars(query).one(), created


def version_for(session: Session, ref: BotRef) -> BotVersion:
    """The stored version of the bot that played as ``ref`` (recorded under ``ref.name``)."""
    return _version(session, _bot(session, ref.name), ref)[0]


def versions_for(session: Session, refs: Sequence[BotRef]) -> list[BotVersion]:
    """``version_for`` of every ref (distinct names), in order, in a few statements whatever
    the size of the field: read what is stored, insert what is missing (skipping conflicts, as
    ``_insert_if_absent`` does), read again."""
    names = [r.name for r in refs]
    bots = _bots_named(session, names)
    missing = [n for n in names if n not in bots]
    if missing:
        _insert_all_if_absent(
            session,
            cast(Table, Bot.__table__),
            [{"name": n, "registered": False, "created": datetime.now(UTC)} for n in missing],
        )
        bots = _bots_named(session, names)
    versions = _versions_of(session, bots.values())
    fresh = [r for r in refs if (bots[r.name].id, r.sha256) not in versions]
    if fresh:
        now = datetime.now(UTC)
        _insert_all_if_absent(
            session,
            cast(Table, BotVersion.__table__),
            [
                {
                    "bot_id": bots[r.name].id,
                    "kind": r.kind,
                    "target": r.target,
                    "source": r.source,
                    "sha256": r.sha256,
                    "created": now,
                }
                for r in fresh
            ],
        )
        versions = _versions_of(session, bots.values())
    return [versions[(bots[r.name].id, r.sha256)] for r in refs]


def _bots_named(session: Session, names: Sequence[str]) -> dict[str, Bot]:
    return {b.name: b for b in session.scalars(select(Bot).where(Bot.name.in_(names)))}


def _versions_of(session: Session, bots: Iterable[Bot]) -> dict[tuple[int, str], BotVersion]:
    query = select(BotVersion).where(BotVersion.bot_id.in_([b.id for b in bots]))
    return {(v.bot_id, v.sha256): v for v in session.scalars(query)}


def _insert_all_if_absent(session: Session, table: Table, rows: list[dict[str, Any]]) -> None:
    """``_insert_if_absent`` for several rows (one statement where the dialect allows)."""
    dialect = session.get_bind().dialect.name
    if dialect in ("postgresql", "sqlite"):
        module = pg_insert if dialect == "postgresql" else sqlite_insert
        session.execute(module(table).on_conflict_do_nothing(), rows)
        return
    for row in rows:
        _insert_if_absent(session, table, row)


def register_bot_version(session: Session, name: str, ref: BotRef) -> tuple[BotVersion, bool]:
    """Register ``ref`` as a version of the bot ``name``; (version row, whether it is new)."""
    bot = _bot(session, name)
    bot.registered = True
    return _version(session, bot, ref)


def ref_of(version: BotVersion, name: str | None = None) -> BotRef:
    return BotRef(
        name=name or version.bot.name,
        kind=version.kind,
        target=version.target,
        source=version.source,
        sha256=version.sha256,
    )


def lookup_bot(session: Session, name: str) -> BotRef | None:
    """The latest version of the registered bot ``name``, or None."""
    version = session.scalars(
        select(BotVersion)
        .join(Bot)
        .where(Bot.name == name, Bot.registered.is_(True))
        .order_by(BotVersion.id.desc())
        .limit(1)
    ).first()
    return None if version is None else ref_of(version, name)


def list_bots(session: Session, *, include_unregistered: bool = False) -> list[Bot]:
    """Bots by name with their versions loaded (only registered ones unless asked)."""
    query = select(Bot).options(selectinload(Bot.versions)).order_by(Bot.name)
    if not include_unregistered:
        query = query.where(Bot.registered.is_(True))
    return list(session.scalars(query))


def bot_versions(session: Session, name: str) -> list[BotVersion]:
    """Every version of the bot ``name``, oldest first (empty if there is no such bot)."""
    return list(
        session.scalars(
            select(BotVersion).join(Bot).where(Bot.name == name).order_by(BotVersion.id)
        )
    )


def _fault_reason(record: MatchRecord) -> str | None:
    for index, seat in enumerate(record.seats):
        if seat.fault is not None:
            return (
                f"seat {index} ({seat.bot}): {seat.fault.termination.value}: {seat.fault.message}"
            )
    return None


def _match_values(record: MatchRecord) -> dict[str, Any]:
    return {
        "time_control": record.time_control,
        "start_position": record.start_position,
        "final_position": record.final_position,
        "termination": record.termination.value,
        "fault_reason": _fault_reason(record),
        "started": epoch_to_datetime(record.started),
        "finished": epoch_to_datetime(record.finished),
        "duration_s": max(0.0, record.duration_s),
        "status": "done",
    }


def _insert_moves(conn: Connection, match_id: int, moves: Sequence[MoveRecord]) -> None:
    if moves:
        conn.execute(
            _INSERT_MOVES,
            [
                {
                    "match_id": match_id,
                    "ply": ply,
                    "seat": m.seat,
                    "move": m.move,
                    "time_ms": max(0.0, m.time_ms),
                    "info": m.info,
                    "forced": m.forced,
                }
                for ply, m in enumerate(moves)
            ],
        )


_MATCHES = cast(Table, Match.__table__)
_SEATS = cast(Table, Seat.__table__)
_MOVES = cast(Table, Move.__table__)
_MATCH_RESULT_COLUMNS = (
    "time_control",
    "start_position",
    "final_position",
    "termination",
    "fault_reason",
    "started",
    "finished",
    "duration_s",
    "status",
)
# Built once: the runner executes these for every match, so no per-call statement building.
_COMPLETE = (
    _MATCHES.update()
    .where(
        _MATCHES.c.id == bindparam("mid"),
        _MATCHES.c.status.in_(("pending", "running")),  # never a done or void match
        _MATCHES.c.players == bindparam("n"),
    )
    .values({c: bindparam(f"p_{c}") for c in _MATCH_RESULT_COLUMNS})
)
_DELETE_MOVES = _MOVES.delete().where(_MOVES.c.match_id == bindparam("mid"))
_SEAT_RESULT = (
    _SEATS.update()
    .where(_SEATS.c.match_id == bindparam("mid"), _SEATS.c.seat == bindparam("s"))
    .values(
        bot_version_id=bindparam("v"),
        utility=bindparam("u"),
        rank=bindparam("r"),
        score=bindparam("sc"),
        fault=bindparam("f"),
    )
)
_INSERT_MOVES = _MOVES.insert()


def complete_match(
    session: Session | Connection,
    match_id: int,
    record: MatchRecord,
    version_ids: Sequence[int],
    *,
    replace_partial: bool = True,
    fast: bool = True,
) -> bool:
    """Store the result of the scheduled match ``match_id`` if it is still pending or running;
    False (and nothing written) if it is done already, void, missing or has another number of
    seats.

    Seat results are overwritten; with ``replace_partial`` any moves an interrupted earlier
    attempt left are deleted first (the runner asks for it for matches it found 'running'), so
    a replayed match is stored exactly once. Prebuilt SQL statements, no ORM bookkeeping: this
    is the tournament runner's per-match write (on SQLite through ``db.sqlite_fast`` unless
    ``fast`` is False).
    """
    conn = session.connection() if isinstance(session, Session) else session
    if conn.dialect.name == "sqlite" and fast:
        return sqlite_fast.complete_match(
            conn.connection.dbapi_connection,
            match_id,
            record,
            version_ids,
            _fault_reason(record),
            replace_partial=replace_partial,
        )
    params = {f"p_{k}": v for k, v in _match_values(record).items()}
    updated = conn.execute(_COMPLETE, {"mid": match_id, "n": len(record.seats), **params})
    if updated.rowcount != 1:
        return False
    if replace_partial:
        conn.execute(_DELETE_MOVES, {"mid": match_id})
    conn.execute(
        _SEAT_RESULT,
        [
            {
                "mid": match_id,
                "s": i,
                "v": vid,
                "u": r.utility,
                "r": r.rank,
                "sc": r.score,
                "f": r.fault.to_dict() if r.fault is not None else None,
            }
            for i, (r, vid) in enumerate(zip(record.seats, version_ids, strict=True))
        ],
    )
    _insert_moves(conn, match_id, record.moves)
    return True


def insert_schedule(
    session: Session,
    tournament_id: int,
    game: str,
    params: dict[str, Any],
    time_control: dict[str, Any],
    players: int,
    matches: Sequence[sqlite_fast.ScheduledMatch],
    *,
    fast: bool = True,
) -> list[int]:
    """Store a new tournament's schedule as pending matches with their seats, in the caller's
    transaction; returns the match ids in schedule order. One ``executemany`` per table (the
    ORM's unit of work would cost about as much as playing a thousand quick games); on SQLite
    through the DBAPI cursor (``sqlite_fast``) unless ``fast`` is False."""
    conn = session.connection()
    if conn.dialect.name == "sqlite" and fast:
        dbapi = conn.connection.dbapi_connection
        return sqlite_fast.insert_schedule(
            dbapi, tournament_id, game, params, time_control, players, matches
        )
    match_ids = list(
        session.execute(
            insert(_MATCHES).returning(_MATCHES.c.id, sort_by_parameter_order=True),
            [
                {
                    "tournament_id": tournament_id,
                    "round": rnd,
                    "game": game,
                    "params": params,
                    "time_control": time_control,
                    "players": players,
                    "seed": seed,
                    "opening": opening,
                    "start_position": start,
                    "status": "pending",
                }
                for rnd, seed, opening, start, _ in matches
            ],
        ).scalars()
    )
    session.execute(
        insert(_SEATS),
        [
            {"match_id": mid, "players": players, "seat": seat, "bot_version_id": version}
            for mid, match in zip(match_ids, matches, strict=True)
            for seat, version in enumerate(match[4])
        ],
    )
    return match_ids


_MARK_RUNNING = (
    _MATCHES.update()
    .where(_MATCHES.c.id == bindparam("mid"), _MATCHES.c.status == "pending")
    .values(status="running")
)


def mark_running(conn: Connection, match_ids: Sequence[int]) -> None:
    """Mark pending matches 'running' (one ``executemany``; on SQLite through the cursor)."""
    if not match_ids:
        return
    if conn.dialect.name == "sqlite":
        sqlite_fast.mark_running(conn.connection.dbapi_connection, match_ids)
        return
    conn.execute(_MARK_RUNNING, [{"mid": m} for m in match_ids])


def complete_matches(
    conn: Connection, items: Sequence[tuple[int, MatchRecord, Sequence[int], bool]]
) -> list[bool]:
    """Several :func:`complete_match` calls, (match id, record, version ids, replace_partial)
    each, in the caller's transaction: the runner's group commit. On SQLite one statement per
    table for the whole group; elsewhere one match after the other. Returns, per item, whether
    it was stored."""
    if conn.dialect.name == "sqlite":
        return sqlite_fast.complete_matches(
            conn.connection.dbapi_connection,
            [(mid, rec, vids, _fault_reason(rec), partial) for mid, rec, vids, partial in items],
        )
    return [
        complete_match(conn, mid, rec, vids, replace_partial=partial)
        for mid, rec, vids, partial in items
    ]


def save_match(
    session: Session,
    record: MatchRecord,
    refs: Sequence[BotRef],
    tournament_id: int | None = None,
    match_id: int | None = None,
    *,
    version_ids: Sequence[int] | None = None,
) -> int:
    """Store a finished match in the caller's transaction and return its id.

    With ``match_id`` the scheduled (pending or running) row is completed, see
    :func:`complete_match`. ``version_ids`` (the bot_versions rows of ``refs``, when the caller
    knows them) saves the lookups.
    """
    if len(refs) != len(record.seats):
        raise ValueError(f"{len(refs)} bots for {len(record.seats)} seats")
    if version_ids is None:
        version_ids = [version_for(session, ref).id for ref in refs]
    if match_id is not None:
        if not complete_match(session, match_id, record, version_ids):
            raise ValueError(
                f"match {match_id} is missing, done or void, or not a {len(refs)}-player match"
            )
        return match_id
    match = Match(
        tournament_id=tournament_id,
        game=record.game,
        params=record.params,
        players=len(record.seats),
        **_match_values(record),
    )
    session.add(match)
    session.flush()
    session.add_all(
        Seat(
            match_id=match.id,
            players=match.players,
            seat=i,
            bot_version_id=vid,
            utility=r.utility,
            rank=r.rank,
            score=r.score,
            fault=r.fault.to_dict() if r.fault is not None else None,
        )
        for i, (r, vid) in enumerate(zip(record.seats, version_ids, strict=True))
    )
    session.flush()
    _insert_moves(session.connection(), match.id, record.moves)
    return match.id


def load_matches(session: Session, match_ids: Sequence[int]) -> list[Match]:
    """Matches with their seats (and their bots) and moves loaded, in id order."""
    return list(
        session.scalars(
            select(Match)
            .where(Match.id.in_(match_ids))
            .options(
                selectinload(Match.seats).selectinload(Seat.version).selectinload(BotVersion.bot),
                selectinload(Match.moves),
            )
            .order_by(Match.id)
        )
    )


def load_match(session: Session, match_id: int) -> Match | None:
    """A match with its seats (and their bots) and moves loaded."""
    found = load_matches(session, [match_id])
    return found[0] if found else None


def record_of(match: Match) -> MatchRecord:
    """The MatchRecord of a played match (done, or void after it was played), as
    ``arena play --json`` printed it."""
    if match.status not in ("done", "void") or match.termination is None:
        raise ValueError(f"match {match.id} is {match.status}, not played")
    started = match.started.timestamp() if match.started else 0.0
    finished = match.finished.timestamp() if match.finished else started
    return MatchRecord(
        game=match.game,
        params=dict(match.params),
        start_position=match.start_position or "",
        seats=[
            SeatResult(
                bot=s.version.bot.name,
                utility=float(s.utility or 0.0),
                rank=int(s.rank or 0),
                score=float(s.score or 0.0),
                fault=Fault.from_dict(s.fault) if s.fault else None,
                version=s.version.sha256,
            )
            for s in match.seats
        ],
        moves=[
            MoveRecord(seat=m.seat, move=m.move, time_ms=m.time_ms, info=m.info, forced=m.forced)
            for m in match.moves
        ],
        termination=Termination(match.termination),
        final_position=match.final_position or "",
        started=started,
        finished=finished,
        time_control=dict(match.time_control),
    )
