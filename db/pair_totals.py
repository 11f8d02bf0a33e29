"""The pair totals a leaderboard rates (issue 29), kept by every write instead of summed from
every match on each read.

``pair_totals`` holds, per tournament (NULL: matches played outside one), game, ordered pair of
bot versions (first seat, second seat) and sandbox level, the first seat's wins, draws and
losses by rank over the done two-player matches whose seats are both ranked: exactly the GROUP
BY ``results.pair_totals`` makes over the matches (the reference it is tested against).

``seat_totals`` holds what ``tournament show``'s standings count per tournament: the done
two-player matches by one seat's version, rank and score and the other seat's rank.

The rule lives here, in one statement a table (``change``): the contribution of some
matches, counted from their stored rows as the GROUP BY counts them, added (+1) or taken away
(-1) by an upsert. Every path that makes a match done calls it with +1 in the same
transaction, after the match and its seats are written (``db.core_writer``,
``db.sqlite_fast``, ``db.pg_fast``, ``db.store.save_match``); voiding calls it with -1
before the status leaves 'done' (``db.voiding``). Deleting a tournament or a bot version
cascades. A row whose counts fall to zero stays, and the reads leave it out (``ROWS``'
HAVING). ``seat_totals``' key has no NULL (tournaments' matches only; a done match's seats
are ranked).

The statements are plain SQL text with the ids written in as integers and no parameters, so
any driver's cursor runs them (SQLAlchemy's ``exec_driver_sql``, ``sqlite3``, psycopg). The
conflict target is the unique index over ``COALESCE(tournament_id, 0)`` and
``COALESCE(sandbox, '')`` (migration 0016): a NULL never equals another in a plain key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

#: Runs one statement that takes no parameters (the caller's connection, in its transaction).
Execute = Callable[[str], object]

KEY = (
    "(COALESCE(tournament_id, 0)), game, first_version_id, second_version_id,"
    " (COALESCE(sandbox, ''))"
)
_PER_STATEMENT = 500  # ids written into one statement

#: The matches' totals by the key (``{sign}``: 1 or -1; ``{where}``: more conditions on ``m``).
_SUMMED = (
    "SELECT m.tournament_id, m.game, a.bot_version_id, b.bot_version_id, m.sandbox, "
    "{sign} * SUM(CASE WHEN a.rank < b.rank THEN 1 ELSE 0 END), "
    "{sign} * SUM(CASE WHEN a.rank = b.rank THEN 1 ELSE 0 END), "
    "{sign} * SUM(CASE WHEN a.rank > b.rank THEN 1 ELSE 0 END) "
    "FROM matches m "
    "JOIN seats a ON a.match_id = m.id AND a.seat = 0 "
    "JOIN seats b ON b.match_id = m.id AND b.seat = 1 "
    "WHERE m.status = 'done' AND m.players = 2 AND a.rank IS NOT NULL AND b.rank IS NOT NULL"
    "{where} "
    "GROUP BY m.tournament_id, m.game, a.bot_version_id, b.bot_version_id, m.sandbox"
)
_CHANGE = (
    "INSERT INTO pair_totals (tournament_id, game, first_version_id, second_version_id,"
    f" sandbox, wins, draws, losses) {_SUMMED} "
    f"ON CONFLICT ({KEY}) DO UPDATE SET wins = pair_totals.wins + excluded.wins,"
    " draws = pair_totals.draws + excluded.draws, losses = pair_totals.losses + excluded.losses"
)

#: A tournament's two-player matches by one seat's version, its rank and score and the other
#: seat's rank, both seats of each match: what ``queries.seat_records`` counts for the
#: standings of ``tournament show`` (a few rows a bot). Unique on the whole key (no NULL in it:
#: only tournaments' matches, whose done seats are ranked).
_SEATS_SUMMED = (
    "SELECT m.tournament_id, s.bot_version_id, s.rank, s.score, o.rank, {sign} * COUNT(*) "
    "FROM matches m "
    "JOIN seats s ON s.match_id = m.id "
    "JOIN seats o ON o.match_id = m.id AND o.seat = 1 - s.seat "
    "WHERE m.status = 'done' AND m.players = 2 AND m.tournament_id IS NOT NULL{where} "
    "GROUP BY m.tournament_id, s.bot_version_id, s.rank, s.score, o.rank"
)
_SEATS_CHANGE = (
    "INSERT INTO seat_totals (tournament_id, bot_version_id, rank, score, other_rank, games) "
    f"{_SEATS_SUMMED} "
    "ON CONFLICT (tournament_id, bot_version_id, rank, score, other_rank)"
    " DO UPDATE SET games = seat_totals.games + excluded.games"
)

#: The tables' fill from the stored matches (migration 0016).
FILLS = (_CHANGE.format(sign=1, where=""), _SEATS_CHANGE.format(sign=1, where=""))
#: The tables summed afresh from the stored matches: after rows were changed by hand (SQL
#: outside the arena's writes, as tests that make unusual stored data do).
REFILL = ("DELETE FROM pair_totals", "DELETE FROM seat_totals", *FILLS)


def change_statements(match_ids: Iterable[int], sign: int) -> list[str]:
    """The statements that add (``sign`` 1) or take away (-1) the contribution of the done
    two-player matches among ``match_ids`` (others count nothing)."""
    if sign not in (1, -1):
        raise ValueError(f"sign {sign}: 1 or -1")
    ids = sorted({int(i) for i in match_ids})
    wheres = [
        f" AND m.id IN ({', '.join(str(i) for i in ids[at : at + _PER_STATEMENT])})"
        for at in range(0, len(ids), _PER_STATEMENT)
    ]
    return [
        statement.format(sign=sign, where=where)
        for where in wheres
        for statement in (_CHANGE, _SEATS_CHANGE)
    ]


def change(execute: Execute, match_ids: Iterable[int], sign: int) -> None:
    """Add (1) or take away (-1) the contribution of ``match_ids`` (see the module)."""
    for statement in change_statements(match_ids, sign):
        execute(statement)


def scoped(
    first: str, alias: str, tournament_id: int | None, game: str | None
) -> tuple[str, dict[str, object]]:
    """A WHERE clause: ``first``, then ``alias``'s tournament and game when given, with its
    parameters (the one way a read of the totals or of the matches picks its scope)."""
    where = first
    params: dict[str, object] = {}
    if tournament_id is not None:
        where += f" AND {alias}.tournament_id = :tournament"
        params["tournament"] = tournament_id
    if game is not None:
        where += f" AND {alias}.game = :game"
        params["game"] = game
    return where, params


def selection(tournament_id: int | None, game: str | None) -> tuple[str, dict[str, object]]:
    """The WHERE clause over ``p`` (this table) of a tournament, a game, or all."""
    return scoped("1 = 1", "p", tournament_id, game)


#: The least scope (tournament, game) of the selection's rows, found by the unique key's index
#: (which starts with the tournament, then the game): no row when the selection is empty.
_SCOPE_ORDER = "COALESCE(p.tournament_id, 0) {way}, p.game {way}"
FIRST_SCOPE = (
    "SELECT COALESCE(p.tournament_id, 0) FROM pair_totals p WHERE {where}"
    f" ORDER BY {_SCOPE_ORDER.format(way='ASC')} LIMIT 1"
)
#: The rest of the selection's span of scopes, when it has rows: the least scope's game, the
#: greatest scope (one scope when it equals the least: a tournament's leaderboard, or a database
#: of one tournament), and how many rows it holds (those that count and those fallen to zero),
#: counted up to ``:most`` (whether a read is in bulk). Each an end of the index or a count
#: that stops: no pass over the whole table (0.2 s of CPU at 632k rows under load).
SCOPE_SPAN = (
    "SELECT (SELECT p.game FROM pair_totals p WHERE {where}"
    f" ORDER BY {_SCOPE_ORDER.format(way='ASC')} LIMIT 1),"
    " (SELECT COALESCE(p.tournament_id, 0) FROM pair_totals p WHERE {where}"
    f" ORDER BY {_SCOPE_ORDER.format(way='DESC')} LIMIT 1),"
    " (SELECT p.game FROM pair_totals p WHERE {where}"
    f" ORDER BY {_SCOPE_ORDER.format(way='DESC')} LIMIT 1),"
    " (SELECT COUNT(*) FROM (SELECT 1 FROM pair_totals p WHERE {where} LIMIT :most) c)"
)
#: The selection's rows as they are, when they span one scope (``FIRST_SCOPE``,
#: ``SCOPE_SPAN``): a row per key already, so no GROUP BY (half the time of ``ROWS`` at 632k
#: rows on SQLite, which sorts).
ONE_SCOPE_ROWS = (
    "SELECT p.first_version_id AS a, p.second_version_id AS b, p.sandbox AS level,"
    " p.wins AS w, p.draws AS d, p.losses AS l"
    " FROM pair_totals p WHERE {where} AND p.wins + p.draws + p.losses > 0"
)
#: The selection's totals per ordered pair of versions and sandbox level, summed over the
#: tournaments and games it spans (one row each for a tournament's): O(pairs), no match read.
ROWS = (
    "SELECT p.first_version_id AS a, p.second_version_id AS b, p.sandbox AS level, "
    "SUM(p.wins) AS w, SUM(p.draws) AS d, SUM(p.losses) AS l FROM pair_totals p WHERE {where} "
    "GROUP BY p.first_version_id, p.second_version_id, p.sandbox "
    "HAVING SUM(p.wins) + SUM(p.draws) + SUM(p.losses) > 0"
)

#: The rows of ``ONE_SCOPE_ROWS`` or ``ROWS`` (``{rows}``, their columns named ``a``, ``b``,
#: ``level``, ``w``, ``d``, ``l``) in one row: how many, then each column as one text of
#: decimal integers between commas (``{agg}``: the dialect's string aggregate, SQLite's
#: ``group_concat`` or PostgreSQL's ``string_agg``; the aggregates of one query step through
#: the same rows in one order, so the texts' n-th numbers are one row's), the sandbox level
#: as a code (0: NULL, i: the parameter ``level<i>``, -1: another). A cursor makes no tuple
#: a row (issue 29: 632k rows at 1M matches and 1,000 bots).
BULK_ROWS = (
    "SELECT COUNT(*), {agg}(CAST(r.a AS TEXT), ','), {agg}(CAST(r.b AS TEXT), ','),"
    " {agg}(CAST({level_code} AS TEXT), ','), {agg}(CAST(r.w AS TEXT), ','),"
    " {agg}(CAST(r.d AS TEXT), ','), {agg}(CAST(r.l AS TEXT), ',') FROM ({rows}) r"
)
#: The string aggregates ``BULK_ROWS`` takes, by dialect.
STRING_AGG = {"sqlite": "group_concat", "postgresql": "string_agg"}


def level_code(levels: int) -> str:
    """``BULK_ROWS``' code of ``r.level`` among ``levels`` named parameters (``level1``...)."""
    known = " ".join(f"WHEN r.level = :level{i} THEN {i}" for i in range(1, levels + 1))
    return f"(CASE WHEN r.level IS NULL THEN 0 {known} ELSE -1 END)"


