"""Matches between bots in their own processes: ``BotPool`` (reusing processes across the games
of a series) and ``play_match`` (one match, one pool).

A process is reused only when it is safe: it finished its last game without a fault and is still
alive; anything else is killed (its whole process group) and the next game starts a fresh one.
"""

from __future__ import annotations

import contextlib
import os
import random
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from bot_arena.arena.match import faults, versions
from bot_arena.arena.match.adjudication import Adjudication
from bot_arena.arena.match.botref import (
    BUILTIN,
    HUMAN,
    PROGRAMS,
    UCI,
    XBOARD,
    BotRef,
    BotSpecError,
    file_target,
)
from bot_arena.arena.match.confinement import Confiner
from bot_arena.arena.match.engine import EngineSeat
from bot_arena.arena.match.engines import engine_command
from bot_arena.arena.match.human import HumanSeat
from bot_arena.arena.match.record import Fault, MatchRecord, MoveRecord
from bot_arena.arena.match.referee import play_game
from bot_arena.arena.match.seat import ProcessSeat, Seat
from bot_arena.arena.match.timecontrol import TimeControl, per_seat
from bot_arena.arena.match.uci import UciSeat
from bot_arena.arena.match.xboard import XboardSeat
from bot_arena.arena.transport import pauses, protocol
from bot_arena.arena.transport.forkserver_client import (
    ForkServer,
    ForkServerError,
    start_forkserver,
)
from bot_arena.arena.transport.limits import ResourceLimits
from bot_arena.arena.transport.process import BotProcess, sweep_sessions
from bot_arena.arena.transport.sandbox import support
from bot_arena.arena.transport.sandbox.kernel import set_dumpable
from bot_arena.arena.transport.sandbox.mode import SandboxSettings
from bot_arena.games.base import Game

__all__ = ["BotPool", "ResourceLimits", "TimeControl", "play_match", "seat_seed"]


class ServerDied(RuntimeError):
    """The pool's fork server died during a game (``BotPool.play``)."""


def seat_seed(seed: int, seat: int) -> int:
    """The seed a seat's bot gets in a match seeded ``seed`` (stable across runs)."""
    return random.Random(seed * 1_000_003 + seat).randrange(2**31)


