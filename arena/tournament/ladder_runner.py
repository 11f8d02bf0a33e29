"""Playing a ladder (issue 30): the runner's side of ``directors/ladder.py``.

A ladder's field changes while it runs (``arena ladder add`` and ``retire`` from another
process, an entrant suspended for its faults), and a run's job processes know the bots they were
started with. So a ladder is played in *stretches*: each is one ordinary run of the tournament
runner (one writer, group commits, every record replayed before it is stored, kill -9 safe)
over the field as it stood when the stretch began. After each write the ladder's maker
(``LadderMaker``) stores the faults in a row (suspending who reached the limit), reads the
field's revision (``db.ladders``) in the same transaction, and:

- an entrant retired or suspended gets no new game from that write on; and no game of it
  starts once its retirement is stored: a ladder's workers hold only the match they play, and
  before a match leaves the line to be played the field's revision is read (``_gate``), the
  matches made ahead for an entrant that no longer plays then deleted, as an SPRT that has
  decided drops the ones it no longer needs (the games in play when it was stored are played
  and kept);
- an entrant added ends the stretch: nothing more is made, the games in play are played and
  stored, and the next stretch starts with the new field (a new entrant gets games within the
  time its field's games in play take);
- the run's limits (``--until-games``, ``--for``, ``--until-stable``) end it the same way.

Between stretches the matches still to play of entrants that no longer play are deleted (no run
is playing them then), and with fewer than two active entrants the ladder waits, reading the
revision a few times a second, until one is added or the run's time is up.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection
from sqlalchemy.orm import Session, sessionmaker

from bot_arena.arena.match.record import MatchRecord
from bot_arena.arena.tournament.create import (
    TournamentError,
    claim_runner,
    load_tournament,
    this_host,
)
from bot_arena.arena.tournament.directors.base import Director
from bot_arena.arena.tournament.directors.ladder import LadderDirector
from bot_arena.arena.tournament.dynamic import Maker, Making
from bot_arena.arena.tournament.heartbeat import Heartbeat
from bot_arena.arena.tournament.job import Job, Plan
from bot_arena.arena.tournament.progress import Progress
from bot_arena.arena.tournament.run_state import Outcome, RunState
from bot_arena.arena.tournament.runner import Runner
from bot_arena.db import ladders
from bot_arena.db import tournaments as stored
from bot_arena.db.writer import MatchWriter

if TYPE_CHECKING:
    from bot_arena.arena.match.botref import BotRef
    from bot_arena.arena.tournament.ray_executor import RayExecutor
    from bot_arena.arena.transport.forkserver_client import ForkServer
    from bot_arena.arena.transport.sandbox.mode import SandboxSettings

#: How often a waiting ladder reads its field (seconds).
POLL_S = 0.2


@dataclass
class Limits:
    """When a run of the ladder stops: ``games`` stored in all, a ``deadline`` (monotonic), the
    standings ``stable``; none of them: when it is stopped."""

    games: int | None = None
    deadline: float | None = None
    stable: bool = False

    def time_up(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline


@dataclass
class Stretch:
    """One stretch's view of the field: its revision when it began and why it ended."""

    tournament_id: int
    revision: int
    active: list[int]
    size: int
    limits: Limits
    ended: str | None = None  # "field", "time", "stable"


