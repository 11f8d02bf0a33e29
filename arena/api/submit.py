"""Submitting a bot: the checks of ``arena bots add`` and of an upload to ``arena serve``, in
one place.

A submission is Kaggle's validation episode: the bot loads in a worker, answers the handshake
and plays one game in every seat against ``random`` without a fault (confined as the sandbox
settings say). Only then is it stored, with its source and SHA-256, so results always point at
the exact version that played. A submission through the server names its uploader: the bot
then belongs to that user, and nobody else may store a version under its name
(``register``'s ``owner``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot_arena.arena.api import checks
from bot_arena.arena.api.errors import ArenaError
from bot_arena.arena.api.validation import validation_games

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from bot_arena.arena.api.accounts import Account
    from bot_arena.arena.api.sandbox import Confinement
    from bot_arena.arena.match.botref import BotRef
    from bot_arena.arena.match.record import Fault, MatchRecord

DEFAULT_MOVE_TIME = 2.0
DEFAULT_STARTUP = 10.0


class NotYours(ArenaError):
    """A name that belongs to another user, or to the house (a bot registered at the
    terminal): nothing was stored."""


@dataclass(frozen=True)
class Validation:
    """The validation games of one bot: all of them played without a fault, or up to the
    first fault of the bot (``failed``)."""

    ref: BotRef
    records: list[MatchRecord]

    @property
    def failed(self) -> tuple[int, Fault] | None:
        """(seat, fault) of the game the bot failed, None when it passed."""
        seat = len(self.records) - 1
        fault = self.records[-1].seats[seat].fault if self.records else None
        return None if fault is None else (seat, fault)

    def summary(self) -> dict[str, Any]:
        ref, records = self.ref, self.records
        return {
            "bot": ref.name,
            "game": records[0].game if records else None,
            "kind": ref.kind,
            "target": ref.target,
            "sha256": ref.sha256,
            "games": len(records),
            "moves": sum(len(r.moves) for r in records),
        }


class ValidationFailed(ArenaError):
    """The bot faulted in a validation game (``validation.failed`` says which and why):
    nothing was stored."""

    def __init__(self, validation: Validation) -> None:
        failed = validation.failed
        assert failed is not None
        seat, fault = failed
        game = validation.records[-1].game
        super().__init__(
            f"{validation.ref.name} failed validation ({game}, seat {seat}): "
            f"{fault.termination.value}: {fault.message}"
        )
        self.validation = validation


@dataclass(frozen=True)
class Registered:
    """A stored version: its bot, its number among the bot's versions, whether it is new."""

    bot_id: int
    version_id: int
    number: int
    created: bool


def check_bot_name(name: str) -> str:
    """``name`` (without surrounding blanks) when a bot may be registered under it: the
    naming rule (``match/names.py``) and no built-in bot of that name."""
    from bot_arena.arena.match.botref import BotSpecError
    from bot_arena.arena.match.botspec import resolve
    from bot_arena.arena.match.names import BotNameError, check_name

    try:
        name = check_name(name)
    except BotNameError as exc:
        raise ArenaError(str(exc)) from None
    try:
        resolve(name)
    except BotSpecError:
        return name
    raise ArenaError(f"bot name {name!r} is taken by a built-in bot")


def submitted(path: str, anchored: bool = False) -> BotRef:
    """The bot ``path`` names; with ``anchored``, a ``cmd:`` bot's relative paths made
    absolute (a registered command runs the same from any folder)."""
    from bot_arena.arena.match.botref import BUILTIN, HUMAN, PROGRAMS, BotSpecError
    from bot_arena.arena.match.botspec import anchor_command, resolve

    try:
        ref = resolve(path)
        if anchored and ref.kind in PROGRAMS:
            prefix = path.strip().partition(":")[0]  # cmd, uci or xboard
            ref = resolve(f"{prefix}:{anchor_command(ref.target)}")
    except BotSpecError as exc:
        raise ArenaError(str(exc)) from None
    if ref.kind in (BUILTIN, HUMAN):
        raise ArenaError(f"{path!r} is a built-in spec, not a bot to submit")
    return ref


def validate(
    path: str,
    game_name: str | None,
    params: Sequence[str] | None,
    confinement: Confinement,
    *,
    move_time: float = DEFAULT_MOVE_TIME,
    startup_s: float = DEFAULT_STARTUP,
    anchored: bool = False,
    warn: Callable[[str], None] | None = None,
) -> Validation:
    """The bot at ``path`` read and checked (ArenaError when it cannot be), then its
    validation games played (``warn`` is given the line saying that ``auto`` confines it
    less than fully, as they start). A fault is in the result, not raised."""
    if game_name is None:
        raise ArenaError(
            "--game is required: the game to check the bot on (`arena games` lists them)"
        )
    game = checks.load_game(game_name, list(params or []))
    ref = submitted(path, anchored)
    checks.check_engines([ref], game)
    confinement = confinement.for_bots([ref.name, "random"])
    line = confinement.warning()
    if line is not None and warn is not None:
        warn(line)
    records = validation_games(game, ref, move_time, startup_s, sandbox=confinement.settings)
    return Validation(ref, records)


def check_owner(session: Session, name: str, owner: Account) -> None:
    """Raise NotYours unless ``owner`` may store a version of the bot ``name``: no registered
    bot has that name, or it is theirs."""
    from bot_arena.db import accounts

    bot = accounts.bot_named(session, name)
    if bot is not None and bot.registered and accounts.owner_of(session, bot.id) != owner.id:
        raise NotYours(f"bot name {name!r} belongs to someone else")


def register(session: Session, name: str, ref: BotRef, owner: Account | None = None) -> Registered:
    """Store ``ref`` as a version of the bot ``name`` in the caller's transaction. With an
    ``owner`` (an upload through the server) the name must be free or already that user's:
    a new bot becomes theirs; one of another user or of the house raises NotYours (two users
    racing for a new name: the second meets the owners table's key and is refused too)."""
    from sqlalchemy.exc import IntegrityError

    from bot_arena.db import accounts
    from bot_arena.db.store import register_bot_version

    if owner is not None:
        check_owner(session, name, owner)
    version, created = register_bot_version(session, name, ref)
    if owner is not None and accounts.owner_of(session, version.bot_id) is None:
        try:
            with session.begin_nested():
                accounts.set_owner(session, version.bot_id, owner.id)
        except IntegrityError:
            raise NotYours(f"bot name {name!r} belongs to someone else") from None
    number = [v.id for v in version.bot.versions].index(version.id) + 1
    return Registered(version.bot_id, version.id, number, created)


def submit(
    session: Session,
    name: str,
    validation: Validation,
    owner: Account | None = None,
) -> Registered:
    """Register a bot that passed its validation games (ValidationFailed else)."""
    if validation.failed is not None:
        raise ValidationFailed(validation)
    return register(session, name, validation.ref, owner)
