"""``--pgn-out FILE``: a run's games appended to a PGN file as each is stored (cutechess's and
fastchess's ``-pgnout``), in the export's words (``export.pgn_game``: the one PGN writer).

Exactly once, whatever kills the run:

- a game is appended only after the group that stores it has committed (``Runner``'s
  ``stored_hook``), read back from the database, so the file never holds a game the database
  does not;
- each game is one ``write`` of its whole text on a descriptor opened ``O_APPEND`` (nothing is
  buffered in this process: ``tail -f`` sees it at once);
- opening the file reads the ``Match`` tags already in it (those games are never written again)
  and cuts a torn last game (a write cut short) back to the end of the last whole one;
- a run killed between a commit and its append (kill -9) left a stored game out of the file:
  the next run of the same tournament (``tournament resume``, ``ladder run``) first appends the
  tournament's stored games the file lacks (``catch_up``), in id order.

So after any crash and resume the file holds each stored game of the tournament once. A game
voided later stays in the file (an export leaves it out).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable

from sqlalchemy.orm import Session

from bot_arena import games
from bot_arena.arena.formats.export import ExportNotes, pgn_game, tournament_event
from bot_arena.db.exported import ExportedMatch, ExportFilter, exported_matches, exported_records
from bot_arena.games.base import Game
from bot_arena.games.quoting import shown

_MATCH_TAG = re.compile(rb'^\[Match "(\d{1,18})"\]\s*$')
_RESULTS = (b"1-0", b"0-1", b"1/2-1/2", b"*")
PATH_CHARS = 200  # of the file's path quoted in an error


class PgnOutError(ValueError):
    """The file cannot take a run's games (the CLI's one line)."""


def refusal(game: Game[object, object]) -> str | None:
    """Why ``game``'s matches cannot go to a PGN file (None: they can): PGN holds two-player
    games only (``export.pgn_games`` skips the others)."""
    if game.num_players == 2:
        return None
    return (
        f"--pgn-out: {game.name} is a game of {game.num_players} players and PGN holds "
        "two-player games only"
    )


class PgnOut:
    """A PGN file games are appended to, each once (see the module)."""

    def __init__(self, path: str) -> None:
        """Open (or create) ``path``: a regular file, read for the games it holds; a torn last
        game is cut off. PgnOutError when it cannot be (not a regular file, not PGN's end)."""
        self.path = path
        where = f"--pgn-out {shown(path, PATH_CHARS)}"
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as exc:
            raise PgnOutError(f"{where}: {exc.strerror}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise PgnOutError(f"{where}: not a regular file")
            os.set_blocking(fd, True)
            self.written, end = _scan(fd, where)
            if end != os.fstat(fd).st_size:
                os.ftruncate(fd, end)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        self._empty = end == 0
        self._rules = games.GameCache()
        self._notes = ExportNotes()

    def catch_up(self, session: Session, tournament_id: int) -> int:
        """Append the tournament's stored games the file lacks (a run killed between a commit
        and its append); how many."""
        where = ExportFilter(tournament=tournament_id)
        return self._write(session, exported_matches(session, where))

    def append(self, session: Session, ids: Iterable[int]) -> int:
        """Append the stored games of ``ids`` (a group just committed) the file lacks."""
        todo = sorted(i for i in set(ids) if i not in self.written)
        return self._write(session, exported_records(session, todo)) if todo else 0

    def _write(self, session: Session, matches: Iterable[ExportedMatch]) -> int:
        count = 0
        event = tournament_event(session)
        for m in matches:
            if m.id in self.written or len(m.record.seats) != 2:
                continue
            text = pgn_game(m, self._rules, self._notes, event)
            _write_all(self._fd, (text if self._empty else "\n" + text).encode())
            self._empty = False
            self.written.add(m.id)
            count += 1
        return count

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _scan(fd: int, where: str) -> tuple[set[int], int]:
    """The ``Match`` ids of the whole games in the file and the offset where they end (the
    file's size, unless its last game is torn: a game ends with a line whose last word is its
    result, then a newline). A non-empty file that holds no whole game and does not start as
    one is refused: it is not this run's to cut."""
    written: set[int] = set()
    pending: list[int] = []  # ids of the game being read, counted once it is whole
    end = offset = 0
    first: bytes | None = None
    os.lseek(fd, 0, os.SEEK_SET)
    with open(os.dup(fd), "rb", closefd=True) as lines:
        for line in lines:
            offset += len(line)
            text = line.strip()
            if first is None and text:
                first = text
            found = _MATCH_TAG.match(text)
            if found:
                pending.append(int(found.group(1)))
            elif (
                line.endswith(b"\n")
                and text
                and not text.startswith(b"[")
                and text.split()[-1] in _RESULTS
            ):
                end = offset
                written.update(pending)
                pending.clear()
    if end == 0 and first is not None and not first.startswith(b"[Event "):
        raise PgnOutError(f"{where}: holds something else than PGN games: name a new file")
    return written, end
