"""Everything a report shows, read from the database into plain JSON-ready values.

The numbers are the terminal's: the leaderboard rows are those of ``arena leaderboard --json``
(``ratings.query.rated_table`` + ``render.json_rows``), the settings lines those of ``tournament
show`` (``tournament.summary``). What only the report has is computed here: ratings refitted
after each tenth of the games, the faults with their evidence, and each game's moves, search
info and board frames for the replay viewer.
"""

from __future__ import annotations

import math
import shlex
from array import array
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy.orm import Session

from bot_arena import games
from bot_arena.arena.ratings.crosstable import Crosstable, crosstable
from bot_arena.arena.ratings.outcomes import RatingInputError
from bot_arena.arena.ratings.query import (
    SHORT_HASH,
    LeaderboardError,
    Selection,
    confinement_summary,
    player_label,
    rate,
    rated_table,
)
from bot_arena.arena.ratings.render import json_rows
from bot_arena.arena.ratings.totals import PairTotalColumns
from bot_arena.arena.report.boards import encode_replay
from bot_arena.arena.report.picks import DEFAULT_LIMIT, Picks, pick
from bot_arena.arena.tournament.summary import format_text, settings_rows, tournament_summary
from bot_arena.db.history import two_player_outcomes, version_names
from bot_arena.db.played import PlayedMatch, played_matches
from bot_arena.games.base import GameError

#: Ratings over time: refitted after each of this many equal shares of the games.
HISTORY_STEPS = 10
#: Players in the crosstable heatmap (the best by score): one of 220 is 6,000 px wide, and its
#: cells grow as the square of the field.
HEATMAP_PLAYERS = 30


class ReportError(ValueError):
    """Nothing to report (unknown tournament, no games): one line."""


@dataclass
class ReportData:
    title: str
    game: str
    generated: str
    method: str
    description: str  # what the ratings mean (the table's one line)
    notes: list[str]
    settings: list[tuple[str, str]]  # (label, text); empty for a whole game's report
    format_lines: list[str]  # a Swiss's rounds, a bracket, an SPRT's state
    bots: list[dict[str, str]]  # bot, spec, version (full SHA-256)
    leaderboard: list[dict[str, Any]]  # the rows of `arena leaderboard --json`
    crosstable: dict[
        str, Any
    ]  # players (labels, best first, at most HEATMAP_PLAYERS), cells, total
    history: list[dict[str, Any]]  # {"games": n, "elo": {label: elo}}
    faults: list[dict[str, Any]]
    games: list[dict[str, Any]]
    figures: list[tuple[str, str]] = field(default_factory=list)  # (name, svg text)
    picks: Picks | None = None  # which games are embedded (None: every one)
    rest_command: str = ""  # the command that exports every game

    @property
    def left_out(self) -> int:
        """Games played but not embedded."""
        return 0 if self.picks is None else self.picks.total - self.picks.embedded


def label_of(row: dict[str, Any]) -> str:
    """A leaderboard row's player as the report names it: ``bot (version)``."""
    return player_label(str(row["bot"]), row.get("version"))


