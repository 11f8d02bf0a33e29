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

from arena import protocol
from arena.worker.loader import Factory, Player, answer
from bots.base import TimeBudget
from games.base import Game


class Channel:
    """The private protocol pipes of the worker."""

    def __init__(self, fd_in: int, fd_out: int) -> None:
        self.reader: BinaryIO = os.fdopen(fd_in, "rb", buffering=1 << 16)
        self.fd_out = fd_out

    def send(self, message: dict[str, Any]) -> None:
        data = protocol.encode(message)
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
    """Keeps the current game and the player; turns requests into answers."""

    def __init__(self, channel: Channel, factory: Factory) -> None:
        self.channel = channel
        self.factory = factory
        self.game: Game[Any, Any] | None = None
        self.game_key: tuple[str, str] = ("", "")
        self.player: Player | None = None

    def start_game(self, request: dict[str, Any]) -> dict[str, Any]:
        import games

        key = (str(request["game"]), repr(request.get("params")))
        if self.game is None or key != self.game_key:
            self.game = games.get(key[0], **dict(request.get("params") or {}))
            self.game_key = key
        self.player = self.factory(int(request.get("seed") or 0))
        if self.player.new_game is not None:
            self.player.new_game(self.game, int(request["seat"]))
        return {"type": "ready", "name": self.player.name}

    def move(self, request: dict[str, Any]) -> dict[str, Any]:
        arrived = time.monotonic()
        assert self.game is not None and self.player is not None, "move before hello"
        clock = request.get("clock") or {}
        deadline = clock.get("deadline")
        budget = TimeBudget(
            move_time=clock.get("move_time"),
            remaining=clock.get("remaining"),
            increment=float(clock.get("increment") or 0.0),
            deadline=None if deadline is None else arrived + float(deadline),
        )
        state = self.game.parse_position(str(request["position"]))
        text, info = answer(self.game, state, self.player.choose(self.game, state, budget))
        out: dict[str, Any] = {"type": "move", "id": request.get("id"), "move": text}
        if info is not None:
            out["info"] = info
        return out

    def run(self) -> None:
        while True:
            request = self.channel.receive()
            if request is None or request["type"] == "quit":
                return
            phase = "move" if request["type"] == "move" else "start"
            try:
                reply = self.move(request) if phase == "move" else self.start_game(request)
            except Exception as exc:  # the bot failed: report it, the arena decides
                reply = fail_message(exc, phase)
            self.channel.send(reply)
