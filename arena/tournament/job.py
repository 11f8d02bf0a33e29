"""A job of a parallel tournament: a process that plays the matches its parent sends.

Started as ``python -m bot_arena.arena.tournament.job READ_FD WRITE_FD`` (or forked by the fork
server) with two pipes. The parent sends a Plan (or null: not needed after all), then one Job at
a time (null to stop); the job answers each with ``["ok", match_id, record]``,
``["error", match_id, text]`` or ``["incident", match_id, text]`` (the fork server died under
the game: ``incidents``). Every message is one line of JSON (``encode``): data, never code,
since bots run beside the job and may write into its pipes. The runner decodes what a job sends
with ``decode_reply``, which checks every field and raises MessageError on anything else (the
runner then treats the job as failed). One BotPool serves all the job's matches, so bot
processes are reused between games.

This module imports only what playing needs (no database, no command line), so a job starts in a
fraction of the time a ``multiprocessing`` spawn of the CLI would take. When the parent dies,
the pipe reaches end-of-file and the job closes its bots and exits.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from bot_arena.arena.match.adjudication import Adjudication
from bot_arena.arena.match.botref import BotRef
from bot_arena.arena.match.record import Fault, MatchRecord
from bot_arena.arena.match.timecontrol import TimeControl
from bot_arena.arena.transport.limits import ResourceLimits
from bot_arena.arena.transport.sandbox.mode import SandboxSettings
from bot_arena.arena.transport.strict_json import STRICT_DECODER, STRICT_ENCODER

if TYPE_CHECKING:
    from bot_arena.arena.match.pool import BotPool
    from bot_arena.arena.transport.forkserver_client import ForkServer
    from bot_arena.games.base import Game

MAX_MESSAGE = 256 << 20  # longest message line accepted (bytes): a job that sends more has failed


class MessageError(ValueError):
    """A message that is not one of the job protocol's."""


def _ints(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise MessageError(f"{what} is not a list of integers")
    return tuple(value)


@dataclass(frozen=True)
class Plan:
    """Everything a job needs to play a tournament's matches."""

    game: str
    params: dict[str, Any]
    refs: tuple[BotRef, ...]
    time_control: TimeControl
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    playing: tuple[int, ...] = ()  # field positions of the bots the pending matches need
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)  # how bots are confined
    # per field position when the bots have different time controls (time odds); a position
    # beyond it (a trial's stand-in) plays under ``time_control``
    time_controls: tuple[TimeControl, ...] = ()
    adjudication: Adjudication = field(default_factory=Adjudication)  # the tournament's rules

    def time_control_of(self, position: int) -> TimeControl:
        """The time control of the bot at field ``position``."""
        if position < len(self.time_controls):
            return self.time_controls[position]
        return self.time_control

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "params": self.params,
            "refs": [r.to_dict() for r in self.refs],
            "time_control": self.time_control.to_dict(),
            "limits": self.limits.to_dict(),
            "playing": list(self.playing),
            "sandbox": self.sandbox.to_dict(),
            "time_controls": [tc.to_dict() for tc in self.time_controls],
            "adjudication": self.adjudication.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Plan:
        if not isinstance(data, dict) or not isinstance(data.get("game"), str):
            raise MessageError("plan is not an object with a game")
        params, refs, tc = data.get("params"), data.get("refs"), data.get("time_control")
        if not isinstance(params, dict) or not isinstance(refs, list) or not isinstance(tc, dict):
            raise MessageError("plan: params, refs or time control of the wrong type")
        try:
            sandbox = SandboxSettings.from_dict(data.get("sandbox"))
            tcs = data.get("time_controls", [])
            if not isinstance(tcs, list) or not all(isinstance(t, dict) for t in tcs):
                raise ValueError("time controls are not a list of objects")
            time_controls = tuple(TimeControl.from_dict(t) for t in tcs)
            adjudication = Adjudication.from_dict(data.get("adjudication"))
        except (ValueError, TypeError, KeyError) as exc:
            raise MessageError(f"plan: {exc}") from None
        return cls(
            data["game"],
            params,
            tuple(BotRef.from_dict(r) for r in refs),
            TimeControl.from_dict(tc),
            ResourceLimits.from_dict(data.get("limits")),  # type: ignore[arg-type]
            _ints(data.get("playing"), "plan: playing"),
            sandbox,
            time_controls,
            adjudication,
        )


@dataclass(frozen=True)
class Job:
    match_id: int
    seats: tuple[int, ...]  # field positions in seat order
    start_position: str | None
    seed: int
    recovered: bool = False  # left 'running' by an interrupted run: replace what it left
    # seats that do not play, charged with these faults (``incidents``: a bot that attacked
    # the arena while this match was played)
    barred: tuple[tuple[int, Fault], ...] = ()
    # the opening's moves from the game's start (an xboard engine without setboard is told
    # them instead of the start position: ``XboardSeat``)
    opening: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "match_id": self.match_id,
            "seats": list(self.seats),
            "start_position": self.start_position,
            "seed": self.seed,
            "recovered": self.recovered,
            "barred": [[seat, fault.to_dict()] for seat, fault in self.barred],
            "opening": list(self.opening),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Job:
        if not isinstance(data, dict):
            raise MessageError("job is not an object")
        match_id, seed = _ints([data.get("match_id"), data.get("seed")], "job: match id, seed")
        start, recovered = data.get("start_position"), data.get("recovered")
        if not (start is None or isinstance(start, str)) or not isinstance(recovered, bool):
            raise MessageError("job: start position or recovered of the wrong type")
        barred = data.get("barred", [])
        if not isinstance(barred, list) or not all(
            isinstance(b, list) and len(b) == 2 and isinstance(b[0], int) for b in barred
        ):
            raise MessageError("job: barred seats of the wrong type")
        try:
            faults = tuple((int(seat), Fault.from_dict(fault)) for seat, fault in barred)
        except (ValueError, TypeError) as exc:
            raise MessageError(f"job: a barred seat's fault: {str(exc)[:80]}") from None
        seats = _ints(data.get("seats"), "job: seats")
        opening = data.get("opening", [])
        if not isinstance(opening, list) or not all(isinstance(m, str) for m in opening):
            raise MessageError("job: opening of the wrong type")
        return cls(match_id, seats, start, seed, recovered, faults, tuple(opening))


