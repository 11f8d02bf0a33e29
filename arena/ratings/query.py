"""Leaderboards and crosstables from the results database (read-only queries).

For the tournament runner and other callers::

    from bot_arena.arena.ratings.query import render_leaderboard
    with sessionmaker() as session:
        print(render_leaderboard(session, tournament_id=7, fmt="table"))

``render_leaderboard(session, *, tournament_id=None, game=None, bots=None, method="ml",
center=1500.0, anchor=None, k=16.0, fmt="table", width=None) -> str`` rates the done matches
selected by tournament and/or game (default: every match of the game type played most recently)
and returns the table as text (``width``: the compact table for a terminal that wide; None:
every column). ``render_crosstable(session, *, tournament_id=None, game=None, fmt="table",
width=None)`` does the same for the crosstable. Both raise ``LeaderboardError`` (one-line
message) for an unknown tournament or game, or an anchor that did not play.

The leaderboard's maximum-likelihood fit reads the two-player matches as totals per ordered pair
summed by the database (``select_results(totals=True)``): the fit needs no more, so its reading
follows the pairs that met, not the matches played. The sequential method and the report read
every match in play order.

Every bot *version* is its own player (a new version of a bot may be stronger); the bot column
shows the name and the first 7 characters of the version's SHA-256.

When any rated result came from bots that were not fully confined (sandbox level ``partial`` or
``off``; a match stored before the arena recorded the level counts as ``off``), the table and
Markdown formats end with one note saying how many (``confinement_summary``).
"""

from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress
from operator import add
from typing import TYPE_CHECKING, Any

from bot_arena.arena.ratings.crosstable import crosstable
from bot_arena.arena.ratings.crosstable import render_crosstable as _render_crosstable
from bot_arena.arena.ratings.outcomes import GameResult, RatingInputError
from bot_arena.arena.ratings.render import Faults, json_rows, render
from bot_arena.arena.ratings.table import RatingTable
from bot_arena.arena.ratings.totals import PairTotal, PairTotalColumns
from bot_arena.arena.transport.sandbox.mode import CONFINED, PARTIAL, UNCONFINED
from bot_arena.db.rated_sql import PairColumns, PairTotalRow, RatedReads, TournamentRef

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


SHORT_HASH = 7
#: What a fit of many bots imports (the ML fit, numpy under it, and the one-BLAS-thread
#: limit), imported while a large selection's pair totals are read (``db/meanwhile.py``).
FIT_MODULES = ("bot_arena.arena.ratings.ml", "threadpoolctl")
METHODS = ("ml", "elo")


class LeaderboardError(ValueError):
    """The selection cannot be rated (unknown tournament or game, bad anchor): one line."""


def player_label(name: str, version: str | None) -> str:
    """A player as tables and reports name it: ``bot (version)``, or the bare name."""
    return f"{name} ({version})" if version else name


@dataclass
class Selection:
    """The rated matches: results in play order (or two-player ones as ``totals``), with labels
    and fault counts per player."""

    game: str | None
    tournament: TournamentRef | None
    results: list[GameResult] = field(default_factory=list)
    totals: list[PairTotal] = field(default_factory=list)
    columns: PairTotalColumns | None = None  # two-player totals as columns (``columnar``)
    labels: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    faults: dict[str, Faults] = field(default_factory=dict)
    sandbox: dict[str | None, int] = field(default_factory=dict)  # results by sandbox level

    def display_labels(self) -> dict[str, str]:
        """Each rating key's ``player_label``."""
        return {key: player_label(name, short) for key, (name, short) in self.labels.items()}

    def title(self, what: str = "Leaderboard") -> str:
        parts = [what]
        if self.tournament is not None:
            name = f" {self.tournament.name!r}" if self.tournament.name else ""
            parts.append(f"tournament {self.tournament.id}{name}")
        if self.game is not None:
            parts.append(f"game {self.game}")
        matches = len(self.results) + sum(t.games for t in self.totals)
        matches += 0 if self.columns is None else self.columns.games
        parts.append(f"{matches} matches")
        return ", ".join(parts)


