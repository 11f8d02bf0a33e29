"""How long an ``arena`` command takes to start and answer: fresh processes, median of ``--runs``
(default 10) each, the commands taking turns so the machine's drift falls on all alike. For
each command it reports the CPU time (user + system of that process, from ``wait4``) and the
wall time. CPU time is the figure to compare: it counts what the command did, not how long it
waited for a core on a busy machine (the load averages are printed with the results).

The commands: baselines measured in the same run (the bare interpreter, ``python -c pass``; the
command-line library with the table printer, ``import typer, tabulate``, the floor under every
``arena`` command), ``--help``/``--version``/``games`` (issue 13: under 0.3 s of wall time),
and the read commands on a 1,000-match SQLite database (issue 28): ``leaderboard`` (target: at
most 0.35 s of CPU), ``tournament list``, ``tournament show 1``, ``matches --limit 50``.

The database is built once by a real ``arena tournament run`` (tictactoe, five fast bots, 100
games a pair, ``--jobs 2``) into ``--db PATH`` (default: a file in the temporary folder), and
reused while it is there.

``--baseline DIR`` also times a source checkout of another commit (its folders ``arena``,
``bots``, ``db``, ``games``, e.g. ``git archive 86aef2d arena bots db games | tar -x -C DIR``)
with the same interpreter and packages, its runs alternating with this copy's: before and after
in one session. Run from an installed copy (``pip install .``), or at least with bytecode
caching on: an editable install adds its import hook to every start, and with
``PYTHONDONTWRITEBYTECODE`` every start compiles our modules again (this script turns it off for
the commands it runs). Asserts nothing.

    python bench/startup.py [--runs N] [--db PATH] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARENA = [sys.executable, "-m", "bot_arena.arena.cli.app"]
FIELD = ["random", "alphabeta:depth=1", "alphabeta:depth=2", "alphabeta:depth=3"]
FIELD += ["mcts:iterations=10"]
GAMES = 100  # a pair: 10 pairs of 5 bots, 1,000 matches
BASELINES = {
    "python -c pass (baseline)": [sys.executable, "-c", "pass"],
    "import typer, tabulate (baseline)": [sys.executable, "-c", "import typer, tabulate"],
}
QUICK = {
    "arena --version": ["--version"],
    "arena --help": ["--help"],
    "arena games": ["games"],
    "arena leaderboard --help": ["leaderboard", "--help"],
}
READS = {
    "arena leaderboard": ["leaderboard"],
    "arena tournament list": ["tournament", "list"],
    "arena tournament show 1": ["tournament", "show", "1"],
    "arena matches --limit 50": ["matches", "--limit", "50"],
}
WALL_TARGET_S = 0.3  # issue 13
WALL_TARGETED = ("arena --help", "arena games")
CPU_TARGET_S = 0.35  # issue 28
CPU_TARGETED = ("arena leaderboard",)


def once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of ``argv``."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit status {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, wall


def build_database(path: Path, env: dict[str, str]) -> None:
    """A 1,000-match tournament played for real into ``path`` (once: a minute or two)."""
    args = [*ARENA, "tournament", "run", "tictactoe", "--games", str(GAMES), "--jobs", "2"]
    for bot in FIELD:
        args += ["--bot", bot]
    args += ["--seed", "1", "--move-time", "1", "--db", str(path)]
    print(f"building {path}: {len(FIELD) * (len(FIELD) - 1) // 2 * GAMES} matches ...")
    partial = path.with_name(path.name + ".part")
    partial.unlink(missing_ok=True)
    args[-1] = str(partial)
    done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    if done.returncode != 0:
        raise SystemExit(f"building the database failed: {done.stderr.decode()[-500:]}")
    partial.rename(path)  # only a whole tournament is reused


def baseline_env(checkout: Path, env: dict[str, str]) -> dict[str, str]:
    """The environment that runs ``checkout``'s sources as ``bot_arena``: a folder of links
    first on the path (ahead of this copy's editable install, which is found last)."""
    for folder in ("arena", "bots", "db", "games"):
        if not (checkout / folder / "__init__.py").exists():
            raise SystemExit(f"--baseline {checkout}: no {folder}/__init__.py")
    links = Path(tempfile.mkdtemp(prefix="arena-baseline-")) / "bot_arena"
    links.mkdir()
    for folder in ("arena", "bots", "db", "games"):
        (links / folder).symlink_to(checkout.resolve() / folder)
    found = subprocess.run(
        [sys.executable, "-c", "import bot_arena.arena.cli.app as m; print(m.__file__)"],
        env=dict(env, PYTHONPATH=str(links.parent)),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not found.startswith(str(links)):
        raise SystemExit(f"--baseline {checkout}: the interpreter still loads {found}")
    return dict(env, PYTHONPATH=str(links.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--db", type=Path, default=Path(tempfile.gettempdir()) / "arena-1000.db")
    parser.add_argument("--baseline", type=Path, default=None)
    options = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "ARENA_DB")}
    env["COLUMNS"] = "80"
    if not options.db.exists():
        build_database(options.db, env)
    copies = {"": env}
    if options.baseline is not None:
        copies = {"base": baseline_env(options.baseline, env), "new": env}
    commands: dict[str, tuple[list[str], dict[str, str]]] = {}
    for name, argv in BASELINES.items():
        commands[name] = (argv, env)
    for label, copy_env in copies.items():
        for name, args in QUICK.items():
            commands[f"{name} {label}".rstrip()] = ([*ARENA, *args], copy_env)
        for name, args in READS.items():
            full = [*ARENA, *args, "--db", str(options.db)]
            commands[f"{name} {label}".rstrip()] = (full, copy_env)
    for argv, copy_env in commands.values():  # warm the file cache and write the bytecode
        once(argv, copy_env)
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    wall: dict[str, list[float]] = {name: [] for name in commands}
    loads = [os.getloadavg()]
    for _ in range(options.runs):
        for name, (argv, copy_env) in commands.items():
            c, w = once(argv, copy_env)
            cpu[name].append(c)
            wall[name].append(w)
    loads.append(os.getloadavg())
    print(f"fresh processes, median of {options.runs}: CPU (user + system) and wall time")
    print(f"load averages (1, 5, 15 min) before {loads[0]}, after {loads[1]}")
    print(f"database: {options.db}")
    for name in commands:
        c, w = statistics.median(cpu[name]), statistics.median(wall[name])
        line = f"  {name:<42} cpu {c * 1e3:7.1f} ms  wall {w * 1e3:7.1f} ms"
        base = name.removesuffix(" new").removesuffix(" base")
        if base in CPU_TARGETED and not name.endswith(" base"):
            line += f"  target cpu <= {CPU_TARGET_S * 1e3:.0f} ms: "
            line += "met" if c <= CPU_TARGET_S else "NOT met"
        if base in WALL_TARGETED and not name.endswith(" base"):
            line += f"  target wall < {WALL_TARGET_S * 1e3:.0f} ms: "
            line += "met" if w < WALL_TARGET_S else "NOT met"
        print(line)


if __name__ == "__main__":
    main()
