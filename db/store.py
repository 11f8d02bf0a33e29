"""Writing and reading match records and bot versions.

Every function works inside the caller's transaction (``with Session.begin() as session:``), so
a unit of work (a match with its seats and moves, a tournament with its whole schedule) is
committed entirely or not at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, cast

from sqlalchemy import Connection, Table, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload
from sqlalchemy.sql.dml import Insert

from bot_arena.arena.match.botref import BotRef, UnloadableBot, files_from
from bot_arena.arena.match.record import (
    Fault,
    MatchRecord,
    MoveRecord,
    RecordError,
    SeatResult,
    Termination,
)
from bot_arena.db.core_writer import insert_moves, match_values
from bot_arena.db.models import Bot, BotVersion, Match, Seat
from bot_arena.db.pair_totals import change as change_pair_totals
from bot_arena.db.stored import StoredDataError, at_match, load_each, warn_skipped
from bot_arena.db.writer import Completion, ScheduledMatch, writer_for


def _ignoring_conflicts(session: Session, table: Table) -> Insert | None:
    """An INSERT into ``table`` that skips a row whose unique key is taken (ON CONFLICT DO
    NOTHING), where the dialect has one (PostgreSQL, SQLite); None elsewhere."""
    dialect = session.get_bind().dialect.name
    # each dialect's module loaded where it is used: PostgreSQL's pulls in asyncio and its
    # async drivers' modules (about 40 ms of a SQLite run's start-up)
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table).on_conflict_do_nothing()
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(table).on_conflict_do_nothing()
    return None


def _insert_if_absent(session: Session, table: Table, values: dict[str, Any]) -> bool:
    """Insert a row unless one with the same unique key exists; True if this call inserted it.

    Two processes may register the same bot at once (two tournaments starting together): on
    PostgreSQL both would see no row and the second insert would fail, so the insert itself
    skips a conflict (and waits for the other transaction to decide) instead of a read first.
    """
    skipping = _ignoring_conflicts(session, table)
    if skipping is not None:
        stmt = skipping.values(**values).returning(table.c.id)
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
            "files": _files_column(ref),
            "sha256": ref.sha256,
            "created": datetime.now(UTC),
        },
    )
    return session.scalars(query).one(), created


def version_for(session: Session, ref: BotRef) -> BotVersion:
    """The stored version of the bot that played as ``ref`` (recorded under ``ref.name``)."""
    return _version(session, _bot(session, ref.name), ref)[0]


def versions_for(session: Session, refs: Sequence[BotRef]) -> list[BotVersion]:
    """``version_for`` of every ref, in order, in a few statements whatever the size of the
    field: read what is stored, insert what is missing (skipping conflicts, as
    ``_insert_if_absent`` does), read again. A name may come twice (a match of a bot against
    itself, or of two versions of one bot): each row is inserted once."""
    names = list(dict.fromkeys(r.name for r in refs))
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
    unknown: dict[tuple[int, str], BotRef] = {}  # each version once: its first ref's values
    for r in refs:
        key = (bots[r.name].id, r.sha256)
        if key not in versions:
            unknown.setdefault(key, r)
    fresh = list(unknown.values())
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
                    "files": _files_column(r),
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
    skipping = _ignoring_conflicts(session, table)
    if skipping is not None:
        session.execute(skipping, rows)
        return
    for row in rows:
        _insert_if_absent(session, table, row)


def register_bot_version(session: Session, name: str, ref: BotRef) -> tuple[BotVersion, bool]:
    """Register ``ref`` as a version of the bot ``name``; (version row, whether it is new)."""
    bot = _bot(session, name)
    bot.registered = True
    return _version(session, bot, ref)


def _files_column(ref: BotRef) -> list[list[str]] | None:
    return [list(f) for f in ref.files] if ref.files else None


def ref_of(version: BotVersion, name: str | None = None) -> BotRef:
    return BotRef(
        name=name or version.bot.name,
        kind=version.kind,
        target=version.target,
        source=version.source,
        sha256=version.sha256,
        files=files_from(version.files),
    )


def lookup_bot(session: Session, name: str) -> BotRef | None:
    """The latest version of the registered bot ``name``, or None. ``NAME@N`` names its N-th
    version (as ``bots show`` numbers them, from 1) and ``NAME@PREFIX`` the one whose SHA-256
    starts with PREFIX (hex, at least 4 digits, one version only): the bot then plays as
    ``NAME@N``, a bot of its own beside NAME (a new version and an old one in one field)."""
    version = session.scalars(
        select(BotVersion)
        .join(Bot)
        .where(Bot.name == name, Bot.registered.is_(True))
        .order_by(BotVersion.id.desc())
        .limit(1)
    ).first()
    if version is None:
        version = stored_version(session, name)
    if version is None:
        return None
    try:
        return ref_of(version, name)
    except ValueError as exc:  # stored by an older release's rules (a path out of its folder)
        raise UnloadableBot(name, str(exc)) from None


def stored_version(session: Session, spec: str) -> BotVersion | None:
    """The version ``NAME@N`` or ``NAME@PREFIX`` names (see ``lookup_bot``), or None."""
    base, at, tag = spec.rpartition("@")
    if not at or not base or not tag:
        return None
    versions = [v for v in bot_versions(session, base) if v.bot.registered]
    if tag.isdigit():
        number = int(tag)
        return versions[number - 1] if 1 <= number <= len(versions) else None
    low = tag.lower()
    if len(low) < 4 or any(c not in "0123456789abcdef" for c in low):
        return None
    found = [v for v in versions if v.sha256.startswith(low)]
    return found[0] if len(found) == 1 else None


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


def insert_schedule(
    session: Session,
    tournament_id: int,
    game: str,
    params: dict[str, Any],
    time_control: dict[str, Any],
    players: int,
    matches: Sequence[ScheduledMatch],
    *,
    fast: bool = True,
) -> list[int]:
    """Store a new tournament's schedule as pending matches with their seats, in the caller's
    transaction; returns the match ids in schedule order (see ``db.writer``; ``fast`` False:
    SQLAlchemy Core on SQLite too)."""
    writer = writer_for(session.connection(), fast=fast)
    return writer.insert_schedule(tournament_id, game, params, time_control, players, matches)


def complete_matches(
    conn: Connection, items: Sequence[Completion], *, sandbox: str | None = None
) -> list[bool]:
    """Store several results, (match id, record, version ids, replace_partial) each, in the
    caller's transaction: the runner's group commit (see ``db.writer``; ``sandbox``: the level
    their bots ran under). Returns, per item, whether it was stored."""
    return writer_for(conn).complete_matches(items, sandbox=sandbox)


def complete_match(
    session: Session | Connection,
    match_id: int,
    record: MatchRecord,
    version_ids: Sequence[int],
    *,
    replace_partial: bool = True,
    fast: bool = True,
    sandbox: str | None = None,
) -> bool:
    """Store the result of the scheduled match ``match_id`` if it is still pending or running;
    False (and nothing written) if it is done already, void, missing or has another number of
    seats.

    Seat results are overwritten; with ``replace_partial`` any moves an interrupted earlier
    attempt left are deleted first, so a replayed match is stored exactly once (``fast`` False:
    SQLAlchemy Core on SQLite too). ``sandbox``: the level the bots ran under (None: unknown).
    """
    conn = session.connection() if isinstance(session, Session) else session
    item = (match_id, record, version_ids, replace_partial)
    return writer_for(conn, fast=fast).complete_matches([item], sandbox=sandbox)[0]


def save_match(
    session: Session,
    record: MatchRecord,
    refs: Sequence[BotRef],
    tournament_id: int | None = None,
    match_id: int | None = None,
    *,
    version_ids: Sequence[int] | None = None,
    sandbox: str | None = None,
) -> int:
    """Store a finished match in the caller's transaction and return its id.

    With ``match_id`` the scheduled (pending or running) row is completed, see
    :func:`complete_match`. ``version_ids`` (the bot_versions rows of ``refs``, when the caller
    knows them) saves the lookups. ``sandbox``: the level the bots ran under (the pool's
    ``sandbox_level``; None when not known, read as unconfined).
    """
    if len(refs) != len(record.seats):
        raise ValueError(f"{len(refs)} bots for {len(record.seats)} seats")
    if version_ids is None:
        # a few statements for the whole field, not up to six a seat (read the bot, insert it,
        # read it again; the same for its version): about a third of storing a small match
        version_ids = [v.id for v in versions_for(session, refs)]
    if match_id is not None:
        if not complete_match(session, match_id, record, version_ids, sandbox=sandbox):
            raise ValueError(
                f"match {match_id} is missing, done or void, or not a {len(refs)}-player match"
            )
        return match_id
    match = Match(
        tournament_id=tournament_id,
        game=record.game,
        params=record.params,
        players=len(record.seats),
        **match_values(record, sandbox),
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
    insert_moves(session.connection(), match.id, record.moves)
    change_pair_totals(session.connection().exec_driver_sql, [match.id], 1)
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


def load_matches_chunked(
    session: Session, match_ids: Sequence[int], chunk: int
) -> Iterator[tuple[Match, MatchRecord]]:
    """Matches and their records (``record_of``), ``chunk`` ids at a time, each chunk let go
    by the session once the next is asked for (exports can be large). A match with a malformed
    stored value is left out, said on stderr (``warn_skipped``)."""
    for start in range(0, len(match_ids), chunk):
        ids = match_ids[start : start + chunk]
        for match in load_each(session, ids, lambda some: load_matches(session, some)):
            try:
                record = record_of(match)
            except StoredDataError as err:
                warn_skipped(match.id, str(err).removeprefix(f"match {match.id}: "))
                continue
            yield match, record
        session.expunge_all()


def load_match(session: Session, match_id: int) -> Match | None:
    """A match with its seats (and their bots) and moves loaded (StoredDataError naming it
    when a stored value of it is malformed)."""
    try:
        found = load_matches(session, [match_id])
    except StoredDataError as err:
        raise at_match(err, match_id) from None
    return found[0] if found else None


def record_of(match: Match) -> MatchRecord:
    """The MatchRecord of a played match (done, or void after it was played), as
    ``arena play --json`` printed it."""
    if match.status not in ("done", "void") or match.termination is None:
        raise ValueError(f"match {match.id} is {match.status}, not played")
    try:
        return _record(match)
    except (RecordError, ValueError, TypeError) as err:  # a row no Bot Arena wrote
        raise at_match(err, match.id) from None


def _record(match: Match) -> MatchRecord:
    seats = (
        (s.version.bot.name, s.version.sha256, s.utility, s.rank, s.score, s.fault)
        for s in match.seats
    )
    moves = ((m.seat, m.move, m.time_ms, m.info, m.forced) for m in match.moves)
    return record_from(match, seats, moves)


class StoredMatch(Protocol):
    """A stored match's own columns that its record holds: an ORM ``Match`` or a row selected
    with those names."""

    game: str
    params: dict[str, Any]
    start_position: str | None
    final_position: str | None
    termination: str | None
    started: datetime | None
    finished: datetime | None
    time_control: dict[str, Any]
    adjudication: dict[str, Any] | None


#: A seat as stored: bot name, version SHA-256, utility, rank, score, fault.
SeatValues = tuple[str, str, float | None, int | None, float | None, dict[str, Any] | None]
#: A move as stored: seat, move, time_ms, info, forced.
MoveValues = tuple[int, str, float, dict[str, Any] | None, bool]


def record_from(
    match: StoredMatch, seats: Iterable[SeatValues], moves: Iterable[MoveValues]
) -> MatchRecord:
    """The MatchRecord of a played match from its stored values (its seats in seat order, its
    moves in ply order): the one reading of a stored match, for the ORM's objects and for the
    rows an export streams. RecordError, ValueError or TypeError on a value no Bot Arena wrote."""
    assert match.termination is not None
    started = match.started.timestamp() if match.started else 0.0
    finished = match.finished.timestamp() if match.finished else started
    return MatchRecord(
        game=match.game,
        params=dict(match.params),
        start_position=match.start_position or "",
        seats=[
            SeatResult(
                bot=bot,
                utility=float(utility or 0.0),
                rank=int(rank or 0),
                score=float(score or 0.0),
                fault=Fault.from_dict(fault) if fault else None,
                version=version,
            )
            for bot, version, utility, rank, score, fault in seats
        ],
        moves=[
            MoveRecord(seat=seat, move=move, time_ms=time_ms, info=info, forced=forced)
            for seat, move, time_ms, info, forced in moves
        ],
        termination=Termination(match.termination),
        final_position=match.final_position or "",
        started=started,
        finished=finished,
        time_control=dict(match.time_control),
        adjudication=match.adjudication,
    )