#: The database's done matches, and the matches ``pair_totals`` counts (every done two-player
#: match, once): equal when every done match has two seats, so a read of the matches of more
#: seats can be left out (an index's count and a pass over the totals, not a look at every
#: done match: 0.4 s of CPU at 1M matches under load).
EVERY_DONE_PAIRED = (
    "SELECT (SELECT COUNT(*) FROM matches m WHERE m.status = 'done'),"
    " (SELECT COALESCE(SUM(p.wins + p.draws + p.losses), 0) FROM pair_totals p)"
)

#: A tournament's totals per ordered pair of versions among some versions (``{versions}``:
#: ids written in as integers), over its sandbox levels: the unique key's index walked from
#: the tournament, its game and each pair (a few lookups a pair, no scan of the table).
AMONG_ROWS = (
    "SELECT p.first_version_id, p.second_version_id, SUM(p.wins), SUM(p.draws), SUM(p.losses)"
    " FROM pair_totals p WHERE COALESCE(p.tournament_id, 0) = :tournament AND p.game = :game"
    " AND p.first_version_id IN ({versions}) AND p.second_version_id IN ({versions})"
    " GROUP BY p.first_version_id, p.second_version_id"
)


def summed_of(where: str) -> str:
    """The totals of the matches ``where`` (more conditions on ``m``, starting with AND)
    selects, summed from their rows by the GROUP BY the writes keep (rows of ``pair_totals``'
    columns, tournament first)."""
    return _SUMMED.format(sign=1, where=where)


