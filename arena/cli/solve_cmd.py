"""``arena solve``: exact game-theoretic values of positions, with the strongest exact search.

One position with ``--position TEXT`` (the initial position without it), or a file of them with
``--positions FILE``: one position a line, extra whitespace-separated fields after it ignored
(blank lines and ``#`` comments skipped). Every position is parsed before the first is solved, so
bad input costs one line and exit code 2, never half a run. Each position is solved with a fresh
transposition table (reproducible node counts) unless ``--keep-tt``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bot_arena.arena.cli.common import fail, load_game
from bot_arena.bots.connect4_solver import DEFAULT_TT_SIZE
from bot_arena.games import files
from bot_arena.games.base import Game, GameError

if TYPE_CHECKING:  # the solver loads when a position is solved, not for --help
    from bot_arena.bots.solver import SolveResult


@dataclass(frozen=True, slots=True)
class PositionLine:
    """One position to solve: its text, where it came from, and the fields after it."""

    text: str
    state: Any
    where: str
    extra: tuple[str, ...] = ()


MAX_POSITIONS = 100_000  # positions a file may hold (the public benchmark sets: 1,000 each)


def read_positions(game: Game[Any, Any], lines: Iterable[str], source: str) -> list[PositionLine]:
    """Parse every line (position first, other fields kept); GameError names file and line."""
    out: list[PositionLine] = []
    for number, raw in enumerate(lines, 1):
        fields = raw.split()
        if not fields or fields[0].startswith("#"):
            continue
        where = f"{source}:{number}"
        if len(out) >= MAX_POSITIONS:
            raise GameError(f"{where}: more than {MAX_POSITIONS} positions (the limit of a file)")
        try:
            state = game.parse_position(fields[0])
        except GameError as exc:
            raise GameError(f"{where}: {exc}") from None
        out.append(PositionLine(fields[0], state, where, tuple(fields[1:])))
    return out


def _number(x: float) -> float | int:
    """Whole numbers print without ``.0`` (Connect Four scores are integers)."""
    x = x + 0.0  # no negative zero
    return int(x) if float(x).is_integer() else x


def result_row(game: Game[Any, Any], text: str, result: SolveResult) -> dict[str, Any]:
    """The per-position record that ``arena solve`` prints."""
    return {
        "position": text,
        "player": result.player,
        "values": [_number(v) for v in result.values],
        "score": _number(result.score),
        "move": None if result.move is None else game.format_move(result.move),
        "nodes": result.nodes,
        "time_s": round(result.time_s, 6),
    }


def solve_positions(
    game: Game[Any, Any],
    positions: Iterable[PositionLine],
    *,
    tt_size: int = DEFAULT_TT_SIZE,
    symmetry: bool = False,
    node_limit: int | None = None,
    keep_tt: bool = False,
) -> Iterator[dict[str, Any]]:
    """Solve each position in turn and yield its record (what the command prints).

    The solver is made at once, so a game that cannot be solved is refused before any output.
    """
    from bot_arena.bots.solver import ExactSolver

    solver = ExactSolver(game, tt_size=tt_size, symmetry=symmetry, node_limit=node_limit)

    def run() -> Iterator[dict[str, Any]]:
        for line in positions:
            if not keep_tt:
                solver.reset()
            yield result_row(game, line.text, solver.solve(line.state))

    return run()


def _format_row(row: dict[str, Any]) -> str:
    values = "[" + ", ".join(str(v) for v in row["values"]) + "]"
    move = "-" if row["move"] is None else row["move"]
    return (
        f"{row['position'] or '(start)':<44} {row['player']:>6} {values:>14} {row['score']:>6} "
        f"{move:>6} {row['nodes']:>10} {row['time_s']:>10.6f}"
    )


_HEADER = (
    f"{'position':<44} {'player':>6} {'values':>14} {'score':>6} {'move':>6} {'nodes':>10} "
    f"{'time_s':>10}"
)


def solve_command(
    game_name: Annotated[str, typer.Argument(metavar="GAME", help="Game name (arena games).")],
    position: Annotated[
        str | None, typer.Option("--position", help="Position text (default: the start).")
    ] = None,
    positions: Annotated[
        Path | None,
        typer.Option("--positions", help="File with one position a line (extra fields ignored)."),
    ] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", help="Game parameter k=v (repeatable).")
    ] = None,
    tree: Annotated[str | None, typer.Option("--tree", help="Tree file for the tree game.")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per position on stdout.")
    ] = False,
    tt_size: Annotated[
        int, typer.Option("--tt-size", help="Transposition table capacity (entries).")
    ] = DEFAULT_TT_SIZE,
    symmetry: Annotated[
        bool,
        typer.Option(
            "--symmetry", help="Connect Four: share entries between mirror images (early game)."
        ),
    ] = False,
    max_nodes: Annotated[
        int | None,
        typer.Option("--max-nodes", help="Give up beyond this many nodes per position."),
    ] = None,
    keep_tt: Annotated[
        bool, typer.Option("--keep-tt", help="Keep the table from one position to the next.")
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Compare each score with the number after the position; exit 1 on a miss.",
        ),
    ] = False,
) -> None:
    """Solve positions exactly: value vector, score for the player to move, best move, nodes."""
    import statistics

    from bot_arena.bots.solver import SolverError

    if position is not None and positions is not None:
        fail("give --position or --positions, not both")
    if tt_size < 1:
        fail("--tt-size must be positive")
    if max_nodes is not None and max_nodes < 1:
        fail("--max-nodes must be positive")
    game = load_game(game_name, param, tree)
    try:
        if positions is not None:
            with files.lines(positions, files.POSITIONS) as lines:
                todo = read_positions(game, lines, str(positions))
        else:
            raw = "" if position is None else position
            state = game.initial_state() if position is None else game.parse_position(raw)
            todo = [PositionLine(raw.strip(), state, "--position")]
        expected = _expected(todo) if check else []
        rows = solve_positions(
            game, todo, tt_size=tt_size, symmetry=symmetry, node_limit=max_nodes, keep_tt=keep_tt
        )
        if not as_json:
            typer.echo(_HEADER)
        nodes: list[int] = []
        times: list[float] = []
        misses = 0
        for i, row in enumerate(rows):
            typer.echo(json.dumps(row) if as_json else _format_row(row))
            nodes.append(row["nodes"])
            times.append(row["time_s"])
            if check and row["score"] != expected[i]:
                misses += 1
                print(
                    f"miss: {todo[i].where}: score {row['score']}, expected {expected[i]}",
                    file=sys.stderr,
                )
    except (GameError, SolverError) as exc:
        fail(str(exc))
    if nodes:
        summary = (
            f"{len(nodes)} position(s): mean nodes {statistics.fmean(nodes):.1f}, "
            f"mean time {statistics.fmean(times) * 1000:.3f} ms, "
            f"median time {statistics.median(times) * 1000:.3f} ms"
        )
        if check:
            summary += f", {len(nodes) - misses} of {len(nodes)} scores as expected"
        print(summary, file=sys.stderr)
    if misses:
        raise typer.Exit(1)


def _expected(todo: list[PositionLine]) -> list[float]:
    out = []
    for line in todo:
        try:
            out.append(float(line.extra[0]))
        except (IndexError, ValueError):
            raise GameError(f"{line.where}: --check needs a score after the position") from None
    return out