def collect(
    session: Session,
    *,
    tournament_id: int | None = None,
    game: str | None = None,
    method: str = "ml",
    limit: int | None = DEFAULT_LIMIT,
) -> ReportData:
    """Read a tournament's (or a whole game's) results and games (ReportError if none):
    at most ``limit`` games embedded (None: every one), chosen by ``picks.pick``."""
    try:
        # an ML fit reads the two-player matches as pair totals (O(pairs) rows, not a row a
        # seat); a selection that also holds matches of more seats is read one by one, as the
        # ratings over time cut the play order of both kinds
        sel, table = rated_table(
            session,
            tournament_id=tournament_id,
            game=game,
            method=method,
            totals=method == "ml",
            columnar=True,
        )
        if sel.columns is not None and sel.columns.first and sel.results:
            sel, table = rated_table(session, tournament_id=tournament_id, game=game, method=method)
    except LeaderboardError as exc:
        raise ReportError(str(exc)) from None
    if sel.game is None:
        raise ReportError("the database holds no played match")
    labels = sel.display_labels()
    rows = json_rows(table, labels=sel.labels, faults=sel.faults)
    settings: list[tuple[str, str]] = []
    format_lines: list[str] = []
    bots: list[dict[str, str]] = []
    if tournament_id is not None:
        summary = tournament_summary(session, tournament_id)
        settings = settings_rows(summary)
        format_lines = format_text(session, tournament_id, None)
        bots = [
            {"bot": b["bot"], "spec": b["spec"], "version": b["version"]} for b in summary["bots"]
        ]
    if not any(label == "sandbox" for label, _ in settings):
        settings.append(("sandbox", sandbox_line(sel.sandbox)))
    picks = None
    if limit is not None:
        picks = pick(session, tournament_id=tournament_id, game=game or sel.game, limit=limit)
    played = played_matches(
        session,
        tournament_id=tournament_id,
        game=game or sel.game,
        ids=None if picks is None else picks.ids,
    )
    if not bots:
        seen: dict[tuple[str, str], None] = {}
        for m in played:
            for s in m.seats:
                seen[(s.bot, s.sha256)] = None
        bots = [{"bot": b, "spec": b, "version": sha} for b, sha in seen]
    rules = games.GameCache()
    return ReportData(
        title=sel.title("Tournament report" if tournament_id is not None else "Report"),
        game=sel.game,
        generated=datetime.now(UTC).isoformat(timespec="seconds"),
        method=table.method,
        description=table.description,
        notes=list(table.notes),
        settings=settings,
        format_lines=format_lines,
        bots=bots,
        leaderboard=rows,
        crosstable=_heatmap(
            _totals_crosstable(sel.columns) if sel.columns else crosstable(sel.results), labels
        ),
        history=(
            _totals_history(session, sel.columns, sel, tournament_id, game or sel.game, labels)
            if sel.columns
            else _history(sel.results, labels, method)
        ),
        faults=_faults(played),
        games=[_game(m, rules) for m in played],
        picks=picks if picks is not None and picks.limited else None,
        rest_command=(
            f"arena export --tournament {tournament_id} --format pgn"
            if tournament_id is not None
            else f"arena export --game {shlex.quote(game or sel.game)} --format pgn"
        ),
    )


def sandbox_line(levels: dict[str | None, int]) -> str:
    """What the report says of the sandbox, always (``tournament show`` only speaks up when some
    results came from bots not fully confined): a reader of a shared report cannot ask."""
    partly = confinement_summary(levels, "rated results")
    if partly is not None:
        return partly
    total = sum(levels.values())
    return f"all {total} rated results from fully confined bots"


def _crosstable(results: Any, labels: dict[str, str]) -> dict[str, Any]:
    return _heatmap(crosstable(results), labels)


def _heatmap(cross: Crosstable, labels: dict[str, str]) -> dict[str, Any]:
    shown = cross.bots[:HEATMAP_PLAYERS]
    players = [labels.get(b, b) for b in shown]
    cells: list[list[dict[str, Any] | None]] = []
    for a in shown:
        row: list[dict[str, Any] | None] = []
        for b in shown:
            n = cross.games.get((a, b), 0)
            row.append(None if a == b or not n else {"points": cross.points[(a, b)], "games": n})
        cells.append(row)
    return {"players": players, "cells": cells, "total": len(cross.bots)}


def _history(results: Any, labels: dict[str, str], method: str) -> list[dict[str, Any]]:
    """The ratings refitted on the first tenth of the games, the first two tenths, ... all."""
    n = len(results)
    if n == 0:
        return []
    cuts = _cuts(n)
    out: list[dict[str, Any]] = []
    for cut in cuts:
        try:
            table = rate(results[:cut], method=method)
        except RatingInputError:
            continue
        out.append({"games": cut, "elo": {labels.get(r.bot, r.bot): r.elo for r in table.rows}})
    return out


