"""Re-checking a finished match's record before it is stored: could the referee have written it?

A record reaches the database from a tournament job process, which runs beside untrusted bots;
``check_record`` replays it with the game's rules and answers with a one-line reason when the
record is not one the referee (``referee.play_game``) could have produced for the scheduled
match, or None. It checks the game and its parameters, the seats (count, bot names and
versions), the start position, every move (legal, by the seat to move, forced stand-in moves
only for a seat with a fault and from its fault on), the final position, the termination against
the seats' faults, and the utilities, ranks and scores, computed again with the referee's own
ranking (``final_ranks``). It does not check what only the referee saw (times, the evidence of
a fault).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot_arena.arena.match.adjudication import Adjudication, Adjudicator
from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.record import Fault, MatchRecord, Termination
from bot_arena.arena.match.referee import adjudicated_ranks, final_ranks
from bot_arena.arena.match.states import table_for
from bot_arena.games.base import Game, GameError, scores_from_ranks

_STARTUP = -1  # the "ply" of a fault found before the first move (it carries none)


def _fault_ply(fault: Fault, moves: int) -> int | str:
    """When ``fault`` happened (a ply, ``_STARTUP`` before the game), or a reason."""
    if "ply" not in fault.detail:
        return _STARTUP
    ply = fault.detail["ply"]
    if not isinstance(ply, int) or isinstance(ply, bool) or not 0 <= ply <= moves:
        return f"fault ply {str(ply)[:20]!r} is not a ply of the game"
    return ply


def check_record(
    game: Game[Any, Any],
    record: MatchRecord,
    refs: Sequence[BotRef],
    start_position: str | None = None,
    adjudication: Adjudication | None = None,
) -> str | None:
    """Why ``record`` is not a result of ``game`` between ``refs`` (the scheduled bots in seat
    order) from ``start_position`` (None: the game's initial position) under the
    ``adjudication`` rules, or None when it is. Never raises for a record's content."""
    try:
        return _check(game, record, refs, start_position, adjudication)
    except (GameError, ValueError, TypeError, KeyError, IndexError, RecursionError) as exc:
        return f"record cannot be replayed: {type(exc).__name__}: {str(exc)[:80]}"


def _check(
    game: Game[Any, Any],
    record: MatchRecord,
    refs: Sequence[BotRef],
    start_position: str | None,
    adjudication: Adjudication | None = None,
) -> str | None:
    n = game.num_players
    if record.game != game.name or record.params != dict(game.params):
        return f"record is of game {record.game!r} {record.params}, not of {game.describe()}"
    if len(record.seats) != n or len(refs) != n:
        return f"record has {len(record.seats)} seats, the match {len(refs)}, the game {n}"
    for i, (seat, ref) in enumerate(zip(record.seats, refs, strict=True)):
        if seat.bot != ref.name or seat.version != ref.sha256:
            return f"seat {i} names {seat.bot!r} ({seat.version}), not the scheduled {ref.name!r}"
    start = game.initial_state() if start_position is None else game.parse_position(start_position)
    if record.start_position != game.format_position(start):
        return "start position differs from the scheduled one"

    faults = [s.fault for s in record.seats]
    plies: list[int] = []
    for i, f in enumerate(faults):
        ply = _STARTUP if f is None else _fault_ply(f, len(record.moves))
        if isinstance(ply, str):
            return f"seat {i}: {ply}"
        plies.append(ply)
    faulty = [i for i in range(n) if faults[i] is not None]
    if n == 2 and faulty:  # a fault ends a two-player game at once
        ends = [max(plies[i], 0) for i in faulty]
        if any(ply != len(record.moves) for ply in ends):
            return "moves after a fault that ended a two-player game"

    table = table_for(game)
    state = start
    for ply, move in enumerate(record.moves):
        if game.is_terminal(state):
            return f"move {ply + 1} after the end of the game"
        facts = table.facts(game, state)
        if move.seat != facts.seat:
            return f"move {ply + 1} by seat {move.seat}, but seat {facts.seat} is to move"
        standin = faults[move.seat] is not None and ply >= plies[move.seat]
        if move.forced != standin:
            kind = "a forced move" if move.forced else "a move of its own"
            return f"move {ply + 1}: {kind} by seat {move.seat}, which it cannot have made"
        legal = facts.legal.get(move.move)
        if legal is None:
            return f"move {ply + 1} {move.move[:40]!r} is not legal in {facts.position(game)!r}"
        state = game.apply(state, legal)
    if record.final_position != game.format_position(state):
        return "final position is not the one the moves lead to"

    verdict = _adjudicated(record, adjudication, faulty)
    if isinstance(verdict, str):
        return verdict
    if verdict is not None:
        if game.is_terminal(state):
            return "adjudicated at a position where the game was over"
        utility, ranks = adjudicated_ranks(game, verdict["winner"])
        return _seats_agree(record, utility, ranks)
    if not faulty:
        if record.termination is not Termination.NORMAL:
            return f"termination {record.termination.value} without a fault"
        if not game.is_terminal(state):
            return "normal termination at a position that is not terminal"
    else:
        first = min(faulty, key=lambda i: (plies[i], i))
        expected = faults[first].termination  # type: ignore[union-attr]
        if record.termination is not expected:
            return f"termination {record.termination.value}, but the first fault is {expected}"
        if n > 2 and not game.is_terminal(state):
            return "stand-ins did not play the game to its end"

    utility, ranks = final_ranks(game, state, faults)
    return _seats_agree(record, utility, ranks)


def _adjudicated(
    record: MatchRecord, rules: Adjudication | None, faulty: Sequence[int]
) -> dict[str, Any] | str | None:
    """The verdict the rules give for the record's moves (None: they never fire), or why the
    record's own verdict and termination are not what the rules give. A rule fires at the
    first move it can; the game ends there."""
    verdict = None
    if rules is not None and rules.active and len(record.seats) == 2 and not faulty:
        judge = Adjudicator(rules)
        for ply, move in enumerate(record.moves):
            verdict = judge.after(move.seat, move.info)
            if verdict is not None:
                if ply != len(record.moves) - 1:
                    return f"adjudication ({verdict['rule']}) at move {ply + 1}, yet play went on"
                break
    said = record.adjudication
    if verdict is not None and said is None and record.termination is Termination.NORMAL:
        return None  # the rule fired on the move that ended the game on the board
    if (record.termination is Termination.ADJUDICATED) != (said is not None):
        return f"termination {record.termination.value} with adjudication {said}"
    if said is not None and said != verdict:
        return f"adjudication {said} where the rules give {verdict}"
    return verdict


def _seats_agree(record: MatchRecord, utility: Any, ranks: Sequence[int]) -> str | None:
    scores = scores_from_ranks(ranks)
    for i, seat in enumerate(record.seats):
        if (seat.utility, seat.rank, seat.score) != (float(utility[i]), ranks[i], scores[i]):
            return (
                f"seat {i}: utility {seat.utility}, rank {seat.rank}, score {seat.score}; "
                f"the game gives {float(utility[i])}, {ranks[i]}, {scores[i]}"
            )
    return None
