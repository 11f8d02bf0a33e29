"""What a leaderboard reads, as SQL text that either driver runs: SQLAlchemy's (``results.py``'s
``reads_of``: PostgreSQL, or SQLite through an engine) or the standard library's ``sqlite3``
(``sqlite_read.py``: a read command that starts without loading SQLAlchemy or its ORM).

Nothing here imports SQLAlchemy. The statements use ``:name`` parameters, which both drivers
take, and select bot versions by id; their names and hashes come from one small query of the
versions table (``versions``). The rows are the same as ``results.py``'s ORM queries give
(``tests/db/test_rated_sql.py`` compares them on generated databases, SQLite and PostgreSQL).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from bot_arena.arena.transport.sandbox.mode import LEVELS
from bot_arena.db.decode import Malformed, StoredDataError, decode, malformed_matches
from bot_arena.db.meanwhile import import_meanwhile
from bot_arena.db.pair_totals import (
    BULK_ROWS,
    EVERY_DONE_PAIRED,
    FIRST_SCOPE,
    ONE_SCOPE_ROWS,
    ROWS,
    SCOPE_SPAN,
    STRING_AGG,
    level_code,
    scoped,
    selection,
)

#: Runs one statement with its parameters and gives its rows.
Rows = Callable[[str, Mapping[str, Any]], Iterable[Sequence[Any]]]

FAULT = "seats.fault"  # what a malformed fault is called in the warning (as the ORM says it)


@dataclass(frozen=True, slots=True)
class RatedSeat:
    """A seat of a done match: who played it (bot name and version) and where they finished."""

    match_id: int
    rank: int
    fault: str | None  # the termination of the seat's fault, if it had one
    bot: str
    sha256: str
    sandbox: str | None  # the match's sandbox level (None: not recorded, i.e. unconfined)


@dataclass(frozen=True, slots=True)
class PairTotalRow:
    """The two-player matches of one ordered pair of versions at one sandbox level: the first
    seat's wins, draws and losses (by rank) against the second's."""

    first: tuple[str, str]  # (bot name, version SHA-256) in the first seat
    second: tuple[str, str]
    sandbox: str | None
    wins: int
    draws: int
    losses: int


#: Pair-total rows taken from the cursor at a time: only this many are ever held as
#: Python tuples (issue 29: the 632k rows of 1M matches held as a list reached 300 MB).
CHUNK_ROWS = 4096
#: From this many pair-total rows (``SCOPE_SPAN`` counts them) a selection is read in bulk
#: (``BULK_ROWS``: each column one text, parsed by numpy) instead of a tuple a row; below
#: it, a small field's leaderboard loads no numpy.
BULK_FROM = 20_000


@dataclass(frozen=True, slots=True)
class PairColumns:
    """``pair_totals``' rows as columns (issue 29: at 1,000 bots there are nearly as many pairs
    as matches, so a leaderboard takes them without an object per row): the versions by id
    (``RatedReads.versions`` names them), the sandbox level and the first seat's wins, draws
    and losses, row by row in one order. The numbers are machine integers (``array('q')``, 8
    bytes a value, no numpy: a small field's leaderboard loads none); the sandbox level of row
    r is ``levels[sandbox[r]]``."""

    first: array[int]
    second: array[int]
    sandbox: array[int]
    levels: tuple[str | None, ...]
    wins: array[int]
    draws: array[int]
    losses: array[int]

    @classmethod
    def of_rows(cls, rows: Iterable[Sequence[Any]]) -> PairColumns:
        """The columns of pair-total rows, taken ``CHUNK_ROWS`` at a time (each chunk
        transposed by ``zip`` and appended at C level: no Python step per row)."""
        first, second, sandbox, wins, draws, losses = (array("q") for _ in range(6))
        code: dict[str | None, int] = {}
        found = iter(rows)
        while chunk := list(islice(found, CHUNK_ROWS)):
            a, b, level, w, d, lost = zip(*chunk, strict=True)
            del chunk
            for name in dict.fromkeys(level):
                code.setdefault(name, len(code))
            # SUM of integers is an integer on both backends (PostgreSQL: bigint, never numeric)
            for column, values in (
                (first, a),
                (second, b),
                (sandbox, map(code.__getitem__, level)),
                (wins, w),
                (draws, d),
                (losses, lost),
            ):
                column.extend(values)
        return cls(first, second, sandbox, tuple(code), wins, draws, losses)

    @classmethod
    def of_texts(cls, count: int, texts: Sequence[str]) -> PairColumns | None:
        """The columns of ``count`` rows from ``BULK_ROWS``' texts (first, second, level
        code, wins, draws, losses: decimal integers between commas), the same as ``of_rows``
        gives for those rows, levels coded in the order the rows first name them; None when
        the texts do not hold ``count`` numbers each or a level is not one of ``LEVELS``."""
        import numpy as np

        values = [np.fromstring(text, dtype=np.int64, sep=",") for text in texts]
        if len(values) != 6 or any(len(v) != count for v in values):
            return None
        code = values[2]
        if count and int(code.min()) < 0:
            return None
        known = (None, *LEVELS)
        seen, first_at = np.unique(code, return_index=True)
        order = seen[np.argsort(first_at)]  # codes by the row that first names them
        renumber = np.zeros(len(known), dtype=np.int64)
        renumber[order] = np.arange(len(order))
        values[2] = renumber[code]
        columns = [array("q") for _ in values]
        for column, found in zip(columns, values, strict=True):
            column.frombytes(found.astype("=i8", copy=False).tobytes())
        first, second, sandbox, wins, draws, losses = columns
        levels = tuple(known[c] for c in order.tolist())
        return cls(first, second, sandbox, levels, wins, draws, losses)

    def level_of(self, row: int) -> str | None:
        """Row ``row``'s sandbox level."""
        return self.levels[self.sandbox[row]]