def _cuts(n: int) -> list[int]:
    """After how many games the ratings over time are refitted: each tenth of ``n``."""
    return sorted({max(1, math.ceil(n * i / HISTORY_STEPS)) for i in range(1, HISTORY_STEPS + 1)})


def _totals_crosstable(columns: PairTotalColumns) -> Crosstable:
    """``crosstable`` of the two-player results these pair totals sum, its cells kept for the
    players the heatmap shows (the best ``HEATMAP_PLAYERS``; at 1,000 bots the whole table is
    a million cells): the same order and numbers (points are halves, which add up exactly in
    any order), summed by numpy."""
    players = list(dict.fromkeys(columns.players.values()))
    number = {p: i for i, p in enumerate(players)}
    code = {c: number[p] for c, p in columns.players.items()}
    first = np.fromiter(map(code.__getitem__, columns.first), np.intp, len(columns.first))
    second = np.fromiter(map(code.__getitem__, columns.second), np.intp, len(columns.second))
    wins, draws, losses = (
        np.asarray(c, dtype=np.float64) for c in (columns.wins, columns.draws, columns.losses)
    )
    keep = first != second
    first, second, wins, draws, losses = (x[keep] for x in (first, second, wins, draws, losses))
    games = wins + draws + losses
    got = wins + 0.5 * draws
    n = len(players)
    total = np.bincount(first, got, n) + np.bincount(second, games - got, n)
    count = np.bincount(first, games, n) + np.bincount(second, games, n)
    met = np.bincount(first, minlength=n) + np.bincount(second, minlength=n) > 0
    score = {players[i]: (t, c) for i, t, c in zip(*_listed(met, total, count), strict=True)}
    order = sorted(score, key=lambda p: (-score[p][0] / score[p][1], p))
    shown = np.zeros(n, dtype=bool)
    shown[[number[p] for p in order[:HEATMAP_PLAYERS]]] = True
    both = shown[first] & shown[second]
    points: dict[tuple[str, str], float] = {}
    played: dict[tuple[str, str], int] = {}
    for i, j, g, p in zip(
        first[both].tolist(),
        second[both].tolist(),
        games[both].tolist(),
        got[both].tolist(),
        strict=True,
    ):
        a, b = players[i], players[j]
        for x, y, q in ((a, b, p), (b, a, g - p)):
            points[(x, y)] = points.get((x, y), 0.0) + q
            played[(x, y)] = played.get((x, y), 0) + int(g)
    return Crosstable(tuple(order), points, played)


def _listed(
    met: NDArray[np.bool_], total: NDArray[Any], count: NDArray[Any]
) -> tuple[list[int], list[float], list[int]]:
    """The players that met someone, with their points and games as Python numbers."""
    where = np.flatnonzero(met)
    return where.tolist(), total[where].tolist(), count[where].astype(np.int64).tolist()


_SHIFT = 1 << 31  # a pair's key: the first version's index times this, plus the second's
_BATCH = 50_000  # matches read before they are added to the counts, at most


