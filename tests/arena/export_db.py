"""A small database of hand-made matches for the export tests, built the same way every time:
games played in-process from seeded random moves (chess from the start and from a FEN, an
opening, tic-tac-toe, three-seat rolit), fixed times, search info and faults, two tournaments
and matches outside any, a void and a pending match (never exported). The expected exports in
``fixtures/export/`` were written from this database by the export of before it streamed."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

from bot_arena import games
from bot_arena.arena.match.botref import BotRef, sha256_text
from bot_arena.arena.match.record import Fault, MatchRecord, MoveRecord, SeatResult, Termination
from bot_arena.db.models import Match, Tournament
from bot_arena.db.session import make_engine, session_factory
from bot_arena.db.store import save_match
from bot_arena.games.base import ranks_from_utilities, scores_from_ranks

#: (game, params, seats, tournament index or None, start FEN or "", opening plies)
PLAN: tuple[tuple[str, dict[str, Any], int, int | None, str, int], ...] = (
    ("chess", {}, 2, 0, "", 0),
    ("chess", {}, 2, 0, "", 2),
    ("tictactoe", {}, 2, None, "", 0),
    ("chess", {}, 2, 0, "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", 0),
    ("rolit", {"players": 3, "size": 6}, 3, None, "", 0),
    ("tictactoe", {}, 2, 1, "", 0),
    ("chess", {}, 2, None, "", 0),
    ("tictactoe", {}, 2, 1, "", 0),
    ("connect4", {}, 2, 1, "", 0),
    ("chess", {}, 2, 0, "", 0),
)
BOTS = ("random", "uci:stockfish option.Hash=16", "=SUM(A1)", "mcts:time=0.1", "greedy")


def ref(name: str) -> BotRef:
    return BotRef(name, "builtin", name, None, sha256_text(name))


def _record(number: int, rng: random.Random) -> tuple[MatchRecord, list[BotRef], int | None, str]:
    name, params, n, tournament, fen, opening_plies = PLAN[number]
    game = games.get(name, **params)
    state = game.parse_position(fen) if fen else game.initial_state()
    moves: list[MoveRecord] = []
    opening: list[str] = []
    ply = 0
    while not game.is_terminal(state) and ply < 60:
        move = rng.choice(list(game.legal_moves(state)))
        seat = game.current_player(state)
        text = game.format_move(move)
        if ply < opening_plies:
            opening.append(text)
        info: dict[str, Any] | None = None
        if ply % 3 == 1:
            info = {"score": {"cp": rng.randint(-300, 300)}, "depth": 7, "nodes": 1234}
        elif ply % 5 == 2:
            info = {"values": [0.25, -1.5], "note": 'a "quoted" note'}
        moves.append(MoveRecord(seat, text, round(rng.uniform(0.1, 80.0), 3), info, ply == 9))
        state = game.apply(state, move)
        ply += 1
    refs = [ref(BOTS[(number + i) % len(BOTS)]) for i in range(n)]
    fault: Fault | None = None
    if game.is_terminal(state):
        utility = tuple(float(u) for u in game.utility(state))
        termination = Termination.NORMAL
    else:  # cut short: the seat to move loses on time
        loser = game.current_player(state)
        utility = tuple(-1.0 if i == loser else 1.0 for i in range(n))
        termination = Termination.TIMEOUT
        fault = Fault(Termination.TIMEOUT, "no answer in 0.1 s", {"overrun_ms": 12.5})
    ranks = ranks_from_utilities(utility)
    scores = scores_from_ranks(ranks)
    seats = [
        SeatResult(
            r.name,
            utility[i],
            ranks[i],
            scores[i],
            fault if fault is not None and utility[i] < 0 else None,
            r.sha256,
        )
        for i, r in enumerate(refs)
    ]
    started = 1_700_000_000.0 + 86_400.0 * number + 0.125
    record = MatchRecord(
        game=name,
        params=params,
        start_position=fen,
        seats=seats,
        moves=moves,
        termination=termination,
        final_position=game.format_position(state),
        started=started,
        finished=started + 1.5 + number / 8,
        time_control={"move_time": 0.1} if number % 2 else {"base": 30.0, "increment": 0.5},
    )
    return record, refs, tournament, " ".join(opening)


def build(url: str) -> list[int]:
    """The database at ``url`` (new), filled; returns the tournament ids."""
    sessions = session_factory(make_engine(url))
    rng = random.Random(29)
    with sessions.begin() as session:
        tournaments = []
        for name, game in (("club night", "chess"), (None, "tictactoe")):
            t = Tournament(name=name, game=game, format="round-robin", seed=1)
            session.add(t)
            session.flush()
            tournaments.append(t.id)
        for number in range(len(PLAN)):
            record, refs, tournament, opening = _record(number, rng)
            tid = None if tournament is None else tournaments[tournament]
            match_id = save_match(session, record, refs, tid)
            match = session.get(Match, match_id)
            assert match is not None
            match.round = number // 3
            match.opening = opening
            if number == 6:
                match.status = "void"
                match.void_reason = "test"
                match.voided = datetime(2024, 1, 1, tzinfo=UTC)
        session.add(Match(tournament_id=tournaments[1], game="tictactoe", params={}, players=2))
    return tournaments
