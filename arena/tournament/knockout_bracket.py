"""Seeded single-elimination (knockout) brackets: the draw, deciding a tie, the printed draw sheet.

Pure functions: the caller plays the games and stores the results.

- **The draw** (``first_round``): the bracket has the next power of two of slots at or above the
  number of entrants; seeds are placed in the standard order (1 v 16, 8 v 9, 4 v 13, 5 v 12,
  2 v 15, 7 v 10, 3 v 14, 6 v 11 for 16), in which seeds 1 and 2 can only meet in the final, 1-4
  in the semi-finals, and every seed meets the weakest seed left in its quarter at each round,
  provided the better seeds win. The missing seeds are byes, so the byes go to the top seeds.
- **Later rounds** (``next_round``): the winners of adjacent ties meet.
- **A tie** is a mini-match between its two entrants (``tie_decision``): ``games`` games, the
  first entrant taking the first seat in even-numbered games (``game_seats``); more points wins.
  Level: pairs of games (one in each seat) are played one pair at a time, up to
  ``tiebreak_pairs`` pairs, and the first pair after which the points differ decides. Still
  level: a coin drawn from the tie's seed decides, the same for the same seed.
- **The draw sheet** (``bracket_text``): one column per round, the champion at the right, or
  one line per tie when that does not fit the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot_arena.arena.tournament.schedule import ScheduleError, derive_seed

BYE = "(bye)"
UNKNOWN = "?"
WON = "*"  # marks the entrant who went through
BY_LOT = "c"  # added to WON when a coin decided a level tie


def bracket_size(entrants: int) -> int:
    """Slots in the bracket: the smallest power of two >= ``entrants`` (>= 2)."""
    if entrants < 2:
        raise ScheduleError(f"a knockout needs at least 2 entrants, got {entrants}")
    return 1 << (entrants - 1).bit_length()


def rounds_needed(entrants: int) -> int:
    """Rounds from the first to the final: ceil(log2(entrants))."""
    return bracket_size(entrants).bit_length() - 1


def seed_order(size: int) -> list[int]:
    """Seeds (1-based) in bracket order, top to bottom, for a bracket of ``size`` slots (a power
    of two): each round's order is the previous one's with every seed s followed by its
    opponent size + 1 - s, so the seeds of every tie add up to size + 1."""
    if size < 2 or size & (size - 1):
        raise ScheduleError(f"a bracket has a power of two of slots (>= 2), not {size}")
    order = [1]
    while len(order) < size:
        span = 2 * len(order) + 1
        order = [s for seed in order for s in (seed, span - seed)]
    return order


def first_round(entrants: Sequence[int]) -> list[tuple[int | None, int | None]]:
    """The first-round ties in bracket order (top to bottom). ``entrants``: field indices in
    seeding order (best first). A tie ``(entrant, None)`` is a bye: the entrant goes through
    without playing. The better seed of each tie comes first."""
    if len(set(entrants)) != len(entrants):
        raise ScheduleError("an entrant is seeded twice")
    order = seed_order(bracket_size(len(entrants)))
    slots = [entrants[s - 1] if s <= len(entrants) else None for s in order]
    return [(slots[i], slots[i + 1]) for i in range(0, len(slots), 2)]


def next_round(winners: Sequence[int]) -> list[tuple[int, int]]:
    """The next round's ties from the winners of the previous round's ties, in bracket order:
    adjacent winners meet. A single winner is the champion: no more ties."""
    if len(winners) == 1:
        return []
    if not winners or len(winners) % 2:
        raise ScheduleError(f"a knockout round needs an even number of winners, got {len(winners)}")
    return [(winners[i], winners[i + 1]) for i in range(0, len(winners), 2)]


# -- deciding a tie ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TieScore:
    """A tie so far: its two entrants (``first`` is the upper one in the bracket), the games
    played between them and the points each has from those games."""

    first: int
    second: int
    games: int
    first_points: float
    second_points: float


@dataclass(frozen=True, slots=True)
class TieState:
    """What a tie needs now: either a ``winner`` (``more_games`` is 0; ``by_coin`` if the points
    were level after every tie-break pair), or ``more_games`` to play before asking again
    (``winner`` is None)."""

    winner: int | None
    more_games: int
    by_coin: bool = False


def game_seats(first: int, second: int, game: int) -> tuple[int, int]:
    """The seats (first seat, second seat) of game ``game`` (0-based) of a tie: the entrants
    alternate, the first entrant taking the first seat in even-numbered games."""
    return (first, second) if game % 2 == 0 else (second, first)


def tie_decision(score: TieScore, *, games: int, tiebreak_pairs: int, coin_seed: int) -> TieState:
    """Decide a tie of ``games`` games, or say how many more games to play now.

    After the ``games`` games the one with more points wins. Level: one pair of games at a
    time (``more_games`` = 2), up to ``tiebreak_pairs`` pairs, until a pair leaves the points
    different (the points were level before it, so the totals tell). Still level: the coin,
    bit 0 of ``derive_seed(coin_seed, "coin", first, second)`` (0: the first entrant), decides.
    ``coin_seed`` should be the tie's own (say, derived from the tournament's seed, the round
    and the tie), so that ties differ and replaying the tournament draws the same coins.
    Ask after every game or every batch of ``more_games``: the totals are only read where a
    decision can fall (after the base games and after each pair).
    """
    if games < 1:
        raise ScheduleError(f"a tie has at least 1 game, not {games}")
    if tiebreak_pairs < 0:
        raise ScheduleError(f"tie-break pairs must be >= 0, not {tiebreak_pairs}")
    if score.first == score.second:
        raise ScheduleError(f"entrant {score.first} cannot play itself")
    if score.games < 0 or min(score.first_points, score.second_points) < 0:
        raise ScheduleError(f"impossible tie score {score}")
    if score.games < games:
        return TieState(None, games - score.games)
    extra = score.games - games
    if extra % 2:  # in the middle of a tie-break pair
        return TieState(None, 1)
    if score.first_points != score.second_points:
        leader = score.first if score.first_points > score.second_points else score.second
        return TieState(leader, 0)
    if extra // 2 < tiebreak_pairs:
        return TieState(None, 2)
    coin = derive_seed(coin_seed, "coin", score.first, score.second) & 1
    return TieState(score.second if coin else score.first, 0, by_coin=True)


# -- the draw sheet ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TieView:
    """One tie as the draw sheet shows it. ``first``/``second`` index ``names``; None is a bye
    in the first round and an entrant not known yet in later rounds (then the winner of the
    tie feeding that slot is shown if there is one, else "?"). ``games`` (games played) tells a
    tie not started (no points shown) from one at 0 - 0."""

    first: int | None
    second: int | None
    first_points: float = 0.0
    second_points: float = 0.0
    winner: int | None = None
    by_coin: bool = False
    games: int = 0


@dataclass(frozen=True, slots=True)
class _Slot:
    name: str  # a name, BYE or UNKNOWN
    points: str  # "" when not shown
    mark: str  # "", WON or WON + BY_LOT


@dataclass(frozen=True, slots=True)
class _Tie:
    first: int | None
    second: int | None
    view: TieView | None
    winner: int | None


def bracket_text(
    rounds: Sequence[Sequence[TieView]], names: Sequence[str], width: int | None = None
) -> list[str]:
    """The bracket as lines of plain ASCII: one column per round (the first round's ties
    top to bottom, each tie's two entrants joined by ``+``/``|`` to the slot of its winner in
    the next column), the champion at the right. Each entrant shows its points in the tie and
    ``*`` if it went through (``*c``: by the coin); rounds not played yet show "?".

    ``rounds`` holds the rounds known so far (later ones may be left out); the first has the
    bracket's size / 2 ties. If the sheet is wider than ``width``, one line per tie instead:
    ``round 1: alpha 1.5 - 0.5 beta -> alpha``.
    """
    ties = _resolve(rounds, names)
    sheet = _sheet(ties, names)
    if width is None or max(len(line) for line in sheet) <= width:
        return sheet
    return _listing(ties, names)


def _resolve(rounds: Sequence[Sequence[TieView]], names: Sequence[str]) -> list[list[_Tie]]:
    """Every tie of every round up to the final, with entrants filled in from earlier winners."""
    if not rounds or not rounds[0]:
        raise ScheduleError("a bracket needs its first round")
    count = len(rounds[0])
    if count & (count - 1):
        raise ScheduleError(f"a first round has a power of two of ties, not {count}")
    total = count.bit_length()  # rounds up to the final
    if len(rounds) > total:
        raise ScheduleError(f"{len(rounds)} rounds given for a bracket of {total}")
    out: list[list[_Tie]] = []
    for r in range(total):
        size = count >> r
        given = rounds[r] if r < len(rounds) else None
        if given is not None and len(given) != size:
            raise ScheduleError(f"round {r + 1} has {len(given)} ties, not {size}")
        row: list[_Tie] = []
        for t in range(size):
            view = None if given is None else given[t]
            first = None if view is None else view.first
            second = None if view is None else view.second
            if r > 0:  # fill a slot not given from the tie that feeds it
                first = out[r - 1][2 * t].winner if first is None else first
                second = out[r - 1][2 * t + 1].winner if second is None else second
            for entrant in (first, second):
                if entrant is not None and not 0 <= entrant < len(names):
                    raise ScheduleError(f"entrant {entrant} has no name")
            winner = None if view is None else view.winner
            if winner is not None and winner not in (first, second):
                raise ScheduleError(f"round {r + 1}: winner {winner} is not in its tie")
            if r == 0 and winner is None and (first is None) != (second is None):
                winner = first if second is None else second  # a bye goes through
            row.append(_Tie(first, second, view, winner))
        out.append(row)
    return out


def _points(value: float) -> str:
    return f"{value:g}"


def _slots(tie: _Tie, first_round: bool, names: Sequence[str]) -> tuple[_Slot, _Slot]:
    view = tie.view
    is_bye = first_round and (tie.first is None or tie.second is None)
    shown = (
        view is not None
        and not is_bye
        and (view.games > 0 or view.first_points or view.second_points or tie.winner is not None)
    )
    out: list[_Slot] = []
    for entrant, points in (
        (tie.first, 0.0 if view is None else view.first_points),
        (tie.second, 0.0 if view is None else view.second_points),
    ):
        if entrant is None:
            out.append(_Slot(BYE if first_round else UNKNOWN, "", ""))
            continue
        mark = ""
        if tie.winner == entrant:
            mark = WON + (BY_LOT if view is not None and view.by_coin else "")
        out.append(_Slot(names[entrant], _points(points) if shown else "", mark))
    return out[0], out[1]


def _header(r: int, total: int) -> str:
    return "Final" if r == total - 1 else f"Round {r + 1}"


def _sheet(ties: list[list[_Tie]], names: Sequence[str]) -> list[str]:
    """The draw sheet. Slot k of round r sits on row (2k + 1) * 2**r - 1: halfway between the
    two slots that feed it."""
    total = len(ties)
    labels = [
        _column([s for tie in row for s in _slots(tie, r == 0, names)])
        for r, row in enumerate(ties)
    ]
    champion = ties[-1][0].winner
    labels.append([UNKNOWN if champion is None else names[champion]])
    headers = [_header(r, total) for r in range(total)] + ["Champion"]
    height = 2 * len(labels[0]) - 1
    grid: list[list[str]] = [[] for _ in range(height)]
    columns: list[int] = []
    x = 0
    for r, column in enumerate(labels):
        columns.append(x)
        text_width = max(len(headers[r]), *(len(label) for label in column))
        join = x + text_width + 2  # the column of this round's "+" joins
        step = 1 << r
        for k, label in enumerate(column):
            row = (2 * k + 1) * step - 1
            _put(grid[row], x, label)
            if r == total:  # the champion: nothing to join
                continue
            _put(grid[row], x + len(label), " " + "-" * (join - x - len(label) - 1) + "+")
            if k % 2 == 0:  # the upper slot of a tie: down to the lower one, out at the middle
                middle = row + step
                for between in range(row + 1, row + 2 * step):
                    _put(grid[between], join, "+-- " if between == middle else "|")
        x = join + 4
    lines = ["".join(row).rstrip() for row in grid]
    head: list[str] = []
    for r, start in enumerate(columns):
        _put(head, start, headers[r])
    coins = any(tie.view is not None and tie.view.by_coin for row in ties for tie in row)
    legend = [f"{WON}{BY_LOT}: through by the coin (level after the tie-break games)"]
    return ["".join(head).rstrip(), *lines, *(legend if coins else [])]


def _column(slots: Sequence[_Slot]) -> list[str]:
    """A round's labels with names, points and marks aligned: ``alpha  1.5 *``."""
    name_width = max(len(s.name) for s in slots)
    points_width = max(len(s.points) for s in slots)
    out = []
    for s in slots:
        text = s.name.ljust(name_width)
        if points_width:
            text += " " + s.points.rjust(points_width)
        out.append((text + " " + s.mark).rstrip())
    return out


def _put(row: list[str], x: int, text: str) -> None:
    """Write ``text`` into a row of characters at column ``x``, padding with spaces."""
    if len(row) < x + len(text):
        row.extend(" " * (x + len(text) - len(row)))
    row[x : x + len(text)] = list(text)


def _listing(ties: list[list[_Tie]], names: Sequence[str]) -> list[str]:
    """One line per tie, round by round, then the champion."""
    total = len(ties)
    lines: list[str] = []
    for r, row in enumerate(ties):
        title = _header(r, total).lower()
        for tie in row:
            upper, lower = _slots(tie, r == 0, names)
            text = f"{title}: {' '.join(p for p in (upper.name, upper.points) if p)} - "
            text += " ".join(p for p in (lower.points, lower.name) if p)
            if tie.winner is not None:
                text += f" -> {names[tie.winner]}"
                if tie.view is not None and tie.view.by_coin:
                    text += " (by the coin)"
            lines.append(text)
    champion = ties[-1][0].winner
    lines.append(f"champion: {UNKNOWN if champion is None else names[champion]}")
    return lines
