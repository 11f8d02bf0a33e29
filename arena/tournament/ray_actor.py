"""The node's side of ``--executor ray`` (``ray_executor.py`` is the runner's): ``MatchActor``,
a Ray actor that plays matches with a BotPool of its own, as a local job process does.

It is sent the run's Plan once (``start``: it checks that the field's programs exist on its
node, starts its pool and says which node it is on and what sandbox level its bots run under),
then batches of matches (``play``), and answers with the lines a local job would write for
them, one a match, as bytes: data, decoded and checked by the runner like a job's.
"""

from __future__ import annotations

import contextlib
import socket
from typing import TYPE_CHECKING, Any

from bot_arena.arena.tournament.job import Job, MessageError, Plan, decode, encode, play

if TYPE_CHECKING:
    from bot_arena.arena.match.pool import BotPool


class MatchActor:
    """A Ray actor that plays matches with a BotPool of its own (a local job's work)."""

    def __init__(self) -> None:
        """Runs as soon as Ray has placed the actor, while the driver reads the schedule:
        the imports and the probe of this node's sandbox layers (cached for the process) that
        ``start`` would otherwise wait for."""
        from bot_arena.arena.match import pool  # noqa: F401  (imported now, used by start)
        from bot_arena.arena.transport.sandbox import support

        self.pool: BotPool | None = None
        self.plan: Plan | None = None
        self.game: Any = None
        with contextlib.suppress(Exception):  # ``start`` probes again and reports a failure
            support.probe()

    def start(self, line: bytes) -> bytes:
        """Take the run's Plan, check that the field's programs exist here and start the pool;
        answers ``{"node", "host", "sandbox"}`` or ``{"error"}`` as a line of JSON."""
        import ray

        from bot_arena import games
        from bot_arena.arena.match.pool import BotPool

        host = socket.gethostname()
        node = ray.get_runtime_context().get_node_id()
        where = f"node {host} ({ray.util.get_node_ip_address()}, {node[:8]})"
        try:
            message = decode(line)
            plan = Plan.from_dict(message.get("plan") if isinstance(message, dict) else None)
            missing = _missing_program(plan)
            if missing is not None:
                return encode({"error": f"{where}: {missing}"})
            self.plan, self.game = plan, games.get(plan.game, **plan.params)
            self.pool = BotPool(plan.limits, forkserver=True, sandbox=plan.sandbox)
            self.pool.prestart([plan.refs[i] for i in plan.playing])
        except Exception as exc:
            return encode({"error": f"{where}: {type(exc).__name__}: {exc}"})
        return encode({"node": node, "host": where, "sandbox": self.pool.sandbox_level})

    def play(self, line: bytes) -> bytes:
        """A batch of matches (``{"jobs": [...]}``), played in order; the lines a local job
        would write for them (``job.serve``), one a match."""
        from bot_arena.arena.match.pool import ServerDied

        assert self.pool is not None and self.plan is not None
        try:
            message = decode(line)
            batch = message.get("jobs") if isinstance(message, dict) else None
            if not isinstance(batch, list):
                raise MessageError("a batch is not a list of jobs")
            jobs = [Job.from_dict(j) for j in batch]
        except MessageError as exc:
            return encode(["error", -1, f"jobs the actor cannot read: {exc}"])
        out = []
        for job in jobs:
            try:
                record = play(self.pool, self.game, self.plan, job)
                out.append(encode(["ok", job.match_id, record.to_dict()]))
            except ServerDied as exc:
                out.append(encode(["incident", job.match_id, str(exc)]))
            except Exception as exc:
                out.append(encode(["error", job.match_id, f"{type(exc).__name__}: {exc}"]))
        return b"".join(out)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None


def _missing_program(plan: Plan) -> str | None:
    """Why a program of the field cannot run on this machine (None: they all can)."""
    from bot_arena.arena.match.botref import PROGRAMS
    from bot_arena.arena.match.engines import engine_command
    from bot_arena.arena.match.versions import check_command

    for i in plan.playing:
        ref = plan.refs[i]
        if ref.kind in PROGRAMS:
            try:
                check_command(engine_command(ref))
            except ValueError as exc:
                return f"{ref.name}: {exc}"
    return None
