"""The referee's game loop: the authoritative state, every move validated, clocks, faults, and the
final ranking. Seats are already started (see arena.match); this module only plays and judges.

Fault rules: with two players the offender loses at once. With three or more the offender is
ranked last and a seeded random stand-in plays its remaining moves (``MoveRecord.forced``); the
others are ranked by the final utilities.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bot_arena.arena.match import faults as fault
from bot_arena.arena.match.adjudication import Adjudication, Adjudicator
from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.record import Fault, MatchRecord, MoveRecord, SeatResult, Termination
from bot_arena.arena.match.seat import ProcessSeat, Reply, Seat
from bot_arena.arena.match.states import table_for
from bot_arena.arena.match.timecontrol import Clock, TimeControl, seats_dict
from bot_arena.arena.transport import protocol
from bot_arena.games.base import (
    Game,
    GameError,
    Utility,
    ranks_from_utilities,
    scores_from_ranks,
)


def _judge(
    game: Game[Any, Any], state: Any, reply: Reply, legal: Mapping[str, Any]
) -> tuple[Any, str] | Fault:
    """The move a reply names and its canonical text, or a Fault (bad_output: unparseable;
    illegal_move: not legal)."""
    move = legal.get(reply.move)
    if move is not None:  # the usual answer: exactly one of the legal texts
        return move, reply.move
    text = reply.move.strip()
    try:
        move = game.parse_move(text)
    except GameError as exc:
        message = f"unparseable move {protocol.truncate(text, 40)!r}: {exc}"
        return fault.bad_output(message, protocol.truncate(reply.move))
    if move in legal.values():
        return move, game.format_move(move)
    return fault.illegal_move(text, game.format_position(state))


def final_ranks(
    game: Game[Any, Any], state: Any, faults: Sequence[Fault | None]
) -> tuple[tuple[float, ...], tuple[int, ...]]:
    """Utilities and ranks: offenders last (two players: the offender loses outright)."""
    n = game.num_players
    offenders = [i for i in range(n) if faults[i] is not None]
    if not offenders:
        utility = tuple(game.utility(state))
        return utility, ranks_from_utilities(utility)
    if n == 2 or not game.is_terminal(state):
        lo, hi = game.bounds.min_each, game.bounds.max_each
        utility = tuple(lo if faults[i] else hi for i in range(n))
    else:
        utility = tuple(game.utility(state))
    fine = [i for i in range(n) if faults[i] is None]
    ranks = [len(fine) + 1] * n
    for i in fine:
        ranks[i] = 1 + sum(1 for j in fine if utility[j] > utility[i])
    if not fine:
        ranks = [1] * n
    return utility, tuple(ranks)


def adjudicated_ranks(game: Game[Any, Any], winner: int | None) -> tuple[Utility, tuple[int, ...]]:
    """Utilities and ranks of a two-player game an adjudication rule ended: the winner's best
    and the loser's worst, or the middle of the scale for both on a draw."""
    lo, hi = game.bounds.min_each, game.bounds.max_each
    if winner is None:
        return ((lo + hi) / 2, (lo + hi) / 2), (1, 1)
    utility = tuple(hi if seat == winner else lo for seat in range(2))
    return utility, ranks_from_utilities(utility)


def _settle(unread: tuple[MoveRecord, Reply] | None) -> None:
    """The search info of a move left unread (``Reply.unread``) read into its record."""
    if unread is not None:
        record, reply = unread
        record.info = reply.settle()


