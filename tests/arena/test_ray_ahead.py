"""A new run's Ray actors are asked for as soon as it has joined the cluster, before the
tournament is stored (``RayExecutor.ask_ahead``): Ray places them and starts their processes
while the driver stores the run and reads its schedule, and ``new_workers`` hands them out
first. Without a cluster: a stand-in for Ray's actor class counts the actors asked for."""

from __future__ import annotations

from typing import Any

import pytest

from bot_arena.arena.api.tournaments import tournament
from bot_arena.arena.tournament.ray_executor import RayExecutor


class ActorClass:
    """Ray's remote actor class: ``remote()`` asks for one more actor (its handle, a name)."""

    def __init__(self) -> None:
        self.made: list[str] = []

    def remote(self) -> str:
        self.made.append(f"actor{len(self.made)}")
        return self.made[-1]


def _executor(cpus: int) -> tuple[RayExecutor, ActorClass]:
    """An executor joined to a cluster offering ``cpus`` CPUs, without Ray."""
    executor = object.__new__(RayExecutor)
    actors = ActorClass()
    executor._actor = actors
    executor._ahead = []
    executor._closed = True  # close() leaves Ray alone
    executor.capacity = lambda: cpus  # type: ignore[method-assign]
    return executor, actors


def test_the_actors_asked_ahead_are_the_first_handed_out() -> None:
    executor, actors = _executor(cpus=3)
    executor.ask_ahead()
    assert actors.made == ["actor0", "actor1", "actor2"]  # one a CPU, before any worker
    workers = executor.new_workers(2)
    assert [w.actor for w in workers] == ["actor0", "actor1"]
    assert actors.made == ["actor0", "actor1", "actor2"]  # none asked for again
    more = executor.new_workers(2)  # the one left, then a new one
    assert [w.actor for w in more] == ["actor2", "actor3"]


def test_no_more_actors_are_asked_ahead_than_the_run_s_jobs() -> None:
    executor, actors = _executor(cpus=3)
    executor.ask_ahead(1)
    executor.ask_ahead(1)  # asked again: still one
    assert actors.made == ["actor0"]
    assert [w.actor for w in executor.new_workers(1)] == ["actor0"]


class Stop(Exception):
    pass


def test_a_new_run_asks_for_its_actors_before_it_is_stored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The API's one path of a new run (``new_run.start``, the CLI's too): the executor is
    asked for the run's actors (its ``jobs`` at most) before the tournament is stored."""
    from bot_arena.arena.api import cluster as cluster_module
    from bot_arena.arena.tournament import create as create_module

    events: list[str] = []

    class Joined:
        def ask_ahead(self, cap: int | None = None) -> None:
            events.append(f"ask_ahead {cap}")

        def close(self) -> None:
            events.append("close")

    def cluster(executor: str, address: str | None, allow_unconfined: bool) -> Joined | None:
        return Joined() if executor == "ray" else None

    def create(*args: Any, **kwargs: Any) -> int:
        events.append("create")
        raise Stop

    monkeypatch.setattr(cluster_module, "cluster", cluster)
    monkeypatch.setattr(create_module, "create", create)
    with pytest.raises(Stop):
        tournament("tictactoe", ["random", "random:seed=1"], games=2, jobs=1, executor="ray")
    assert events == ["ask_ahead 1", "create", "close"]
