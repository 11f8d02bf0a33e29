"""The seat of a chess engine that speaks xboard/CECP (``xboard:`` bots), beside ``uci``: the same
process transport, clocks and fault classes, the other chess engine protocol.

- **Start**: ``xboard``, ``protover 2`` (sent when the process is started ahead of its first
  game, else with that game's start) until ``feature ... done=1`` (an engine of protocol 1,
  which sends no features, is taken as it is after two seconds), ``easy`` (no pondering), the
  engine's options (``option NAME=VALUE``). Each game: ``new``, ``force``, ``post`` and, from a
  position other than the start, ``setboard FEN`` (refused as a failed start when the engine
  does not offer it), then the opening's moves (a book's, ``--openings-plies``'), which need
  no ``setboard`` from the standard start; with ``ping``, ``ping N`` until ``pong N`` (ready,
  as UCI's ``readyok``).
- **A move**: the engine stays in force mode between its moves and is told the moves it has
  not seen (``usermove M`` when it asked for that), the time control (``level 0 M:SS INC`` for a
  clock, ``st S`` for a move time, ``sd N`` for ``--depth``), ``time``/``otim`` in centiseconds,
  then ``go`` until ``move M``. Thinking lines (``ply score time nodes pv``) become the move's
  search info; ``resign`` gives the game up; other lines are ignored. Faults and the clock are
  the arena's, as for every bot.
"""

from __future__ import annotations

import re
import time
from typing import Any

from bot_arena.arena.match import faults
from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.engine import MAX_START_LINE, MAX_START_LINES, EngineSeat
from bot_arena.arena.match.engines import split_engine
from bot_arena.arena.match.record import Fault
from bot_arena.arena.match.seat import Reply
from bot_arena.arena.match.uci import GAME, START_FEN
from bot_arena.arena.transport import protocol
from bot_arena.arena.transport.process import BotProcess, ReadStatus
from bot_arena.games.base import Game, GameError

PROTOCOL_1_WAIT_S = 2.0  # how long an engine that sends no features is waited for (CECP's rule)
_THINKING = re.compile(rb"^\s*(\d+)\s+(-?\d+)\s+(\d+)\s+(\d+)\s*(.*)$")
# a key starts a word: without the look-behind every position inside a long word would start a
# match that scans to its end (a 1 MB ``feature aaa...`` line: hours of the arena's time)
_FEATURE = re.compile(r'(?<!\w)(\w+)=("[^"]*"|\S+)')
# an option's name: what precedes its type (``Resign Threshold -spin 800 200 1200``)
_OPTION_NAME = re.compile(
    r"^(.+?) -(?:check|spin|combo|slider|string|file|path|button|save|reset)\b"
)
_USED_FEATURES = frozenset({"setboard", "usermove", "ping"})


def parse_thinking(line: bytes) -> dict[str, Any] | None:
    """A ``post`` line ``ply score time nodes pv`` as search info (score in centipawns from
    the engine's side, time in centiseconds), or None when the line is not one (a number out
    of ``protocol``'s range too). The pv is bounded as UCI's: MAX_PV words of MAX_PV_MOVE
    characters, from the first MAX_INFO_WORDS of the text."""
    m = _THINKING.match(line)
    if m is None:
        return None
    depth, score, centis, nodes = (protocol.info_int(g.decode()) for g in m.groups()[:4])
    if depth is None or score is None or centis is None or nodes is None:
        return None
    text = m.group(5).decode("utf-8", "replace")
    return {
        "depth": depth,
        "score": {"cp": score},
        "time_ms": centis * 10,
        "nodes": nodes,
        "pv": protocol.info_pv(protocol.info_words(text)),
    }


def level_command(tc: Any) -> str:
    """The time control in CECP's words (seconds to ``M:SS``; a move time as ``st``)."""
    lines = []
    if tc.base is not None:
        minutes, seconds = divmod(round(tc.base), 60)
        base = f"{minutes}:{seconds:02d}" if seconds else str(minutes)
        lines.append(f"level 0 {base} {tc.increment:g}")
    elif tc.move_time is not None:
        lines.append(f"st {max(1, int(tc.move_time))}")
    if tc.depth is not None:
        lines.append(f"sd {tc.depth}")
    return "".join(f"{line}\n" for line in lines)


