"""What ``arena serve``'s reads cost: concurrent clients reading a tournament's standings and a
bot's page, against the server's trivial route (``/api/health``) in the same run.

    python bench/serve_reads.py [--clients 20] [--seconds 5] [--bots 6] [--games 4]

A round-robin of a registered bot (bot 1) and built-in bots, ``--bots`` in all (``--games``
games a pair), is played into a fresh SQLite database, ``arena serve`` is started on a free
loopback port, then for each route in turn ``--clients`` threads (one keep-alive connection
each) read it for ``--seconds``: p50 and p99 latency, requests a second, and the server
process's CPU milliseconds a request (user + sys from /proc, the number that does not depend on
what else the machine runs). The ratios are against ``/api/health``, measured in the same run.
Loopback only, bounded in clients and time.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)  # bench/ holds scripts named like packages (bench/games.py)

import httpx

ARENA = [sys.executable, "-m", "bot_arena.arena.cli.app"]
FIELD = ["random", "random:seed=3", "alphabeta:depth=1", "alphabeta:depth=2", "mcts", "minimax"]


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def load(url: str, clients: int, seconds: float) -> list[float]:
    """Latencies (s) of every request ``clients`` threads made to ``url`` in ``seconds``."""
    found: list[list[float]] = [[] for _ in range(clients)]
    stop = time.monotonic() + seconds

    def client(mine: list[float]) -> None:
        with httpx.Client(timeout=30) as http:
            while time.monotonic() < stop:
                start = time.perf_counter()
                answer = http.get(url)
                mine.append(time.perf_counter() - start)
                answer.raise_for_status()

    threads = [threading.Thread(target=client, args=(f,)) for f in found]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [x for f in found for x in f]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--bots", type=int, default=6)
    parser.add_argument("--games", type=int, default=4)
    args = parser.parse_args()
    if not (1 <= args.clients <= 200 and 0 < args.seconds <= 60 and 2 <= args.bots <= 6):
        parser.error("--clients 1..200, --seconds up to 60, --bots 2..6")
    with tempfile.TemporaryDirectory(prefix="arena-bench-serve-") as folder:
        db = str(Path(folder) / "arena.db")
        bot = Path(folder) / "first.py"  # a registered bot, so a bot's page has one to show
        bot.write_text(
            "def choose_move(game, state, budget):\n    return game.legal_moves(state)[0]\n"
        )
        subprocess.run(
            [*ARENA, "bots", "add", str(bot), "--name", "first", "--game", "connect4", "--db", db],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        bots = [a for b in ["first", *FIELD[: args.bots - 1]] for a in ("--bot", b)]
        subprocess.run(
            [*ARENA, "tournament", "run", "connect4", "--games", str(args.games),
             "--move-time", "0.05", "--db", db, *bots],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        port = free_port()
        server = subprocess.Popen(
            [*ARENA, "serve", "--db", db, "--port", str(port)], stderr=subprocess.DEVNULL
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    httpx.get(f"{base}/api/health").raise_for_status()
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise SystemExit("arena serve did not start") from None
                    time.sleep(0.05)
            routes = ["/api/health", "/api/tournaments/1/standings", "/api/bots/1", "/bots/1"]
            print(f"{args.clients} clients, {args.seconds:g} s a route, {args.bots} bots")
            head = f"{'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'cpu ms/req':>11} {'x health':>9}"
            print(f"{'route':32} {head}")
            baseline = 0.0
            for route in routes:
                load(f"{base}{route}", 2, 0.5)  # warm: caches, connections
                before = cpu_s(server.pid)
                lat = sorted(load(f"{base}{route}", args.clients, args.seconds))
                cpu = (cpu_s(server.pid) - before) / len(lat) * 1000
                baseline = baseline or cpu
                p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
                print(
                    f"{route:32} {len(lat) / args.seconds:8.0f} "
                    f"{statistics.median(lat) * 1000:8.1f} {p99 * 1000:8.1f} {cpu:11.2f} "
                    f"{cpu / baseline:9.1f}"
                )
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
