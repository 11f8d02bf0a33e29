"""A ladder's director kept between the server's reads of its standings, brought up to date
by reading only what changed (issue 31, the standings under readers).

``ladder_view`` needs the ladder's director: the done games of each pair, the games in play.
Loading one reads every match of the ladder with its seats, so its cost grows with the games
played (a ladder at 8,000 games: about 120 ms of CPU a load), and the server reads the
standings afresh about once a second while its ladder plays: at 10,000s of games most of the
web side's CPU went there, not to the requests. ``Followers`` keeps each ladder's director
and, at each read, reads the matches made since the newest it holds and those it holds open
(a few: the runner makes a handful ahead), with their seats, in one indexed query, and puts
them in (a match done since is counted once, one void or deleted is dropped).

The same director as a fresh load, or a fresh load: anything the update cannot follow loads
the ladder again from its matches. That is a change to the field (the revision: entrants
added, retired, suspended; their positions are the director's), a match naming a bot outside
the positions it knows, more open matches than ``MAX_OPEN``, and a done match voided or
deleted (a done match leaves the count of done matches up to the newest id held, the open
ones left out, only that way: ``db.tournaments.done_count``, compared with the director's own
count; a match finishing meanwhile cannot move it, so the check needs no shared snapshot).
Matches are made by the ladder's one runner on one connection, so their ids grow in the
order they are stored and "made after the newest held" misses none.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from bot_arena.arena.tournament.directors.ladder import LadderDirector
    from bot_arena.db.models import Tournament

MAX_OPEN = 500  # open matches read back by id at most (more: the ladder is loaded again)
MAX_FOLLOWED = 500  # ladders kept (more: all dropped, each loaded again when read)


@dataclass
class _Followed:
    tournament_id: int
    revision: int  # the field's revision the director was loaded at
    director: LadderDirector
    positions: dict[str, int]  # each entrant's bot name -> its field position
    newest: int  # the newest match id read
    open: set[int]  # the ids of the director's matches not done


class Followers:
    """Each ladder's director, by tournament id, kept up to date (``following``). Counts
    ``loads`` (whole ladders read) and ``updates`` (reads of what changed), for tests and
    the bench."""

    def __init__(self) -> None:
        self._held: dict[int, _Followed] = {}
        self._locks: dict[int, threading.Lock] = {}
        self._lock = threading.Lock()
        self.loads = 0
        self.updates = 0

    @contextlib.contextmanager
    def following(
        self,
        session: Session,
        tournament_id: int,
        revision: int,
        load: Callable[[], Tournament],
    ) -> Iterator[LadderDirector]:
        """The ladder ``tournament_id``'s director as its matches stand in ``session``, the
        field at ``revision``; held by this caller alone until the block ends (one reader of
        a ladder at a time updates it or reads it). ``load``: the tournament with its field,
        called only when the ladder is loaded whole (reading the field costs milliseconds,
        and a read that follows the ladder needs none of it)."""
        with self._lock:
            if len(self._locks) > MAX_FOLLOWED:
                self._held.clear()
                self._locks.clear()
            lock = self._locks.setdefault(tournament_id, threading.Lock())
        with lock:
            held = self._held.pop(tournament_id, None)
            if held is None or held.revision != revision or not self._update(session, held):
                held = self._load(session, load(), revision)
            yield held.director
            self._held[tournament_id] = held  # not kept if the block raised

    def _load(self, session: Session, tournament: Tournament, revision: int) -> _Followed:
        from bot_arena.arena.tournament.directors import load_director
        from bot_arena.arena.tournament.directors.ladder import LadderDirector

        director = load_director(session, tournament)
        assert isinstance(director, LadderDirector)
        self.loads += 1
        positions = {e.version.bot.name: e.position for e in tournament.entries}
        newest = max(director.matches, default=0)
        still = {i for i, m in director.matches.items() if m.scores is None}
        return _Followed(tournament.id, revision, director, positions, newest, still)

    def _update(self, session: Session, held: _Followed) -> bool:
        """Put in what changed since the last read; False when it cannot be followed (the
        director is then left half-updated: the caller loads the ladder again)."""
        from bot_arena.arena.tournament.directors.base import Played
        from bot_arena.db.tournaments import done_count, matches_changed

        director, tournament_id = held.director, held.tournament_id
        open_ids = sorted(held.open)
        if len(open_ids) > MAX_OPEN:
            return False
        done = len(director.matches) - len(open_ids)
        if done_count(session, tournament_id, held.newest, open_ids) != done:
            return False  # a done match voided or deleted
        changed = matches_changed(session, tournament_id, held.newest, open_ids)
        seen = set()
        for match in changed:
            seen.add(match.match_id)
            held.newest = max(held.newest, match.match_id)
            if match.status == "void":
                if match.match_id in held.open:
                    director.dropped([match.match_id])
                    held.open.discard(match.match_id)
                continue
            try:
                seats = tuple(held.positions[name] for name in match.bots)
            except KeyError:  # a bot the field held at this revision does not name
                return False
            director.load([Played(match.match_id, match.round, seats, match.scores)])
            if match.scores is None:
                held.open.add(match.match_id)
            else:
                held.open.discard(match.match_id)
        gone = [i for i in open_ids if i not in seen]  # deleted: never to be played
        director.dropped(gone)
        held.open.difference_update(gone)
        self.updates += 1
        return True
