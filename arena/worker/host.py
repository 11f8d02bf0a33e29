"""The worker's protocol loop: read a request line, answer it, until ``quit`` or end of input.

The bot's own output never reaches the protocol: before the bot's module is imported, the
protocol pipes are moved to private descriptors and fd 0/1 (and ``sys.stdin``/``sys.stdout``)
point at /dev/null and the bot's stderr log (see ``isolate``).
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from typing import Any, BinaryIO

from bot_arena.arena.transport import protocol
from bot_arena.arena.worker.loader import Factory, Player, UnwritableMove, answer
from bot_arena.bots.base import TimeBudget
from bot_arena.games.base import Game


class Channel:
    """The private protocol pipes of the worker."""

    def __init__(self, fd_in: int, fd_out: int) -> None:
        self.reader: BinaryIO = os.fdopen(fd_in, "rb", buffering=1 << 16)
        self.fd_out = fd_out

    def send(self, message: dict[str, Any]) -> None:
        self.write(protocol.encode(message))

    def write(self, data: bytes) -> None:
        while data:
            data = data[os.write(self.fd_out, data) :]

    def receive(self) -> dict[str, Any] | None:
        line = self.reader.readline()
        return protocol.decode_request(line) if line else None


def isolate() -> Channel:
    """Move the protocol to private fds; point the bot's stdin at /dev/null, stdout at stderr."""
    fd_in, fd_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.stderr
    return Channel(fd_in, fd_out)


def fail_message(exc: BaseException, phase: str) -> dict[str, Any]:
    # free the failed frames' locals first (a MemoryError's hoard), keeping file/line info
    traceback.clear_frames(exc.__traceback__)
    traceback.print_exception(exc, file=sys.stderr)
    sys.stderr.flush()
    line = "".join(traceback.format_exception_only(exc)).strip()
    return {"type": "error", "phase": phase, "exception": line, "message": line}


class Host:
    """Keeps the current game, its position and the player; turns requests into answers.

    The position is kept between requests: a request's ``moves`` continue the ones the last
    request listed, so only the new ones (the bot's own move and the opponents') are applied;
    the ``position`` text is parsed only when they don't (see ``position``)."""

    def __init__(self, channel: Channel, factory: Factory) -> None:
        self.channel = channel
        self.factory = factory
        self.game: Game[Any, Any] | None = None
        self.game_key: tuple[str, str] = ("", "")
        self.player: Player | None = None
        self.start_text: str | None = None  # the game's start position (hello/new_game)
        self.state: Any = None  # the position after ``self.seen``, when ``self.known``
        self.seen: list[Any] = []  # the move texts of the last request
        self.known = False

    def start_game(self, request: dict[str, Any]) -> dict[str, Any]:
        from bot_arena import games

        key = (str(request["game"]), repr(request.get("params")))
        if self.game is None or key != self.game_key:
            self.game = games.get(key[0], **dict(request.get("params") or {}))
            self.game_key = key
        self.player = self.factory(int(request.get("seed") or 0))
        position = request.get("position")
        self.start_text = position if isinstance(position, str) else None
        self.state, self.seen, self.known = None, [], False
        if self.player.new_game is not None:
            self.player.new_game(self.game, int(request["seat"]))
        return {"type": "ready", "name": self.player.name}

    def position(self, game: Game[Any, Any], request: dict[str, Any]) -> Any:
        """The request's position: the kept one (at first the game's start position) advanced
        by the moves this request adds, or else (a list that does not continue the last one, a
        move that does not parse, no start position) the ``position`` text parsed. The arena's
        requests always satisfy ``position == start + moves``, and the referee validated every
        move in them."""
        moves = request.get("moves")
        if type(moves) is list:
            seen = self.seen
            k = len(seen)
            if not self.known and self.start_text is not None and k == 0:
                try:
                    self.state, self.known = game.parse_position(self.start_text), True
                except Exception:
                    self.start_text = None
            if self.known and len(moves) >= k and moves[:k] == seen:
                state = self.state
                try:
                    for text in moves[k:]:
                        state = game.apply(state, game.parse_move(str(text)))
                except Exception:
                    pass
                else:
                    self.state, self.seen = state, moves
                    return state
        state = game.parse_position(str(request["position"]))
        if type(moves) is list:
            self.state, self.seen, self.known = state, moves, True
        return state

    def move(self, request: dict[str, Any]) -> bytes:
        arrived = time.monotonic()
        game, player = self.game, self.player
        assert game is not None and player is not None, "move before hello"
        clock = request.get("clock") or {}
        deadline = clock.get("deadline")
        budget = TimeBudget(
            move_time=clock.get("move_time"),
            remaining=clock.get("remaining"),
            increment=float(clock.get("increment") or 0.0),
            deadline=None if deadline is None else arrived + float(deadline),
        )
        state = self.position(game, request)
        text, info = answer(game, state, player.choose(game, state, budget))
        return protocol.move_answer(request.get("id"), text, info)

    def run(self) -> None:
        while True:
            request = self.channel.receive()
            if request is None or request["type"] == "quit":
                return
            phase = "move" if request["type"] == "move" else "start"
            try:
                if phase == "move":
                    line = self.move(request)
                else:
                    line = protocol.encode(self.start_game(request))
            except UnwritableMove as exc:  # no move: the referee quotes the bot's value
                line = protocol.encode({"type": "error", "phase": "answer", "message": str(exc)})
            except Exception as exc:  # the bot failed: report it, the arena decides
                line = protocol.encode(fail_message(exc, phase))
            self.channel.write(line)