def from_start(game: Game[Any, Any], opening: list[str], position: str) -> list[str] | None:
    """``opening`` when its moves lead from the standard start to ``position`` (the game's
    own text of it), else None: the moves an engine without ``setboard`` is told instead."""
    if not opening:
        return None
    try:
        state = game.parse_position(f"{START_FEN} moves {' '.join(opening)}")
    except GameError:
        return None
    return opening if game.format_position(state) == position else None


def moves_from_start(game: Game[Any, Any], position: str | None) -> tuple[str, ...]:
    """The moves a position text plays from the game's standard start (``startpos moves e2e4
    e7e5``, or the start's FEN and ``moves ...``), else none: a start an engine without
    ``setboard`` is told as moves after ``new``/``force`` (cutechess's way). The moves are
    checked by the game when the position is parsed."""
    if position is None:
        return ()
    root, found, history = position.partition(" moves ")
    if not found:
        return ()
    try:
        state = game.parse_position(root)
    except GameError:
        return ()
    if game.format_position(state) != game.format_position(game.initial_state()):
        return ()
    return tuple(history.split())


def needs_setboard(game: Game[Any, Any], opening: list[str], position: str) -> bool:
    """Whether a game from ``position`` (``opening``: the moves from the standard start that
    made it, when known) needs ``setboard``: its FEN is not the start and no moves from the
    start reach it (the one rule: the seat's start and the checks before a run)."""
    fen = position.partition(" moves ")[0].strip()
    return fen != START_FEN and from_start(game, opening, position) is None


def has_setboard(features: dict[str, str]) -> bool:
    """Whether an engine's announced features offer ``setboard``."""
    return features.get("setboard") == "1"