class _PairCounts:
    """Wins, draws and losses per ordered pair of versions, as sorted arrays: each pair met
    (first index * ``_SHIFT`` + second) and its counts. At a million matches of 1,000 bots
    almost every pair met: a dict of the pairs held several hundred megabytes, this 32 bytes a
    pair (issue 29). Versions get their index in the order they are first added."""

    def __init__(self, session: Session, key_of: dict[tuple[str, str | None], str]) -> None:
        self.session, self.key_of = session, key_of
        self.keys: list[str] = []  # rating key of each version, by its index
        self.ids = np.zeros(0, dtype=np.int64)  # version ids known, sorted
        self.where = np.zeros(0, dtype=np.int64)  # and the index of each
        self.pairs = np.zeros(0, dtype=np.int64)
        self.counts = np.zeros((0, 3), dtype=np.int64)

    def _index(self, ids: NDArray[np.int64]) -> NDArray[np.int64]:
        """Each version id's index (new versions named through the database first)."""
        unknown = np.setdiff1d(ids, self.ids)
        if len(unknown):
            found = version_names(self.session, set(unknown.tolist()))
            added = np.fromiter(found, np.int64, len(found))
            first = len(self.keys)
            for name, sha in found.values():
                self.keys.append(self.key_of.get((name, sha[:SHORT_HASH]), name))
            known = np.concatenate([self.ids, added])
            where = np.concatenate([self.where, np.arange(first, len(self.keys))])
            order = np.argsort(known)
            self.ids, self.where = known[order], where[order]
        found_at: NDArray[np.int64] = self.where[np.searchsorted(self.ids, ids)]
        return found_at

    def add(self, rows: NDArray[np.int64]) -> None:
        """Count ``rows`` (first version id, second's, outcome of the first)."""
        seats = self._index(rows[:, :2].ravel()).reshape(-1, 2)  # new ones named in id order
        met = seats[:, 0] * _SHIFT + seats[:, 1]
        merged, where = np.unique(np.concatenate([self.pairs, met]), return_inverse=True)
        where = where.ravel()
        summed = np.zeros((len(merged), 3), dtype=np.int64)
        summed[where[: len(self.pairs)]] = self.counts  # the pairs kept are distinct
        summed += np.bincount(
            where[len(self.pairs) :] * 3 + rows[:, 2], minlength=3 * len(merged)
        ).reshape(-1, 3)
        self.pairs, self.counts = merged, summed

    def columns(self) -> PairTotalColumns:
        """The counts as the fit takes them: machine integers (no Python int a value)."""
        first, second = np.divmod(self.pairs, _SHIFT)
        wins, draws, losses = (self.counts[:, c] for c in range(3))
        return PairTotalColumns(
            dict(enumerate(self.keys)), *map(_machine, (first, second, wins, draws, losses))
        )


def _machine(values: NDArray[np.int64]) -> array[int]:
    """``values`` as ``array('q')``: 8 bytes a value, as the database's columns come."""
    out = array("q")
    out.frombytes(np.ascontiguousarray(values, dtype=np.int64).tobytes())
    return out


def _totals_history(
    session: Session,
    columns: PairTotalColumns,
    sel: Selection,
    tournament_id: int | None,
    game: str | None,
    labels: dict[str, str],
) -> list[dict[str, Any]]:
    """``_history`` of a selection read as pair totals (``columns``): the matches streamed
    once in play order (``db.history``, three integers a match) and summed per ordered pair of
    versions as they come, the ML fit made on the sums at each tenth (the same fit as on those
    results one by one). Each fit starts from the last one's ratings and leaves out the
    intervals (the plot draws none): the same ratings, to the fit's precision, in a few Newton
    steps instead of a whole fit from scratch."""
    cuts = _cuts(columns.games)
    counts = _PairCounts(session, {(n, s): key for key, (n, s) in sel.labels.items()})
    out: list[dict[str, Any]] = []
    position, upcoming = 0, iter(cuts)
    cut = next(upcoming, None)
    pending: list[NDArray[np.int64]] = []
    held = 0  # matches in ``pending``
    previous: dict[str, float] | None = None
    for batch in two_player_outcomes(session, tournament_id=tournament_id, game=game):
        rows = np.asarray(batch, dtype=np.int64).reshape(-1, 3)
        done = 0
        while done < len(rows) and cut is not None:
            take = min(len(rows) - done, cut - position, _BATCH - held)
            pending.append(rows[done : done + take])
            done, position, held = done + take, position + take, held + take
            if position != cut and held < _BATCH:
                continue
            counts.add(np.concatenate(pending))  # also between cuts: what is held is bounded
            pending, held = [], 0
            if position != cut:
                continue
            cut = next(upcoming, None)
            try:
                table = rate([], totals=counts.columns(), start=previous, intervals=False)
            except RatingInputError:
                continue
            previous = {r.bot: r.elo for r in table.rows}
            out.append(
                {"games": position, "elo": {labels.get(b, b): e for b, e in previous.items()}}
            )
    return out


