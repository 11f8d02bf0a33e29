"""The results database: bots and their versions, tournaments, matches, seats and moves.

Invariants live in the schema, so no code path (and no crash half-way through one) can break
them: one row per seat and per ply, ranks within 1..N (each seat row carries its match's player
count through a composite foreign key, so ``rank <= players`` is a plain CHECK), scores in
[0, 1], a done match has a termination and a finish time, one version per (bot, SHA-256).

Seat rows exist from the moment a match is scheduled (the pairing is part of the schedule); their
result columns stay NULL until the match is done.

A match goes ``pending`` -> ``running`` -> ``done``; ``void`` (annulled by the tournament director,
from any of the three, with a reason and a time) keeps its seats and moves but counts nowhere.

A result carries the sandbox level its bots ran under (``matches.sandbox``: confined, partial or
off; NULL for matches stored before the arena recorded it, which count as unconfined).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    DateTime,
    Dialect,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from bot_arena.db.statuses import MATCH_STATUSES as MATCH_STATUSES
from bot_arena.db.stored import StoredJSON

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

BOT_KINDS = ("builtin", "module", "command", "human", "uci", "xboard")
TOURNAMENT_STATUSES = ("running", "done")
FORMATS = ("round-robin", "gauntlet", "swiss", "knockout", "sprt", "ladder")
LADDER_STATUSES = ("active", "retired", "suspended")  # a ladder entrant's (0011)
TERMINATIONS = (
    "normal",
    "timeout",
    "crash",
    "illegal_move",
    "bad_output",
    "stall",
    "resign",
    "adjudicated",
)
# what a match's bots ran under (arena.transport.sandbox.mode.LEVELS): every confinement layer,
# some of them, none; NULL: played before the arena recorded it (counts as unconfined)
SANDBOX_LEVELS = ("confined", "partial", "off")
#: migration 0015's partial index ``ix_seats_faulted``: its rows (the same on both backends)
FAULTED_SEATS = "fault IS NOT NULL"


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Timestamps stored as naive UTC (SQLite keeps no zone) and read back as aware UTC."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        dict[str, Any]: StoredJSON(dict),
        datetime: UTCDateTime,
    }


class Bot(Base):
    """A bot by name. ``registered`` bots were added with ``arena bots add`` and can be named in
    specs; the others were recorded because they played (built-in specs, paths, commands)."""

    __tablename__ = "bots"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(400), unique=True)
    registered: Mapped[bool] = mapped_column(default=False)
    created: Mapped[datetime] = mapped_column(default=utcnow)

    versions: Mapped[list[BotVersion]] = relationship(
        back_populates="bot", order_by="BotVersion.id", cascade="all, delete-orphan"
    )


class BotVersion(Base):
    """One exact version of a bot: what to run (``target``), the module source, and its hash."""

    __tablename__ = "bot_versions"
    __table_args__ = (
        UniqueConstraint("bot_id", "sha256", name="uq_bot_versions_bot_sha256"),
        CheckConstraint(_in("kind", BOT_KINDS), name="kind"),
        CheckConstraint("length(sha256) = 64", name="sha256_length"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    target: Mapped[str] = mapped_column(Text)  # spec, path / module:attr, or command line
    source: Mapped[str | None] = mapped_column(Text)  # module source text (kind "module")
    # a file bot's other Python files: [[path relative to its folder, text], ...] (0004)
    files: Mapped[list[list[str]] | None] = mapped_column(
        StoredJSON(list, what="bot_versions.files", none_as_null=True)
    )
    sha256: Mapped[str] = mapped_column(String(64))
    created: Mapped[datetime] = mapped_column(default=utcnow)

    bot: Mapped[Bot] = relationship(back_populates="versions")


class Tournament(Base):
    __tablename__ = "tournaments"
    __table_args__ = (
        CheckConstraint(_in("status", TOURNAMENT_STATUSES), name="status"),
        CheckConstraint(_in("format", FORMATS), name="format"),
        CheckConstraint("status <> 'done' OR finished IS NOT NULL", name="done_finished"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str | None] = mapped_column(String(200))
    game: Mapped[str] = mapped_column(String(100))
    params: Mapped[dict[str, Any]] = mapped_column(
        StoredJSON(dict, what="tournaments.params"), default=dict
    )
    time_control: Mapped[dict[str, Any]] = mapped_column(
        StoredJSON(dict, what="tournaments.time_control"), default=dict
    )
    format: Mapped[str] = mapped_column(String(20))
    settings: Mapped[dict[str, Any]] = mapped_column(
        StoredJSON(dict, what="tournaments.settings"), default=dict
    )
    seed: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default="running")
    created: Mapped[datetime] = mapped_column(default=utcnow)
    finished: Mapped[datetime | None]
    # refreshed by its runner while it runs (``arena.tournament.heartbeat``); NULL: none
    heartbeat: Mapped[datetime | None]

    entries: Mapped[list[Entry]] = relationship(
        back_populates="tournament", order_by="Entry.position", cascade="all, delete-orphan"
    )


class Entry(Base):
    """A bot in a tournament's field: its place in the field, the spec it was given as, and the
    exact version that was resolved (what ``resume`` compares against)."""

    __tablename__ = "tournament_entries"
    __table_args__ = (
        UniqueConstraint("tournament_id", "position", name="uq_tournament_entries_position"),
        CheckConstraint("position >= 0", name="position"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    position: Mapped[int]
    spec: Mapped[str] = mapped_column(Text)
    bot_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"))

    tournament: Mapped[Tournament] = relationship(back_populates="entries")
    version: Mapped[BotVersion] = relationship()


class Ladder(Base):
    """What a ladder (a tournament of format ``ladder``, issue 30) adds to its row: its name,
    unique among ladders; after how many faults in a row an entrant is suspended; and a counter
    of changes to its field, which a running ladder reads to notice an entrant added, retired
    or suspended by another process (0011)."""

    __tablename__ = "ladders"
    __table_args__ = (
        CheckConstraint("suspend_after >= 1", name="suspend_after"),
        CheckConstraint("revision >= 0", name="revision"),
    )

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    name: Mapped[str] = mapped_column(String(200), unique=True)
    suspend_after: Mapped[int]
    revision: Mapped[int] = mapped_column(default=0)


class LadderEntrant(Base):
    """A ladder's entrant (its field position, as in ``tournament_entries``): whether it gets
    games (active), has left (retired: its results stay) or faulted too often in a row
    (suspended), and its faults in a row so far (0011)."""

    __tablename__ = "ladder_entrants"
    __table_args__ = (
        CheckConstraint(_in("status", LADDER_STATUSES), name="status"),
        CheckConstraint("faults_in_row >= 0", name="faults_in_row"),
        CheckConstraint("position >= 0", name="position"),
    )

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("ladders.tournament_id", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(primary_key=True)
    status: Mapped[str] = mapped_column(String(16), default="active")
    faults_in_row: Mapped[int] = mapped_column(default=0)
    joined: Mapped[datetime] = mapped_column(default=utcnow)


class Match(Base):
    __tablename__ = "matches"
    __table_args__ = (
        UniqueConstraint("id", "players", name="uq_matches_id_players"),
        CheckConstraint(_in("status", MATCH_STATUSES), name="status"),
        CheckConstraint(f"termination IS NULL OR {_in('termination', TERMINATIONS)}", name="term"),
        CheckConstraint(
            "status <> 'done' OR (termination IS NOT NULL AND finished IS NOT NULL)",
            name="done_result",
        ),
        CheckConstraint("players >= 1", name="players"),
        CheckConstraint("duration_s IS NULL OR duration_s >= 0", name="duration"),
        CheckConstraint("status <> 'void' OR void_reason IS NOT NULL", name="void_reason"),
        CheckConstraint(f"sandbox IS NULL OR {_in('sandbox', SANDBOX_LEVELS)}", name="sandbox"),
        Index("ix_matches_tournament_status", "tournament_id", "status"),
        Index("ix_matches_status_finished", "status", "finished", "id"),  # 0010: latest game
        Index("ix_matches_status_id", "status", "id"),  # 0010: pages of one status
        # 0016: a tournament's done matches by sandbox level from the index alone (show)
        Index("ix_matches_tournament_status_sandbox", "tournament_id", "status", "sandbox"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int | None] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE")
    )
    round: Mapped[int] = mapped_column(default=0)
    game: Mapped[str] = mapped_column(String(100))
    params: Mapped[dict[str, Any]] = mapped_column(
        StoredJSON(dict, what="matches.params"), default=dict
    )
    time_control: Mapped[dict[str, Any]] = mapped_column(
        StoredJSON(dict, what="matches.time_control"), default=dict
    )
    players: Mapped[int]
    seed: Mapped[int] = mapped_column(BigInteger, default=0)
    opening: Mapped[str] = mapped_column(Text, default="")  # opening moves, space-separated
    start_position: Mapped[str | None] = mapped_column(Text)  # None: the initial position
    final_position: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    termination: Mapped[str | None] = mapped_column(String(20))
    fault_reason: Mapped[str | None] = mapped_column(Text)
    started: Mapped[datetime | None]
    finished: Mapped[datetime | None]
    duration_s: Mapped[float | None]
    void_reason: Mapped[str | None] = mapped_column(Text)  # why it was annulled (status 'void')
    voided: Mapped[datetime | None]  # when it was annulled
    # the sandbox level its bots ran under (SANDBOX_LEVELS); NULL: not recorded (unconfined)
    sandbox: Mapped[str | None] = mapped_column(String(16))
    # an adjudicated match's verdict: the rule, the winner and the scores it went on (0007)
    adjudication: Mapped[dict[str, Any] | None] = mapped_column(
        StoredJSON(dict, what="matches.adjudication", none_as_null=True)
    )

    seats: Mapped[list[Seat]] = relationship(
        back_populates="match",
        order_by="Seat.seat",
        cascade="all, delete-orphan",
    )
    moves: Mapped[list[Move]] = relationship(
        back_populates="match", order_by="Move.ply", cascade="all, delete-orphan"
    )


class Seat(Base):
    __tablename__ = "seats"
    __table_args__ = (
        UniqueConstraint("match_id", "seat", name="uq_seats_match_seat"),
        ForeignKeyConstraint(
            ["match_id", "players"],
            ["matches.id", "matches.players"],
            ondelete="CASCADE",
            name="fk_seats_match_players",
        ),
        CheckConstraint("seat >= 0 AND seat < players", name="seat_range"),
        CheckConstraint("rank IS NULL OR (rank >= 1 AND rank <= players)", name="rank_range"),
        CheckConstraint("score IS NULL OR (score >= 0 AND score <= 1)", name="score_range"),
        CheckConstraint(
            "(rank IS NULL AND score IS NULL AND utility IS NULL)"
            " OR (rank IS NOT NULL AND score IS NOT NULL AND utility IS NOT NULL)",
            name="result_complete",
        ),
        Index("ix_seats_bot_version", "bot_version_id"),
        # 0015: the faulted seats alone, in match and seat order (a leaderboard's fault counts)
        Index(
            "ix_seats_faulted",
            "match_id",
            "seat",
            sqlite_where=text(FAULTED_SEATS),
            # and postgresql_where, given by declare_postgresql (which says why)
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int]
    players: Mapped[int]
    seat: Mapped[int]
    bot_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"))
    utility: Mapped[float | None]
    rank: Mapped[int | None]
    score: Mapped[float | None]
    fault: Mapped[dict[str, Any] | None] = mapped_column(
        StoredJSON(dict, what="seats.fault", none_as_null=True)
    )

    match: Mapped[Match] = relationship(back_populates="seats")
    version: Mapped[BotVersion] = relationship()


class Move(Base):
    __tablename__ = "moves"
    __table_args__ = (
        UniqueConstraint("match_id", "ply", name="uq_moves_match_ply"),
        CheckConstraint("ply >= 0", name="ply"),
        CheckConstraint("seat >= 0", name="seat"),
        CheckConstraint("time_ms >= 0", name="time_ms"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"))
    ply: Mapped[int]
    seat: Mapped[int]
    move: Mapped[str] = mapped_column(Text)
    time_ms: Mapped[float]
    info: Mapped[dict[str, Any] | None] = mapped_column(
        StoredJSON(dict, what="moves.info", none_as_null=True)
    )
    forced: Mapped[bool] = mapped_column(default=False)

    match: Mapped[Match] = relationship(back_populates="moves")


class PairTotal(Base):
    """The first seat's wins, draws and losses over the done two-player matches of one
    tournament (NULL: outside any), game, ordered pair of versions and sandbox level, kept by
    every write in its transaction (``db.pair_totals``; migration 0016). Unique on the key with
    NULLs made comparable (``COALESCE``), so an upsert finds the row of unconfined or
    tournament-less matches too."""

    __tablename__ = "pair_totals"
    __table_args__ = (
        Index(
            "ux_pair_totals_key",
            text("(COALESCE(tournament_id, 0))"),
            "game",
            "first_version_id",
            "second_version_id",
            text("(COALESCE(sandbox, ''))"),
            unique=True,
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int | None] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE")
    )
    game: Mapped[str] = mapped_column(String(100))
    first_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id", ondelete="CASCADE"))
    second_version_id: Mapped[int] = mapped_column(
        ForeignKey("bot_versions.id", ondelete="CASCADE")
    )
    sandbox: Mapped[str | None] = mapped_column(String(16))
    wins: Mapped[int]
    draws: Mapped[int]
    losses: Mapped[int]


class SeatTotal(Base):
    """A tournament's done two-player matches counted by one seat's version, its rank and
    score and the other seat's rank (``tournament show``'s standings), kept by every write in
    its transaction (``db.pair_totals``; migration 0016)."""

    __tablename__ = "seat_totals"
    __table_args__ = (
        UniqueConstraint(
            "tournament_id",
            "bot_version_id",
            "rank",
            "score",
            "other_rank",
            name="uq_seat_totals_key",
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    bot_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id", ondelete="CASCADE"))
    rank: Mapped[int]
    score: Mapped[float]
    other_rank: Mapped[int]
    games: Mapped[int]


class User(Base):
    """An account of ``arena serve`` (0012): who uploads bots and signs in. The API token and
    the password are stored only as salted scrypt hashes (``arena/api/passwords.py``); a
    suspended user can neither sign in nor use a token."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    admin: Mapped[bool] = mapped_column(default=False)
    suspended: Mapped[bool] = mapped_column(default=False)
    token_hash: Mapped[str] = mapped_column(Text)
    password_hash: Mapped[str | None] = mapped_column(Text)
    created: Mapped[datetime] = mapped_column(default=utcnow)


