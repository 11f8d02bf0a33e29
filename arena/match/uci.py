"""The seat of a chess engine that speaks UCI (``uci:`` bots): the arena's transport, clocks and
fault classes, with UCI as a second protocol over the same process pipes.

- **Start**: ``uci`` (sent when the process is started ahead of its first game, else with that
  game's start) until ``uciok`` (the engine's name and options noted), then its options
  (``setoption``; an option the engine does not offer is refused as a failed start, naming what
  it offers), ``ucinewgame`` and ``isready`` until ``readyok``, all within the start-up limit:
  missing is a stall. A later game on the same process: ``ucinewgame`` + ``isready``.
- **A move**: ``position startpos|fen FEN moves ...`` (the whole game, so the engine sees its
  repetitions) and ``go`` with the clocks (``wtime btime winc binc``, milliseconds) and the
  move time (``movetime``); then lines until ``bestmove``. ``info`` lines are kept as the
  move's search info (depth, seldepth, score in centipawns or mate, nodes, nps, hashfull, time,
  pv); other lines are ignored, as the protocol says. The referee judges the move as any other
  (unparseable: bad output; not legal: illegal move) and the arena's own clock decides losses on
  time: no ``bestmove`` by the limit plus the margin is a timeout and the engine is killed.
- A process that exits is a crash with its exit status and stderr tail; after any fault the
  process is killed and the next game starts a fresh one.
"""

from __future__ import annotations

import select
import time
from collections.abc import Sequence
from functools import partial
from typing import Any

from bot_arena.arena.match import faults
from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.engine import EngineSeat
from bot_arena.arena.match.engines import split_engine
from bot_arena.arena.match.record import Fault
from bot_arena.arena.match.seat import Reply
from bot_arena.arena.transport import protocol
from bot_arena.arena.transport.process import BotProcess
from bot_arena.games.base import Game

START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
GAME = "chess"

# info tokens followed by one integer value, and the name the arena stores it under
_INT_FIELDS = {
    "depth": "depth",
    "seldepth": "seldepth",
    "nodes": "nodes",
    "nps": "nps",
    "hashfull": "hashfull",
    "tbhits": "tbhits",
    "time": "time_ms",
    "multipv": "multipv",
}


def parse_info(line: str) -> dict[str, Any]:
    """The fields of one ``info`` line that say what the search found (unknown tokens and
    ``string`` text are skipped; a malformed number, or one out of range, ends the parse: what
    came before stays). Bounded whatever the line (``protocol``'s info rules): the first
    MAX_INFO_WORDS words are read, a pv keeps MAX_PV moves of MAX_PV_MOVE characters."""
    words = protocol.info_words(line)
    out: dict[str, Any] = {}
    i = 1
    while i < len(words):
        word = words[i]
        if word in _INT_FIELDS and i + 1 < len(words):
            value = protocol.info_int(words[i + 1])
            if value is None:
                break
            out[_INT_FIELDS[word]] = value
            i += 2
        elif word == "score" and i + 2 < len(words) and words[i + 1] in ("cp", "mate"):
            value = protocol.info_int(words[i + 2])
            if value is None:
                break
            out["score"] = {words[i + 1]: value}
            i += 3
            while i < len(words) and words[i] in ("lowerbound", "upperbound"):
                out["score"]["bound"] = words[i][:-5]  # lower / upper
                i += 1
        elif word == "pv":
            out["pv"] = protocol.info_pv(words[i + 1 :])
            break
        elif word == "string":
            break
        else:
            i += 1
    return out


def position_command(start: str, moves: list[str]) -> str:
    """``position ...`` for a game that began at ``start`` (a FEN, or ``FEN moves ...`` as the
    chess game writes a position with its repetition history) and went on with ``moves``."""
    fen, _, earlier = start.partition(" moves ")
    history = [*earlier.split(), *moves]
    head = "position startpos" if fen.strip() == START_FEN else f"position fen {fen.strip()}"
    return f"{head} moves {' '.join(history)}" if history else head


