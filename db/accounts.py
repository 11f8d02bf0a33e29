"""The SQL of ``arena serve``'s accounts: users, the owners of uploaded bots, web sessions.

The rules (names, hashing, who may do what) are the API's (``arena/api/accounts.py``); this
module only reads and writes rows.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, delete, func, select
from sqlalchemy.orm import Session

from bot_arena.db.models import (
    Bot,
    BotOwner,
    BotVersion,
    Match,
    Seat,
    Tournament,
    User,
    WebSession,
    utcnow,
)


def user_by_name(session: Session, name: str) -> User | None:
    return session.scalars(select(User).where(User.name == name)).one_or_none()


def user_by_id(session: Session, user_id: int) -> User | None:
    return session.get(User, user_id)


def add_user(session: Session, name: str, admin: bool, token_hash: str) -> User:
    """A new user (the caller checked that the name is free; a race ends in the unique
    constraint's IntegrityError at flush)."""
    user = User(name=name, admin=admin, suspended=False, token_hash=token_hash, created=utcnow())
    session.add(user)
    session.flush()
    return user


def list_users(session: Session) -> list[User]:
    return list(session.scalars(select(User).order_by(User.name)))


def owner_of(session: Session, bot_id: int) -> int | None:
    """The id of the user who owns bot ``bot_id``, None for a bot of the house."""
    return session.scalars(select(BotOwner.user_id).where(BotOwner.bot_id == bot_id)).first()


def bot_named(session: Session, name: str) -> Bot | None:
    return session.scalars(select(Bot).where(Bot.name == name)).one_or_none()


@dataclass(frozen=True, slots=True)
class Named:
    """A bot as a page names it: its id, whether it is registered, its owner's user name
    (None: no owner, a bot of the house or a spec's)."""

    bot_id: int
    registered: bool
    owner: str | None


def bots_named(session: Session, names: Collection[str]) -> dict[str, Named]:
    """The bots of these names that exist, each with its owner's name, in one query (a
    ladder's standings name every entrant's bot each time they are read afresh)."""
    if not names:
        return {}
    rows = session.execute(
        select(Bot.name, Bot.id, Bot.registered, User.name)
        .outerjoin(BotOwner, BotOwner.bot_id == Bot.id)
        .outerjoin(User, User.id == BotOwner.user_id)
        .where(Bot.name.in_(sorted(set(names))))
    )
    return {
        name: Named(bot_id, bool(registered), owner) for name, bot_id, registered, owner in rows
    }


def versions_held(session: Session, pairs: Collection[tuple[int, str]]) -> set[tuple[int, str]]:
    """Which of these (bot id, SHA-256) pairs are stored versions of that bot."""
    if not pairs:
        return set()
    bots, shas = sorted({b for b, _ in pairs}), sorted({s for _, s in pairs})
    rows = session.execute(
        select(BotVersion.bot_id, BotVersion.sha256).where(
            BotVersion.bot_id.in_(bots), BotVersion.sha256.in_(shas)
        )
    )
    return {(int(b), str(s)) for b, s in rows} & set(pairs)


def set_owner(session: Session, bot_id: int, user_id: int) -> None:
    session.add(BotOwner(bot_id=bot_id, user_id=user_id))
    session.flush()


def bots_of(session: Session, user_id: int) -> list[Bot]:
    """The bots a user owns, by name."""
    query = (
        select(Bot)
        .join(BotOwner, BotOwner.bot_id == Bot.id)
        .where(BotOwner.user_id == user_id)
        .order_by(Bot.name)
    )
    return list(session.scalars(query))


def add_web_session(session: Session, key: str, user_id: int, csrf: str, expires: datetime) -> None:
    session.add(WebSession(id=key, user_id=user_id, csrf=csrf, created=utcnow(), expires=expires))


def web_session(session: Session, key: str) -> WebSession | None:
    """The session stored under ``key`` while it has not expired."""
    found = session.get(WebSession, key)
    if found is None or found.expires <= utcnow():
        return None
    return found


def end_web_session(session: Session, key: str) -> None:
    session.execute(delete(WebSession).where(WebSession.id == key))


def end_web_sessions_of(session: Session, user_id: int) -> None:
    """Every session of a user (suspended: signed out everywhere)."""
    session.execute(delete(WebSession).where(WebSession.user_id == user_id))


def _recent(session: Session, bot_id: int, limit: int, *where: ColumnElement[bool]) -> list[Any]:
    """The bot's seats (any version) in the matches ``where`` keeps, newest first: match id,
    game, status, termination, finished, seat, score, fault, version id; ``limit`` rows."""
    query = (
        select(
            Match.id,
            Match.game,
            Match.status,
            Match.termination,
            Match.finished,
            Seat.seat,
            Seat.score,
            Seat.fault,
            Seat.bot_version_id,
        )
        .join(Seat, Seat.match_id == Match.id)
        .join(BotVersion, BotVersion.id == Seat.bot_version_id)
        .where(BotVersion.bot_id == bot_id, *where)
        .order_by(Match.id.desc())
        .limit(limit)
    )
    return list(session.execute(query))


def recent_seats(session: Session, bot_id: int, limit: int) -> list[Any]:
    """The bot's seats in its most recent matches, done or running (rows as ``_recent``')."""
    return _recent(session, bot_id, limit, Match.status.in_(("done", "running")))


def recent_faults(session: Session, bot_id: int, limit: int) -> list[Any]:
    """The bot's most recent faulted seats in done matches (rows as ``_recent``')."""
    return _recent(session, bot_id, limit, Seat.fault.is_not(None), Match.status == "done")


def registered_bots(session: Session, limit: int) -> list[Any]:
    """The registered bots by name (at most ``limit``): id, name, owner's name (None: the
    house's), number of versions."""
    versions = (
        select(BotVersion.bot_id, func.count().label("n")).group_by(BotVersion.bot_id).subquery()
    )
    query = (
        select(Bot.id, Bot.name, User.name.label("owner"), versions.c.n.label("versions"))
        .join(versions, versions.c.bot_id == Bot.id)
        .outerjoin(BotOwner, BotOwner.bot_id == Bot.id)
        .outerjoin(User, User.id == BotOwner.user_id)
        .where(Bot.registered.is_(True))
        .order_by(Bot.name)
        .limit(limit)
    )
    return list(session.execute(query))


def recent_tournaments(session: Session, limit: int) -> list[Any]:
    """The newest tournaments (id, name, game, status), newest first."""
    query = (
        select(Tournament.id, Tournament.name, Tournament.game, Tournament.status)
        .order_by(Tournament.id.desc())
        .limit(limit)
    )
    return list(session.execute(query))