class BotPool:
    """Worker processes kept between the games of a series; a context manager."""

    def __init__(
        self,
        limits: ResourceLimits = ResourceLimits(),  # noqa: B008
        *,
        terminal: tuple[TextIO, TextIO] | None = None,
        forkserver: bool | ForkServer = True,
        sandbox: SandboxSettings = SandboxSettings(),  # noqa: B008
    ) -> None:
        """``terminal`` is (input, output) for ``human`` seats; default stdin and stderr.
        ``forkserver``: start Python workers as forks of one pre-loaded process (see
        ``arena.worker.forkserver_server``) rather than as fresh interpreters: True to start one on
        first use (closed with the pool), or a running one to use (not closed here).
        ``sandbox``: how bots are confined; with ``Mode.ON`` on a machine that cannot confine
        them fully, SandboxUnavailable (before anything starts). ``sandbox_level`` says what
        the pool's bots run under, ``sandbox_missing`` what the machine lacks."""
        self.sandbox = sandbox
        self.sandbox_level, self.sandbox_missing = support.level_for(sandbox.mode)
        self.confiner = Confiner(sandbox, limits, self.sandbox_level)
        pauses.watch()  # a stop of the referee is not charged to the bot that was thinking
        if self.confiner.active:  # the referee's memory and descriptors: closed to /proc
            with contextlib.suppress(OSError):
                set_dumpable(False)
        self.limits = limits
        self.terminal = terminal
        self.idle: dict[BotRef, list[Seat]] = {}
        self.started_pids: list[int] = []
        self.last_pids: list[int | None] = []  # pid per seat of the last match (None: human)
        self._sources: Path | None = None
        self._replaced: list[Seat] = []  # killed outside a match's seats (reuse failed)
        self.use_forkserver = forkserver is not False
        self._server = forkserver if isinstance(forkserver, ForkServer) else None
        self._own_server = self._server is None

    def __enter__(self) -> BotPool:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- processes -----------------------------------------------------------------------------
    def _source_file(self, ref: BotRef, path: str) -> str:
        """A file holding exactly the bot that was resolved: the original while the bot is
        unchanged on disk (its file and the modules beside it it imports: ``versions``, so
        ``__file__`` and files beside it work), else a private copy of its file and of the
        files stored with it (``ref.files``) in a folder of their own."""
        try:
            file = Path(path)
            if versions.python_file(file, file.read_text(encoding="utf-8"))[0] == ref.sha256:
                return path
        except (OSError, UnicodeDecodeError, BotSpecError):
            pass  # changed or refused by the scan since (a link out added): the stored copy
        if self._sources is None:
            self._sources = Path(tempfile.mkdtemp(prefix="arena-bots-"))
        folder = self._sources / ref.sha256[:16]
        main = folder / (Path(path).name or "bot.py")
        if not main.exists():
            for relative, text in ref.files:
                (folder / relative).parent.mkdir(parents=True, exist_ok=True)
                (folder / relative).write_text(text, encoding="utf-8")
            folder.mkdir(exist_ok=True)
            main.write_text(ref.source or "", encoding="utf-8")
        return str(main)

    def argv(self, ref: BotRef, sandbox: Sequence[str] = (), file: str | None = None) -> list[str]:
        """The command line that starts a worker for ``ref`` under this pool's limits (and,
        with ``sandbox`` = ``["--sandbox", PLAN]``, confined). ``file``: a file bot's file as
        ``_bot_file`` gave it (found here when not given)."""
        limits = [*sandbox, *self.limits.argv()]
        if ref.kind in PROGRAMS:
            program = shlex.split(engine_command(ref))
            if not sandbox and os.path.exists("/bin/sh"):
                return self.limits.shell_prefix() + program
            # confined and limited by the launcher, then exec'd
            launch = [sys.executable, "-P", "-m", "bot_arena.arena.worker.launch", *limits, "--"]
            return launch + program
        # -P: the arena's own packages must win over same-named files in the user's folder
        # (a games.py beside a bot must not break every worker); ``pkg.mod:attr`` bots still
        # import from that folder, which the worker appends to the end of sys.path.
        worker = [sys.executable, "-P", "-m", "bot_arena.arena.worker", *limits]
        if ref.kind == BUILTIN:
            return [*worker, "--builtin", ref.target]
        parsed = file_target(ref.target)
        if parsed is None:
            return [*worker, "--import", ref.target, "--sys-path", os.getcwd()]
        path, attr = parsed
        file = file or (self._source_file(ref, path) if ref.source is not None else path)
        named = ["--attr", attr] if attr else []
        return [*worker, "--file", file, *named, "--sys-path", versions.bot_folder(ref, file, path)]

    def _bot_file(self, ref: BotRef) -> str | None:
        """The file a file bot is loaded from (None for other bots)."""
        parsed = file_target(ref.target) if ref.kind not in (BUILTIN, *PROGRAMS, HUMAN) else None
        if parsed is None:
            return None
        return self._source_file(ref, parsed[0]) if ref.source is not None else parsed[0]

    def _forkserver(self) -> ForkServer | None:
        """The pool's fork server, started on first use; None where there is none (no pidfd:
        not Linux) or after it failed (the pool then starts workers with ``exec``)."""
        if self._server is None and self.use_forkserver:
            self._server = start_forkserver(env=self.confiner.server_env())
            self.use_forkserver = self._server is not None
            self._restock()
        return self._server

    def _restock(self) -> None:
        """With confined bots: have the fork server prepare a spare for the next process, so
        that the costly steps of confinement (the cgroup move, the namespaces, the mounts) are
        taken before the bot is asked for and not while its start-up is timed."""
        if self._server is None or not self.confiner.active:
            return
        base = self.confiner.reserve()
        if base is not None:
            with contextlib.suppress(ForkServerError):  # next time: a fresh fork
                self._server.stock_spare(base.to_json())

    def _new_process(self, ref: BotRef) -> BotProcess:
        if not self.confiner.active:
            return self._start_process(self.argv(ref), None, ref.kind not in PROGRAMS)
        file = self._bot_file(ref)  # read and hashed once per process
        plan, cleanup, spare = self.confiner.plan(ref, file)
        try:
            argv = self.argv(ref, ["--sandbox", plan.to_json()], file)
            process = self._start_process(argv, plan.env, True, spare)
        except BaseException:
            cleanup()
            raise
        process.cleanups.append(cleanup)
        self._restock()
        return process

    def _start_process(
        self, argv: list[str], env: dict[str, str] | None, fork: bool, spare: str | None = None
    ) -> BotProcess:
        """Fork ``argv`` from the pool's server when ``fork`` and there is one (from its spare
        ``spare`` if it has that one), else exec it."""
        server = self._forkserver() if fork else None
        if server is not None:
            try:
                return BotProcess(argv, env, forkserver=server, spare=spare)
            except ForkServerError:  # gone (killed?): start workers the plain way from now on
                if self._own_server:
                    server.close()
                self._server = None
                self.use_forkserver = False
        return BotProcess(argv, env)

    def _spawn(self, ref: BotRef) -> ProcessSeat | Fault:
        try:
            process = self._new_process(ref)
        except (OSError, ValueError) as exc:
            return faults.stall(f"cannot start the bot: {exc}", "spawn")
        self.started_pids.append(process.pid)
        if ref.kind == UCI:
            return UciSeat(ref, process)
        if ref.kind == XBOARD:
            return XboardSeat(ref, process)
        return ProcessSeat(ref, process)

    def prestart(self, refs: Sequence[BotRef]) -> None:
        """Start one idle process for each bot of ``refs`` that has none, all at once, so their
        start-ups overlap instead of stalling the first game each bot plays (a tournament knows
        its field in advance). A chess engine is greeted at once (UCI's ``uci``, xboard's
        ``xboard``/``protover 2``): it loads and answers while the run gets ready, and its
        first game's start reads that answer; the rest of the handshake, its checks and its
        limit, come with that start. A process that failed to start is replaced then, like any
        dead idle one."""
        self.confiner.know(refs)
        for ref in dict.fromkeys(refs):
            if ref.kind != HUMAN and not self.idle.get(ref):
                seat = self._spawn(ref)
                if not isinstance(seat, Fault):
                    if isinstance(seat, EngineSeat):
                        seat.greet()
                    self.idle.setdefault(ref, []).append(seat)

    def hear_ahead(self) -> None:
        """Take the first start of each idle UCI engine greeted ahead as far as it goes
        without waiting (``UciSeat.hear_ahead``): a run calls this between the steps that
        precede its first game, so the engines set their options meanwhile. Never waits."""
        for group in self.idle.values():
            for seat in group:
                if isinstance(seat, UciSeat):
                    seat.hear_ahead()

    def features(self, ref: BotRef, game: Game[Any, Any]) -> dict[str, str] | Fault:
        """The features an ``xboard:`` bot announces, its process started and handshaken as
        for a game from the start (then kept idle for the pool's next game): the checks a run
        makes before it plays (``api.checks.check_setboard``). A fault when it fails to start."""
        seat = self._acquire(ref)
        if isinstance(seat, Fault):
            return seat
        if not isinstance(seat, XboardSeat):
            seat.kill()
            raise ValueError(f"{ref.name} is not an xboard engine")
        hello = {"game": game.name, "params": dict(game.params), "seat": 0, "players": 2}
        seats: list[Seat | None] = [seat]
        found: list[Fault | None] = [None]
        position = game.format_position(game.initial_state())
        self._start(game, seats, found, [{**hello, "seed": 0, "position": position}])
        if found[0] is not None:
            return found[0]
        self.idle.setdefault(ref, []).append(seat)
        return dict(seat.features)

    def _acquire(self, ref: BotRef) -> Seat | Fault:
        if ref.kind == HUMAN:
            return HumanSeat(ref, *(self.terminal or (None, None)))
        idle = self.idle.get(ref)
        while idle:
            seat = idle.pop()
            if seat.alive():
                return seat
            seat.kill()
            self._replaced.append(seat)
        return self._spawn(ref)

    def _start(
        self,
        game: Game[Any, Any],
        seats: list[Seat | None],
        faults: list[Fault | None],
        hellos: list[dict[str, Any]],
    ) -> None:
        """Handshake every seat in parallel under one start-up deadline; a reused process that
        fails its ``new_game`` is replaced by a fresh one (not the bot's fault)."""
        pending = {i: s for i, s in enumerate(seats) if s is not None}
        for attempt in range(2):
            for i, seat in pending.items():
                seat.start(protocol.hello(**hellos[i], first=seat.games == 0))
            deadline = time.monotonic() + self.limits.startup_s
            retry: dict[int, Seat] = {}
            # every seat's middle first (a UCI engine's options), then the last answers
            middle = {i: seat.advance_start(deadline, game) for i, seat in pending.items()}
            for i, seat in pending.items():
                reused = seat.games > 0
                fault = middle[i] or seat.finish_start(deadline, game)
                if fault is not None and reused and attempt == 0:
                    self._replaced.append(seat)
                    fresh = self._spawn(seat.ref)
                    if isinstance(fresh, Fault):
                        faults[i] = fresh
                        seats[i] = None
                    else:
                        seats[i] = retry[i] = fresh
                elif fault is not None:
                    faults[i] = fault
            pending = retry
            if not pending:
                return

    # --- matches -------------------------------------------------------------------------------
    def play(
        self,
        game: Game[Any, Any],
        bots: Sequence[BotRef],
        *,
        time_control: TimeControl | Sequence[TimeControl] = TimeControl(),  # noqa: B008
        start_position: str | None = None,
        opening: Sequence[str] = (),
        seed: int = 0,
        on_move: Callable[[MoveRecord], None] | None = None,
        barred: Mapping[int, Fault] | None = None,
        adjudication: Adjudication | None = None,
    ) -> MatchRecord:
        """One game between ``bots`` (one per seat, in seat order). ``barred``: seats that do
        not play, each charged with its fault before the first move (a bot found to attack the
        arena itself, ``tournament.incidents``); the others play on as after any fault.

        ServerDied when the pool's fork server died during the game and a seat was charged
        with a fault: every bot it had forked died with it, so whatever fault that was (a
        crash, a failed handshake) is nobody's proven fault (a bot may have killed the server;
        the runner finds out which, ``tournament.incidents``)."""
        n = game.num_players
        if len(bots) != n:
            raise ValueError(f"{game.name} takes {n} bots, got {len(bots)}")
        tcs = per_seat(time_control, n)
        start = (
            game.initial_state() if start_position is None else game.parse_position(start_position)
        )
        started = time.time()
        self.confiner.know(bots)
        self.confiner.game_files = game.input_files()
        faults: list[Fault | None] = [None] * n
        seats: list[Seat | None] = []
        for i, ref in enumerate(bots):
            if barred and i in barred:
                faults[i] = barred[i]
                seats.append(None)
                continue
            got = self._acquire(ref)
            if isinstance(got, Fault):
                faults[i] = got
                seats.append(None)
            else:
                seats.append(got)
        position = game.format_position(start)
        hellos = [
            {
                "game": game.name,
                "params": dict(game.params),
                "seat": i,
                "players": n,
                "seed": seat_seed(seed, i),
                "position": position,
                "opening": tuple(opening),
            }
            for i in range(n)
        ]
        record: MatchRecord | None = None
        server = self._server  # the one the seats came from (started by the first spawn)
        try:
            self._start(game, seats, faults, hellos)
            self.last_pids = [None if s is None else s.pid for s in seats]
            record = play_game(
                game,
                bots,
                seats,
                tcs,
                start,
                seed=seed,
                faults=faults,
                on_move=on_move,
                started=started,
                adjudication=adjudication,
            )
        finally:
            killed = set()
            for i, seat in enumerate(seats):
                if seat is None:
                    continue
                if record is not None and faults[i] is None and seat.alive():
                    self.idle.setdefault(seat.ref, []).append(seat)
                else:
                    seat.kill()
                    if seat.pid is not None:
                        killed.add(seat.pid)
            # stragglers that left the group but not the session; right away, so that a pid
            # reused much later is never mistaken for one of them
            killed.update(s.pid for s in self._replaced if s.pid is not None)
            self._replaced.clear()
            sweep_sessions(killed)
        assert record is not None
        if server is not None and server.broken:
            self._lost_server(server)
            if any(f is not None for i, f in enumerate(faults) if not (barred and i in barred)):
                raise ServerDied(
                    "the fork server died during the game, and every bot process it had forked"
                    " with it: no result"
                )
        return record

    def _lost_server(self, server: ForkServer) -> None:
        """Forget a fork server that died: the pool starts one of its own on its next spawn
        (not exec'd bots: a bot's parent would then be the referee itself)."""
        if self._server is server:
            if self._own_server:
                server.close()
            self._server = None
            self._own_server = self.use_forkserver = True

    def close(self) -> None:
        """Quit every idle worker (bounded wait), then kill each one's group and session."""
        seats = [s for group in self.idle.values() for s in group]
        self.idle.clear()
        end = time.monotonic() + 0.5
        for seat in seats:
            seat.ask_quit(end)
        for seat in seats:
            seat.finish_quit(end)
        sweep_sessions({s.pid for s in seats if s.pid is not None})
        if self._server is not None and self._own_server:
            self._server.release()  # kept for this thread's next pool, its spares killed
        self._server = None
        self.confiner.close()
        if self._sources is not None:
            shutil.rmtree(self._sources, ignore_errors=True)
            self._sources = None


def play_match(
    game: Game[Any, Any],
    bots: Sequence[BotRef],
    *,
    time_control: TimeControl | Sequence[TimeControl] = TimeControl(),  # noqa: B008
    start_position: str | None = None,
    seed: int = 0,
    limits: ResourceLimits = ResourceLimits(),  # noqa: B008
    on_move: Callable[[MoveRecord], None] | None = None,
) -> MatchRecord:
    """One match with its own pool: every process it started is gone when it returns."""
    with BotPool(limits) as pool:
        return pool.play(
            game,
            bots,
            time_control=time_control,
            start_position=start_position,
            seed=seed,
            on_move=on_move,
        )