class XboardSeat(EngineSeat):
    """An ``xboard:`` bot's process, spoken to in CECP."""

    greeting = b"xboard\nprotover 2\n"

    def __init__(self, ref: BotRef, process: BotProcess) -> None:
        super().__init__(ref, process)
        self.options = split_engine(ref.target)[1]
        self.features: dict[str, str] = {}  # the features of _USED_FEATURES it announced
        self.offered: set[str] = set()  # the names of the options it announced
        self.start_position = START_FEN
        self.opening: list[str] = []  # the moves from the standard start to it, when known
        self.seat = 0
        self.first = True
        self.known = 0  # the game's moves the engine's board holds
        self.pings = 0
        self.moves: list[str] = []  # the game's moves when the current move was asked
        self.info: dict[str, Any] | None = None  # its last thinking line

    def start(self, message: dict[str, Any]) -> None:
        self.sent = time.monotonic()
        self.start_position = str(message.get("position") or START_FEN)
        opening = message.get("opening")
        self.opening = [str(m) for m in opening] if isinstance(opening, list) else []
        self.seat = int(message.get("seat") or 0)
        self.first = message.get("type") == "hello"
        self.known = 0
        if self.first:
            self._greet(self.sent + 5.0)  # unless it went ahead (``greet``)

    def finish_start(self, deadline: float, game: Game[Any, Any]) -> Fault | None:
        if game.name != GAME:
            self.process.kill()
            return faults.stall(f"an xboard engine plays chess, not {game.name}", "game")
        if self.first:
            fault = self._features(deadline)
            if fault is not None:
                return fault
            commands = ["easy"]
            for name, value in self.options:
                if self.offered and name not in self.offered:
                    self.process.kill()
                    names = ", ".join(sorted(self.offered))
                    return faults.stall(
                        f"the engine has no option {name!r} (it offers: {names})", "option"
                    )
                commands.append(f"option {name}={value}")
            self.process.send("".join(f"{c}\n" for c in commands).encode(), deadline)
        fen, _, history = self.start_position.partition(" moves ")
        setup = ["new", "force", "post"]
        moves = history.split()
        if fen.strip() != START_FEN and not has_setboard(self.features):
            # moves from the standard start need no setboard: after new/force the engine is
            # told them as any moves (cutechess's way with fairymax, setboard=0)
            if needs_setboard(game, self.opening, self.start_position):
                self.process.kill()
                return faults.stall("the engine cannot set up a position (no setboard)", "setup")
            moves = self.opening
        elif fen.strip() != START_FEN:
            setup.append(f"setboard {fen.strip()}")
        setup += [self._move_text(m) for m in moves]
        if self.features.get("ping") == "1":
            self.pings += 1
            setup.append(f"ping {self.pings}")
        if not self.process.send("".join(f"{c}\n" for c in setup).encode(), deadline):
            return faults.stall(f"no handshake: {self._exit_message()}", "exited")
        if self.features.get("ping") == "1":
            got = self._wait_for(f"pong {self.pings}", deadline)
            if isinstance(got, Fault):
                return got
        self.games += 1
        return None

    def _features(self, deadline: float) -> Fault | None:
        """Read ``feature`` lines until ``done=1`` (protocol 1: none for two seconds)."""
        quiet_until = time.monotonic() + PROTOCOL_1_WAIT_S
        waiting = False  # ``done=0``: the engine asked for time to start
        while True:
            limit = deadline if waiting or self.features else min(deadline, quiet_until)
            status, raw = self.process.read_line(limit)
            if status is ReadStatus.TIMEOUT:
                if time.monotonic() >= deadline:
                    return self._no_handshake(deadline, "feature done=1")
                return None  # protocol 1: no features
            if status is not ReadStatus.LINE:
                return self._start_failure(status, raw, "feature done=1")
            if time.monotonic() >= deadline:  # talk that goes on past the start-up limit
                return self._no_handshake(deadline, "feature done=1")
            line = raw.decode("utf-8", "replace")
            if not line.startswith("feature "):
                continue
            # only what the seat uses is kept, at most MAX_START_LINES option names (each cut to
            # MAX_START_LINE characters): an engine's talk before it is ready cannot fill the
            # arena's memory
            for key, quoted in _FEATURE.findall(line):
                value = quoted.strip('"')
                if key == "option":
                    name = _OPTION_NAME.match(value)
                    if name is not None and len(self.offered) < MAX_START_LINES:
                        self.offered.add(name.group(1)[:MAX_START_LINE])
                elif key in _USED_FEATURES:
                    self.features[key] = value
                elif key == "myname":
                    self.bot_name = protocol.truncate(value, 200)
                elif key == "done":
                    waiting = value == "0"
                    if value == "1":
                        return None

    def _move_text(self, move: str) -> str:
        return f"usermove {move}" if self.features.get("usermove") == "1" else move

    def move_request(self, request: protocol.MoveRequest) -> str:
        self.moves = [m.move for m in request.moves]
        self.info = None
        own, other = request.clocks[self.seat], request.clocks[1 - self.seat]
        lines = ["force", *(self._move_text(m) for m in self.moves[self.known :])]
        text = "\n".join(lines) + "\n" + level_command(own.tc)
        if own.remaining is not None and other.remaining is not None:
            text += f"time {int(own.remaining * 100)}\notim {int(other.remaining * 100)}\n"
        return text + "go\n"

    def read_answer(self, raw: bytes) -> Reply | None:
        words = raw.split(None, 2)  # two words and the rest: a long line is not split whole
        if words[:1] == [b"move"] and len(words) == 2:
            self.known = len(self.moves) + 1  # the engine made its move on its own board
            return Reply(0.0, words[1].decode("utf-8", "replace"), self.info)
        if words[:1] == [b"resign"]:
            return Reply(0.0, fault=faults.gave_up("the engine resigned", "resign"))
        thinking = parse_thinking(raw)
        if thinking is not None:
            self.info = thinking
        return None

    def ask_quit(self, deadline: float) -> None:
        self.process.send(b"quit\n", deadline)
