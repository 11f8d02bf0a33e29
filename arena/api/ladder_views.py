"""What the server shows of ladders (issue 31), as plain data: the ladders, a ladder's
standings with each entrant's owner, a cache of those standings, and a bot handed in through
the server entered in a ladder.

The standings are ``arena ladder show --json``'s (the same fit the next games are chosen by),
each row with ``owner`` added. Fitting them costs tens of milliseconds, so ``StandingsCache``
keeps the answer per ladder under the key ``db.ladders.standings_key`` reads (the field's
revision, the matches by status with the newest id): a request pays two indexed reads, and a
new game, a game started or a change to the field makes the next request fit again (the
server also hands out an answer for ``max_age`` seconds after its key was read: ``recent``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot_arena.arena.api.errors import ArenaError
from bot_arena.arena.api.ladder_follow import Followers

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from bot_arena.db.accounts import Named
    from bot_arena.db.ladders import LadderRow

MAX_LADDERS = 500  # ladders listed


class NoLadder(ArenaError):
    """No ladder of that name (or a name no ladder can have)."""


def find(session: Session, name: str) -> LadderRow:
    """The ladder ``name`` (NoLadder when there is none, or the name breaks the rule)."""
    from bot_arena.arena.match.names import BotNameError, check_name
    from bot_arena.db import ladders

    try:
        checked = check_name(name)
    except BotNameError:
        checked = ""
    if checked != name:  # blanks around it too: a name is looked up as it is written
        raise NoLadder(f"no ladder {name[:80]!r}")
    row = ladders.find_ladder(session, checked)
    if row is None:
        raise NoLadder(f"no ladder {checked!r}")
    return row


def ladder_list(session: Session) -> list[dict[str, Any]]:
    """The ladders by name: game, active entrants, entrants in all."""
    from bot_arena.db import ladders

    return [
        {
            "id": r.tournament_id,
            "name": r.name,
            "game": r.game,
            "active": r.active,
            "entrants": r.entrants,
        }
        for r in ladders.all_ladders(session, MAX_LADDERS)
    ]


def _base(entrant: str) -> str:
    """The bot an entrant's name stands for: ``NAME`` for ``NAME@k`` (a new version entered
    beside an older one), else the name itself."""
    return entrant.rsplit("@", 1)[0] if "@" in entrant else entrant


def _owner(
    entrant: str, sha256: str, bots: dict[str, Named], held: set[tuple[int, str]]
) -> str | None:
    """The user who owns the entrant: its bot's owner, or for ``NAME@k`` the owner of
    ``NAME`` when that bot has this version (``held``: the (bot id, SHA-256) pairs stored)."""
    candidates = [entrant] if "@" not in entrant else [entrant, _base(entrant)]
    for name in candidates:
        bot = bots.get(name)
        if bot is None or not bot.registered:
            continue
        if name != entrant and (bot.bot_id, sha256) not in held:
            continue
        return bot.owner
    return None


def standings(
    session: Session, row: LadderRow, followers: Followers | None = None
) -> dict[str, Any]:
    """``arena ladder show --json`` of the ladder, each standing with its ``owner`` (None: a
    bot of the house) and ``bot`` (the registered bot's id, for its page; None if none), and
    ``leaderboard``: the rows ``arena leaderboard --tournament ID --json`` prints for the
    ladder (the leaderboard's fit, centred on 1500; empty while nothing is rated).
    ``followers``: the ladders' directors kept between reads (``StandingsCache.followers``),
    so a read costs what changed since the last one, not every match of the ladder. The
    owners and bots of the whole field are read in two queries."""
    from bot_arena.arena.api.ladders import ladder_leaderboard, ladder_view
    from bot_arena.db import accounts, ladders

    board = ladder_leaderboard(session, row.tournament_id)  # empty: no game stored yet
    view = ladder_view(session, row, board, followers).to_dict()
    view["leaderboard"] = board
    shas = {e.name: e.sha256 for e in ladders.entrants(session, row.tournament_id)}
    names = [str(s["name"]) for s in view["standings"]]
    bots = accounts.bots_named(session, {*names, *map(_base, names)})
    asked = {
        (bot.bot_id, shas[name])
        for name in names
        if "@" in name and (bot := bots.get(_base(name))) is not None and bot.registered
    }
    held = accounts.versions_held(session, asked)
    for standing in view["standings"]:
        name = standing["name"]
        standing["owner"] = _owner(name, shas[name], bots, held)
        bot = bots.get(_base(name))
        standing["bot"] = bot.bot_id if bot is not None and bot.registered else None
    return view


@dataclass
class _Entry:
    key: tuple[object, ...]
    value: Any
    lock: threading.Lock


class StandingsCache:
    """Each ladder's standings (made by ``make``, e.g. as JSON text) kept under the key that
    says when they change. One thread fits a ladder's standings at a time: the readers that
    missed with it wait for its answer instead of fitting the same thing again.

    ``max_age``: for that many seconds after its key was read, a ladder's answer is handed out
    by ``recent`` without reading the database at all (the server's: a fraction of the page's
    poll, so no reader sees standings older than one poll; 0: every read checks the key)."""

    def __init__(self, max_age: float = 0.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._entries: dict[int, _Entry] = {}
        self._recent: dict[str, tuple[float, Any]] = {}  # by ladder name: (key read at, answer)
        self._reading: set[str] = set()  # ladders a reader is reading afresh (``claim``)
        self._forgotten: dict[str, int] = {}  # ``forget``s by ladder: a read begun before one
        # is not kept as the ladder's last answer (it may predate the change)
        self._lock = threading.Lock()
        self._max_age, self._clock = max_age, clock
        self.fits = 0  # how many times ``make`` ran (read by tests and the bench)
        self.followers = Followers()  # the ladders' directors, for ``make`` to follow

    def recent(self, name: str) -> Any | None:
        """The answer for the ladder ``name`` if its key was read less than ``max_age``
        seconds ago, else None."""
        found = self._recent.get(name)
        if found is None or self._clock() - found[0] >= self._max_age:
            return None
        return found[1]

    def last(self, name: str) -> Any | None:
        """The answer read last for the ladder ``name``, however old (None: none kept, or
        ``forget`` since)."""
        found = self._recent.get(name)
        return None if found is None else found[1]

    def claim(self, name: str) -> Any | None:
        """Whether this reader should read the ladder ``name`` afresh: None, and it is claimed
        (``release`` when done), unless another reader is doing so already; then the answer
        read last, which this reader hands out instead of queueing for the database (under
        many readers, one reads and the rest answer at once; none waits on a busy pool)."""
        with self._lock:
            last = self._recent.get(name)
            if name in self._reading and last is not None:
                return last[1]
            self._reading.add(name)
            return None

    def release(self, name: str) -> None:
        with self._lock:
            self._reading.discard(name)

    def forget(self, name: str) -> None:
        """A change this process made to the ladder ``name`` (an entrant added, suspended):
        its next read checks the key, so its maker sees the change at once, not a poll later."""
        with self._lock:
            self._recent.pop(name, None)
            self._forgotten[name] = self._forgotten.get(name, 0) + 1

    def get(
        self, session: Session, row: LadderRow, make: Callable[[Session, LadderRow], Any]
    ) -> Any:
        from bot_arena.db.ladders import standings_key

        read_at = self._clock()
        with self._lock:
            forgotten = self._forgotten.get(row.name, 0)
        key = standings_key(session, row.tournament_id)
        with self._lock:
            entry = self._entries.setdefault(row.tournament_id, _Entry((), None, threading.Lock()))
        if entry.key != key:
            with entry.lock:
                if entry.key != key:  # else fitted by the thread this one waited for
                    value = make(session, row)
                    self.fits += 1
                    entry.key, entry.value = key, value
        value = entry.value
        with self._lock:
            if len(self._recent) > MAX_LADDERS:
                self._recent.clear()
                self._forgotten.clear()
            if self._forgotten.get(row.name, 0) == forgotten:
                self._recent[row.name] = (read_at, value)
        return value


def enter(session: Session, ladder: str, bot: str, sha256: str, version_id: int) -> dict[str, Any]:
    """Enter the stored version ``version_id`` of the registered bot ``bot`` in the ladder, in
    the caller's transaction (the upload's): under the bot's name, or ``NAME@k`` when another
    version of it is in the ladder already (ArenaError: this very version is)."""
    from bot_arena.arena.api.ladders import entrant_name
    from bot_arena.db import ladders

    row = find(session, ladder)
    ladders.bump(session, row.tournament_id)  # the ladder's lock: adders take turns
    taken = {e.name: e.sha256 for e in ladders.entrants(session, row.tournament_id)}
    name = entrant_name(bot, sha256, taken)
    if name != bot:
        from bot_arena.db.models import BotVersion
        from bot_arena.db.store import ref_of, versions_for

        version = session.get(BotVersion, version_id)
        assert version is not None
        version_id = versions_for(session, [ref_of(version, name)])[0].id
    position = ladders.add_entrant(session, row.tournament_id, bot, version_id)
    return {
        "ladder": {"id": row.tournament_id, "name": row.name, "entrant": name, "position": position}
    }
