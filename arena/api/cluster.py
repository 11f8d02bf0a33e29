"""``executor="ray"`` (``--executor ray``): the Ray executor a run plays on, and what can be
checked of its cluster before joining it; Ray missing or the cluster unreachable raises
ArenaError (one line)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot_arena.arena.api import sandbox
from bot_arena.arena.api.errors import ArenaError

if TYPE_CHECKING:
    from bot_arena.arena.tournament.ray_executor import RayExecutor


def cluster(executor: str, address: str | None, allow_unconfined: bool) -> RayExecutor | None:
    """The Ray executor for ``executor="ray"`` (None: local job processes); Ray missing or
    its cluster unreachable raises ArenaError."""
    if executor != sandbox.RAY:
        return None
    from bot_arena.arena.tournament.ray_executor import ClusterError, RayExecutor

    try:
        return RayExecutor(_address(address), allow_unconfined=allow_unconfined)
    except ClusterError as exc:
        raise ArenaError(str(exc)) from None


def check_cluster(address: str | None) -> None:
    """What ``cluster`` checks before it joins, without joining (``arena serve`` hands the
    cluster to its ladder runners): Ray installed, and something answering at a
    ``host:port`` address; ArenaError (one line) at once otherwise."""
    from bot_arena.arena.tournament.ray_executor import ClusterError, joinable

    try:
        joinable(_address(address))
    except ClusterError as exc:
        raise ArenaError(str(exc)) from None


def _address(address: str | None) -> str | None:
    """``--ray-address``'s word ``none``: no cluster, a local Ray (``RayExecutor``'s None)."""
    return None if address == "none" else address
