"""A bot handed in through the server: the multipart body read under a size limit, the file
written where only the server reads it, then the API's submission (``api/submit.py``: the
same checks and validation games as ``arena bots add``) under the uploader's name.

The client's file name is never used as a path: only its ending is read (which kind of bot
it is) and the file is written as ``NAME.py`` (or the archive's ending) in a fresh private
folder, removed afterwards. The body is counted as it arrives and refused (413) past the
limit, so no request can make the server hold more than ``max_upload_bytes``.

``POST /api/bots`` is ``receive`` + ``store``; a ladder's endpoint passes ``store`` a
function that enters the new version in its ladder, in the same transaction."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Message, Receive

from bot_arena.arena.api import submit
from bot_arena.arena.api.accounts import Account
from bot_arena.arena.api.errors import ArenaError
from bot_arena.arena.api.evidence import fault_evidence
from bot_arena.arena.server import scratch
from bot_arena.arena.server.auth import api_user
from bot_arena.arena.server.errors import ApiError
from bot_arena.arena.server.settings import FORM_SLACK
from bot_arena.arena.server.state import ServerState, state_of

ENDINGS = (".tar.gz", ".tgz", ".tar", ".zip", ".py")  # longest first
MAX_FIELD = 200  # characters of a text field (a name, a game, a parameter)
MAX_PARAMS = 16


class _TooLarge(Exception):
    pass


def _counted(receive: Receive, limit: int) -> Receive:
    """``receive`` that raises _TooLarge once the body passes ``limit`` bytes."""
    seen = 0

    async def counted() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise _TooLarge
        return message

    return counted


@dataclass(frozen=True)
class Upload:
    """What a request handed in: the bot's name, its game and parameters, its file."""

    name: str
    game: str
    params: tuple[str, ...]
    ending: str
    data: bytes
    csrf: object = None  # the form's CSRF field (checked by the page that took the form)


def _text(value: object, what: str, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise ApiError(400, f"the form needs a {what} field (text)")
    if len(value) > MAX_FIELD:
        raise ApiError(400, f"the {what} field holds more than {MAX_FIELD} characters")
    return value.strip()


def ending_of(filename: str | None) -> str:
    """The kind of bot a file name says (``.py`` or an archive's ending), else 400."""
    lower = (filename or "").lower()
    found = next((e for e in ENDINGS if lower.endswith(e)), None)
    if found is None:
        raise ApiError(400, f"the file must end in {', '.join(reversed(ENDINGS))}")
    return found


async def receive(
    request: Request, settings_limit: int, bot_limit: int, game: str | None = None
) -> Upload:
    """The multipart form of an upload (fields ``name``, ``game``, any ``param`` k=v, and
    ``file``), read within ``settings_limit`` bytes (413 past it: at once when the declared
    length says so, else as soon as the body does). With ``game`` (a ladder's upload) the form
    needs no game field, and one that names another game is refused."""
    kind = request.headers.get("content-type", "")
    if not kind.lower().startswith("multipart/form-data"):
        raise ApiError(400, "send the bot as multipart/form-data (fields name, game, file)")
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or len(declared) > 15):
        raise ApiError(400, "bad Content-Length")
    if declared is not None and int(declared) > settings_limit:
        raise ApiError(413, f"the upload is larger than {settings_limit} bytes")
    bounded = Request(request.scope, _counted(request.receive, settings_limit))
    try:
        form = await bounded.form(max_files=1, max_fields=MAX_PARAMS + 4, max_part_size=FORM_SLACK)
    except _TooLarge:
        raise ApiError(413, f"the upload is larger than {settings_limit} bytes") from None
    except HTTPException as exc:
        raise ApiError(400, f"bad multipart body: {exc.detail}") from None
    except Exception as exc:  # the multipart parser's own errors on a malformed body
        raise ApiError(400, f"bad multipart body: {type(exc).__name__}") from None
    try:
        name = _text(form.get("name"), "name")
        sent = _text(form.get("game"), "game", required=game is None)
        if game is not None and sent and sent != game:
            raise ApiError(400, f"this ladder plays {game}, not {sent}")
        game = game or sent
        params = tuple(_text(p, "param") for p in form.getlist("param"))
        file = form.get("file")
        if not isinstance(file, UploadFile):
            raise ApiError(400, "the form needs a file field (the bot's .py file or archive)")
        ending = ending_of(file.filename)
        data = await file.read(bot_limit + 1)
        if len(data) > bot_limit:
            raise ApiError(413, f"the bot file is larger than {bot_limit} bytes")
        if not data:
            raise ApiError(400, "the bot file is empty")
    finally:
        await form.close()
    return Upload(name, game, params, ending, data, form.get("csrf"))


