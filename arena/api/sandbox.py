"""The sandbox options of every command that starts bots (``--sandbox``, ``--allow-read``) and
of the Python API (``sandbox=``, ``allow_read=``), checked before anything is stored or started;
and the one rule for confinement on a Ray cluster."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace

from bot_arena.arena.api import checks
from bot_arena.arena.api.errors import ArenaError
from bot_arena.arena.transport.sandbox.mode import CONFINED, Mode, SandboxSettings

RAY = "ray"
EXECUTORS = ("local", RAY)


@dataclass(frozen=True)
class Confinement:
    """What ``--sandbox`` and ``--allow-read`` asked for (``settings``, for every BotPool of the
    command) and what this machine gives: the level bots run under and what it lacks."""

    settings: SandboxSettings
    level: str
    missing: tuple[str, ...]
    per_bot: tuple[str, ...] = ()  # ``--allow-read`` values read once the bots are known

    def for_bots(self, names: Sequence[str]) -> Confinement:
        """The settings once the command's bots are known: each ``--allow-read BOT=PATH`` read
        against their names (a bot's name may hold ``=``, ``/`` or spaces: a ``cmd:`` bot's is
        its command line). A value that starts with no name of theirs followed by ``=``, or
        whose path is not there, raises ArenaError."""
        pairs: list[tuple[str, str]] = []
        for given in self.per_bot:
            bot = max((n for n in names if given.startswith(f"{n}=")), key=len, default=None)
            if bot is None:
                raise ArenaError(
                    f"--allow-read {given}: no such file or folder, nor a bot of this command"
                )
            rest = given[len(bot) + 1 :]
            path = os.path.abspath(os.path.expanduser(rest))
            if not os.path.exists(path):
                raise ArenaError(f"--allow-read {given}: no such file or folder: {rest}")
            if (bot, path) not in pairs:
                pairs.append((bot, path))
        settings = replace(self.settings, allow_read_for=tuple(pairs))
        return replace(self, settings=settings, per_bot=())

    def warning(self) -> str | None:
        """The line a command prints once, as its bots are about to start, when ``auto`` runs
        them less than fully confined (None when there is nothing to say)."""
        if self.settings.mode is Mode.AUTO and self.level != CONFINED:
            what = ", ".join(self.missing) or "confinement"
            return f"arena: sandbox {self.level}: missing {what}"
        return None

    def check_executor(self, executor: str, allow_unconfined: bool) -> None:
        """Refuse to play on a Ray cluster with bots not fully confined unless the operator
        accepts it (``--ray-allow-unconfined``). Checked before Ray starts and before anything
        is stored. A bot without its namespaces, Landlock and seccomp runs as the node's user:
        it can read Ray's session folder (/tmp/ray), connect to the control store and the
        node's ports, join the cluster with ``ray.init(address="auto")`` and run code of its
        own on every node, or forge the records its actor sends (docs/security.md, "Bots on a
        Ray cluster")."""
        if executor != RAY or allow_unconfined or self.level == CONFINED:
            return
        raise ArenaError(
            f"--executor ray with bots not fully confined (sandbox {self.level}): they could "
            "join the cluster and run code on its nodes; give --ray-allow-unconfined to accept "
            "that"
        )


def probe_ahead(mode: str | None) -> None:
    """Start finding what this machine can confine (``support.start``) for a command that will
    start bots in ``mode`` (``--sandbox``'s word, or None), before its imports and checks: the
    probe then runs beside them and ``confinement`` reads its answer. Nothing for ``off``,
    which needs no probe, nor for a word that is not a mode (``confinement`` says so)."""
    from bot_arena.arena.transport.sandbox import support

    try:
        chosen = checks.sandbox_mode(mode)
    except ArenaError:
        return
    if chosen is not Mode.OFF:
        support.start()


def confinement(mode: str | None, allow_read: Sequence[str] | None) -> Confinement:
    """The sandbox options checked: a word that is not a mode (given, or in $ARENA_SANDBOX), a
    path that does not exist, or ``on`` on a machine that cannot confine bots fully raises
    ArenaError. Paths are made absolute; ``BOT=PATH`` values wait for the bots (``for_bots``)."""
    chosen = checks.sandbox_mode(mode)
    paths: list[str] = []
    per_bot: list[str] = []
    for given in allow_read or []:
        path = os.path.abspath(os.path.expanduser(given))
        if os.path.exists(path):
            if path not in paths:
                paths.append(path)
        elif "=" in given:
            per_bot.append(given)
        else:
            raise ArenaError(f"--allow-read {given}: no such file or folder")
    level, missing = checks.sandbox_level(chosen)
    return Confinement(SandboxSettings(chosen, tuple(paths)), level, missing, tuple(per_bot))


def check_executor(executor: str, ray_address: str | None) -> None:
    """``--executor``'s word, and ``--ray-address`` only with Ray."""
    if executor not in EXECUTORS:
        raise ArenaError(f"unknown executor {executor!r} (use {', '.join(EXECUTORS)})")
    if executor != RAY and ray_address is not None:
        raise ArenaError("--ray-address is for --executor ray")