@dataclass(frozen=True, slots=True)
class TournamentRef:
    """What a leaderboard says of the tournament it rates."""

    id: int
    name: str | None
    game: str


def _selection(tournament_id: int | None, game: str | None) -> tuple[str, dict[str, Any]]:
    """The WHERE clause (over ``m``, the matches) of the done matches of a tournament, of a
    game, or all: what every reader of results selects (``results.done_in`` for the ORM)."""
    where, params = scoped("m.status = 'done'", "m", tournament_id, game)
    return where, dict(params)


LATEST_GAME = (
    "SELECT m.game FROM matches m WHERE m.status = 'done' "
    "ORDER BY m.finished DESC, m.id DESC LIMIT 1"
)
GAME_PLAYED = "SELECT m.id FROM matches m WHERE m.game = :game LIMIT 1"
TOURNAMENT = "SELECT t.id, t.name, t.game FROM tournaments t WHERE t.id = :tournament"
VERSIONS = "SELECT v.id, b.name, v.sha256 FROM bot_versions v JOIN bots b ON b.id = v.bot_id"
#: The faulted seats first (the partial index ``ix_seats_faulted``, migration 0015: about 1% of
#: seats), each one's match looked up by its key. CROSS JOIN keeps that order on SQLite, whose
#: planner has no statistics and would read every done match's seats instead (0.75 s of CPU
#: at 1M matches, now 0.05 s); on PostgreSQL it is an inner join like any other.
FAULTED = (
    "SELECT m.id, s.fault, s.bot_version_id FROM seats s CROSS JOIN matches m "
    "WHERE m.id = s.match_id AND m.players = 2 AND s.rank IS NOT NULL "
    "AND s.fault IS NOT NULL AND {where} "
    "ORDER BY s.match_id, s.seat"
)
#: The pair totals of some matches summed from their rows: what the malformed matches a
#: selection leaves out added to ``pair_totals`` (``db/pair_totals.py``), taken away here.
MATCH_PAIR_TOTALS = (
    "SELECT a.bot_version_id, b.bot_version_id, m.sandbox, "
    "SUM(CASE WHEN a.rank < b.rank THEN 1 ELSE 0 END), "
    "SUM(CASE WHEN a.rank = b.rank THEN 1 ELSE 0 END), "
    "SUM(CASE WHEN a.rank > b.rank THEN 1 ELSE 0 END) "
    "FROM matches m "
    "JOIN seats a ON a.match_id = m.id AND a.seat = 0 "
    "JOIN seats b ON b.match_id = m.id AND b.seat = 1 "
    "WHERE m.players = 2 AND a.rank IS NOT NULL AND b.rank IS NOT NULL AND {where} "
    "GROUP BY a.bot_version_id, b.bot_version_id, m.sandbox"
)
RATED_SEATS = (
    "SELECT m.id, s.rank, s.fault, s.bot_version_id, m.sandbox FROM matches m "
    "JOIN seats s ON s.match_id = m.id "
    "WHERE s.rank IS NOT NULL AND {where} "
    "ORDER BY m.finished, m.id, s.seat"
)