Reply = tuple[Literal["ok"], int, MatchRecord] | tuple[Literal["error", "incident"], int, str]


# Built once (json.dumps/json.loads with options build a coder on every call): both refuse
# NaN, the infinities and numbers beyond a double (1e400 reads as an infinity in Python).
_ENCODER = STRICT_ENCODER
_DECODER = STRICT_DECODER


def encode(message: Any) -> bytes:
    """One message as a line of JSON (JSON escapes every newline inside strings)."""
    return _ENCODER.encode(message).encode() + b"\n"


def decode(line: bytes) -> Any:
    """The JSON value of one line (MessageError for anything else, NaN, infinities and numbers
    beyond a double's range too)."""
    try:
        return _DECODER.decode(line.decode())
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError too
        raise MessageError(f"not a JSON line: {type(exc).__name__}") from None


def decode_reply(line: bytes) -> Reply:
    """A job's answer, every field checked (MessageError otherwise)."""
    message = decode(line)
    if not isinstance(message, list) or len(message) != 3:
        raise MessageError("a reply is a list of three items")
    kind, match_id, payload = message
    if not isinstance(match_id, int) or isinstance(match_id, bool):
        raise MessageError("a reply's match id is not an integer")
    if kind in ("error", "incident") and isinstance(payload, str):
        return kind, match_id, payload
    if kind == "ok":
        try:
            return "ok", match_id, MatchRecord.from_dict(payload)
        # OverflowError: an integer too large for a float (a job's time of 10**400 seconds)
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            raise MessageError(f"a reply's record is malformed: {str(exc)[:80]}") from None
    raise MessageError("a reply is neither 'ok' with a record nor 'error' with a text")


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to a blocking descriptor (OSError when the reader is gone)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def play(pool: BotPool, game: Game[Any, Any], plan: Plan, job: Job) -> MatchRecord:
    """Play one job's match with ``pool`` (a job process and the runner's own loop alike)."""
    return pool.play(
        game,
        [plan.refs[i] for i in job.seats],
        time_control=[plan.time_control_of(i) for i in job.seats],
        start_position=job.start_position,
        opening=job.opening,
        seed=job.seed,
        barred=dict(job.barred),
        adjudication=plan.adjudication,
    )


def serve(read_fd: int, write_fd: int, forkserver: ForkServer | None = None) -> None:
    """Play what ``read_fd`` asks for until null or end-of-file; the pool's Python workers start
    through ``forkserver`` when given (else through one of its own). A message that is not the
    protocol's ends the job as end-of-file does (the runner then replays its matches)."""
    from bot_arena import games
    from bot_arena.arena.match.pool import BotPool, ServerDied
    from bot_arena.arena.transport.sandbox import support

    inbox = os.fdopen(read_fd, "rb")

    def receive() -> Any:
        line = inbox.readline(MAX_MESSAGE + 1)
        if not line.endswith(b"\n"):  # end-of-file (maybe mid-line), or too long
            raise EOFError
        return decode(line)

    try:
        message = receive()
        if message is None:  # started ahead and not needed after all
            return
        plan = Plan.from_dict(message.get("plan") if isinstance(message, dict) else None)
    except (EOFError, OSError, ValueError, TypeError):
        return
    support.adopt(message.get("support"))  # the runner's probe of this machine (``start``)
    game = games.get(plan.game, **plan.params)
    pool = BotPool(plan.limits, forkserver=forkserver or True, sandbox=plan.sandbox)
    try:
        pool.prestart([plan.refs[i] for i in plan.playing])
        while True:
            try:
                message = receive()
                if message is None:
                    return
                job = Job.from_dict(message.get("job") if isinstance(message, dict) else None)
            except (EOFError, OSError, ValueError):
                return
            try:
                record = play(pool, game, plan, job)
                line = encode(["ok", job.match_id, record.to_dict()])
            except ServerDied as exc:  # not an error of the arena's: maybe a bot's attack
                line = encode(["incident", job.match_id, str(exc)])
            except Exception as exc:
                where = traceback.format_exc().strip().splitlines()[-1]
                line = encode(["error", job.match_id, f"{type(exc).__name__}: {exc} ({where})"])
            try:
                write_all(write_fd, line)
            except OSError:  # the parent is gone
                return
    finally:
        pool.close()


def _signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # exit through `finally`: bots closed


def run_forked(read_fd: int, write_fd: int, channel: int) -> int:
    """A job forked by the fork server (``arena.worker.forkserver_server``), which also starts its
    bots over ``channel``."""
    from bot_arena.arena.transport.forkserver_client import ForkServer

    _signals()
    serve(read_fd, write_fd, ForkServer(channel=channel))
    return 0


def main(argv: list[str]) -> None:
    _signals()
    read_fd, write_fd = int(argv[0]), int(argv[1])
    serve(read_fd, write_fd)
    # Leave without the interpreter's teardown (tens of milliseconds the parent would wait for):
    # the bots are closed and nothing is buffered. The pipe closes last, as the parent's sign
    # that this process is gone.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