def reads(source: Session | RatedReads) -> RatedReads:
    """The reads of ``source`` (a session's run on its connection)."""
    if isinstance(source, RatedReads):
        return source
    from bot_arena.db.results import reads_of

    return reads_of(source)


def select_results(
    source: Session | RatedReads,
    *,
    tournament_id: int | None = None,
    game: str | None = None,
    totals: bool = False,
    columnar: bool = False,
) -> Selection:
    """The selection's rated results; ``totals``: two-player matches as pair totals (summed
    by the database), the others one by one; ``columnar``: those totals as columns
    (``Selection.columns``, for a fit) rather than a ``PairTotal`` each."""
    stored = reads(source)
    tournament: TournamentRef | None = None
    if tournament_id is not None:
        tournament = stored.tournament(tournament_id)
        if tournament is None:
            raise LeaderboardError(f"no tournament with id {tournament_id}")
        game = game or tournament.game
    elif game is None:
        game = stored.latest_game()
    elif not stored.game_played(game):
        raise LeaderboardError(f"no matches of game {game!r} in the database")
    sel = Selection(game, tournament)
    pairs: list[PairTotalRow] = []
    columns: PairColumns | None = None
    faulted: list[tuple[str, str, str]] = []
    if totals:
        faulted, bad = stored.faulted_seats(tournament_id=tournament_id, game=game)
        if columnar:
            columns = stored.pair_columns(
                tournament_id=tournament_id, game=game, leave_out=bad, warm=FIT_MODULES
            )
        else:
            pairs = stored.pair_totals(tournament_id=tournament_id, game=game, leave_out=bad)
    rows = stored.rated_seats(tournament_id=tournament_id, game=game, multi=totals)
    names: dict[str, set[str]] = {}
    for row in rows:
        names.setdefault(row.bot, set()).add(row.sha256)
    for pair in pairs:
        for bot, sha in (pair.first, pair.second):
            names.setdefault(bot, set()).add(sha)
    met = [] if columns is None else _versions_met(columns, len(stored.versions()))
    versions = stored.versions() if met else {}
    for version in met:
        bot, sha = versions[version]
        names.setdefault(bot, set()).add(sha)
    for bot, sha, _ in faulted:
        names.setdefault(bot, set()).add(sha)

    keys: dict[tuple[str, str], str] = {}  # a key made once per version (pairs: 2 a row)

    def key_of(bot: str, sha256: str) -> str:
        key = keys.get((bot, sha256))
        if key is None:
            short = sha256[:SHORT_HASH]
            key = bot if len(names[bot]) == 1 else f"{bot}@{short}"
            sel.labels[key] = (bot, short)
            keys[(bot, sha256)] = key
        return key

    for pair in pairs:
        first, second = key_of(*pair.first), key_of(*pair.second)
        sel.totals.append(PairTotal(first, second, pair.wins, pair.draws, pair.losses))
        sel.sandbox[pair.sandbox] = sel.sandbox.get(pair.sandbox, 0) + sel.totals[-1].games
    if columns is not None:
        sel.columns = _columns(columns, {v: key_of(*versions[v]) for v in met}, sel.sandbox)
    for bot, sha, termination in faulted:
        key = key_of(bot, sha)
        sel.faults[key] = sel.faults.get(key, Faults()).add(termination)
    current: int | None = None
    level: str | None = None
    players: list[str] = []
    ranks: list[int] = []

    def add_result() -> None:
        if len(players) >= 2:
            sel.results.append(GameResult(tuple(players), tuple(ranks)))
            sel.sandbox[level] = sel.sandbox.get(level, 0) + 1

    for row in rows:
        if row.match_id != current:
            add_result()
            players, ranks, current, level = [], [], row.match_id, row.sandbox
        key = key_of(row.bot, row.sha256)
        players.append(key)
        ranks.append(row.rank)
        if row.fault is not None:
            sel.faults[key] = sel.faults.get(key, Faults()).add(row.fault)
    add_result()
    return sel


