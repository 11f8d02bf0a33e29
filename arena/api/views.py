"""What the server shows of stored bots, matches and tournaments, as plain data (pages and
JSON render the same dicts), with the one rule of who sees what: a bot's source, its stored
files and what it wrote on stderr only to its owner and to admins."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot_arena.arena.api.errors import ArenaError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from bot_arena.arena.api.accounts import Account

RECENT = 20  # games and faults listed on a bot's page
PRIVATE_FAULT_KEYS = ("stderr_tail",)  # what a fault carries of the bot's own output


def may_see_source(viewer: Account | None, owner_id: int | None) -> bool:
    """A bot's source and stderr: its owner's and the admins' (a bot of the house: admins')."""
    return viewer is not None and (viewer.admin or (owner_id is not None and viewer.id == owner_id))


def _fault(fault: dict[str, Any] | None, private: bool) -> dict[str, Any] | None:
    if fault is None or private:
        return fault
    return {k: v for k, v in fault.items() if k not in PRIVATE_FAULT_KEYS}


def _seat_row(row: Any, numbers: dict[int, int], private: bool) -> dict[str, Any]:
    return {
        "match": row.id,
        "game": row.game,
        "status": row.status,
        "termination": row.termination,
        "finished": row.finished.isoformat(timespec="seconds") if row.finished else None,
        "seat": row.seat,
        "score": row.score,
        "version": numbers.get(row.bot_version_id),
        "fault": _fault(row.fault, private),
    }


def bot_view(session: Session, bot_id: int, viewer: Account | None) -> dict[str, Any] | None:
    """A registered bot: owner, versions, recent games and faults; the source of each version
    (and the stderr of faults) only when ``may_see_source``. None: no such bot."""
    from bot_arena.db import accounts
    from bot_arena.db.models import Bot

    bot = session.get(Bot, bot_id)
    if bot is None or not bot.registered:
        return None
    owner_id = accounts.owner_of(session, bot.id)
    owner = accounts.user_by_id(session, owner_id) if owner_id is not None else None
    private = may_see_source(viewer, owner_id)
    numbers = {v.id: i + 1 for i, v in enumerate(bot.versions)}
    versions = []
    for v in bot.versions:
        row: dict[str, Any] = {
            "number": numbers[v.id],
            "sha256": v.sha256,
            "kind": v.kind,
            "created": v.created.isoformat(timespec="seconds"),
        }
        if private:
            row["source"] = v.source
            row["files"] = v.files or []
        versions.append(row)
    return {
        "id": bot.id,
        "name": bot.name,
        "owner": owner.name if owner is not None else None,
        "source_visible": private,
        "versions": versions,
        "games": [
            _seat_row(r, numbers, private) for r in accounts.recent_seats(session, bot.id, RECENT)
        ],
        "faults": [
            _seat_row(r, numbers, private) for r in accounts.recent_faults(session, bot.id, RECENT)
        ],
    }


def my_bots(session: Session, user: Account) -> list[dict[str, Any]]:
    from bot_arena.db import accounts

    return [
        {"id": b.id, "name": b.name, "versions": len(b.versions)}
        for b in accounts.bots_of(session, user.id)
    ]


def match_view(session: Session, match_id: int) -> dict[str, Any] | None:
    """A played match as ``arena export --format json`` writes it (None: no such match, or
    not played yet)."""
    from bot_arena.arena.formats.export import match_object
    from bot_arena.db.store import load_match, record_of

    match = load_match(session, match_id)
    if match is None or match.status not in ("done", "void") or match.termination is None:
        return None
    return match_object(match.id, match.tournament_id, record_of(match))


def standings_json(session: Session, tournament_id: int) -> str:
    """A tournament's leaderboard as ``arena leaderboard --tournament ID --json`` prints it
    (ArenaError: no such tournament, or nothing to rate)."""
    import json

    return json.dumps(standings_rows(session, tournament_id), indent=2)


def standings_rows(session: Session, tournament_id: int) -> list[dict[str, Any]]:
    """``standings_json``'s rows as objects (ArenaError as there)."""
    from bot_arena.arena.ratings.query import LeaderboardError, leaderboard_json_rows

    try:
        return leaderboard_json_rows(session, tournament_id=tournament_id)
    except LeaderboardError as exc:
        raise ArenaError(str(exc)) from None


HOME_ROWS = 200  # bots and tournaments listed on the home page


def home(session: Session) -> dict[str, Any]:
    """What the home page lists: the registered bots (owner, versions), the newest
    tournaments."""
    from bot_arena.db import accounts

    return {
        "bots": [
            {"id": r.id, "name": r.name, "owner": r.owner, "versions": r.versions}
            for r in accounts.registered_bots(session, HOME_ROWS)
        ],
        "tournaments": [
            {"id": r.id, "name": r.name, "game": r.game, "status": r.status}
            for r in accounts.recent_tournaments(session, HOME_ROWS)
        ],
    }


def game_view(session: Session, match_id: int) -> dict[str, Any] | None:
    """A played match as the replay viewer takes it (None: no done match of that id)."""
    from bot_arena.arena.report.data import game_data
    from bot_arena.arena.transport.strict_json import finite

    found = game_data(session, match_id)
    return None if found is None else dict(finite(found))
