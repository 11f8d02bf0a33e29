"""``arena report``: one self-contained HTML file of a tournament (or of every game of a game
type): leaderboard and rating plot, crosstable heatmap, ratings over time, faults with their
evidence, every game with a replay viewer, and the settings that were played."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Annotated

import typer

from bot_arena.arena.cli.common import DbOption, fail, open_existing_db
from bot_arena.arena.cli.rating_cmd import GameOption, Method, MethodOption, TournamentOption
from bot_arena.arena.report.picks import DEFAULT_LIMIT
from bot_arena.games import files

INSTALL_HINT = "arena report needs Jinja2 and matplotlib: pip install 'bot-arena[report]'"


def report_command(
    tournament: TournamentOption = None,
    game: GameOption = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="HTML file to write (default: report-tID.html, or report-GAME.html).",
        ),
    ] = None,
    figure: Annotated[
        list[Path] | None,
        typer.Option(
            "--figure",
            help="An SVG picture to add to the report (e.g. from arena analyze --svg); repeat.",
        ),
    ] = None,
    method: MethodOption = Method.ML,
    games_limit: Annotated[
        int,
        typer.Option(
            "--games",
            min=0,
            help="Games to embed at most (0: every one); past it the report embeds the "
            "faulted, the most recent and a sample, and says what it left out.",
        ),
    ] = DEFAULT_LIMIT,
    db: DbOption = None,
) -> None:
    """Write one HTML file that opens anywhere, with no network: ratings with error bars,
    the crosstable as a heatmap, ratings over time, every fault with its evidence, every game
    with a replay viewer, and the tournament's settings and bot versions.

    Default: every match of the game type played most recently (as arena leaderboard)."""
    try:
        import jinja2  # noqa: F401
        import matplotlib  # noqa: F401
    except ImportError:
        fail(INSTALL_HINT)
    figures: list[tuple[str, str]] = []
    for path in figure or []:
        try:
            text = files.read_text(path, files.FIGURE)
        except files.FileRefused as exc:
            fail(str(exc))
        if "<svg" not in text:
            fail(f"figure {path} is not an SVG picture")
        figures.append((path.name, text))
    # the report's modules (numpy, SQLAlchemy, the fits: about a second of CPU) once the
    # figures are read: a figure refused is refused without them
    from bot_arena.arena.report.data import ReportError, collect
    from bot_arena.arena.report.page import render_page
    from bot_arena.arena.tournament.create import TournamentError

    started = time.perf_counter()
    factory = open_existing_db(db)
    with factory() as session:
        try:
            report = collect(
                session,
                tournament_id=tournament,
                game=game,
                method=method.value,
                limit=games_limit or None,
            )
        except (ReportError, TournamentError) as exc:
            fail(str(exc))
    report.figures = figures
    html = render_page(report)
    target = output or Path(
        f"report-t{tournament}.html" if tournament else f"report-{report.game}.html"
    )
    _write(target, html)
    took = time.perf_counter() - started
    size = len(html.encode("utf-8"))
    shown = f"{len(report.games)} games"
    if report.picks is not None:
        shown = f"{len(report.games)} of {report.picks.total} games"
    typer.echo(
        f"wrote {target} ({size / 1e6:.2f} MB, {shown}, "
        f"{len(report.leaderboard)} players) in {took:.1f} s"
    )


def _write(target: Path, text: str) -> None:
    """Write all or nothing: a report cut short by a full disk never replaces a good one."""
    folder = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".report-", suffix=".html", dir=folder)
    except OSError as exc:
        fail(f"cannot write {target}: {exc.strerror or exc}")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        fail(f"cannot write {target}: {exc.strerror or exc}")
