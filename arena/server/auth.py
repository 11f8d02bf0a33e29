"""Who is asking: an API token (``Authorization: Bearer TOKEN``) for ``/api``, a session
cookie for pages, and the CSRF check every form goes through.

The session cookie is HttpOnly and SameSite=Strict (Secure when the site is served over
https); each signed-in session has its own CSRF token, which its forms carry in a hidden
field. The sign-in form, before any session, uses a double-submit token: a random cookie and
the same value in the form."""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from bot_arena.arena.api import accounts
from bot_arena.arena.api.accounts import Account
from bot_arena.arena.api.passwords import new_secret
from bot_arena.arena.server.errors import ApiError
from bot_arena.arena.server.state import state_of

SESSION_COOKIE = "arena_session"
CSRF_COOKIE = "arena_csrf"  # the double-submit token of the forms shown before a sign-in
MAX_HEADER = 256  # longest Authorization value read


def _token(request: Request) -> str | None:
    raw = request.headers.get("authorization", "")
    if not raw or len(raw) > MAX_HEADER:
        return None
    scheme, _, token = raw.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


async def api_user(request: Request) -> Account:
    """The user whose API token the request carries (401 without a valid one)."""
    state = state_of(request)
    token = _token(request)
    if token is None:
        raise ApiError(401, "give your API token: Authorization: Bearer TOKEN")

    def find() -> Account | None:
        with state.reads() as session:
            return accounts.user_for_token(session, token, state.tokens)

    user = await run_in_threadpool(find)
    if user is None:
        raise ApiError(401, "this API token is not valid (or its user is suspended)")
    return user


@dataclass(frozen=True)
class Visitor:
    """A page's reader: signed in (``user``, the session's CSRF token) or not."""

    user: Account | None
    csrf: str


async def visitor(request: Request) -> Visitor:
    """The signed-in user of the request's session cookie, if any, with the CSRF token its
    forms carry (a visitor's: the double-submit cookie's, made by ``set_csrf_cookie``)."""
    state = state_of(request)
    cookie = request.cookies.get(SESSION_COOKIE, "")
    if cookie:

        def find() -> tuple[Account, str] | None:
            with state.reads() as session:
                return accounts.session_user(session, cookie)

        found = await run_in_threadpool(find)
        if found is not None:
            return Visitor(found[0], found[1])
    given = request.cookies.get(CSRF_COOKIE, "")
    return Visitor(None, given if 32 <= len(given) <= 64 else new_secret())


def check_csrf(seen: Visitor, sent: object) -> None:
    """Refuse (403) a form whose CSRF field is not the visitor's token."""
    if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), seen.csrf.encode()):
        raise ApiError(403, "this form has expired or did not come from this site: reload it")


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def set_csrf_cookie(request: Request, response: Response, seen: Visitor) -> None:
    if seen.user is None:
        response.set_cookie(
            CSRF_COOKIE, seen.csrf, httponly=True, samesite="strict", secure=_secure(request)
        )


def set_session_cookie(request: Request, response: Response, cookie: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        cookie,
        max_age=accounts.SESSION_DAYS * 86400,
        httponly=True,
        samesite="strict",
        secure=_secure(request),
    )
    response.delete_cookie(CSRF_COOKIE)


def clear_session_cookie(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE)
