"""Accounts of ``arena serve``: users, their API tokens and passwords, signed-in sessions.

A user's API token is ``arena_<id>_<secret>``: the id finds the row, the secret is checked
against its scrypt hash (``passwords``), so a token is never stored and a guess costs a hash.
Checking a hash costs about 0.3 s of CPU, so a server keeps the tokens it has checked
(``TokenCache``: the SHA-256 of the token against the stored hash it matched; a new token or a
suspension is seen at once, since the row is read on every request). Passwords are for the web
sign-in; a browser then holds a random session cookie whose SHA-256 is stored with the
session's CSRF token (``db/accounts.py``).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any

from bot_arena.arena.api import passwords
from bot_arena.arena.api.errors import ArenaError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from bot_arena.db.models import User

MAX_USER_NAME = 32
MIN_PASSWORD = 8
SESSION_DAYS = 14
_USER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_TOKEN = re.compile(r"arena_([1-9][0-9]{0,17})_([A-Za-z0-9_-]{43})")


@dataclass(frozen=True)
class Account:
    """A user as the server and the CLI show it (never its hashes)."""

    id: int
    name: str
    admin: bool
    suspended: bool
    created: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "admin": self.admin,
            "suspended": self.suspended,
            "created": self.created.isoformat(timespec="seconds"),
        }


@cache
def _dummy() -> str:
    """A hash checked when a name is unknown, so a sign-in takes as long whether or not the
    user exists (made once, when first needed: a hash costs about 0.3 s)."""
    return passwords.hash_secret("no such user")


def _account(user: User) -> Account:
    return Account(user.id, user.name, user.admin, user.suspended, user.created)


def check_user_name(name: str) -> str:
    """``name`` when a user may be called so: 1 to 32 ASCII letters, digits and ``_ . -``,
    starting with a letter or a digit (it is shown in pages, URLs and tables)."""
    if not _USER_NAME.fullmatch(name) or len(name) > MAX_USER_NAME:
        raise ArenaError(
            f"user name {name[:40]!r}: use 1 to {MAX_USER_NAME} letters, digits and _ . -, "
            "starting with a letter or a digit"
        )
    return name


def check_password(password: str) -> str:
    size = len(password.encode())
    if len(password) < MIN_PASSWORD or size > passwords.MAX_SECRET:
        raise ArenaError(
            f"a password has {MIN_PASSWORD} characters at least, {passwords.MAX_SECRET} bytes "
            "at most"
        )
    return password


def _token(user_id: int) -> str:
    return f"arena_{user_id}_{passwords.new_secret()}"


def add_user(
    session: Session, name: str, *, admin: bool = False, password: str | None = None
) -> tuple[Account, str]:
    """A new user and its API token (shown this once: only its hash is stored)."""
    from bot_arena.db import accounts

    check_user_name(name)
    if password is not None:
        check_password(password)
    if accounts.user_by_name(session, name) is not None:
        raise ArenaError(f"user {name!r} exists")
    user = accounts.add_user(session, name, admin, token_hash="-")  # the id makes the token
    token = _token(user.id)
    user.token_hash = passwords.hash_secret(token)
    if password is not None:
        user.password_hash = passwords.hash_secret(password)
    session.flush()
    return _account(user), token


def _user(session: Session, name: str) -> User:
    from bot_arena.db import accounts

    user = accounts.user_by_name(session, name)
    if user is None:
        raise ArenaError(f"no user named {name[:40]!r}")
    return user


def users(session: Session) -> list[Account]:
    from bot_arena.db import accounts

    return [_account(u) for u in accounts.list_users(session)]


def set_suspended(session: Session, name: str, suspended: bool) -> Account:
    """Suspend a user (signed out everywhere, its token refused) or lift the suspension."""
    from bot_arena.db import accounts

    user = _user(session, name)
    user.suspended = suspended
    if suspended:
        accounts.end_web_sessions_of(session, user.id)
    session.flush()
    return _account(user)


def set_password(session: Session, name: str, password: str) -> Account:
    user = _user(session, name)
    user.password_hash = passwords.hash_secret(check_password(password))
    session.flush()
    return _account(user)


def new_token(session: Session, name: str) -> tuple[Account, str]:
    """A new API token for ``name`` (the old one stops working)."""
    user = _user(session, name)
    token = _token(user.id)
    user.token_hash = passwords.hash_secret(token)
    session.flush()
    return _account(user), token


class TokenCache:
    """The tokens a server has checked: SHA-256 of the token -> the stored hash it matched
    (bounded, oldest dropped first). A hit still needs the row to hold that same hash."""

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._known: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()  # a server checks tokens in several threads

    def matches(self, token: str, stored: str) -> bool:
        key = passwords.fingerprint(token)
        with self._lock:
            if self._known.get(key) == stored:
                self._known.move_to_end(key)
                return True
        if not passwords.check_secret(stored, token):  # the slow part, outside the lock
            return False
        with self._lock:
            self._known[key] = stored
            while len(self._known) > self._size:
                self._known.popitem(last=False)
        return True


def user_for_token(session: Session, token: str, cache: TokenCache | None = None) -> Account | None:
    """The active user whose API token ``token`` is, else None."""
    from bot_arena.db import accounts

    found = _TOKEN.fullmatch(token)
    if found is None:
        return None
    user = accounts.user_by_id(session, int(found.group(1)))
    if user is None or user.suspended:
        return None
    ok = (cache or TokenCache()).matches(token, user.token_hash)
    return _account(user) if ok else None


def sign_in(session: Session, name: str, password: str) -> Account | None:
    """The active user ``name`` if ``password`` is its password, else None (the same work
    whether or not the user exists)."""
    from bot_arena.db import accounts

    user = accounts.user_by_name(session, name) if len(name) <= MAX_USER_NAME else None
    stored = user.password_hash if user is not None and user.password_hash else _dummy()
    ok = passwords.check_secret(stored, password)
    if user is None or user.suspended or user.password_hash is None or not ok:
        return None
    return _account(user)


def open_session(session: Session, account: Account) -> tuple[str, str]:
    """A new signed-in session: (the cookie's value, its CSRF token)."""
    from bot_arena.db import accounts

    cookie, csrf = passwords.new_secret(), passwords.new_secret()
    expires = datetime.now(UTC) + timedelta(days=SESSION_DAYS)
    accounts.add_web_session(session, passwords.fingerprint(cookie), account.id, csrf, expires)
    return cookie, csrf


def session_user(session: Session, cookie: str) -> tuple[Account, str] | None:
    """The active user signed in with ``cookie`` and the session's CSRF token, else None."""
    from bot_arena.db import accounts

    if not cookie or len(cookie) > 64:
        return None
    found = accounts.web_session(session, passwords.fingerprint(cookie))
    if found is None:
        return None
    user = accounts.user_by_id(session, found.user_id)
    if user is None or user.suspended:
        return None
    return _account(user), found.csrf


def sign_out(session: Session, cookie: str) -> None:
    from bot_arena.db import accounts

    accounts.end_web_session(session, passwords.fingerprint(cookie))