class LadderMaker(Maker):
    """A ladder's maker: besides storing what the director adds, it keeps the field current
    (see the module) in the transaction of each write."""

    def __init__(self, director: LadderDirector, stretch: Stretch, making: Making) -> None:
        super().__init__(director, making)
        self.ladder = director
        self.stretch = stretch
        director.active = list(stretch.active)
        director.cap = stretch.limits.games
        self._outcomes: list[tuple[int, bool]] = []  # (position, faulted), as stored

    def stored(self, job: Job, record: MatchRecord) -> None:
        super().stored(job, record)
        for position, seat in zip(job.seats, record.seats, strict=True):
            self._outcomes.append((position, seat.fault is not None))

    def make(
        self, conn: Connection, writer: MatchWriter, version_ids: Sequence[int], ahead: int
    ) -> list[Job]:
        stretch, director = self.stretch, self.ladder
        self._follow(conn)  # the ladder's lock first, as every change to its field takes it
        outcomes, self._outcomes = self._outcomes, []
        suspended = ladders.note_faults(conn, stretch.tournament_id, outcomes)
        for position in suspended:
            director.notes.append(f"{director.names[position]} suspended: faults in a row")
        if suspended:
            self._follow(conn)
        if stretch.ended is None and stretch.limits.time_up():
            stretch.ended = "time"
        if stretch.ended is None and stretch.limits.stable and director.stable():
            stretch.ended = "stable"
        director.halted = stretch.ended is not None
        return super().make(conn, writer, version_ids, ahead)

    def _follow(self, conn: Connection) -> None:
        """The field as committed now (the ladder's row locked until this write commits, so a
        change made meanwhile waits for it and is seen by the next one)."""
        stretch = self.stretch
        revision = ladders.revision(conn, stretch.tournament_id, lock=True)
        if revision == stretch.revision:
            return
        stretch.revision = revision
        found = ladders.entrants(conn, stretch.tournament_id)
        if len(found) > stretch.size:
            stretch.ended = "field"
        self.ladder.active = [e.position for e in found[: stretch.size] if e.status == "active"]


