"""Storing the matches a director adds (``directors/``) and handing them to the runner as jobs.

Each added match gets its seed and its opening the way a stored schedule does: the match's seed
from the tournament's seed and the match's number in the tournament, the opening from the book
(the next entry for each new game pair) or from random plies drawn from the seed and the pair's
number. The two numbers are kept in the tournament's settings (``made``), written in the same
transaction as the matches, so a resume numbers the next match exactly as an uninterrupted run
would have.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from bot_arena.arena.match.record import MatchRecord
from bot_arena.arena.tournament.directors.base import Director, NewMatch
from bot_arena.arena.tournament.job import Job
from bot_arena.arena.tournament.schedule import Opening, derive_seed, random_opening
from bot_arena.db import tournaments as stored
from bot_arena.db.writer import MatchWriter
from bot_arena.games.base import Game

MADE = "made"  # settings key: {"matches": n, "openings": k} made so far


def book_digest(book: Sequence[Opening]) -> str:
    """A fingerprint of a book's entries: a resume checks the book still holds the same ones."""
    text = "\n".join(f"{o.text}|{o.position or ''}" for o in book)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Batch:
    """Matches a director adds (``Maker.plan``): each one's round, seed, opening and seats,
    and the counters (``MADE``) after them."""

    new: list[NewMatch]
    rows: list[tuple[int, int, Opening, tuple[int, ...]]]
    matches: int
    openings: int


@dataclass(frozen=True)
class Making:
    """What a maker needs of its tournament, read once by the runner (``Runner._maker_fields``)."""

    game: Game[Any, Any]
    tournament_id: int
    settings: dict[str, Any]
    seed: int
    time_control: dict[str, Any]
    book: Sequence[Opening] = ()  # in the order pairs take it (``book.ordered_book``)


class Maker:
    """Stores what a director adds and turns it into jobs for the runner."""

    def __init__(self, director: Director, making: Making) -> None:
        self.director = director
        self.game = making.game
        self.tournament_id = making.tournament_id
        self.seed = making.seed
        self.time_control = making.time_control
        self.book = list(making.book)
        self.plies = int(making.settings.get("opening_plies", 0))
        made = making.settings.get(MADE, {})
        self.matches = int(made.get("matches", 0))
        self.openings = int(made.get("openings", 0))

    def _opening(self, number: int) -> Opening:
        if self.book:
            return self.book[number % len(self.book)]
        return random_opening(self.game, derive_seed(self.seed, "opening", number), self.plies)

    def stored(self, job: Job, record: MatchRecord) -> None:
        """The result of ``job`` was stored: the director is told."""
        self.director.result(job.match_id, [s.score for s in record.seats])

    def make(
        self, conn: Connection, writer: MatchWriter, version_ids: Sequence[int], ahead: int
    ) -> list[Job]:
        """Store the matches the director adds now (in the caller's transaction) and return
        them as jobs, in the order they were made."""
        batch = self.plan(ahead)
        if batch is None:
            return []
        return self.added(batch, self.write(conn, writer, batch, version_ids))

    def plan(self, ahead: int) -> Batch | None:
        """The matches the director adds now, numbered, with their seeds and openings (None:
        it adds none). Until ``added`` the director does not know them: the runner asks for no
        other plan meanwhile."""
        new = self.director.next(ahead)
        if not new:
            return None
        rows: list[tuple[int, int, Opening, tuple[int, ...]]] = []
        matches, openings = self.matches, self.openings
        opening = self._opening(openings)
        for number, item in enumerate(new):
            if item.new_opening or number == 0:
                opening = self._opening(openings)
                openings += 1
            seed = derive_seed(self.seed, "match", matches)
            matches += 1
            rows.append((item.round, seed, opening, item.seats))
        self.matches, self.openings = matches, openings
        return Batch(new, rows, matches, openings)

    def write(
        self, conn: Connection, writer: MatchWriter, batch: Batch, version_ids: Sequence[int]
    ) -> list[int]:
        """Store ``batch`` (in the caller's transaction, any thread) with the counters that
        number the next one; the new match ids in order."""
        ids = writer.insert_schedule(
            self.tournament_id,
            self.game.name,
            dict(self.game.params),
            self.time_control,
            self.game.num_players,
            [
                (rnd, seed, opening.text, opening.position, [version_ids[i] for i in seats])
                for rnd, seed, opening, seats in batch.rows
            ],
        )
        stored.update_settings(
            conn, self.tournament_id, {MADE: {"matches": batch.matches, "openings": batch.openings}}
        )
        return ids

    def added(self, batch: Batch, ids: Sequence[int]) -> list[Job]:
        """``batch`` is stored as ``ids``: the director is told, and the jobs to play."""
        for match_id, item in zip(ids, batch.new, strict=True):
            self.director.added(match_id, item)
        return [
            Job(match_id, seats, opening.position, seed, opening=tuple(opening.text.split()))
            for match_id, (_, seed, opening, seats) in zip(ids, batch.rows, strict=True)
        ]
