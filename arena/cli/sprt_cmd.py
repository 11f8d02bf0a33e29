"""``arena sprt``: is NEW stronger than BASE? Game pairs until a sequential probability ratio
test decides, stored and resumable like any tournament."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bot_arena.arena.cli.option_sets import with_option_sets
from bot_arena.arena.cli.tournament_cmd import BotsOption, NewTournament, start_tournament

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from bot_arena.arena.match.botref import BotRef


class Model(StrEnum):
    NORMALIZED = "normalized"
    LOGISTIC = "logistic"


class Statistics(StrEnum):
    PENTANOMIAL = "pentanomial"
    TRINOMIAL = "trinomial"


@with_option_sets
def sprt_command(
    game_name: Annotated[
        str, typer.Argument(metavar="GAME", help="Game name (see `arena games`).")
    ],
    bot: BotsOption = None,
    elo0: Annotated[float, typer.Option("--elo0", help="Elo of H0 (NEW is not better).")] = 0.0,
    elo1: Annotated[float, typer.Option("--elo1", help="Elo of H1 (NEW is better).")] = 5.0,
    alpha: Annotated[
        float, typer.Option("--alpha", help="Chance of accepting H1 when H0 is true.")
    ] = 0.05,
    beta: Annotated[
        float, typer.Option("--beta", help="Chance of accepting H0 when H1 is true.")
    ] = 0.05,
    model: Annotated[
        Model,
        typer.Option("--model", help="Elo of the hypotheses: normalized (nElo) or logistic."),
    ] = Model.NORMALIZED,
    statistics: Annotated[
        Statistics,
        typer.Option(
            "--statistics",
            help="Counts the test is on: game pairs (pentanomial) or single games (trinomial).",
        ),
    ] = Statistics.PENTANOMIAL,
    max_games: Annotated[
        int, typer.Option("--max-games", help="Stop undecided after this many games.")
    ] = 100_000,
    report_interval: Annotated[
        int, typer.Option("--report-interval", help="Game pairs between two status lines.")
    ] = 10,
    new: NewTournament = NewTournament(),  # noqa: B008 (an option set: its options)
) -> None:
    """Test whether NEW (the first --bot) is stronger than BASE (the second).

    Plays pairs of games (the same opening, seats swapped) in parallel jobs and stops as soon as
    the log-likelihood ratio crosses a bound, or at --max-games: the generalized SPRT of fishtest
    and fastchess on pentanomial counts of the pairs. A line per --report-interval pairs shows
    the LLR with its bounds, Elo and nElo with 95% intervals, LOS, the pair counts and the draw
    ratio. It is a tournament like any other: stored, resumable (`arena tournament resume ID`),
    shown by `arena tournament show ID`, and its games count in the leaderboard.
    """
    from bot_arena.arena.api.spec import SprtSpec

    # the checks live in the API's spec, shared with ``bot_arena.arena.sprt()``
    test_settings = SprtSpec(
        elo0, elo1, alpha, beta, model.value, statistics.value, max_games, report_interval
    ).validate(len(bot or []))

    def settings(
        factory: sessionmaker[Session], game: str, refs: list[BotRef]
    ) -> dict[str, Any] | None:
        return test_settings

    start_tournament(game_name, bot, new, "sprt", 2, settings, "SPRT")
