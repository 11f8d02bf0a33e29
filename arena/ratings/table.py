"""The output of every rating method: one row per bot, grouped into pools."""

from __future__ import annotations

from dataclasses import dataclass

from bot_arena.arena.ratings.outcomes import BotStats


@dataclass(frozen=True, slots=True)
class BotRating:
    bot: str  # the rating key (a bot name, or "name@version" from the database)
    elo: float
    error: float | None  # half-width of the 95% interval; None for sequential Elo
    stats: BotStats
    pool: int  # 1-based pool number: ratings compare only within one pool
    los_next: float | None  # P(this bot is stronger than the next one in its pool)
    note: str = ""


@dataclass(frozen=True, slots=True)
class Pool:
    number: int
    bots: tuple[str, ...]
    relative_to: str  # "pool average = 1500", "anchor stockfish = 2800", "start 1500 ..."


@dataclass(frozen=True, slots=True)
class RatingTable:
    method: str  # "ml" or "elo"
    description: str  # one line: the model and what the numbers mean
    rows: tuple[BotRating, ...]  # pool by pool, best first within a pool
    pools: tuple[Pool, ...]
    notes: tuple[str, ...] = ()

    def row(self, bot: str) -> BotRating:
        for r in self.rows:
            if r.bot == bot:
                return r
        raise KeyError(bot)

    def elo(self) -> dict[str, float]:
        return {r.bot: r.elo for r in self.rows}
