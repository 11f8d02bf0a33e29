"""What a new tournament is asked to be (``arena tournament run``, ``arena sprt`` and the
Python API share it) and the checks made before anything is stored or started."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from bot_arena.arena.api import checks
from bot_arena.arena.api.errors import ArenaError

if TYPE_CHECKING:
    from bot_arena.arena.tournament.schedule import Opening
    from bot_arena.arena.transport.limits import ResourceLimits
    from bot_arena.games.base import Game

DEFAULT_MOVE_TIME = 1.0  # seconds per move in a tournament when no time control is given


class MatchOptions(TypedDict, total=False):
    """The options ``tournament()`` and ``sprt()`` share: those of ``arena tournament run``
    and ``arena sprt`` of the same name (``params`` is ``--param``, as a dict or ``k=v``
    items). ``move_time`` (default 1 s) and ``clock`` (``"60+0.5"``) once for all or once per
    bot; ``sandbox`` ``auto``/``on``/``off``; ``allow_read`` paths every bot may read, or
    ``"BOT=PATH"`` for one; ``executor`` ``"local"`` or ``"ray"`` (with ``ray_address`` and
    ``ray_allow_unconfined``); ``db`` a database URL or file (default: a temporary one);
    ``progress`` the progress lines on stderr; ``pgn_out`` a PGN file each game is appended to
    as it is stored (``--pgn-out``)."""

    move_time: float | Sequence[float] | None
    clock: str | Sequence[str] | None
    margin: float
    max_moves: int | None
    draw_adjudicate: str | None
    resign_adjudicate: str | None
    depth: int | None
    nodes: int | None
    jobs: int | None
    seed: int | None
    params: dict[str, object] | Sequence[str] | None
    opening_plies: int
    openings: str | None
    openings_order: str
    openings_plies: int | None
    memory_mb: int
    startup_time: float
    sandbox: str | None
    allow_read: Sequence[str] | None
    executor: str
    ray_address: str | None
    ray_allow_unconfined: bool
    name: str | None
    db: str | None
    progress: bool
    pgn_out: str | None


@dataclass(frozen=True)
class Checked:
    """A TournamentSpec once checked: the game, the limits, the opening book, the specs."""

    game: Game[Any, Any]
    limits: ResourceLimits
    book: list[Opening]
    specs: list[str]


@dataclass(frozen=True)
class TournamentSpec:
    """The options of a new tournament that need no database (the bots as spec strings)."""

    game: str
    bots: list[str]
    params: list[str] | None = None
    memory_mb: int = 1024
    startup_time: float = 10.0
    jobs: int | None = None
    opening_plies: int = 0
    openings: str | None = None
    openings_plies: int | None = None

    def validate(self) -> Checked:
        """The checks of a new tournament, in the order the CLI has always made them; the
        first that fails raises ArenaError with the CLI's line."""
        game = checks.load_game(self.game, self.params)
        limits = checks.resource_limits(self.memory_mb, self.startup_time)
        jobs, opening_plies, openings = self.jobs, self.opening_plies, self.openings
        if jobs is not None and jobs < 1:
            raise ArenaError(f"--jobs must be >= 1, not {jobs}")
        if opening_plies < 0:
            raise ArenaError(f"--opening-plies must be >= 0, not {opening_plies}")
        if openings is not None and opening_plies:
            raise ArenaError(
                "give --openings (a book) or --opening-plies (random openings), not both"
            )
        if openings is None and self.openings_plies is not None:
            raise ArenaError("--openings-plies cuts the games of an --openings book: give the book")
        book: list[Opening] = []
        if openings is not None:
            from bot_arena.arena.tournament.book import read_book
            from bot_arena.arena.tournament.schedule import ScheduleError

            try:
                book = read_book(game, openings, self.openings_plies)
            except ScheduleError as exc:
                raise ArenaError(str(exc)) from None
        specs = [s.strip() for s in self.bots]
        if len(specs) < 2:
            raise ArenaError("a tournament needs at least two --bot entrants")
        return Checked(game, limits, book, specs)


FORMATS = ("round-robin", "gauntlet", "swiss", "knockout")


def check_format(
    fmt: str, games: int | None, rounds: int | None, tiebreak_pairs: int, seeding: str = "order"
) -> None:
    """The options of ``tournament run`` that belong to one format, checked."""
    from bot_arena.arena.api.formats import SEEDINGS

    if fmt not in FORMATS:
        raise ArenaError(f"unknown format {fmt!r} (use {', '.join(FORMATS)})")
    if seeding not in SEEDINGS:
        raise ArenaError(f"unknown seeding {seeding!r} (use {', '.join(SEEDINGS)})")
    if rounds is not None and fmt != "swiss":
        raise ArenaError("--rounds is for --format swiss")
    if rounds is not None and rounds < 1:
        raise ArenaError(f"--rounds must be >= 1, not {rounds}")
    if tiebreak_pairs < 0:
        raise ArenaError(f"--tiebreak-pairs must be >= 0, not {tiebreak_pairs}")
    if games is not None and games < 1:
        raise ArenaError(f"--games must be >= 1, not {games}")


@dataclass(frozen=True)
class SprtSpec:
    """An SPRT's own options: the hypotheses, the error rates, the model, the game limit."""

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"
    statistics: str = "pentanomial"
    max_games: int = 100_000
    report_interval: int = 10

    def validate(self, bots: int) -> dict[str, Any]:
        """The tournament's SPRT settings, for ``bots`` entrants; ArenaError with the CLI's
        line when an option is out of range."""
        from bot_arena.arena.ratings.sprt_stats import SprtError, SprtSettings

        try:
            test = SprtSettings(
                self.elo0,
                self.elo1,
                self.alpha,
                self.beta,
                model=self.model,
                statistics=self.statistics,
            )
        except SprtError as exc:
            raise ArenaError(str(exc)) from None
        if self.max_games < 2:
            raise ArenaError(f"--max-games must be >= 2 (one pair), not {self.max_games}")
        if self.report_interval < 1:
            raise ArenaError(f"--report-interval must be >= 1, not {self.report_interval}")
        if bots != 2:
            raise ArenaError("an SPRT tests two bots: give --bot NEW --bot BASE")
        return {**test.to_dict(), "max_games": self.max_games, "interval": self.report_interval}