#: A tournament's seat totals (``_SEATS_SUMMED``), summed in case a key repeats.
SEAT_ROWS = (
    "SELECT bot_version_id, rank, score, other_rank, SUM(games) FROM seat_totals"
    " WHERE tournament_id = :tournament GROUP BY bot_version_id, rank, score, other_rank"
    " HAVING SUM(games) > 0"
)

#: Each table's rows that count (a row whose counts fell to zero is as good as absent) and
#: the same as the matches give them: the GROUP BY the writes keep, over every done match.
STORED = {
    "pair_totals": (
        "SELECT tournament_id, game, first_version_id, second_version_id, sandbox, wins, draws,"
        " losses FROM pair_totals WHERE wins + draws + losses > 0",
        _SUMMED.format(sign=1, where=""),
    ),
    "seat_totals": (
        "SELECT tournament_id, bot_version_id, rank, score, other_rank, games FROM seat_totals"
        " WHERE games <> 0",
        _SEATS_SUMMED.format(sign=1, where=""),
    ),
}

Row = tuple[object, ...]


def differences(read: Callable[[str], Iterable[Sequence[object]]]) -> list[tuple[str, Row]]:
    """Where the tables and the matches disagree (``read``: one statement's rows): each row
    only a table holds ("pair_totals", "seat_totals") or only the matches give (the same
    name and " by matches"); empty when exact."""
    found: list[tuple[str, Row]] = []
    for table, (kept, summed) in STORED.items():
        stored = {tuple(row) for row in read(kept)}
        by_matches = {tuple(row) for row in read(summed)}
        found += [(table, row) for row in stored - by_matches]
        found += [(f"{table} by matches", row) for row in by_matches - stored]
    return sorted(found, key=repr)
