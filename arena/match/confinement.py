"""A pool's side of the sandbox: for each bot process it starts, the confinement plan (what
the bot may read, its private working folder, its cgroup unit, its clean environment) and the
cleanup once the process is dead. The confining itself happens in the bot's process
(``transport.sandbox.confine``)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from bot_arena.arena.match import versions
from bot_arena.arena.match.botref import BUILTIN, HUMAN, PROGRAMS, BotRef, file_target
from bot_arena.arena.match.engines import engine_command
from bot_arena.arena.transport.limits import ResourceLimits
from bot_arena.arena.transport.sandbox import cgroups, confine, paths, support
from bot_arena.arena.transport.sandbox.mode import UNCONFINED, SandboxSettings
from bot_arena.arena.transport.sandbox.scan import ScanError, limits_env

WORK_PREFIX = "arena-work-"  # + the pool's pid: a sweep knows whose a leftover folder is
PROCESS_CAP = 64  # processes (and threads) of one bot unit together


def _file_of(ref: BotRef) -> str:
    """The real path of a file bot's file ('' for other bots)."""
    parsed = file_target(ref.target) if ref.kind not in (BUILTIN, *PROGRAMS, HUMAN) else None
    return os.path.realpath(parsed[0]) if parsed else ""


def pids_cap() -> int | None:
    """The unit's process cap as a cgroup's: only for an arena running as root (anyone else's
    bots are capped by RLIMIT_NPROC in their user namespace, from which real root is exempt)."""
    return PROCESS_CAP if os.getuid() == 0 else None


def sweep_stale_work() -> None:
    """Remove the working folders of arena processes that are gone (killed before they
    cleaned up; named ``arena-work-<pid>-...``)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{WORK_PREFIX}*-*"):
        if cgroups.owner_gone(folder.name[len(WORK_PREFIX) :]):
            shutil.rmtree(folder, ignore_errors=True)


def server_env(level: str) -> dict[str, str] | None:
    """The environment of an arena process that bots are forked from (a fork server, a
    tournament job): clean when bots run confined (a fork's memory holds a copy of its
    parent's environment), else the arena's own (None); with the scan's limits
    (``scan.limits_env``), which it checks its bots' files by."""
    return None if level == UNCONFINED else {**confine.clean_env(), **limits_env()}


def _cleanup(work: str, unit: cgroups.Unit | None) -> Callable[[], None]:
    """What removes a process's working folder and unit once it is dead (the unit's removal
    kills whatever is left in it)."""

    def cleanup() -> None:
        if unit is not None:
            unit.remove()
        with contextlib.suppress(OSError):
            os.rmdir(work)  # empty: the bot wrote into its own tmpfs mounted on it
        shutil.rmtree(work, ignore_errors=True)  # no namespaces: its files are here

    return cleanup


class Confiner:
    """Plans for one pool's bot processes (inactive when the pool's level is ``off``)."""

    def __init__(self, settings: SandboxSettings, limits: ResourceLimits, level: str) -> None:
        self.level = level
        self.layers = support.probe()[0] if level != UNCONFINED else frozenset()
        self.settings = settings  # its ``--allow-read`` paths (absolute: the CLI's)
        self.limits = limits
        self._runtime: list[str] | None = None
        self.bot_files: set[str] = set()  # the real paths of the file bots the pool knows
        self.game_files: tuple[str, ...] = ()  # what the game being played reads (a tree)
        self._known: set[BotRef] = set()
        self._reserved: tuple[str, cgroups.Unit | None] | None = None  # see ``reserve``
        if self.active:
            sweep_stale_work()
        if confine.CGROUPS in self.layers:
            cgroups.sweep_stale()

    def know(self, refs: Iterable[BotRef]) -> None:
        """Bots this pool plays (its field): no bot may read another's file, even one it names
        in an import (say, in code that never runs)."""
        new = set(refs) - self._known  # once per bot: a pool plays the same ones game after game
        self._known |= new
        self.bot_files.update(f for f in map(_file_of, new) if f)

    @property
    def active(self) -> bool:
        return bool(self.layers)

    def server_env(self) -> dict[str, str] | None:
        """The fork server's environment: clean when bots are confined (a fork's memory holds
        its server's environment), else the arena's own (None)."""
        return server_env(self.level)

    def _room(self) -> tuple[str, cgroups.Unit | None]:
        """A new process's working folder and cgroup unit."""
        work = tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{os.getpid()}-")
        if confine.CGROUPS not in self.layers:
            return work, None
        try:
            return work, cgroups.Unit.create(
                cgroups.unit_name(), self.limits.memory_mb << 20, pids_cap()
            )
        except OSError:
            shutil.rmtree(work, ignore_errors=True)
            raise

    def _base(self, work: str, unit: cgroups.Unit | None) -> confine.Plan:
        """The part of a plan that is the same for every bot (``confine.prepare``'s)."""
        return confine.Plan(
            layers=tuple(layer for layer in confine.LAYERS if layer in self.layers),
            work=work,
            cgroups=tuple(str(p) for p in unit.paths) if unit else (),
            processes=PROCESS_CAP,
        )

    def reserve(self) -> confine.Plan | None:
        """The working folder and unit of the pool's next process, made now, and the plan a
        spare is prepared by (None: one is reserved already). The next ``plan`` uses them."""
        if self._reserved is not None:
            return None
        work, unit = self._room()
        self._reserved = (work, unit)
        return self._base(work, unit)

    def plan(
        self, ref: BotRef, bot_file: str | None
    ) -> tuple[confine.Plan, Callable[[], None], str | None]:
        """The plan for a new process of ``ref`` (``bot_file``: the file a file bot is loaded
        from), the cleanup to run once that process is dead, and the key of the spare that
        may have been prepared for it (``reserve``)."""
        spare: str | None = None
        if self._reserved is not None:
            (work, unit), self._reserved = self._reserved, None
            spare = work
        else:
            work, unit = self._room()
        read, listed = self._bot_paths(ref, bot_file)
        others = self.bot_files - {_file_of(ref)}
        read = [p for p in read if os.path.realpath(p) not in others]  # even when it imports one
        if self._runtime is None:
            self._runtime = paths.runtime_paths()
        plan = dataclasses.replace(
            self._base(work, unit),
            read=(*self._runtime, *read, *self.game_files, *self.settings.readable(ref.name)),
            listed=tuple(listed),
            env=confine.clean_env(work),
        )
        return plan, _cleanup(work, unit), spare

    def close(self) -> None:
        """Give back what ``reserve`` made and no process used (its spare, if any, is killed)."""
        if self._reserved is not None:
            (work, unit), self._reserved = self._reserved, None
            _cleanup(work, unit)()

    @staticmethod
    def _bot_paths(ref: BotRef, bot_file: str | None) -> tuple[list[str], list[str]]:
        """(read, list-only) paths of the bot itself."""
        if ref.kind == BUILTIN:
            return [], []
        if ref.kind in PROGRAMS:
            return paths.command_paths(shlex.split(engine_command(ref))), []
        parsed = file_target(ref.target)
        if parsed is None:  # pkg.mod:attr, from the installed packages or the current folder
            folder = os.getcwd()
            try:
                return paths.package_paths(ref.target.partition(":")[0], folder), [folder]
            except ScanError:  # a link out added since the bot was resolved
                return [], [folder]
        file = bot_file or parsed[0]
        folder = versions.bot_folder(ref, file, parsed[0])
        try:
            return paths.python_closure(file, folder), [folder]
        except ScanError:  # a link out added since the bot was resolved: its file alone
            return [file], [folder]