class BotOwner(Base):
    """Whose a bot is (0012): the user who first uploaded it through the server. A bot with no
    row here belongs to the house (registered at the terminal with ``arena bots add``), and no
    user may upload under its name."""

    __tablename__ = "bot_owners"

    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)


class WebSession(Base):
    """A signed-in browser (0012): ``id`` is the SHA-256 of the cookie's random value (the
    cookie itself is never stored), ``csrf`` the token every form of that session carries."""

    __tablename__ = "web_sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    csrf: Mapped[str] = mapped_column(String(64))
    created: Mapped[datetime] = mapped_column(default=utcnow)
    expires: Mapped[datetime]


class RateEvent(Base):
    """An attempt a limit of ``arena serve`` counted (0013): ``kind`` names the limit
    (``upload``: by user id, ``signin``: by name), ``key`` what it counts by. Kept in the
    database so a restart does not reset the counts (``db/ratelimit.py``)."""

    __tablename__ = "rate_events"
    __table_args__ = (Index("ix_rate_events_kind_key_at", "kind", "key", "at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    key: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime]


def declare_postgresql() -> None:
    """Give the models what only PostgreSQL reads: the WHERE of 0015's partial index, the same
    as SQLite's. Called once a PostgreSQL engine or connection is at hand (``make_engine``,
    the migrations' environment); named in the ``Index`` itself, the option has SQLAlchemy
    import its PostgreSQL dialect, with asyncio, on every SQLite run too (0.08-0.12 s of a
    run's start-up, issue 32). Idempotent."""
    index = next(
        ix for ix in Base.metadata.tables["seats"].indexes if ix.name == "ix_seats_faulted"
    )
    if index.dialect_options["postgresql"]["where"] is None:
        index.dialect_kwargs["postgresql_where"] = text(FAULTED_SEATS)