#: Rows of pair-total columns looked through at a time for the versions they name.
MET_ROWS = 4096


def _versions_met(columns: PairColumns, stored: int) -> list[int]:
    """The versions the columns name, in the order their rows first name them (as ``pairs``
    are met), looked for ``MET_ROWS`` rows at a time: once all ``stored`` versions of the
    database are met, no later row can name a new one (issue 29: a field of 1,000 is usually
    met in its first thousands of 632k rows)."""
    met: dict[int, None] = {}
    for start in range(0, len(columns.first), MET_ROWS):
        stop = start + MET_ROWS
        pairs = zip(columns.first[start:stop], columns.second[start:stop], strict=True)
        met.update(dict.fromkeys(chain.from_iterable(pairs)))
        if len(met) >= stored:
            break
    return list(met)


def _columns(
    found: PairColumns, players: dict[int, str], sandbox: dict[str | None, int]
) -> PairTotalColumns:
    """The database's columns with their players (``players``: version id -> key); each
    sandbox level's games added to ``sandbox`` (C-level passes, a few per level; one level's
    are all the games)."""
    if len(found.levels) == 1:
        level = found.levels[0]
        counted = sum(found.wins) + sum(found.draws) + sum(found.losses)
        sandbox[level] = sandbox.get(level, 0) + counted
    else:
        games = array("q", map(add, map(add, found.wins, found.draws), found.losses))
        for code, level in enumerate(found.levels):
            counted = sum(compress(games, map(code.__eq__, found.sandbox)))
            sandbox[level] = sandbox.get(level, 0) + counted
    return PairTotalColumns(
        players, found.first, found.second, found.wins, found.draws, found.losses
    )


def confinement_summary(levels: Mapping[str | None, int], what: str = "results") -> str | None:
    """``"N of M <what> from bots not fully confined (off a, partial b)"`` for results counted
    by sandbox level, or None when every one was confined (or there are none). A level of None
    (stored before the arena recorded it) counts as off."""
    total = sum(levels.values())
    partial = levels.get(PARTIAL, 0)
    off = total - partial - levels.get(CONFINED, 0)
    if not off and not partial:
        return None
    parts = [f"{name} {n}" for name, n in ((UNCONFINED, off), (PARTIAL, partial)) if n]
    return f"{off + partial} of {total} {what} from bots not fully confined ({', '.join(parts)})"


def rate(
    results: Sequence[GameResult],
    *,
    totals: Sequence[PairTotal] | PairTotalColumns = (),
    method: str = "ml",
    center: float = 1500.0,
    anchor: tuple[str, float] | None = None,
    k: float = 16.0,
    start: Mapping[str, float] | None = None,
    intervals: bool = True,
) -> RatingTable:
    """``fit_ml`` or ``fit_sequential`` by name (what the CLI's --method picks); ``totals``
    only for ``ml`` (sequential Elo follows the play order); ``start`` and ``intervals`` are
    ``fit_ml``'s (the small fit below ignores them: it is quick as it is). The fits (numpy)
    load here: ``tournament show`` reads this module without rating anything; a small field of
    pair totals alone (a usual leaderboard) is fitted by ``ml_small`` without numpy, to the
    same numbers."""
    if method == "ml":
        if not results:
            from bot_arena.arena.ratings.ml_small import SMALL_LIMIT, fit_small

            small = None
            if not isinstance(totals, PairTotalColumns):
                small = fit_small(totals, center=center, anchor=anchor)
            elif len(set(totals.players.values())) <= SMALL_LIMIT:  # rows are cheap here
                small = fit_small(totals.totals(), center=center, anchor=anchor)
            if small is not None:
                return small
        from bot_arena.arena.ratings.ml import fit_ml

        return fit_ml(
            results,
            totals=totals,
            center=center,
            anchor=anchor,
            start=start,
            intervals=intervals,
        )
    if method == "elo":
        from bot_arena.arena.ratings.online_elo import fit_sequential

        if totals:
            raise ValueError("sequential Elo needs the results one by one, not pair totals")
        return fit_sequential(results, k=k, initial=center, anchor=anchor)
    raise LeaderboardError(f"unknown method {method!r} (use ml or elo)")


