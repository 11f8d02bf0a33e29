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
from typing import Any

from sqlalchemy import Connection

from bot_arena.arena.tournament.directors.base import Director
from bot_arena.arena.tournament.job import Job
from bot_arena.arena.tournament.schedule import Opening, derive_seed, random_opening
from bot_arena.db import tournaments as stored
from bot_arena.db.writer import MatchWriter, ScheduledMatch
from bot_arena.games.base import Game

MADE = "made"  # settings key: {"matches": n, "openings": k} made so far


def book_digest(book: Sequence[Opening]) -> str:
    """A fingerprint of a book's entries: a resume checks the book still holds the same ones."""
    text = "\n".join(f"{o.text}|{o.position or ''}" for o in book)
    return hashlib.sha256(text.encode()).hexdigest()


class Maker:
    """Stores what a director adds and turns it into jobs for the runner."""

    def __init__(
        self,
        director: Director,
        game: Game[Any, Any],
        tournament_id: int,
        settings: dict[str, Any],
        seed: int,
        time_control: dict[str, Any],
        book: Sequence[Opening] = (),
    ) -> None:
        self.director = director
        self.game = game
        self.tournament_id = tournament_id
        self.seed = seed
        self.time_control = time_control
        self.book = list(book)  # in the order pairs take it (``book.ordered_book``)
        self.plies = int(settings.get("opening_plies", 0))
        made = settings.get(MADE, {})
        self.matches = int(made.get("matches", 0))
        self.openings = int(made.get("openings", 0))

    def _opening(self, number: int) -> Opening:
        if self.book:
            return self.book[number % len(self.book)]
        return random_opening(self.game, derive_seed(self.seed, "opening", number), self.plies)

    def make(
        self, conn: Connection, writer: MatchWriter, version_ids: Sequence[int], ahead: int
    ) -> list[Job]:
        """Store the matches the director adds now (in the caller's transaction) and return
        them as jobs, in the order they were made."""
        new = self.director.next(ahead)
        if not new:
            return []
        rows: list[ScheduledMatch] = []
        matches, openings = self.matches, self.openings
        opening = self._opening(openings)
        for number, item in enumerate(new):
            if item.new_opening or number == 0:
                opening = self._opening(openings)
                openings += 1
            seed = derive_seed(self.seed, "match", matches)
            matches += 1
            rows.append(
                (
                    item.round,
                    seed,
                    opening.text,
                    opening.position,
                    [version_ids[i] for i in item.seats],
                )
            )
        ids = writer.insert_schedule(
            self.tournament_id,
            self.game.name,
            dict(self.game.params),
            self.time_control,
            self.game.num_players,
            rows,
        )
        stored.update_settings(
            conn, self.tournament_id, {MADE: {"matches": matches, "openings": openings}}
        )
        self.matches, self.openings = matches, openings
        for match_id, item in zip(ids, new, strict=True):
            self.director.added(match_id, item)
        return [
            Job(match_id, item.seats, row[3], row[1], opening=tuple(row[2].split()))
            for match_id, item, row in zip(ids, new, rows, strict=True)
        ]
