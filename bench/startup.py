"""How long an ``arena`` command takes to start: wall time of fresh processes, median of
``--runs`` (default 10) each, the commands taking turns so the machine's drift falls on all
alike. Prints medians and ratios against baselines measured in the same run: the bare
interpreter (``python -c pass``) and the command-line library with the table printer
(``import typer, tabulate``), the floor under every ``arena`` command. The target (issue 13):
under 0.3 s for ``--help`` and ``games``. Asserts nothing. Run it from an installed copy (``pip
install .``): an editable install adds its import hook to every start.

    python bench/startup.py [--runs N]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

ARENA = [sys.executable, "-m", "bot_arena.arena.cli.app"]
COMMANDS = {
    "python -c pass (baseline)": [sys.executable, "-c", "pass"],
    "python -c 'import typer' (baseline)": [sys.executable, "-c", "import typer"],
    "python -c 'import typer, tabulate' (baseline)": [
        sys.executable,
        "-c",
        "import typer, tabulate",
    ],
    "arena --version": [*ARENA, "--version"],
    "arena --help": [*ARENA, "--help"],
    "arena games": [*ARENA, "games"],
    "arena tournament --help": [*ARENA, "tournament", "--help"],
    "arena leaderboard --help": [*ARENA, "leaderboard", "--help"],
}
TARGET_S = 0.3
TARGETED = ("arena --help", "arena games")


def once(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 10
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for argv in COMMANDS.values():  # warm the file cache and the compiled modules
        once(argv)
    for _ in range(runs):
        for name, argv in COMMANDS.items():
            times[name].append(once(argv))
    bare = statistics.median(times["python -c pass (baseline)"])
    typer = statistics.median(times["python -c 'import typer' (baseline)"])
    print(f"start-up of fresh processes, median of {runs} (wall time)")
    for name, values in times.items():
        median = statistics.median(values)
        line = f"  {name:<46} {median * 1e3:7.1f} ms  {median / bare:5.2f}x bare  "
        line += f"{median / typer:5.2f}x typer"
        if name in TARGETED:
            verdict = "met" if median < TARGET_S else "NOT met"
            line += f"  target < {TARGET_S * 1e3:.0f} ms: {verdict}"
        print(line)


if __name__ == "__main__":
    main()