def _player(seat: Any) -> str:
    return player_label(seat.bot, seat.sha256[:SHORT_HASH])


def _faults(played: list[PlayedMatch]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in played:
        for s in m.seats:
            if s.fault is None:
                continue
            detail = {k: v for k, v in s.fault.items() if k not in ("termination", "message")}
            out.append(
                {
                    "match": m.id,
                    "bot": _player(s),
                    "seat": s.seat,
                    "kind": s.fault.get("termination", "?"),
                    "message": s.fault.get("message", ""),
                    "detail": detail,
                }
            )
    return out


def result_text(m: PlayedMatch) -> str:
    """``1-0``, ``0-1``, ``½-½`` for two players; the ranks in seat order for more."""
    if len(m.seats) == 2:
        return "-".join(_points(s.score) for s in m.seats)
    return "ranks " + ", ".join(str(s.rank) for s in m.seats)


def _points(score: float) -> str:
    return "½" if score == 0.5 else f"{score:g}"


def _game(m: PlayedMatch, rules: games.GameCache) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": m.id,
        "round": m.round,
        "players": [_player(s) for s in m.seats],
        "result": result_text(m),
        "termination": m.termination,
        "reason": m.fault_reason or "",
        "finished": m.finished,
        "moves": [mv.move for mv in m.moves],
        "info": [_info(mv.seat, mv.time_ms, mv.info, mv.forced) for mv in m.moves],
        "final": m.final_position,
        "opening": m.opening,
    }
    if m.adjudication:
        out["adjudication"] = m.adjudication
    board = _board(m, rules)
    out["board"] = None if board is None else board[0]
    if board is not None:
        out["moves"] = board[1]  # as people read them: SAN in chess, as ``replay`` shows
    return out


def _info(seat: int, ms: float, info: dict[str, Any] | None, forced: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"seat": seat, "ms": round(ms, 1)}
    if forced:
        out["forced"] = True
    if not info:
        return out
    values = info.get("values")
    if isinstance(values, list) and seat < len(values):
        out["value"] = values[seat]
    for key in ("depth", "nodes"):
        if info.get(key):
            out[key] = info[key]
    pv = info.get("pv")
    if isinstance(pv, list) and pv:
        out["pv"] = pv
    return out


def _board(m: PlayedMatch, rules: games.GameCache) -> tuple[dict[str, Any], list[str]] | None:
    """The replay's frames, rebuilt from the stored moves by the game's rules, and the moves'
    labels (``move_label``: SAN in chess); None when the game cannot be loaded here (a plugin
    game that is not installed)."""
    try:
        game = rules.get(m.game, m.params)
        if game is None:
            return None
        start = (
            game.initial_state()
            if m.start_position is None
            else game.parse_position(m.start_position)
        )
        state = start
        moves = []
        labels = []
        for mv in m.moves:
            # the move text as the legal moves spell it (not the referee's cached facts, which
            # also format the position: a third of a big report's time)
            move = {game.format_move(x): x for x in game.legal_moves(state)}[mv.move]
            moves.append(move)
            labels.append(game.move_label(state, move))
            state = game.apply(state, move)
        return encode_replay(game, start, moves), labels
    except (GameError, KeyError, ValueError):
        return None


def game_data(session: Session, match_id: int) -> dict[str, Any] | None:
    """One done match as the replay viewer takes it (the report's games' shape; the server's
    match page shows it). None: no done match of that id."""
    from bot_arena.db.played import played_matches

    found = played_matches(session, ids=[match_id])
    return _game(found[0], games.GameCache()) if found else None