Enter = Callable[[Session, submit.Registered, Account], dict[str, Any]]


def store(
    state: ServerState, user: Account, upload: Upload, enter: Enter | None = None
) -> dict[str, Any]:
    """The upload checked, validated and registered as ``user``'s (blocking: run it in a
    thread). ``enter`` runs in the same transaction after the version is stored (a ladder's
    entry); what it returns is added to the answer. Raises ApiError for every refusal."""
    try:
        name = submit.check_bot_name(upload.name)
    except ArenaError as exc:
        raise ApiError(400, str(exc)) from None
    with state.reads() as session:
        try:
            submit.check_owner(session, name, user)
        except submit.NotYours as exc:
            raise ApiError(403, str(exc)) from None
    folder = scratch.make_folder()  # named by this server: swept if it dies
    try:
        path = os.path.join(folder, name + upload.ending)
        with open(path, "xb") as fh:
            fh.write(upload.data)
        try:
            validation = state.validations.run(
                lambda: submit.validate(
                    path, upload.game, upload.params, state.settings.confinement
                )
            )
        except ArenaError as exc:
            raise ApiError(400, str(exc).replace(folder + os.sep, "")) from None
        failed = validation.failed
        if failed is not None:
            seat, fault = failed
            raise ApiError(
                400,
                str(submit.ValidationFailed(validation)),
                fault=fault.to_dict(),
                seat=seat,
                evidence=fault_evidence(fault),
            )
        return _register(state, user, name, validation, enter)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _register(
    state: ServerState, user: Account, name: str, validation: submit.Validation, enter: Enter | None
) -> dict[str, Any]:
    from bot_arena.db.session import is_busy

    try:
        with state.writes.begin() as session:
            stored = submit.submit(session, name, validation, owner=user)
            extra = enter(session, stored, user) if enter is not None else {}
    except submit.NotYours as exc:
        raise ApiError(403, str(exc)) from None
    except ArenaError as exc:
        raise ApiError(400, str(exc)) from None
    except SQLAlchemyError as exc:
        if is_busy(exc):
            raise ApiError(503, "the database is busy: nothing was stored, try again") from None
        raise
    ref = validation.ref
    return {
        "bot": {"id": stored.bot_id, "name": name, "owner": user.name},
        "version": {
            "id": stored.version_id,
            "number": stored.number,
            "sha256": ref.sha256,
            "kind": ref.kind,
            "new": stored.created,
        },
        "validation": {k: validation.summary()[k] for k in ("game", "games", "moves")},
        **extra,
    }


async def post_bot(request: Request) -> JSONResponse:
    """``POST /api/bots``: 201 with the bot and its version."""
    state = state_of(request)
    user = await api_user(request)
    if not await run_in_threadpool(state.limiter.allow, user.id):
        raise ApiError(429, f"at most {state.settings.uploads_per_hour} uploads an hour")
    upload = await receive(request, state.settings.max_upload_bytes, state.settings.max_bot_bytes)
    answer = await run_in_threadpool(store, state, user, upload)
    return JSONResponse(answer, status_code=201)