def play_game(
    game: Game[Any, Any],
    refs: Sequence[BotRef],
    seats: Sequence[Seat | None],
    tcs: Sequence[TimeControl],
    start: Any,
    *,
    seed: int,
    faults: list[Fault | None],
    on_move: Callable[[MoveRecord], None] | None = None,
    started: float | None = None,
    adjudication: Adjudication | None = None,
) -> MatchRecord:
    """Play from ``start`` to the end (or to a deciding fault, or to an ``adjudication`` rule:
    two-player games) and judge the result.

    ``refs`` are the bots by seat; ``seats`` who plays each (None: nobody, a seat that could not
    start, whose fault ``faults`` must hold). ``faults`` holds start-up faults per seat (and is
    filled in as the game goes).
    """
    n = game.num_players
    if any(seats[i] is None and faults[i] is None for i in range(n)):
        raise ValueError("a seat without a player must have a fault")
    started = time.time() if started is None else started
    start_text = game.format_position(start)
    clocks = [Clock(tc) for tc in tcs]
    standin: random.Random | None = None  # seeded when a faulty seat's turn first comes
    table = table_for(game)  # position facts (legal moves, texts), shared across the series
    writer = protocol.RequestWriter()  # the moves so far, kept encoded
    state = start
    moves: list[MoveRecord] = []
    request_id = 0
    first = next((f for f in faults if f is not None), None)  # the match's termination
    decided = n == 2 and first is not None
    judge = Adjudicator(adjudication) if adjudication and adjudication.active and n == 2 else None
    verdict: dict[str, Any] | None = None
    # a move's search info that needs no reading before the next request (no one watches the
    # moves, no rule reads scores) is read once that request is on its way
    info_now = on_move is not None or (judge is not None and judge.rules.reads_scores)
    unread: tuple[MoveRecord, Reply] | None = None  # the last move's record, info unread
    while not decided and not game.is_terminal(state):
        seat = game.current_player(state)
        player = seats[seat]
        if faults[seat] is not None or player is None:
            facts = table.facts(game, state)
            if standin is None:
                standin = random.Random(seed ^ 0x5F3759DF)
            move = standin.choice(list(facts.moves))
            record = MoveRecord(seat, game.format_move(move), 0.0, None, forced=True)
        else:
            request_id += 1
            clock = clocks[seat]
            limit = clock.limit()
            hard_limit = clock.hard_limit()  # limit + margin: later is a loss on time
            if isinstance(player, ProcessSeat) and player.request_without_facts:
                # sent first: the position's facts (legal moves, text) are worked out while
                # the bot thinks, off the path from one answer to the next request
                request = protocol.MoveRequest(request_id, b"", {}, limit, clocks, moves)
                posted = player.post(request, hard_limit)
                _settle(unread)
                unread = None
                facts = table.facts(game, state)
                request.legal = facts.legal
                reply = posted if isinstance(posted, Reply) else player.collect(posted, request)
            else:
                facts = table.facts(game, state)
                line = writer.line(
                    request_id, facts.position_json(game), facts.legal_json(), clock.request_json()
                )
                request = protocol.MoveRequest(request_id, line, facts.legal, limit, clocks, moves)
                _settle(unread)
                unread = None
                reply = player.ask(game, state, request, hard_limit)
            outcome: tuple[Any, str] | Fault | None = reply.fault
            if outcome is None:
                if clock.overrun(reply.elapsed) is not None:  # answered, but too late
                    player.kill()  # its process is not kept for another game
                    outcome = fault.late(reply.elapsed, limit or 0.0)
                else:
                    outcome = _judge(game, state, reply, facts.legal)
            if isinstance(outcome, Fault):
                outcome.detail.setdefault("ply", len(moves))
                faults[seat] = outcome
                first = first or outcome
                if n == 2:
                    break
                continue  # the stand-in plays this move
            clock.spend(reply.elapsed)
            move, text = outcome
            info = reply.settle() if info_now else reply.info
            record = MoveRecord(seat, text, round(reply.elapsed * 1000, 3), info)
            if reply.unread is not None:
                unread = (record, reply)
        state = game.apply(state, move)
        writer.played(record.move)
        moves.append(record)
        if on_move is not None:
            on_move(record)
        if judge is not None and not record.forced:
            verdict = judge.after(record.seat, record.info)
            if verdict is not None and not game.is_terminal(state):
                break
            verdict = None  # the game ended on the board with that move: no adjudication
    _settle(unread)
    if verdict is not None:
        utility, ranks = adjudicated_ranks(game, verdict["winner"])
    else:
        utility, ranks = final_ranks(game, state, faults)
    scores = scores_from_ranks(ranks)
    return MatchRecord(
        game=game.name,
        params=dict(game.params),
        start_position=start_text,
        seats=[
            SeatResult(
                refs[i].name, float(utility[i]), ranks[i], scores[i], faults[i], refs[i].sha256
            )
            for i in range(n)
        ],
        moves=moves,
        termination=(
            first.termination
            if first
            else Termination.ADJUDICATED
            if verdict is not None
            else Termination.NORMAL
        ),
        final_position=game.format_position(state),
        started=started,
        finished=time.time(),
        time_control=seats_dict(tcs),
        adjudication=verdict,
    )
