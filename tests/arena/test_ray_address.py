"""``--ray-address HOST:PORT`` where no cluster answers: one line and exit 2 at once (Ray's own
``init`` retries such an address for minutes), and no match stored or left to play."""

from __future__ import annotations

import os
import socket
import sqlite3
from pathlib import Path

import pytest

from tests import needs
from tests.forked_cli import Server
from tests.inprocess import run


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("command", [["tournament", "run"], ["sprt"]])
def test_a_cluster_address_nobody_answers_is_one_line(tmp_path: Path, command: list[str]) -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        needs.missing(needs.RAY, "Ray is not installed (pip install 'bot-arena[ray]')")
    address = f"127.0.0.1:{_closed_port()}"
    bots = ["--bot", "random", "--bot", "random:seed=2"]
    db = tmp_path / "arena.db"
    done = run(
        *command, "tictactoe", *bots, "--executor", "ray", "--ray-address", address,
        "--db", str(db), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines() == [
        f"error: cannot join the Ray cluster at {address}: nothing answers there "
        "(Connection refused)"
    ]
    if db.exists():
        with sqlite3.connect(db) as conn:
            assert conn.execute(
                "SELECT COUNT(*) FROM matches WHERE status = 'done'"
            ).fetchone() == (0,)


def test_serve_with_a_cluster_address_nobody_answers_is_one_line(
    tmp_path: Path, arena_cli: Server
) -> None:
    """``arena serve --executor ray --ray-address``: the address its ladder runners would join
    is checked as ``tournament run`` checks it, before the server starts (a process, forked
    from ``arena_cli``: a server that started instead would serve until the deadline, and be
    killed there)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        needs.missing(needs.RAY, "Ray is not installed (pip install 'bot-arena[ray]')")
    address = f"127.0.0.1:{_closed_port()}"
    db = tmp_path / "arena.db"
    done = arena_cli.run(
        ["serve", "--port", "0", "--executor", "ray", "--ray-address", address, "--db", str(db)],
        cwd=tmp_path, env=os.environ, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines() == [
        f"error: cannot join the Ray cluster at {address}: nothing answers there "
        "(Connection refused)"
    ]
    assert not db.exists()  # refused before the database is made
