"""``arena analyze``: one search from one position, with its value, best move, PV and statistics.

``--explain`` (minimax, alphabeta and paranoid on small trees) prints the searched tree with every
node's alpha/beta on entry, backed-up value and cut branches; ``--dot FILE`` writes it as Graphviz
and ``--svg FILE`` draws it as a standalone SVG picture, the way the lectures draw it
(``arena.report.tree_svg``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bot_arena.arena.cli.common import fail, load_game, load_position
from bot_arena.bots.trace import DEFAULT_NODE_LIMIT
from bot_arena.games.quoting import shown

if TYPE_CHECKING:  # the search machinery loads when a search runs, not for --help
    from bot_arena.bots.base import Bot, Decision
    from bot_arena.bots.trace import Trace
    from bot_arena.games.base import Game

#: Bots whose search the trace reproduces, and how: (prune, values from the root player's view).
_TRACEABLE: dict[str, tuple[bool, bool]] = {
    "minimax": (False, False),
    "alphabeta": (True, False),
    "paranoid": (True, True),
}


def analyze_command(
    game_name: Annotated[
        str, typer.Argument(metavar="GAME", help="Game name (see `arena games`).")
    ],
    bot: Annotated[str, typer.Option("--bot", "-b", help="Bot spec, e.g. alphabeta:depth=6.")],
    position: Annotated[
        str | None, typer.Option("--position", help="Position text (default: the start).")
    ] = None,
    tree: Annotated[
        str | None, typer.Option("--tree", help="Tree JSON file (game `tree`).")
    ] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="Game parameter k=v.")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Print the searched tree (small trees only).")
    ] = False,
    dot: Annotated[
        Path | None, typer.Option("--dot", help="Write the searched tree as Graphviz DOT.")
    ] = None,
    svg: Annotated[
        Path | None,
        typer.Option(
            "--svg", help="Draw the searched tree as an SVG picture (small trees; as --dot)."
        ),
    ] = None,
    move_time: Annotated[
        float | None, typer.Option("--time", help="Per-move time budget in seconds.")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed for randomised bots.")] = None,
    max_nodes: Annotated[
        int, typer.Option("--max-nodes", help="Largest tree --explain/--dot/--svg record.")
    ] = DEFAULT_NODE_LIMIT,
) -> None:
    """Search one position and print the value vector, best move, PV and statistics."""
    from bot_arena import bots
    from bot_arena.bots.base import BotError, TimeBudget
    from bot_arena.bots.trace import render_dot, render_text
    from bot_arena.games.base import GameError

    game = load_game(game_name, param, tree)
    state: Any = load_position(game, position)
    if game.is_terminal(state):
        fail(f"position {shown(game.format_position(state))} is over: there is no move to analyze")
    if move_time is not None and move_time <= 0:
        fail(f"--time must be positive, not {move_time}")
    try:
        player = bots.make(bot, seed=seed)
        player.new_game(game, game.current_player(state))
    except BotError as exc:
        fail(str(exc))
    wanted = explain or dot is not None or svg is not None
    trace = _trace(game, state, bot, player, max_nodes) if wanted else None
    budget = TimeBudget.per_move(move_time) if move_time else TimeBudget.unlimited()
    try:
        decision = player.choose_move(game, state, budget)
    except (BotError, GameError) as exc:
        fail(str(exc))
    report = _report(game, state, decision)
    written: list[str] = []
    if trace is not None:
        if dot is not None:
            written.append(_write(dot, render_dot(trace, game), "Graphviz DOT", trace.nodes))
        if svg is not None:
            from bot_arena.arena.report.tree_svg import render_svg

            written.append(_write(svg, render_svg(trace, game), "SVG picture", trace.nodes))
    if json_out:
        if explain and trace is not None:
            report["tree"] = trace.root.to_dict(game)
        typer.echo(json.dumps(report))
    else:
        if explain and trace is not None:
            typer.echo(render_text(trace, game))
            typer.echo("")
        _print_report(game, report, bot)
    for line in written:  # as ``report`` says; beside --json, on stderr: stdout stays JSON
        typer.echo(line, err=json_out)


def _write(path: Path, text: str, what: str, nodes: int) -> str:
    """Write ``text`` to ``path``; the line that says what was written."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")
    size = len(text.encode("utf-8"))
    return f"wrote {path} ({what} of the searched tree, {nodes} nodes, {size / 1e3:.1f} kB)"


def _trace(game: Game[Any, Any], state: Any, spec: str, player: Bot, limit: int) -> Trace:
    from bot_arena import bots
    from bot_arena.bots.base import BotError
    from bot_arena.bots.search_common import resolve_depth
    from bot_arena.bots.trace import TraceTooLarge
    from bot_arena.bots.trace import traced_search as run_traced

    name, _ = bots.split_spec(spec)
    if name not in _TRACEABLE:
        fail(f"--explain/--dot/--svg trace {', '.join(_TRACEABLE)}, not {name}")
    if getattr(player, "order", False):
        fail("--explain/--dot/--svg show the plain search in move order; drop order=true")
    prune, root_view = _TRACEABLE[name]
    me = game.current_player(state) if root_view else 0
    try:
        depth = resolve_depth(game, getattr(player, "depth", None))
        return run_traced(game, state, depth, me=me, prune=prune, limit=limit)
    except TraceTooLarge:
        fail(
            f"the search tree is too large for --explain/--dot/--svg (more than {limit} nodes); "
            "use a smaller tree, a lower depth, or --max-nodes"
        )
    except BotError as exc:
        fail(str(exc))


def _report(game: Game[Any, Any], state: Any, decision: Decision) -> dict[str, Any]:
    info = decision.info
    out: dict[str, Any] = {
        "player": game.current_player(state),
        "move": game.format_move(decision.move),
    }
    if info is None:
        out.update(values=None, pv=[game.format_move(decision.move)], depth=0, nodes=0)
        out.update(leaves=0, cutoffs=0, tt_hits=0, time_s=0.0)
        return out
    details = info.to_dict(game)
    out.update(details)
    return out


_SHOWN = ("values", "move", "pv", "depth", "nodes", "leaves", "cutoffs", "tt_hits", "time_s")


def _print_report(game: Game[Any, Any], report: dict[str, Any], spec: str) -> None:
    values = report.get("values")
    typer.echo(f"game: {game.describe()}")
    typer.echo(f"bot: {spec}")
    typer.echo(f"player to move: {report['player']}")
    typer.echo(f"values: {values}")
    typer.echo(f"best move: {report['move']}")
    typer.echo(f"pv: {' '.join(report['pv'])}")
    typer.echo(
        f"depth {report['depth']}, nodes {report['nodes']}, leaves {report['leaves']}, "
        f"cutoffs {report['cutoffs']}, tt hits {report['tt_hits']}, time {report['time_s']:.3f}s"
    )
    extra = {k: v for k, v in report.items() if k not in (*_SHOWN, "player")}
    for key, value in extra.items():
        typer.echo(f"{key}: {value}")
