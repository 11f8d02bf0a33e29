"""An SPRT's runner hands nothing to the writer thread after the group that decides the test.

The SPRT director is eager (``Director.eager``): it counts each group of results when the runner
hands it to the writer thread, so the runner can stop the moment a bound is crossed. What makes
the stored games exactly those that decided is that no group follows the deciding one. A
director that counted results only once they were stored would learn of the decision a few
groups late, and the games of those groups would be stored too; the test's verdict would often
come out the same, so a check of the verdict alone cannot see it.

Here the writer thread is replaced by one that stores a group only when the runner waits for it
(``LaggingCommitter``: the slowest writer possible, with no timing in it), and every group the
runner hands over is recorded. Then, with every group handed over in order: the test is
undecided after each group but the last and decided after the last, and the database holds
exactly the handed-over results.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

import pytest
from sqlalchemy import Connection, Engine
from typer.testing import CliRunner

from bot_arena.arena.cli.app import app
from bot_arena.arena.ratings.sprt_stats import SprtSettings, evaluate, game_outcome, pair_outcome
from bot_arena.arena.tournament import runner as runner_module
from bot_arena.arena.tournament.committer import Committer
from bot_arena.arena.tournament.group_commit import Batch, GroupCommit
from bot_arena.db.writer import MatchWriter
from tests.db.dbtest import Db

pytestmark = pytest.mark.slow  # a real SPRT of real bots (a few seconds)

T = TypeVar("T")
Task = Callable[[Connection, MatchWriter], Any]


class _Later(Future[Any]):
    """A transaction's outcome that is computed when someone asks for it (``result``)."""

    def __init__(self, owner: LaggingCommitter) -> None:
        super().__init__()
        self._owner = owner

    def result(self, timeout: float | None = None) -> Any:
        self._owner.run_through(self)
        return super().result(timeout)


class LaggingCommitter(Committer):
    """A writer that runs a transaction only when its outcome (or a later one's) is waited for,
    in the order they were submitted, on the waiting thread: every group stays unstored for as
    long as the runner lets it."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self._queue: list[tuple[Task, _Later]] = []

    def submit(self, task: Callable[[Connection, MatchWriter], T]) -> Future[T]:
        later = _Later(self)
        self._queue.append((task, later))
        return later

    def run_through(self, wanted: _Later) -> None:
        while not wanted.done():
            task, later = self._queue.pop(0)
            try:
                later.set_result(self._transaction(task))
            except BaseException as err:  # handed to the waiter, as a Future does
                later.set_exception(err)

    def close(self) -> None:
        if self._queue:
            self.run_through(self._queue[-1][1])
        self._close_connection()


def test_nothing_is_handed_over_after_the_deciding_group(
    db: Db, monkeypatch: pytest.MonkeyPatch
) -> None:
    handed: list[list[tuple[int, int, float]]] = []  # per group: match id, NEW's seat, its score
    store_ready = GroupCommit.store_ready

    def recording(self: GroupCommit, wait: bool = False) -> Batch:
        batch = store_ready(self, wait)
        if batch:
            handed.append(
                [(job.match_id, job.seats.index(0), record.seats[job.seats.index(0)].score)
                 for job, record in batch]
            )  # fmt: skip
        return batch

    monkeypatch.setattr(GroupCommit, "store_ready", recording)
    monkeypatch.setattr(runner_module, "Committer", LaggingCommitter)
    run = CliRunner().invoke(
        app,
        [
            "sprt", "tictactoe", "--bot", "alphabeta", "--bot", "random", "--elo0", "0",
            "--elo1", "20", "--jobs", "2", "--seed", "1", "--db", db.url, "--json",
        ],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["sprt"]["decision"] == "H1"
    assert len(handed) >= 3  # groups start at one result and double: several before the end

    rounds = dict(db.query(f"SELECT id, round FROM matches WHERE tournament_id = {summary['id']}"))
    settings = SprtSettings(0, 20)
    trinomial, pentanomial = [0] * 3, [0] * 5
    halves: dict[int, list[float]] = {}
    decisions = []
    for group in handed:
        for match_id, _, score in group:
            trinomial[game_outcome(score)] += 1
            pair = halves.setdefault(rounds[match_id], [])
            pair.append(score)
            if len(pair) == 2:
                pentanomial[pair_outcome(*pair)] += 1
        decisions.append(evaluate(settings, pentanomial, trinomial).decision)
    assert decisions[:-1] == [None] * (len(handed) - 1)  # no group after the deciding one
    assert decisions[-1] == "H1"

    stored = db.query(
        "SELECT m.id, s.seat, s.score FROM matches m JOIN seats s ON s.match_id = m.id"
        " JOIN tournament_entries e ON e.tournament_id = m.tournament_id AND e.position = 0"
        f" WHERE m.tournament_id = {summary['id']} AND m.status = 'done'"
        " AND s.bot_version_id = e.bot_version_id"
    )
    assert sorted(stored) == sorted(item for group in handed for item in group)
    assert summary["sprt"]["pentanomial"] == pentanomial