def rated_table(
    session: Session | RatedReads,
    *,
    tournament_id: int | None = None,
    game: str | None = None,
    bots: Sequence[str] | None = None,
    method: str = "ml",
    center: float = 1500.0,
    anchor: tuple[str, float] | None = None,
    k: float = 16.0,
    totals: bool = False,
    columnar: bool = False,
) -> tuple[Selection, RatingTable]:
    """The selection and its rating table, as the leaderboard shows it (see
    ``render_leaderboard``). ``totals``: an ``ml`` fit reads the two-player matches as pair
    totals (the selection's ``results`` then hold only the others)."""
    sel = select_results(
        session,
        tournament_id=tournament_id,
        game=game,
        totals=totals and method == "ml",
        columnar=columnar,
    )
    if anchor is not None:
        anchor = (_key_for(sel, anchor[0]), anchor[1])
    try:
        table = rate(
            sel.results,
            totals=sel.totals if sel.columns is None else sel.columns,
            method=method,
            center=center,
            anchor=anchor,
            k=k,
        )
    except RatingInputError as exc:
        raise LeaderboardError(str(exc)) from None
    if bots:
        wanted = {_key_for(sel, b) for b in bots} | {
            key for key, (name, _) in sel.labels.items() if name in bots
        }
        table = RatingTable(
            table.method,
            table.description,
            tuple(r for r in table.rows if r.bot in wanted),
            table.pools,
            table.notes,
        )
    note = confinement_summary(sel.sandbox, "rated results")
    if note is not None:
        table = dataclasses.replace(table, notes=(*table.notes, note))
    return sel, table


def render_leaderboard(
    session: Session | RatedReads,
    *,
    tournament_id: int | None = None,
    game: str | None = None,
    bots: Sequence[str] | None = None,
    method: str = "ml",
    center: float = 1500.0,
    anchor: tuple[str, float] | None = None,
    k: float = 16.0,
    fmt: str = "table",
    width: int | None = None,
) -> str:
    """The leaderboard as text (see the module docstring). ``bots`` keeps only those bots'
    rows; they are still rated against everybody in the selection."""
    sel, table = rated_table(
        session,
        tournament_id=tournament_id,
        game=game,
        bots=bots,
        method=method,
        center=center,
        anchor=anchor,
        k=k,
        totals=True,
        columnar=True,
    )
    return render(table, fmt, title=sel.title(), labels=sel.labels, faults=sel.faults, width=width)


def leaderboard_json_rows(
    session: Session | RatedReads, *, tournament_id: int
) -> list[dict[str, Any]]:
    """The rows ``arena leaderboard --tournament ID --json`` prints (its defaults: the ML fit
    centred on 1500), as objects: what ``arena ladder show`` and the server's standings show
    of a ladder's Elo."""
    sel, table = rated_table(
        session, tournament_id=tournament_id, method="ml", center=1500.0, totals=True,
        columnar=True,
    )  # fmt: skip
    return json_rows(table, labels=sel.labels, faults=sel.faults)


def render_crosstable(
    session: Session | RatedReads,
    *,
    tournament_id: int | None = None,
    game: str | None = None,
    fmt: str = "table",
    width: int | None = None,
) -> str:
    sel = select_results(session, tournament_id=tournament_id, game=game)
    return _render_crosstable(
        crosstable(sel.results),
        fmt,
        title=sel.title("Crosstable"),
        labels=sel.display_labels(),
        width=width,
    )


def _key_for(sel: Selection, bot: str) -> str:
    """The rating key for a name the user typed: the key itself, or a name with one version."""
    if bot in sel.labels:
        return bot
    keys = [key for key, (name, _) in sel.labels.items() if name == bot]
    if len(keys) == 1:
        return keys[0]
    if keys:
        raise LeaderboardError(
            f"bot {bot!r} has {len(keys)} versions here; name one as {keys[0]!r}"
        )
    raise LeaderboardError(f"bot {bot!r} played no rated match in this selection")