class LadderRunner(Runner):
    """The tournament runner over one stretch of a ladder. Its workers hold one match at a
    time, and before any match leaves the line to be played the field's revision is read
    (``_gate``): so once a retirement (or a suspension) is stored, the entrant's made matches
    are dropped, not started."""

    def __init__(self, stretch: Stretch, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stretch = stretch
        self._gate_revision = stretch.revision
        self._revisions: ladders.RevisionReader | None = None

    def run(self) -> Outcome:
        """``Runner.run`` with the gate's reader of the revision open meanwhile."""
        reader = ladders.RevisionReader(self.factory.kw["bind"], self.stretch.tournament_id)
        self._revisions = reader
        try:
            return super().run()
        finally:
            self._revisions = None
            reader.close()

    def _state(self, plan: Plan, jobs: list[Job], progress: Progress) -> RunState:
        state = super()._state(plan, jobs, progress)
        state.gate = lambda: self._gate(state)
        state.most_queued = 1
        return state

    def _gate(self, state: RunState) -> None:
        """The field read again (one small read while it has not changed); the matches in
        line that seat an entrant no longer active are taken out of it and deleted (sent to
        nobody), and the director forgets them."""
        tid = self.stretch.tournament_id
        assert self._revisions is not None, "the gate is called while the runner runs"
        if self._revisions.read() == self._gate_revision:
            return
        with self.factory.begin() as session:
            self._gate_revision = ladders.revision(session, tid, lock=True)
            found = ladders.entrants(session, tid)[: self.stretch.size]
            gone = {e.position for e in found if e.status != "active"}
            dropped = [j for j in state.todo if gone.intersection(j.seats)]
            if not dropped:
                return
            ids = ladders.drop_unplayed(session, tid, [j.match_id for j in dropped])
        deleted = set(ids)
        kept = [j for j in state.todo if j.match_id not in deleted]
        state.todo.clear()
        state.todo.extend(kept)
        if isinstance(self.maker, LadderMaker):
            self.maker.ladder.dropped(ids)
            self.maker.ladder.active = [p for p in self.maker.ladder.active if p not in gone]

    def _maker(self, director: Director, making: Making) -> Maker:
        assert isinstance(director, LadderDirector)
        return LadderMaker(director, self.stretch, making)


@dataclass
class Ended:
    """How a run of the ladder ended: ``why`` games, time, stable, interrupted or failed."""

    why: str
    played: int = 0
    failed: list[str] = field(default_factory=list)


@dataclass
class Field:
    """The ladder's field when a stretch begins."""

    revision: int
    refs: list[BotRef]
    active: list[int]
    done: int


def read_field(factory: sessionmaker[Session], tournament_id: int) -> Field:
    """The field as stored, by position (each entrant's stored version, as it was added), with
    the matches still to play of entrants that no longer play deleted."""
    from bot_arena.db.store import ref_of

    with factory.begin() as session:
        revision = ladders.revision(session, tournament_id, lock=True)
        tournament = load_tournament(session, tournament_id)
        # this process plays the ladder, also while it waits between stretches
        stored.record_runner(session, tournament, this_host(), os.getpid())
        found = ladders.entrants(session, tournament_id)
        gone = [e.version_id for e in found if e.status != "active"]
        ladders.drop_open_of(session, tournament_id, gone)
        refs = [ref_of(entry.version) for entry in tournament.entries]
        done = ladders.match_counts(session, tournament_id)["done"]
    return Field(revision, refs, [e.position for e in found if e.status == "active"], done)


def play_ladder(
    factory: sessionmaker[Session],
    tournament_id: int,
    limits: Limits,
    *,
    jobs: int,
    sandbox: Callable[[Sequence[str]], SandboxSettings],
    say: Callable[[str], None],
    forkserver: ForkServer | None = None,
    executor: RayExecutor | None = None,
    progress_stream: Any = None,
    tty: bool | None = None,
    stored_hook: Callable[[list[int]], None] | None = None,
) -> Ended:
    """Play the ladder in stretches until one of ``limits`` is reached (or it is interrupted:
    KeyboardInterrupt, what was stored stays stored). ``sandbox``: the settings for a field's
    names; ``say``: a line for the user (waiting, a new field); ``stored_hook``: the runner's
    (told each stored group's ids)."""
    runner_options: dict[str, Any] = {
        "jobs": jobs,
        "sandbox": sandbox,
        "forkserver": forkserver,
        "executor": executor,
        "progress_stream": progress_stream,
        "tty": tty,
        "stored_hook": stored_hook,
    }
    with factory.begin() as session:  # one runner a ladder: claimed atomically
        running = claim_runner(session, tournament_id)
    if running is not None:
        raise TournamentError(f"ladder {tournament_id} is being played by process {running}")
    try:  # the heartbeat also beats while it waits between stretches
        with Heartbeat(factory.kw["bind"], tournament_id):
            return _stretches(factory, tournament_id, limits, say=say, **runner_options)
    finally:
        with factory.begin() as session:  # no longer played by this process
            stored.end_run(session, tournament_id, finished=False)


def _stretches(
    factory: sessionmaker[Session],
    tournament_id: int,
    limits: Limits,
    *,
    say: Callable[[str], None],
    **runner_options: Any,
) -> Ended:
    said: int | None = None
    played = 0
    while True:
        current = read_field(factory, tournament_id)
        if limits.games is not None and current.done >= limits.games:
            return Ended("games", played)
        if limits.time_up():
            return Ended("time", played)
        if len(current.active) < 2:
            if said != current.revision:
                say(
                    f"waiting: {len(current.active)} active bot(s), a ladder needs two "
                    "(arena ladder add)"
                )
                said = current.revision
            _wait_for_change(factory, tournament_id, current.revision, limits)
            continue
        stretch = Stretch(
            tournament_id, current.revision, current.active, len(current.refs), limits
        )
        options = dict(runner_options)
        settings = options.pop("sandbox")([r.name for r in current.refs])
        runner = LadderRunner(
            stretch, factory, tournament_id, current.refs, sandbox=settings, **options
        )
        outcome = runner.run()
        played += outcome.played
        if outcome.interrupted:
            raise KeyboardInterrupt
        if stretch.ended in ("time", "stable"):
            return Ended(stretch.ended, played)
        if stretch.ended == "field":
            say("a bot joined: playing on with it")
            continue
        if outcome.failed and outcome.played == 0:
            return Ended("failed", played, outcome.failed)
        if outcome.played == 0:  # nothing made: wait for the field or the time
            _wait_for_change(factory, tournament_id, current.revision, limits)


def _wait_for_change(
    factory: sessionmaker[Session], tournament_id: int, revision: int, limits: Limits
) -> None:
    """Until the field's revision moves on or the run's time is up (read a few times a
    second: another process adds and retires)."""
    while not limits.time_up():
        with factory() as session:
            if ladders.revision(session, tournament_id) != revision:
                return
        time.sleep(POLL_S)
