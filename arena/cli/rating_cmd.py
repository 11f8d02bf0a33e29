"""``arena leaderboard``, ``arena crosstable`` and ``arena rate``: ratings as tables.

Thin wrappers: the math is in ``arena.ratings``, the database queries in
``arena.ratings.query``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from bot_arena.arena.cli.common import DbOption, fail, open_db, open_plain_reads
from bot_arena.games.quoting import shown

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from bot_arena.db.rated_sql import RatedReads

# the ratings (numpy) and the database load when a command runs, not for --help


class Method(StrEnum):
    ML = "ml"
    ELO = "elo"


class Format(StrEnum):
    TABLE = "table"
    JSON = "json"
    CSV = "csv"
    MARKDOWN = "markdown"


MethodOption = Annotated[
    Method,
    typer.Option(
        "--method", help="ml: maximum-likelihood Elo (default); elo: sequential, order-dependent."
    ),
]
FormatOption = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Same as --format json.")]
CenterOption = Annotated[
    float, typer.Option("--center", help="Pool average (ml) or starting rating (elo).")
]
AnchorOption = Annotated[
    str | None,
    typer.Option("--anchor", metavar="NAME=ELO", help="Shift so this bot has this rating."),
]
KOption = Annotated[float, typer.Option("--k", help="K-factor of sequential Elo.")]
GameOption = Annotated[str | None, typer.Option("--game", "-g", help="Only matches of this game.")]
TournamentOption = Annotated[
    int | None, typer.Option("--tournament", "-t", help="Only this tournament's matches.")
]
WideOption = Annotated[
    bool,
    typer.Option(
        "--wide",
        help="Every column of the table (W-D-L, draws, LOS, faults by kind, notes), "
        "whatever the terminal's width.",
    ),
]


def table_width(wide: bool) -> int | None:
    """The width a table is fitted to: the terminal's ($COLUMNS, else 80 when the output is
    not a terminal), or None for every column."""
    return None if wide else shutil.get_terminal_size().columns


def _format(fmt: Format, as_json: bool) -> str:
    return "json" if as_json else fmt.value


def parse_anchor(text: str | None) -> tuple[str, float] | None:
    if text is None:
        return None
    name, sep, value = text.rpartition("=")
    try:
        elo = float(value)
    except ValueError:
        elo = float("nan")
    if not sep or not name or elo != elo:
        fail(f"--anchor wants NAME=ELO (e.g. random=1000), not {shown(text)}")
    return name, elo


def _check_db(url: str | None) -> None:
    from bot_arena.db.session import (
        DatabaseOpenError,
        check_url,
        database_url,
        display_url,
        exists,
        short,
    )

    try:
        check_url(url, write=False)
    except DatabaseOpenError as exc:
        fail(str(exc))
    full = database_url(url)
    if not exists(full):
        fail(f"no database at {short(display_url(full))} (run a tournament first, or pass --db)")


def _read(db: str | None, render: Callable[[Session | RatedReads], str]) -> str:
    """``render`` over the database's results: a plain SQLite file by the standard library's
    ``sqlite3`` (``db/sqlite_read.py``: SQLAlchemy is not loaded), any other through a
    session; a LeaderboardError is one line (exit 2)."""
    from bot_arena.arena.ratings.query import LeaderboardError

    try:
        plain = open_plain_reads(db)
        if plain is not None:
            connection, reads = plain
            try:
                return render(reads)
            finally:
                connection.close()
        _check_db(db)
        sessions = open_db(db, write=False)
        with sessions() as session:
            return render(session)
    except LeaderboardError as exc:
        fail(str(exc))


def leaderboard_command(
    game: GameOption = None,
    tournament: TournamentOption = None,
    bot: Annotated[
        list[str] | None,
        typer.Option("--bot", "-b", help="Show only these bots (rated against everybody)."),
    ] = None,
    method: MethodOption = Method.ML,
    center: CenterOption = 1500.0,
    anchor: AnchorOption = None,
    k: KOption = 16.0,
    fmt: FormatOption = Format.TABLE,
    as_json: JsonOption = False,
    wide: WideOption = False,
    db: DbOption = None,
) -> None:
    """Ratings of the bots from the database: Elo, ±95%, games, score, faults.

    The table fits the terminal: rank, bot, Elo, ±95%, games, score, and the number of faults
    when some bot has any (long names cut in the middle with "…", each row's note under the
    table); --wide
    adds W-D-L, draws, LOS, faults by kind and the notes as a column. JSON, CSV and Markdown
    always carry every field.

    Default: every match of the game type played most recently. When any rated result came
    from bots that were not fully confined, a note under the table says how many, e.g. "note:
    3 of 40 rated results from bots not fully confined (off 2, partial 1)" (results stored
    before the arena recorded the sandbox count as off).
    """
    from bot_arena.arena.ratings.query import render_leaderboard

    fixed = parse_anchor(anchor)
    text = _read(
        db,
        lambda source: render_leaderboard(
            source,
            tournament_id=tournament,
            game=game,
            bots=bot,
            method=method.value,
            center=center,
            anchor=fixed,
            k=k,
            fmt=_format(fmt, as_json),
            width=table_width(wide),
        ),
    )
    typer.echo(text)


def crosstable_command(
    tournament: TournamentOption = None,
    game: GameOption = None,
    fmt: FormatOption = Format.TABLE,
    as_json: JsonOption = False,
    wide: WideOption = False,
    db: DbOption = None,
) -> None:
    """Score of each bot against each other bot (points / games).

    The table fits the terminal: long names cut in the middle with "…", and the columns that
    still do not fit in a second block below, with the rows' numbers and names; a field too big
    for two blocks shows its top bots with a note on how many are left out. --wide prints it
    in one piece. JSON, CSV and Markdown are always whole."""
    from bot_arena.arena.ratings.query import render_crosstable

    text = _read(
        db,
        lambda source: render_crosstable(
            source,
            tournament_id=tournament,
            game=game,
            fmt=_format(fmt, as_json),
            width=table_width(wide),
        ),
    )
    typer.echo(text)


def rate_command(
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE",
            help="PGN (White/Black/Result tags) or CSV: white,black,result or match,bot,rank.",
        ),
    ],
    method: MethodOption = Method.ML,
    center: CenterOption = 1500.0,
    anchor: AnchorOption = None,
    k: KOption = 16.0,
    fmt: FormatOption = Format.TABLE,
    as_json: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """Rate results played elsewhere (cutechess, fastchess, ...) with the same code and the
    same table as ``arena leaderboard``."""
    from bot_arena.arena.formats.results_file import read_results
    from bot_arena.arena.ratings import RatingInputError, render
    from bot_arena.arena.ratings.query import LeaderboardError, rate

    fixed = parse_anchor(anchor)
    try:
        results = read_results(file)
        table = rate(results, method=method.value, center=center, anchor=fixed, k=k)
    except (RatingInputError, LeaderboardError) as exc:
        fail(str(exc))
    title = f"{file}: {len(results)} games"
    typer.echo(render(table, _format(fmt, as_json), title=title, width=table_width(wide)))