class RatedReads:
    """The reads of a leaderboard over one connection (``rows``); ``json_text``: the driver
    gives JSON columns as text (SQLite) rather than parsed (PostgreSQL's); ``dialect``:
    ``sqlite`` or ``postgresql`` (``STRING_AGG``'s keys: the string aggregate of bulk reads)."""

    def __init__(self, rows: Rows, *, json_text: bool, dialect: str) -> None:
        if dialect not in STRING_AGG:
            raise ValueError(f"dialect {dialect!r}: one of {', '.join(STRING_AGG)}")
        self._rows = rows
        self._json_text = json_text
        self._string_agg = STRING_AGG[dialect]
        self.rows = rows  # other plain reads on the same connection (``match_list``)
        self.json_text = json_text
        self._versions: dict[int, tuple[str, str]] | None = None

    def latest_game(self) -> str | None:
        """The game of the most recently finished match (None on an empty database)."""
        for (game,) in self._rows(LATEST_GAME, {}):
            return str(game)
        return None

    def game_played(self, game: str) -> bool:
        """Whether any match of ``game`` is stored (whatever its status)."""
        return any(True for _ in self._rows(GAME_PLAYED, {"game": game}))

    def tournament(self, tournament_id: int) -> TournamentRef | None:
        for tid, name, game in self._rows(TOURNAMENT, {"tournament": tournament_id}):
            return TournamentRef(int(tid), name, game)
        return None

    def versions(self) -> dict[int, tuple[str, str]]:
        """Every bot version by id: (bot name, SHA-256); read once."""
        if self._versions is None:
            self._versions = {int(v): (name, sha) for v, name, sha in self._rows(VERSIONS, {})}
        return self._versions

    def _fault(self, value: Any) -> dict[str, Any] | Malformed | None:
        """A seat's stored fault, decoded as the ORM's lenient column decodes it."""
        try:
            found: dict[str, Any] | None = decode(value, dict, nullable=True, text=self._json_text)
        except StoredDataError as err:
            return Malformed(f"{FAULT}: {err}")
        return found

    def faulted_seats(
        self, *, tournament_id: int | None = None, game: str | None = None
    ) -> tuple[list[tuple[str, str, str]], set[int]]:
        """As ``results.faulted_seats``: (bot name, SHA-256, termination) of each faulted
        ranked seat of the selection's two-player matches, and the malformed matches."""
        where, params = _selection(tournament_id, game)
        rows = [
            (int(match_id), self._fault(fault), int(version))
            for match_id, fault, version in self._rows(FAULTED.format(where=where), params)
        ]
        bad = malformed_matches((match_id, fault) for match_id, fault, _ in rows)
        versions = self.versions()
        faults = [
            (*versions[version], str(fault.get("termination")))
            for match_id, fault, version in rows
            if isinstance(fault, dict) and fault and match_id not in bad
        ]
        return faults, bad

    def pair_totals(
        self,
        *,
        tournament_id: int | None = None,
        game: str | None = None,
        leave_out: set[int] | frozenset[int] = frozenset(),
    ) -> list[PairTotalRow]:
        """As ``results.pair_totals`` (the GROUP BY over the matches): the two-player matches
        summed per ordered pair of versions and sandbox level, read from the totals the writes
        keep (``pair_columns``; ``leave_out``: malformed matches' ids)."""
        versions = self.versions()
        found = self.pair_columns(tournament_id=tournament_id, game=game, leave_out=leave_out)
        return [
            PairTotalRow(versions[a], versions[b], found.levels[level], w, d, lost)
            for a, b, level, w, d, lost in zip(
                found.first,
                found.second,
                found.sandbox,
                found.wins,
                found.draws,
                found.losses,
                strict=True,
            )
        ]

    def pair_columns(
        self,
        *,
        tournament_id: int | None = None,
        game: str | None = None,
        leave_out: set[int] | frozenset[int] = frozenset(),
        warm: Sequence[str] = (),
    ) -> PairColumns:
        """``pair_totals`` as columns of version ids and counts (see ``PairColumns``): the
        rows of the table the writes keep (``db/pair_totals.py``: O(pairs), no match read),
        summed over the tournaments and games of the selection; the left-out matches' own
        totals taken away (a few rows: malformed matches are rare); filled from the rows in
        chunks as they come. ``warm``: modules the caller will need after a large read (say
        the fit), imported with numpy while the bulk statement runs (``db/meanwhile.py``)."""
        where, params = selection(tournament_id, game)
        one_scope, stored = True, 0
        for (low_t,) in list(self._rows(FIRST_SCOPE.format(where=where), params)):
            span = list(self._rows(SCOPE_SPAN.format(where=where), {**params, "most": BULK_FROM}))
            low_g, high_t, high_g, stored = span[0]
            one_scope = low_t == high_t and low_g == high_g
        query = (ONE_SCOPE_ROWS if one_scope else ROWS).format(where=where)
        if not leave_out and int(stored or 0) >= BULK_FROM:
            found = self._bulk(query, params, warm)
            if found is not None:
                return found
        rows: Iterable[Sequence[Any]] = self._rows(query, params)
        if leave_out:
            rows = self._without(list(rows), tournament_id, game, leave_out)
        return PairColumns.of_rows(rows)

    def _bulk(
        self, query: str, params: Mapping[str, Any], warm: Sequence[str] = ()
    ) -> PairColumns | None:
        """``query``'s rows read in bulk (``BULK_ROWS``), or None (a sandbox level this
        read does not know: the caller reads them row by row); numpy (which parses them)
        and ``warm`` imported meanwhile."""
        bulk = BULK_ROWS.format(
            agg=self._string_agg, level_code=level_code(len(LEVELS)), rows=query
        )
        named = {f"level{i}": level for i, level in enumerate(LEVELS, start=1)}
        import_meanwhile(("numpy", *warm))
        for count, *texts in self._rows(bulk, {**params, **named}):
            if not count:
                return PairColumns.of_rows(())
            return PairColumns.of_texts(int(count), texts)
        return None

    def _without(
        self,
        rows: list[Sequence[Any]],
        tournament_id: int | None,
        game: str | None,
        leave_out: set[int] | frozenset[int],
    ) -> list[Sequence[Any]]:
        """``rows`` (the selection's pair totals) less the totals of the ``leave_out``
        matches, a row that falls to no match dropped (as the GROUP BY never gives one)."""
        where, params = _selection(tournament_id, game)
        # ids read from the database: integers, written as such
        where += f" AND m.id IN ({', '.join(str(int(i)) for i in sorted(leave_out))})"
        taken: dict[tuple[Any, Any, Any], tuple[int, int, int]] = {
            (a, b, sandbox): (int(w), int(d), int(lost))
            for a, b, sandbox, w, d, lost in self._rows(
                MATCH_PAIR_TOTALS.format(where=where), params
            )
        }
        if not taken:
            return rows
        kept: list[Sequence[Any]] = []
        for a, b, sandbox, w, d, lost in rows:
            less = taken.get((a, b, sandbox))
            if less is not None:
                w, d, lost = int(w) - less[0], int(d) - less[1], int(lost) - less[2]
                if w + d + lost == 0:
                    continue
            kept.append((a, b, sandbox, w, d, lost))
        return kept

    def rated_seats(
        self, *, tournament_id: int | None = None, game: str | None = None, multi: bool = False
    ) -> list[RatedSeat]:
        """As ``results.rated_seats``: the ranked seats of the selection's done matches in play
        order; ``multi``: only matches of more than two seats."""
        where, params = _selection(tournament_id, game)
        if multi:
            for done, paired in self._rows(EVERY_DONE_PAIRED, {}):
                if int(done) == int(paired):
                    return []  # every done match has two seats
            where += " AND m.players > 2"
        rows = [
            (int(match_id), int(rank), self._fault(fault), int(version), sandbox)
            for match_id, rank, fault, version, sandbox in self._rows(
                RATED_SEATS.format(where=where), params
            )
        ]
        bad = malformed_matches((match_id, fault) for match_id, _, fault, _, _ in rows)
        versions = self.versions()
        return [
            RatedSeat(
                match_id,
                rank,
                str(fault.get("termination")) if isinstance(fault, dict) and fault else None,
                *versions[version],
                sandbox,
            )
            for match_id, rank, fault, version, sandbox in rows
            if match_id not in bad
        ]