def go_command(clocks: Any, seat: int) -> str:
    """``go`` with the two clocks (White's first: seat 0) and the move time, in milliseconds,
    and the search limits of ``seat``'s time control; plain ``go`` when nothing limits it."""
    tc = clocks[seat].tc
    parts = ["go"]
    if len(clocks) == 2 and all(c.remaining is not None for c in clocks):
        white, black = clocks
        parts += ["wtime", _ms(white.remaining), "btime", _ms(black.remaining)]
        parts += ["winc", _ms(white.tc.increment), "binc", _ms(black.tc.increment)]
    if tc.move_time is not None:
        parts += ["movetime", _ms(tc.move_time)]
    if tc.depth is not None:
        parts += ["depth", str(tc.depth)]
    if tc.nodes is not None:
        parts += ["nodes", str(tc.nodes)]
    return " ".join(parts)


def _ms(seconds: float) -> str:
    return str(max(0, int(seconds * 1000)))


class UciSeat(EngineSeat):
    """A ``uci:`` bot's process, spoken to in UCI."""

    greeting = b"uci\n"

    def __init__(self, ref: BotRef, process: BotProcess) -> None:
        super().__init__(ref, process)
        self.options = split_engine(ref.target)[1]
        self.start_position = START_FEN
        self.seat = 0
        self.first = True
        self.advanced = False
        self.offered: dict[str, str] | None = None  # the options it offers, once ``uciok`` came
        self.set_ahead = False  # whether ``hear_ahead`` sent the options and ``isready``
        self.info = ""  # the move's info line so far
        self.exact = False  # whether it holds an exact score
        # the last ``position`` text sent: the game's list of moves it was made for, their count
        self.said: tuple[Sequence[Any] | None, int, str] = (None, 0, "")

    # --- handshake -----------------------------------------------------------------------------
    def start(self, message: dict[str, Any]) -> None:
        self.sent = time.monotonic()
        self.start_position = str(message.get("position") or START_FEN)
        self.seat = int(message.get("seat") or 0)
        self.first = message.get("type") == "hello"
        self.said = (None, 0, "")
        self.advanced = False  # whether advance_start ran for this start
        if self.first:
            self._greet(self.sent + 5.0)  # unless it went ahead (``greet``): its answer waits
        else:
            self.send_ok = self.process.send(b"ucinewgame\nisready\n", self.sent + 5.0)

    def hear_ahead(self) -> None:
        """A greeted engine's first start taken ahead as far as it goes without waiting: once
        its ``uciok`` has come (read without waiting), its options are checked and, when it
        offers them all, set now with ``ucinewgame`` and ``isready`` (one write the pipe takes
        whole, or none), so that the engine sets them up while the run gets ready and the
        start waits for its ``readyok`` only. A refused option, or an engine gone, is left to
        the start, which finds it as it would have: the same fault, the same message."""
        if not self.greeted or self.games or self.offered is not None or self.advanced:
            return
        if not self._hear("uciok"):
            return
        self.offered = self._offers(self.heard)
        self.heard = []
        if self._unoffered() is None:
            setup = self._setup()
            if len(setup) <= select.PIPE_BUF:  # written whole or not at all: never waits
                self.set_ahead = self.process.send(setup, time.monotonic())

    def advance_start(self, deadline: float, game: Game[Any, Any]) -> Fault | None:
        """A first game's middle: ``uciok`` read, then the options, ``ucinewgame`` and
        ``isready`` sent (unless ``hear_ahead`` did); ``finish_start`` waits for the
        ``readyok``. The pool calls this for both seats before it waits for either's
        ``readyok``, so the two engines set their options (a hash table made and cleared) at
        the same time rather than one after the other on the first game's path."""
        if game.name != GAME:
            self.process.kill()
            return faults.stall(f"a UCI engine plays chess, not {game.name}", "game")
        if not self.first or self.advanced:
            return None
        self.advanced = True
        if self.offered is None:
            got = self._wait_for("uciok", deadline)
            if isinstance(got, Fault):
                return got
            self.offered = self._offers(got)
        missing = self._unoffered()
        if missing is not None:
            self.process.kill()
            names = ", ".join(sorted(self.offered.values())) or "none"
            return faults.stall(
                f"the engine has no option {missing!r} (it offers: {names})", "option"
            )
        if not self.set_ahead and not self.process.send(self._setup(), deadline):
            return faults.stall(f"no handshake: {self._exit_message()}", "exited")
        return None

    def _offers(self, lines: list[str]) -> dict[str, str]:
        """The options named in the lines before ``uciok`` (lower case: as the engine spells
        it); its ``id name`` noted."""
        offered = {}
        for line in lines:
            if line.startswith("id name "):
                self.bot_name = protocol.truncate(line[8:].strip(), 200)
            elif line.startswith("option name "):
                name = line[12:].partition(" type ")[0].strip()
                offered[name.lower()] = name
        return offered

    def _unoffered(self) -> str | None:
        """The first option of the spec the engine does not offer, if any."""
        assert self.offered is not None
        return next((n for n, _ in self.options if n.lower() not in self.offered), None)

    def _setup(self) -> bytes:
        """The options as the engine spells them, ``ucinewgame`` and ``isready``."""
        assert self.offered is not None
        named = self.offered
        commands = [f"setoption name {named[n.lower()]} value {v}\n" for n, v in self.options]
        return "".join([*commands, "ucinewgame\n", "isready\n"]).encode()

    def finish_start(self, deadline: float, game: Game[Any, Any]) -> Fault | None:
        if not self.advanced:  # a caller that skipped the middle (or a later game)
            fault = self.advance_start(deadline, game)
            if fault is not None:
                return fault
        got = self._wait_for("readyok", deadline)
        if isinstance(got, Fault):
            return got
        self.games += 1
        return None

    # --- one move ------------------------------------------------------------------------------
    def move_request(self, request: protocol.MoveRequest) -> str:
        self.info, self.exact = "", False
        return f"{self._position(request.moves)}\n{go_command(request.clocks, self.seat)}\n"

    def _position(self, moves: Sequence[Any]) -> str:
        """``position_command`` of the game's start and ``moves`` (the referee's list of the
        game's moves, which only grows), made from the last request's text and the moves
        played since, not from the whole game each move."""
        said, count, text = self.said
        if said is not moves or count > len(moves):  # another game's list: from its start
            said, count, text = moves, 0, position_command(self.start_position, [])
        if count < len(moves):
            played = " ".join([m.move for m in moves[count:]])
            text = f"{text} {played}" if count or " moves " in text else f"{text} moves {played}"
        self.said = (said, len(moves), text)
        return text

    def read_answer(self, raw: bytes) -> Reply | None:
        if raw.startswith(b"bestmove"):
            words = raw.decode("utf-8", "replace").split(None, 2)  # the move and the rest
            move = words[1] if len(words) > 1 else ""
            # the info line is read later, off the path to the next request (``Reply.settle``)
            return Reply(0.0, move, unread=partial(parse_info, self.info) if self.info else None)
        # the last info line with an exact score (else a bound, else a depth)
        if raw.startswith(b"info") and b" score " in raw:
            bound = b"bound" in raw  # a fail-high/low line: kept only until an exact one
            if not bound or not self.exact:
                self.info, self.exact = raw.decode("utf-8", "replace"), not bound
        elif raw.startswith(b"info") and not self.info and b" depth " in raw:
            self.info = raw.decode("utf-8", "replace")
        return None

    def ask_quit(self, deadline: float) -> None:
        self.process.send(b"quit\n", deadline)
